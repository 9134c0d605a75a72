//! The pool's free list: a lock-free stack of slot indices.
//!
//! The links live in their own array of `AtomicU32` (`next[i]` is the slot below `i`
//! on the stack), apart from the objects, so a thread that races to read a link never
//! reads memory that another thread is constructing an object in. The head is one
//! `AtomicU64`: the index of the top slot in the low 32 bits, a tag in the high 32 bits.
//! Every successful compare-exchange on the head adds one to the tag.
//!
//! Invariants this module keeps:
//! - Every index in `0..capacity` is either on the stack exactly once or owned by
//!   exactly one caller of [`FreeList::pop`] who has not yet passed it to
//!   [`FreeList::push`].
//! - The index field of the head is a slot index, [`NIL`] (empty) or [`NIL_WAITING`]
//!   (empty, and at least one thread is asleep waiting for a slot). `NIL_WAITING` is
//!   only ever installed over `NIL`, and the next push replaces it (and reports that
//!   waiters must be woken).
//! - ABA: a pop reads `head = (i, t)` and then `next[i] = j`, and installs `(j, t + 1)`
//!   only if the head still equals `(i, t)`. Between the two reads `i` may have been
//!   popped, other slots popped and `i` pushed back with a different link; the head
//!   would then read `(i, t + k)` with `k >= 1`, and the compare fails. A false success
//!   needs exactly 2^32 head changes while one thread is stalled between its load and
//!   its compare-exchange.
//!
//! ## Orderings
//! - `push` stores the link with `Relaxed` and publishes it with a `Release`
//!   compare-exchange. A `pop` loads the head with `Acquire` before reading the link of
//!   the slot it names, so it sees the link that was published with it. The same edge
//!   carries the end of the slot's previous life (its object was dropped before the
//!   push) to the next owner, who writes a new object into the slot after the pop.
//! - The `pop` compare-exchange is `Acquire` on success for that second reason: the
//!   successful RMW reads a value in the release sequence of the push that put the
//!   slot on the stack, so everything before that push happens before our use of it.
//!   It needs no `Release`: a pop publishes nothing.
//! - Links are read and written with `Relaxed`: the head's acquire/release pair orders
//!   them. They must still be atomic, because a stalled pop may read `next[i]` while a
//!   push writes it; that read's value is then discarded by the failing compare.

use core::ptr::NonNull;

use crate::sync::{fence, AtomicU32, AtomicU64, Ordering};

/// Index value of an empty stack.
pub(crate) const NIL: u32 = u32::MAX;
/// Index value of an empty stack with sleeping waiters.
pub(crate) const NIL_WAITING: u32 = u32::MAX - 1;

#[inline(always)]
fn index_of(head: u64) -> u32 {
    head as u32
}

#[inline(always)]
fn with_index(head: u64, index: u32) -> u64 {
    // The tag (high half) advances by one with every change of the head.
    (head & 0xFFFF_FFFF_0000_0000).wrapping_add(1 << 32) | index as u64
}

/// What a thread that found the pool full should do next.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub(crate) enum Announce {
    /// A slot was pushed meanwhile: try again.
    Retry,
    /// The stack is marked as having waiters: the next push will wake them.
    Sleep,
}

/// The lock-free index stack. See the module docs.
///
/// The owner keeps it on a cache line of its own (`CachePadded<FreeList>`): the head
/// is the pool's one hot atomic, and the `next` pointer beside it is read-only, read by
/// every operation that touches the head anyway.
pub(crate) struct FreeList {
    head: AtomicU64,
    /// `capacity` links, one per slot.
    next: NonNull<AtomicU32>,
}

impl FreeList {
    /// Builds the stack `0, 1, ..., capacity - 1` (0 on top) in the memory at `next`.
    ///
    /// # Safety
    /// `next` is valid for writes of `capacity` `AtomicU32`s, stays valid and is used by
    /// nothing else for as long as the returned list lives.
    pub(crate) unsafe fn new(next: NonNull<AtomicU32>, capacity: u32) -> FreeList {
        debug_assert!(capacity > 0 && capacity < NIL_WAITING);
        for i in 0..capacity {
            let link = if i + 1 == capacity { NIL } else { i + 1 };
            // SAFETY: `i < capacity`; the caller gave us that many writable links.
            unsafe { next.add(i as usize).as_ptr().write(AtomicU32::new(link)) };
        }
        FreeList {
            // No thread can see the list yet; whatever hands it to other threads
            // (a `&Pool`, a spawned thread) carries these writes with it.
            head: AtomicU64::new(0),
            next,
        }
    }

    #[inline(always)]
    fn link(&self, index: u32) -> &AtomicU32 {
        // SAFETY: callers pass indices taken from the head, which are `< capacity`
        // (the only non-index values, NIL and NIL_WAITING, are checked first); the
        // links live as long as `self`.
        unsafe { self.next.add(index as usize).as_ref() }
    }

    /// Takes a free slot, or `None` when the stack is empty.
    #[inline]
    pub(crate) fn pop(&self) -> Option<u32> {
        // Acquire: pairs with the Release of the push that installed this head, so the
        // link we read below is the one that push wrote.
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            let index = index_of(head);
            if index >= NIL_WAITING {
                return None;
            }
            // Relaxed: ordered by the acquire above. It may be stale if `index` is
            // being popped and pushed right now; then the head has moved on (new tag)
            // and the compare-exchange below fails.
            let next = self.link(index).load(Ordering::Relaxed);
            match self.head.compare_exchange_weak(
                head,
                with_index(head, next),
                // Success, Acquire: the slot's previous life (its drop, its push)
                // happens before we construct a new object in it.
                Ordering::Acquire,
                // Failure, Acquire: we read the new head's link next time round.
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(index),
                Err(now) => head = now,
            }
        }
    }

    /// Puts `index` back on the stack. Returns `true` when threads were waiting for a
    /// slot and must now be woken.
    ///
    /// # Safety
    /// `index` came from [`pop`](Self::pop) on this list and has not been pushed since.
    #[inline]
    pub(crate) unsafe fn push(&self, index: u32) -> bool {
        // Relaxed: the compare-exchange below checks this value; nothing is read
        // through it.
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            let below = match index_of(head) {
                NIL_WAITING => NIL,
                i => i,
            };
            // Relaxed: published by the Release compare-exchange below.
            self.link(index).store(below, Ordering::Relaxed);
            match self.head.compare_exchange_weak(
                head,
                with_index(head, index),
                // Success, Release: the link above and the end of the slot's object
                // (dropped before this call) happen before any pop that takes `index`.
                Ordering::Release,
                // Failure, Relaxed: we only retry with the fresh value.
                Ordering::Relaxed,
            ) {
                Ok(old) => {
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

    /// `true` when no slot is free right now (the answer may be stale at once).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        index_of(self.head.load(Ordering::Relaxed)) >= NIL_WAITING
    }

    /// Called by a thread that found the stack empty and is about to sleep: marks the
    /// stack as having waiters, unless a slot was pushed meanwhile.
    ///
    /// The caller must have read the futex it will sleep on *before* this call.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn announce_waiter(&self) -> Announce {
        // Acquire: if the futex value the caller read was an old one and a push has
        // since replaced NIL_WAITING, a bump we synchronised with shows that push here
        // (see `Pool::insert_wait`).
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            match index_of(head) {
                NIL_WAITING => return Announce::Sleep,
                NIL => {}
                _ => return Announce::Retry,
            }
            match self.head.compare_exchange_weak(
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
