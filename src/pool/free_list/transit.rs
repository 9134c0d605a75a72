//! The slow paths' shared words: where the last steal succeeded, the remote-chain moves
//! under way and ever started, and the steal lock. Kept by the pool on a line of its
//! own: only steals, remote-stack moves and full checks write it.
//!
//! Invariant: `moves` holds, in its low half, the number of chains taken from a remote
//! stack by a thread other than its owner and not yet on a stack again, and in its high
//! half the number of such moves ever started (wrapping); `steal_lock` is 1 exactly
//! while one thread steals from the owners' caches or checks that the pool is full.

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// The slow paths' shared words, kept by the pool on a line of their own (only steals
/// and remote-stack moves write them). See the module docs on chains in transit.
pub(crate) struct Transit {
    /// Where the last successful steal found a slot.
    pub(crate) steal_hint: AtomicU32,
    /// Remote-stack moves under way (low half) and ever started (high half, wrapping):
    /// one word, so that a move announces itself with one read-modify-write.
    moves: AtomicU64,
    /// The steal lock: 1 while a thread steals from the owners' caches or checks that
    /// the pool is full (`steal.rs`).
    pub(crate) steal_lock: AtomicU32,
}

/// What a move adds to [`Transit::moves`] when it starts: one under way, one more ever.
const MOVE_STARTS: u64 = 1 | 1 << 32;

impl Transit {
    pub(crate) fn new() -> Transit {
        Transit {
            // No steal yet: `steal_order` starts at the last shard.
            steal_hint: AtomicU32::new(u32::MAX),
            moves: AtomicU64::new(0),
            steal_lock: AtomicU32::new(0),
        }
    }

    /// Remembers that a steal succeeded at `shard`, where the next one starts looking.
    #[inline]
    pub(crate) fn stole_from(&self, shard: u32) {
        // Relaxed: a hint (see `FreeLists::steal_order`). Read first, so that threads
        // that keep stealing from one shard do not keep writing this line.
        if self.steal_hint.load(Ordering::Relaxed) != shard {
            self.steal_hint.store(shard, Ordering::Relaxed);
        }
    }

    /// A snapshot to start a scan with.
    #[inline]
    pub(crate) fn before_scan(&self) -> u64 {
        self.moves.load(Ordering::SeqCst)
    }

    /// `true` when no chain was in transit during a scan that started with `before`:
    /// no move was under way then, and none started since.
    #[inline]
    pub(crate) fn quiet_since(&self, before: u64) -> bool {
        before as u32 == 0 && self.moves.load(Ordering::SeqCst) == before
    }

    /// Announces a move before its chain leaves the remote stack (module docs).
    #[inline]
    pub(crate) fn start_move(&self) {
        self.moves.fetch_add(MOVE_STARTS, Ordering::SeqCst);
    }

    /// Ends a move: its chain is on the local stack, or it took nothing.
    #[inline]
    pub(crate) fn end_move(&self) {
        self.moves.fetch_sub(1, Ordering::SeqCst);
    }
}
