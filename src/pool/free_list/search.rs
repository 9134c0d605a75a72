//! Searching beyond the home shard's stacks: slots freed into other shards, and the
//! never-used slots each shard hands out by count.
//!
//! Invariant: a never-used slot of a shard is handed out only by raising that shard's
//! count, once, in order; and (past the first [`SETTLE_SLOTS`] of the caller's home) a
//! search looks at every stack that may hold a freed slot before it takes one. The
//! owners' caches are searched last, under the handshake (`steal.rs`).

use super::lists::FreeLists;
use super::stock::{Stock, StockSnapshot};
use super::transit::Transit;
use crate::sync::Ordering;

/// How many never-used slots of its home a thread takes before slots freed into
/// another live thread's home (see `Core::take_elsewhere`): enough for what a worker
/// usually keeps live, few enough that the slots ever used stay close to the most
/// objects ever live (`Pool::high_water_len`).
pub(crate) const SETTLE_SLOTS: u32 = 32;

impl FreeLists {
    /// Takes a slot that was used before and is free now from a shard other than
    /// `home`, or `None` (with nothing taken) when no stack it looked at had one.
    /// Visits the other shards whose bit `stocked` has (a snapshot of `stock`) once
    /// each, in the order of [`steal_order`](Self::steal_order), looking at a shard's
    /// local stack and then its remote stack. Every slot on a stack was used before (the never-used ones
    /// are counted, not stacked), so whatever a stack holds will do. The flag says that
    /// waiters must be woken (a remote chain replaced a waiters' mark).
    ///
    /// `live(shard)` says that the shard may be another live thread's home. The first
    /// pass (`live_homes == false`) skips those shards and the second looks only at
    /// them; the caller takes its home's never-used slots in between (see
    /// `Core::take_elsewhere`). Such a thread pushes and pops its local head on every
    /// insert and free, and a slot taken from its shard goes back there when it is
    /// freed: a thread that took slots there one at a time would bounce those lines
    /// between two cores on each object and never settle into a home of its own.
    /// (`live` is a hint: an index held by a thread that never touches this pool, or a
    /// thread that is done inserting but has not exited, makes a shard look busy; the
    /// second pass, before any never-used slot of another shard, keeps the high-water
    /// mark honest then.)
    #[cold]
    #[inline(never)]
    pub(crate) fn take_used(
        &self,
        home: u32,
        transit: &Transit,
        stock: &Stock,
        stocked: StockSnapshot,
        live: impl Fn(u32) -> bool,
        live_homes: bool,
    ) -> (Option<u32>, bool) {
        let mut wake = false;
        // Only the shards whose stacks may hold a slot (`stocked`, see `stock`).
        for shard in self.steal_order(home, transit) {
            if !stocked.has(shard) || live(shard) != live_homes {
                continue;
            }
            let mut taken = self.pop_local(shard);
            if taken.is_none() && self.remote_has_slots(shard) {
                let (got, woke) = self.take_remote(shard, transit, stock);
                wake |= woke;
                taken = got;
            }
            if taken.is_some() {
                transit.stole_from(shard);
                return (taken, wake);
            }
        }
        (None, wake)
    }

    /// Takes shard `shard`'s lowest never-used slot if the shard has handed out fewer
    /// than [`SETTLE_SLOTS`] so far, or `None`.
    #[inline]
    pub(crate) fn take_fresh_to_settle(&self, shard: u32) -> Option<u32> {
        // Relaxed: see `take_fresh`; a stale read only takes one slot more or less.
        if self.fresh_taken(shard).load(Ordering::Relaxed) >= SETTLE_SLOTS {
            return None;
        }
        self.take_fresh(shard)
    }

    /// Takes shard `shard`'s lowest never-used slot, or `None` when it has none left.
    ///
    /// The count only grows, by one per slot, and never past the shard's length, so
    /// each never-used slot is handed out once, in order (the pool's `high_water_len`
    /// relies on the order). Relaxed: a never-used slot has no previous life to order
    /// after (its link and stamp were written when the pool was built, which happens
    /// before any thread can reach it), and the count orders nothing else; the
    /// compare-exchanges on the one counter are totally ordered, so two takers never
    /// get the same slot. A stale read only sends us round the loop.
    #[inline]
    pub(crate) fn take_fresh(&self, shard: u32) -> Option<u32> {
        let (start, end) = self.layout.range(self.capacity, shard);
        let len = end - start;
        let count = self.fresh_taken(shard);
        let mut taken = count.load(Ordering::Relaxed);
        loop {
            if taken >= len {
                return None;
            }
            match count.compare_exchange_weak(
                taken,
                taken + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(start + taken),
                Err(now) => taken = now,
            }
        }
    }

    /// `true` when shard `shard` has never-used slots left (a snapshot; the answer
    /// only ever changes from `true` to `false`).
    #[inline]
    pub(super) fn has_fresh(&self, shard: u32) -> bool {
        let (start, end) = self.layout.range(self.capacity, shard);
        // Relaxed: see `take_fresh`.
        self.fresh_taken(shard).load(Ordering::Relaxed) < end - start
    }

    /// The shards other than `home`, each once, in the order a thread whose home ran
    /// dry visits them: downwards (wrapping), starting at the shard the last successful
    /// steal took from, or at the last shard before any steal. Downwards, because
    /// threads hold the lowest free indices, so the highest shards are the ones no
    /// live thread calls home; and from the last steal, so that a thread that fills
    /// the whole pool from one home finds the next shard with room at once instead of
    /// walking past every shard it already emptied.
    #[inline]
    pub(super) fn steal_order(
        &self,
        home: u32,
        transit: &Transit,
    ) -> impl Iterator<Item = u32> + use<> {
        let shards = self.layout.shards;
        // Relaxed: a hint; any shard number is correct, and it orders nothing.
        let hint = transit.steal_hint.load(Ordering::Relaxed);
        let start = if hint < shards { hint } else { shards - 1 };
        (0..shards)
            .map(move |k| {
                if k <= start {
                    start - k
                } else {
                    start + shards - k
                }
            })
            .filter(move |&shard| shard != home)
    }

    /// Takes a free slot from shard `home` or, failing that, from any other shard (in
    /// [`steal_order`](Self::steal_order)), or `None` if each shard was empty when
    /// visited. In each shard it looks at the stacks first, then at the never-used
    /// slots.
    ///
    /// A `None` means "full" only if no chain was in transit meanwhile: see
    /// [`Transit`] and the module docs.
    #[cold]
    #[inline(never)]
    pub(crate) fn scan(&self, home: u32, transit: &Transit, stock: &Stock) -> (Option<u32>, bool) {
        let popped = self.pop_any(home, transit, stock);
        if popped.0.is_some() {
            return popped;
        }
        for shard in self.steal_order(home, transit) {
            let popped = self.pop_any(shard, transit, stock);
            if popped.0.is_some() {
                transit.stole_from(shard);
                return popped;
            }
        }
        (None, false)
    }

    /// Takes a free slot of shard `shard`: from its stacks (see [`pop`](Self::pop)),
    /// or else a never-used one. Peeks first: an empty shard costs shared reads of its
    /// lines, not exclusive ones.
    #[inline]
    fn pop_any(&self, shard: u32, transit: &Transit, stock: &Stock) -> (Option<u32>, bool) {
        if !self.stacks_empty(shard) {
            let popped = self.pop(shard, transit, stock);
            if popped.0.is_some() {
                return popped;
            }
        }
        (self.take_fresh(shard), false)
    }
}
