//! The free lists' shared core: each shard's lines (heads, counts, the owner's cache
//! words), the links, and the shared lock-free stack's pop and push. The parent
//! module's docs give the design; the sibling files add the owner's cache, the remote
//! stacks, the search, the steal, the full check and the waiters.
//!
//! Invariant: the shared (local) stack of a shard holds only that shard's slots, each
//! once; its head's tag advances by one with every successful change (see the parent
//! module's "ABA" and "Orderings").

use core::ptr::NonNull;

use crossbeam_utils::CachePadded;

use super::layout::ShardLayout;
use super::stock::Stock;
use super::transit::Transit;
use crate::sync::{fence, AtomicU32, AtomicU64, Ordering};

/// Index value of an empty stack.
pub(crate) const NIL: u32 = u32::MAX;
/// Index value of an empty stack with sleeping waiters.
pub(crate) const NIL_WAITING: u32 = u32::MAX - 1;

/// One stack's head, alone on its cache line(s). Each shard has two: local, remote.
pub(crate) type Head = CachePadded<HeadLine>;

/// What a head's line holds: the stack's head word and, on a shard's local line, the
/// count of the shard's slots ever handed out (the never-used ones are the rest of its
/// range, in order; see the module docs). The remote line's count stays 0 and unused.
/// The count shares the local head's line because the thread that lives in the shard
/// is the one that takes its never-used slots: one line, not two, per shard.
pub(crate) struct HeadLine {
    pub(super) word: AtomicU64,
    pub(super) fresh_taken: AtomicU32,
    /// On a shard's local line: slots handed out minus slots given back, counted by the
    /// thread that holds the shard's number as its dense index alone, or under `&mut`
    /// (module docs, "Counting live objects"). Wrapping. Unused on the remote line.
    pub(super) own: AtomicU32,
    /// The same, counted by every other thread whose home this shard is, with a
    /// read-modify-write. Wrapping. Unused on the remote line.
    pub(super) shared: AtomicU32,
    /// On a shard's local line: the top of the owner's cache (`owner.rs`), or `NIL`.
    pub(super) cache: AtomicU32,
    /// 1 while the owner is inside an operation on its cache (`owner.rs`).
    pub(super) busy: AtomicU32,
}

impl HeadLine {
    fn new(word: u32) -> HeadLine {
        HeadLine {
            word: AtomicU64::new(word as u64),
            fresh_taken: AtomicU32::new(0),
            own: AtomicU32::new(0),
            shared: AtomicU32::new(0),
            cache: AtomicU32::new(NIL),
            busy: AtomicU32::new(0),
        }
    }
}

/// Heads per shard: the local stack's and the remote stack's.
pub(crate) const HEADS_PER_SHARD: usize = 2;

#[inline(always)]
pub(super) fn index_of(head: u64) -> u32 {
    head as u32
}

#[inline(always)]
pub(super) fn with_index(head: u64, index: u32) -> u64 {
    // The tag (high half) advances by one with every change of the head.
    (head & 0xFFFF_FFFF_0000_0000).wrapping_add(1 << 32) | index as u64
}

/// The shards' lock-free index stacks. See the module docs.
///
/// Every field is read-only after construction; the heads it points to are the hot
/// atomics, each padded to its own cache line.
pub(crate) struct FreeLists {
    /// `2 * shards` heads: shard `k`'s local head at `2k`, its remote head at `2k + 1`.
    pub(super) heads: NonNull<Head>,
    /// `capacity` links, one per slot.
    pub(super) next: NonNull<AtomicU32>,
    pub(super) layout: ShardLayout,
    /// The number of slots (the end of the last shard's range).
    pub(super) capacity: u32,
    /// `ceil(2^48 / layout.len)`: `index * magic >> 48` (a 64 × 64 → 128-bit multiply)
    /// is `index / layout.len` for every index below 2^24, without a division on the
    /// free path. With `magic = 2^48 / len + e` and `0 <= e < 1`, the product is
    /// `index / len + index * e / 2^48`, and the error term is below
    /// `2^24 / 2^48 = 2^-24 <= 1 / len`, while the fraction of `index / len` is at most
    /// `1 - 1 / len`: the sum never carries into the integer part.
    pub(super) magic: u64,
    /// The shard where the next exclusive (`&mut`) insert looks first: the shard of the
    /// last exclusive free or steal. Read and written only through `&mut FreeLists`
    /// (see `exclusive.rs`), so a plain field.
    pub(super) exclusive_shard: u32,
    /// A shard whose stock bit an exclusive free knows to be set (bits are never
    /// cleared), so the exclusive free path skips the stock's line while it keeps
    /// freeing into that shard; `NIL` when none is known. A one-shard pool keeps no
    /// bits, and starts with shard 0 here. `&mut` only, like `exclusive_shard`.
    pub(super) exclusive_marked: u32,
}

impl FreeLists {
    /// Builds each shard's empty local and remote stacks, with none of its slots handed
    /// out yet, in the memory at `heads`; the links at `next` are set to `NIL`.
    ///
    /// # Safety
    /// `heads` is valid for writes of `2 * layout.shards` heads and `next` of `capacity`
    /// `AtomicU32`s; both stay valid and are used by nothing else for as long as the
    /// returned lists live. `layout` came from [`ShardLayout::new`] for `capacity`, and
    /// `capacity` is at most 2^24.
    pub(crate) unsafe fn new(
        heads: NonNull<Head>,
        next: NonNull<AtomicU32>,
        capacity: u32,
        layout: ShardLayout,
    ) -> FreeLists {
        debug_assert!(capacity > 0 && capacity <= 1 << 24);
        // The owners' brackets pair with the thieves' heavy fence (`owner.rs`): choose
        // the fences before any thread can reach these lists.
        crate::sync::asymmetric::prepare();
        for i in 0..capacity {
            // SAFETY: `i < capacity`; the caller gave us that many writable links.
            // (A link is read only after a push wrote it; this makes every link
            // initialised memory all the same.)
            unsafe { next.add(i as usize).as_ptr().write(AtomicU32::new(NIL)) };
        }
        for k in 0..HEADS_PER_SHARD * layout.shards as usize {
            // SAFETY: `k < 2 * layout.shards`, the heads the caller gave us. No thread
            // can see the lists yet; whatever hands them to other threads (a `&Pool`,
            // a spawned thread) carries these writes with it.
            unsafe {
                heads
                    .as_ptr()
                    .add(k)
                    .write(CachePadded::new(HeadLine::new(NIL)))
            };
        }
        FreeLists {
            heads,
            next,
            layout,
            capacity,
            magic: (1u64 << 48).div_ceil(layout.len as u64),
            exclusive_shard: 0,
            exclusive_marked: if layout.shards == 1 { 0 } else { NIL },
        }
    }

    /// The number of shards.
    #[inline(always)]
    pub(crate) fn shards(&self) -> u32 {
        self.layout.shards
    }

    /// The shard that owns slot `index`.
    #[inline(always)]
    pub(crate) fn shard_of(&self, index: u32) -> u32 {
        let shard = ((index as u128 * self.magic as u128) >> 48) as u32;
        debug_assert_eq!(shard, index / self.layout.len);
        shard
    }

    /// Shard `shard`'s local line (its head, counts, live counters and cache words).
    #[inline(always)]
    pub(super) fn line(&self, shard: u32) -> &HeadLine {
        debug_assert!(shard < self.layout.shards);
        // SAFETY: callers pass `shard < shards` (a home shard is reduced modulo the
        // count, a slot's shard is computed from a valid index); there are two heads
        // per shard, and they live as long as `self`.
        unsafe { self.heads.add(HEADS_PER_SHARD * shard as usize).as_ref() }
    }

    /// Shard `shard`'s local head.
    #[inline(always)]
    pub(super) fn head(&self, shard: u32) -> &AtomicU64 {
        &self.line(shard).word
    }

    /// Shard `shard`'s count of slots ever handed out (on its local head's line).
    #[inline(always)]
    pub(super) fn fresh_taken(&self, shard: u32) -> &AtomicU32 {
        &self.line(shard).fresh_taken
    }

    /// The heads, for a report link (see `count_live`).
    pub(crate) fn heads(&self) -> NonNull<Head> {
        self.heads
    }

    /// Shard `shard`'s remote head.
    #[inline(always)]
    pub(super) fn remote(&self, shard: u32) -> &AtomicU64 {
        debug_assert!(shard < self.layout.shards);
        // SAFETY: as in `line`: the remote line follows the local one.
        unsafe {
            &self
                .heads
                .add(HEADS_PER_SHARD * shard as usize + 1)
                .as_ref()
                .word
        }
    }

    #[inline(always)]
    pub(super) fn link(&self, index: u32) -> &AtomicU32 {
        // SAFETY: callers pass indices taken from a head, which are `< capacity`
        // (the only non-index values, NIL and NIL_WAITING, are checked first), or a
        // slot they own; the links live as long as `self`.
        unsafe { self.next.add(index as usize).as_ref() }
    }

    /// Takes a free slot from shard `shard`: from its local stack, or else the whole
    /// remote stack (see [`take_remote`](Self::take_remote)). `None` when both were
    /// empty. The flag says that waiters must be woken.
    #[inline]
    pub(crate) fn pop(&self, shard: u32, transit: &Transit, stock: &Stock) -> (Option<u32>, bool) {
        match self.pop_local(shard) {
            Some(index) => (Some(index), false),
            None => self.take_remote(shard, transit, stock),
        }
    }

    /// Takes the top slot of shard `shard`'s local stack, or `None` when it is empty.
    #[inline]
    pub(crate) fn pop_local(&self, shard: u32) -> Option<u32> {
        self.pop_local_read(shard, |_| ()).map(|(index, ())| index)
    }

    /// Takes the top slot of shard `shard`'s local stack with what `read(slot)` said
    /// about it, or `None` when the stack is empty. `read` runs before the head swap,
    /// so its load overlaps the swap instead of waiting for it (a locked instruction
    /// on x86-64 holds back later loads).
    ///
    /// What `read` saw is still true once the slot is ours, if only owners write what
    /// it reads: it read after the head load (Acquire, so after the last owner's
    /// writes), and the head swap succeeds only if no pop or push came between, so
    /// nobody owned the slot since.
    #[inline]
    pub(crate) fn pop_local_read<S>(
        &self,
        shard: u32,
        read: impl Fn(u32) -> S,
    ) -> Option<(u32, S)> {
        let head_word = self.head(shard);
        // Acquire: pairs with the Release of the push that installed this head, so the
        // link we read below is the one that push wrote.
        let mut head = head_word.load(Ordering::Acquire);
        loop {
            let index = index_of(head);
            if index >= NIL_WAITING {
                return None;
            }
            let seen = read(index);
            // Relaxed: ordered by the acquire above. It may be stale if `index` is
            // being popped and pushed right now; then the head has moved on (new tag)
            // and the compare-exchange below fails.
            let next = self.link(index).load(Ordering::Relaxed);
            match head_word.compare_exchange_weak(
                head,
                with_index(head, next),
                // Success, Acquire: the slot's previous life (its drop, its push)
                // happens before we construct a new object in it.
                Ordering::Acquire,
                // Failure, Acquire: we read the new head's link next time round.
                Ordering::Acquire,
            ) {
                Ok(_) => return Some((index, seen)),
                Err(now) => head = now,
            }
        }
    }

    /// Pushes the run `first -> ... -> last` (linked, and owned by the caller) onto the
    /// stack whose head is `head_word`: sets `last`'s link to the current top and
    /// installs `first` with a compare-exchange of ordering `success` (at least
    /// `Release`). Returns `true` when it replaced a waiters' mark, so waiters must be
    /// woken.
    #[inline(always)]
    pub(super) fn push_run(
        &self,
        head_word: &AtomicU64,
        shard: u32,
        first: u32,
        last: u32,
        success: Ordering,
        stock: &Stock,
    ) -> bool {
        // Relaxed: the compare-exchange below checks this value; nothing is read
        // through it.
        let mut head = head_word.load(Ordering::Relaxed);
        loop {
            let below = match index_of(head) {
                NIL_WAITING => NIL,
                i => i,
            };
            // Relaxed: published by the compare-exchange below.
            self.link(last).store(below, Ordering::Relaxed);
            match head_word.compare_exchange_weak(
                head,
                with_index(head, first),
                // Success (Release or stronger): the links of the run and the end of its
                // slots' objects (dropped before the push) happen before any pop that
                // takes one of them.
                success,
                // Failure, Relaxed: we only retry with the fresh value.
                Ordering::Relaxed,
            ) {
                Ok(old) => {
                    // The stack was empty: the shard's stock bit must be set (a
                    // one-shard pool never searches other shards, and keeps no bits).
                    if below == NIL && self.layout.shards > 1 {
                        stock.mark(shard);
                    }
                    if index_of(old) == NIL_WAITING {
                        // Acquire fence: the waiter's Release in `announce_waiter`
                        // (which we just read) happens before our wake, so the futex
                        // value the waiter read is older than the bump we make next.
                        fence(Ordering::Acquire);
                        return true;
                    }
                    return false;
                }
                Err(now) => head = now,
            }
        }
    }

    /// `true` when both of shard `shard`'s stacks look empty (a snapshot). SeqCst: a
    /// scan's peeks take part in the transit argument (module docs); on x86-64 these
    /// are plain loads.
    #[inline]
    pub(super) fn stacks_empty(&self, shard: u32) -> bool {
        index_of(self.head(shard).load(Ordering::SeqCst)) >= NIL_WAITING
            && index_of(self.remote(shard).load(Ordering::SeqCst)) >= NIL_WAITING
    }

    /// `true` when shard `shard` has no free slot: both stacks look empty and its
    /// never-used slots are all handed out (a snapshot).
    #[inline]
    pub(super) fn shard_empty(&self, shard: u32) -> bool {
        self.stacks_empty(shard) && !self.has_fresh(shard)
    }

    /// Puts `index` back in the shard that owns it: on its local stack when that shard
    /// is `home` (the freeing thread's home shard), else on its remote stack. Returns
    /// `true` when threads were waiting for a slot and must now be woken.
    ///
    /// # Safety
    /// `index` was handed out by these lists ([`pop`](Self::pop),
    /// [`take_used`](Self::take_used), [`take_fresh`](Self::take_fresh) or
    /// [`scan`](Self::scan)) and has not been pushed since.
    #[inline]
    pub(crate) unsafe fn push(&self, index: u32, home: u32, stock: &Stock) -> bool {
        let shard = self.shard_of(index);
        let head_word = if shard == home {
            self.head(shard)
        } else {
            self.remote(shard)
        };
        // Success, Release: see `push_run`.
        self.push_run(head_word, shard, index, index, Ordering::Release, stock)
    }

    /// `true` when no shard has a free slot right now (the answer may be stale at once).
    pub(crate) fn all_empty(&self) -> bool {
        (0..self.layout.shards).all(|shard| self.shard_empty(shard) && self.cache_empty(shard))
    }
}
