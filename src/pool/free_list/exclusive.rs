//! The free lists under exclusive access: taking and returning slots for a caller that
//! holds `&mut FreeLists` (that is, `&mut Pool`), with plain loads and stores.
//!
//! This module owns the exclusive half of the free lists. Invariant: it keeps every
//! invariant of the parent module (each slot on at most one stack, of its own shard;
//! never-used slots handed out by count, in order, and only when no stack of any shard
//! holds a slot), and it writes each word with one relaxed store, never a
//! read-modify-write.
//!
//! # Why no compare-exchange is needed
//!
//! The lock-free half compare-exchanges the heads because other threads may pop, push
//! or move a chain on the same head at the same moment. Through `&mut FreeLists` none
//! can: every `&Pool` borrow has ended, and with it every insert, free and wait that ran
//! through it. A borrow held on another thread ends only through something that orders
//! that thread's work before ours (a join, the end of a `thread::scope`, a channel, a
//! lock), and a `&Pool` made after ours reaches another thread only through such an
//! edge too. So, across a handover in either direction, every access of one side
//! happens before every access of the other, and within our borrow we are the only
//! thread that touches the heads, the links and the counts. Each operation here is
//! then a load of a head, a load or a store of one link and a store of the head, all
//! `Relaxed`: the words are atomics only because the shared half needs them to be
//! (on x86-64 and aarch64 these are plain moves).
//!
//! What the shared half expects to find when it resumes, and why it does:
//! - **Tags.** The tag guards a shared pop that read a head and has not yet
//!   compare-exchanged it; no such pop can span our borrow (it would hold `&Pool`), so
//!   the tag may take any value here. A pop here advances it ([`with_index`], which
//!   costs nothing, as the new word depends on the old one anyway); a push writes tag 0,
//!   so that the new head word is known without waiting for the old one to load. In a
//!   loop of inserts and removes of one slot, that takes one store-to-load forwarding
//!   off each pair's chain of dependent memory accesses (from three to two; each costs
//!   several cycles). The shared half only ever compares whole words, and every
//!   compare-exchange it makes still advances the tag by one.
//! - **Chains in transit.** None: a move from a remote stack runs inside an insert on
//!   `&Pool`, which has returned, so [`Transit`](super::Transit) reads "no move under
//!   way", and we leave it alone.
//! - **Waiters' marks.** Nobody is asleep in `insert_wait`: a waiter sleeps inside a call
//!   on `&Pool`, whose borrow excludes ours. A mark can still be left over from a waiter
//!   that has since returned (it got a slot through another shard, or timed out). A push
//!   here replaces such a mark as any push would, but wakes nobody, since nobody sleeps
//!   on it; a pop that empties a stack leaves [`NIL`] (the link below a slot is never a
//!   mark). A waiter that comes later reads the futex word and announces itself on every
//!   shard afresh; a leftover mark it finds serves it as its own would, since the next
//!   push onto that head happens while the waiter holds `&Pool`, so it is a shared push,
//!   which wakes.
//! - **Where a slot goes.** A freed slot goes onto the local stack of the shard that owns
//!   it, whoever frees it: the local/remote split is about which core writes which head,
//!   and with one thread there is no other core.

use super::lists::{index_of, with_index, FreeLists, NIL, NIL_WAITING};
use super::stock::Stock;
use crate::sync::Ordering;

impl FreeLists {
    /// Takes a free slot, or `None` when every slot is taken: **full means full**, since
    /// nothing else runs. Looks at the local stack of the shard where the last exclusive
    /// free or steal was first; see [`take_mut_slow`](Self::take_mut_slow) for the rest.
    ///
    /// Counts the slot out on that shard's `own` counter (see "Counting live objects" in
    /// the parent module).
    #[inline(always)]
    pub(crate) fn take_mut(&mut self) -> Option<u32> {
        let index = match self.pop_mut(self.exclusive_shard, false) {
            Some(index) => index,
            None => self.take_mut_slow()?,
        };
        // The shard the slot came from: `take_mut_slow` moved `exclusive_shard` there.
        self.count_mut(self.exclusive_shard, super::COUNT_OUT);
        Some(index)
    }

    /// Adds `delta` to shard `shard`'s `own` live counter with a load and a store:
    /// under `&mut self` no other thread writes it (see "Counting live objects" in the
    /// parent module).
    #[inline(always)]
    fn count_mut(&mut self, shard: u32, delta: u32) {
        let own = &self.line(shard).own;
        // Relaxed: `&mut self` (module docs).
        own.store(
            own.load(Ordering::Relaxed).wrapping_add(delta),
            Ordering::Relaxed,
        );
    }

    /// The slow half of [`take_mut`](Self::take_mut): a slot that was used before, from
    /// any stack of any shard, and only if there is none, a never-used one (so the slots
    /// ever used stay at the most objects ever live, as on the shared path). Shards are
    /// visited starting with the last one used, then from the highest down (threads hold
    /// the lowest indices, so the highest shards are nobody's home), as a shared steal
    /// visits them.
    #[cold]
    #[inline(never)]
    fn take_mut_slow(&mut self) -> Option<u32> {
        let shards = self.layout.shards;
        let first = self.exclusive_shard;
        let order =
            core::iter::once(first).chain((0..shards).rev().filter(move |&shard| shard != first));
        for shard in order.clone() {
            let popped = match self.pop_mut(shard, false) {
                Some(index) => Some(index),
                None => match self.pop_mut(shard, true) {
                    Some(index) => Some(index),
                    // An owner's cache (`owner.rs`), before any never-used slot.
                    None => self.pop_cache_mut(shard),
                },
            };
            if let Some(index) = popped {
                self.exclusive_shard = shard;
                return Some(index);
            }
        }
        for shard in order {
            if let Some(index) = self.take_fresh_mut(shard) {
                self.exclusive_shard = shard;
                return Some(index);
            }
        }
        None
    }

    /// Puts slot `index` back on the local stack of the shard that owns it, where the
    /// next [`take_mut`](Self::take_mut) looks first, and counts it back on that shard's
    /// `own` counter. Wakes nobody (see the module docs).
    ///
    /// # Safety
    /// `index` was handed out by these lists and has not been pushed since.
    #[inline(always)]
    pub(crate) unsafe fn push_mut(&mut self, index: u32, stock: &Stock) {
        debug_assert!(index < self.capacity);
        let shard = self.shard_of(index);
        self.count_mut(shard, super::COUNT_BACK);
        let head_word = self.head(shard);
        // Relaxed throughout: `&mut self` (module docs).
        let head = head_word.load(Ordering::Relaxed);
        let below = match index_of(head) {
            // A mark left by a waiter that has returned: the stack is empty.
            NIL_WAITING => NIL,
            below => below,
        };
        self.link(index).store(below, Ordering::Relaxed);
        // Tag 0, not the old tag plus one: the new word then does not wait for the load
        // of the old one (see "Tags" in the module docs).
        head_word.store(index as u64, Ordering::Relaxed);
        if below == NIL && self.exclusive_marked != shard {
            // The stack was empty: the shard's stock bit must be set (see `stock`),
            // unless we know it is.
            stock.mark_exclusive(shard);
            self.exclusive_marked = shard;
        }
        // Written only when it changes: a store on every free would put it on the next
        // insert's critical path (that insert's head address would wait for it).
        if self.exclusive_shard != shard {
            self.exclusive_shard = shard;
        }
    }

    /// Pops the top slot of shard `shard`'s local stack (or its remote stack, which
    /// under `&mut self` is just another stack of the shard's slots), or `None` when it
    /// is empty.
    #[inline(always)]
    fn pop_mut(&mut self, shard: u32, remote: bool) -> Option<u32> {
        let head_word = if remote {
            self.remote(shard)
        } else {
            self.head(shard)
        };
        // Relaxed: `&mut self` (module docs).
        let head = head_word.load(Ordering::Relaxed);
        let index = index_of(head);
        if index >= NIL_WAITING {
            return None;
        }
        let below = self.link(index).load(Ordering::Relaxed);
        head_word.store(with_index(head, below), Ordering::Relaxed);
        Some(index)
    }

    /// Takes shard `shard`'s lowest never-used slot, or `None` when it has none left:
    /// the count goes up by one, as in [`take_fresh`](Self::take_fresh), with a store.
    #[inline]
    fn take_fresh_mut(&mut self, shard: u32) -> Option<u32> {
        let (start, end) = self.layout.range(self.capacity, shard);
        let count = self.fresh_taken(shard);
        // Relaxed: `&mut self` (module docs).
        let taken = count.load(Ordering::Relaxed);
        if taken >= end - start {
            return None;
        }
        count.store(taken + 1, Ordering::Relaxed);
        Some(start + taken)
    }
}
