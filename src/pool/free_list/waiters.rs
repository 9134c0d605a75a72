//! Waiters: a thread that found the pool full and sleeps until a slot is freed
//! (`Pool::insert_wait`).
//!
//! A free must wake every sleeper, and a sleeper must never miss a free that came after
//! its last look. Frees onto a stack see the waiter's mark on its head (`NIL_WAITING`):
//! a waiter marks every empty stack of every shard before it sleeps, and a push that
//! replaces a mark wakes the waiters. An owner's free onto its cache (`owner.rs`) sees
//! no mark, so a waiter first closes the gate with [`WAITER`] ([`FreeLists::
//! start_waiting`]): from then on owners free onto their shared stacks, and the caches
//! can only shrink. Then it checks that every cache is empty (a free that reached a
//! cache before the gate closed is seen there) and marks the stacks. Its count stays
//! closed while it sleeps and open again when it wakes ([`Waiting`]'s drop).
//!
//! Invariant: while any thread sleeps for a slot, the gate has a waiter's count on it
//! and every stack of every shard is non-empty or marked.

use super::lists::{index_of, with_index, FreeLists, NIL, NIL_WAITING};
use super::owner::{Gate, WAITER};
use crate::sync::{AtomicU64, Ordering};

/// What a thread that found the pool full should do next.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub(crate) enum Announce {
    /// A slot was pushed meanwhile: try again.
    Retry,
    /// The shard is marked as having waiters: its next push will wake them.
    Sleep,
}

/// A waiter's count on the gate (module docs): while it lives, the owners' frees take
/// the shared stacks, where they wake sleepers. Dropping it takes the count off.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub(crate) struct Waiting<'a>(&'a FreeLists, &'a Gate);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.open_gate(self.1, WAITER);
    }
}

impl Waiting<'_> {
    /// Marks every shard's stacks as having waiters: `true` when every shard is marked
    /// and every cache is empty, so the caller may sleep; `false` when a slot showed up
    /// (try again). The caller must have read the futex it will sleep on *before*
    /// [`FreeLists::start_waiting`].
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn may_sleep(&self) -> bool {
        let free = self.0;
        (0..free.shards()).all(|shard| {
            free.cache_empty(shard) && matches!(free.announce_waiter(shard), Announce::Sleep)
        })
    }
}

impl FreeLists {
    /// Closes the gate to the owners' frees for the caller, a thread about to wait
    /// for a slot (module docs).
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn start_waiting<'a>(&'a self, gate: &'a Gate) -> Waiting<'a> {
        self.close_gate(gate, WAITER);
        Waiting(self, gate)
    }

    /// Called by a thread that found every shard empty and is about to sleep: marks
    /// both stacks of shard `shard` as having waiters, unless a slot was pushed to one
    /// meanwhile. A waiter announces itself on every shard before it sleeps, so a free
    /// into any stack of any shard wakes it.
    ///
    /// The caller must have read the futex it will sleep on *before* this call.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    fn announce_waiter(&self, shard: u32) -> Announce {
        // A never-used slot left (none can be left once an insert found the pool full,
        // since the count only grows; checked all the same, it costs one load).
        if self.has_fresh(shard) {
            return Announce::Retry;
        }
        match Self::announce_on(self.head(shard)) {
            Announce::Sleep => Self::announce_on(self.remote(shard)),
            retry => retry,
        }
    }

    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    fn announce_on(head_word: &AtomicU64) -> Announce {
        // Acquire: if the futex value the caller read was an old one and a push has
        // since replaced NIL_WAITING, a bump we synchronised with shows that push here
        // (see `Pool::insert_wait`).
        let mut head = head_word.load(Ordering::Acquire);
        loop {
            match index_of(head) {
                NIL_WAITING => return Announce::Sleep,
                NIL => {}
                _ => return Announce::Retry,
            }
            match head_word.compare_exchange_weak(
                head,
                with_index(head, NIL_WAITING),
                // Success, Release: our earlier read of the futex word happens before
                // the wake of the push that replaces NIL_WAITING (it reads our value
                // and fences with Acquire), so that bump is newer than what we read.
                Ordering::Release,
                Ordering::Acquire,
            ) {
                Ok(_) => return Announce::Sleep,
                Err(now) => head = now,
            }
        }
    }
}
