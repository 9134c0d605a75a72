//! The exact full check: proof that every slot was in use at one moment.
//!
//! `Pool::insert` returns `Full` only if, at some instant during the call, every slot
//! was in use. A scan that visits the shards one after another cannot show that by
//! itself: a slot freed into a shard it already passed and a slot taken from a shard it
//! has not reached yet may leave every shard empty when visited, yet never all at once.
//! So the last word belongs to [`FreeLists::proven_full`], which runs with every
//! owner's gate closed (`steal.rs`, step 2) and every cache found empty:
//!
//! - it reads the transit word, then every shard's shared and remote head and its
//!   never-used count (a *collect*), twice;
//! - it answers "full" only if neither collect saw a free slot or a chain in transit,
//!   and both saw the same transit word and the same sum of head tags.
//!
//! Why that is a proof. Every term only grows: the transit word's epoch with each
//! remote-stack move, each head's tag by one with every push, pop and waiter's mark,
//! each never-used count with each slot handed out. So equal sums mean that no head
//! changed between its two reads (short of 2^32 changes of one head, the tags' own ABA
//! bound), and all the heads were empty throughout the interval between the two
//! collects, which all the per-head intervals share. In that interval the caches were
//! frozen empty (the gate closed; only this thread, which holds the steal lock, may touch
//! them), no remote chain was in transit (the word's `active` half was 0 at both reads
//! and its epoch unchanged), an owner cannot have a chain between its remote stack and
//! its cache (it moves chains inside its bracket, and the gate keeps it out of new
//! brackets), and the never-used counts were at their shards' lengths. Every free slot
//! is in one of those places, so at that moment every slot was in use.
//!
//! The reads are `SeqCst`, as are the moves' read-modify-writes on the transit word
//! and the remote heads, so they fall into the one total order the transit argument of
//! `free_list`'s module docs uses. Invariant: `proven_full` answers `true` only under
//! the conditions above; any doubt answers `false`, and the caller scans again.

use super::lists::{index_of, FreeLists, NIL_WAITING};
use super::transit::Transit;
use crate::sync::Ordering;

impl FreeLists {
    /// `true` when two collects agree that no slot is free and nothing moved (module
    /// docs). The caller holds the steal lock, has closed the gate with a request and
    /// found every cache empty.
    pub(super) fn proven_full(&self, transit: &Transit) -> bool {
        let first = self.collect(transit);
        first.is_some() && first == self.collect(transit)
    }

    /// One collect for the full check: `None` when some free slot or moving chain was
    /// seen, else the transit word and the sum of every head's tag (module docs, step
    /// 4). Every term only grows: the transit word's epoch with each move, a head's tag
    /// by one with each push or pop. So two collects with the same sum saw no change of
    /// any head in between (short of 2^32 changes of one head, the tags' own ABA bound,
    /// `free_list`'s module docs), and the never-used counts, checked at their ends,
    /// only grow too.
    fn collect(&self, transit: &Transit) -> Option<(u64, u64)> {
        let moves = transit.before_scan();
        if moves as u32 != 0 {
            return None;
        }
        let mut tags = 0u64;
        for shard in 0..self.layout.shards {
            // SeqCst: the double collect's reads fall into one order with the moves'
            // read-modify-writes (module docs of `free_list`, "Chains in transit").
            let local = self.head(shard).load(Ordering::SeqCst);
            let remote = self.remote(shard).load(Ordering::SeqCst);
            if index_of(local) < NIL_WAITING
                || index_of(remote) < NIL_WAITING
                || self.has_fresh(shard)
            {
                return None;
            }
            tags = tags.wrapping_add(local >> 32).wrapping_add(remote >> 32);
        }
        Some((moves, tags))
    }
}
