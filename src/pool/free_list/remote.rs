//! The remote stacks: where a slot freed by a thread that does not live in its shard
//! goes, and how a chain of them comes back into use.
//!
//! Every push onto a remote stack is a compare-exchange (many threads free into it);
//! nobody pops it one slot at a time. An insert takes the whole stack at once: the
//! shard's owner into its cache, inside its bracket (`owner.rs`); any other thread onto
//! the shared stack, announced in [`Transit`] while the chain is on neither stack, so
//! that a full check can tell a moving chain from a full pool (`free_list`'s module
//! docs, "Chains in transit"; `steal.rs`).
//!
//! Invariant: a remote stack holds only its own shard's slots, each once; a chain taken
//! from it is owned by its taker until it is on a stack or a cache again.

use super::lists::{index_of, with_index, FreeLists, NIL, NIL_WAITING};
use super::stock::Stock;
use super::transit::Transit;
use crate::sync::Ordering;

impl FreeLists {
    /// Whether shard `shard`'s remote stack holds slots (a snapshot).
    #[inline(always)]
    pub(crate) fn remote_has_slots(&self, shard: u32) -> bool {
        // Relaxed: a hint; `take_remote` checks again with its own ordering.
        index_of(self.remote(shard).load(Ordering::Relaxed)) < NIL_WAITING
    }

    /// Takes shard `shard`'s whole remote stack, leaving it empty, and returns the top
    /// of the chain (`first -> ... -> NIL`, the caller's alone now); `None` if it held no
    /// slot (a waiters' mark stays where it is).
    #[inline]
    pub(super) fn swap_remote(&self, shard: u32) -> Option<u32> {
        let remote = self.remote(shard);
        let mut head = remote.load(Ordering::SeqCst);
        loop {
            let first = index_of(head);
            if first >= NIL_WAITING {
                return None;
            }
            match remote.compare_exchange_weak(
                head,
                with_index(head, NIL),
                // Success: Acquire, so every push onto this stack, and the link it
                // wrote, happens before we walk the chain; SeqCst for the transit
                // argument and the full check's double collect (module docs).
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return Some(first),
                Err(now) => head = now,
            }
        }
    }

    /// Takes shard `shard`'s whole remote stack if it holds slots: keeps the top slot
    /// for the caller and moves the rest onto the local stack. The flag says that the
    /// move replaced a waiters' mark, so waiters must be woken.
    #[cold]
    #[inline(never)]
    pub(crate) fn take_remote(
        &self,
        shard: u32,
        transit: &Transit,
        stock: &Stock,
    ) -> (Option<u32>, bool) {
        if !self.remote_has_slots(shard) {
            return (None, false);
        }
        // Announce the move before the chain leaves the remote stack (module docs).
        transit.start_move();
        let Some(first) = self.swap_remote(shard) else {
            // Empty (a waiters' mark stays where it is).
            transit.end_move();
            return (None, false);
        };
        // The chain `first -> ... -> NIL` is ours alone now. Moving it over a waiters'
        // mark wakes them, as any push would: a waiter that announced itself while the
        // chain was in transit found both of this shard's stacks empty, and sleeps
        // until this move wakes it.
        //
        // The chain is reversed on the way: its top is the slot freed last, whose lines
        // the freeing thread may still be writing; the caller keeps the oldest instead,
        // and the local stack hands out the rest oldest first.
        let (oldest, rest, newest) = self.reverse(first);
        // Success SeqCst: Release, as for a single push, for every slot of the chain;
        // SeqCst for the transit argument (module docs).
        let wake = rest != NIL
            && self.push_run(
                self.head(shard),
                shard,
                rest,
                newest,
                Ordering::SeqCst,
                stock,
            );
        // The chain is on the local stack: the move is over.
        transit.end_move();
        (Some(oldest), wake)
    }

    /// Reverses the chain that starts at `first` (the slot freed last) and ends at a
    /// `NIL` link, which the caller owns: returns its oldest slot, the rest of the
    /// reversed chain (`NIL` if none), and `first`, now its end.
    pub(super) fn reverse(&self, first: u32) -> (u32, u32, u32) {
        let (mut prev, mut cur) = (NIL, first);
        while cur != NIL {
            // Relaxed: the chain was made visible to us by the Acquire that took it,
            // and nobody else reads these links until we publish them.

            let next = self.link(cur).load(Ordering::Relaxed);
            self.link(cur).store(prev, Ordering::Relaxed);
            prev = cur;
            cur = next;
        }
        (prev, self.link(prev).load(Ordering::Relaxed), first)
    }
}
