//! Stealing from the owners' caches, and the exact "full" check.
//!
//! An insert that found every shared stack, every remote stack and every never-used slot
//! empty still has two places to look: the owners' caches (`owner.rs`), which only
//! their owners touch, and the chains that were in transit while it looked. Both are
//! handled here, by one slow operation, [`FreeLists::drain_caches`]:
//!
//! 1. take the pool's steal lock (one thief or full check at a time);
//! 2. close the owners' gate with [`REQUEST`], [`heavy`] fence, and wait until each
//!    owner is outside its bracket: from now on no cache changes but by our hand
//!    (`owner.rs`, "The handshake"), and the owners' own inserts and frees take the
//!    shared paths;
//! 3. if some cache holds slots, take the upper half of the first such cache (in the
//!    steal order), keep its top slot for the caller and push the rest onto that
//!    shard's shared stack, where every thread can reach it with one compare-exchange:
//!    one handshake (one system call) pays for up to half a shard of inserts;
//! 4. if every cache is empty, prove the pool full with a double collect of every head
//!    and count (`full.rs`), or report that something moved, and the caller scans again;
//! 5. open the gate (`Release`) and the lock.
//!
//! Invariant: the lock is held, and the gate has [`REQUEST`], whenever a thread other
//! than a cache's owner reads or writes that cache. The lock is a spin lock with a
//! yield: only inserts into a pool that is full, or nearly so, take it.

use super::lists::{FreeLists, NIL};
use super::owner::{Gate, REQUEST};
use super::stock::Stock;
use super::transit::Transit;
use crate::sync::asymmetric::heavy;
use crate::sync::Ordering;

/// What [`FreeLists::drain_caches`] found.
pub(crate) enum Drained {
    /// A slot stolen from a cache, and whether waiters must be woken.
    Got(u32, bool),
    /// Every slot was in use at one moment: the pool is full.
    Full,
    /// Something moved while it looked: scan again.
    Changed,
}

impl Transit {
    /// Takes the steal lock (module docs, step 1).
    fn lock(&self) {
        let mut spins = 0u32;
        loop {
            // Acquire: the previous holder's writes (caches it stole from) are seen.
            if self
                .steal_lock
                .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
            spins = spins.wrapping_add(1);
            backoff(spins);
        }
    }

    /// Gives the steal lock back.
    fn unlock(&self) {
        // Release: pairs with the next `lock`.
        self.steal_lock.store(0, Ordering::Release);
    }
}

/// Waits a little while another thread finishes (a lock holder, an owner's bracket):
/// spins at first, then yields the core to it (with `std`).
#[inline]
pub(crate) fn backoff(spins: u32) {
    #[cfg(all(feature = "std", not(loom)))]
    if spins > 64 {
        std::thread::yield_now();
        return;
    }
    let _ = spins;
    crate::sync::spin_hint();
}

impl FreeLists {
    /// Closes the gate with `bits` and waits until no owner is inside a bracket that saw
    /// it open (module docs, step 2; `waiters.rs` for waiters).
    pub(crate) fn close_gate(&self, gate: &Gate, bits: u32) {
        // Relaxed: ordered against the `busy` loads below by the heavy fence.
        gate.0.fetch_add(bits, Ordering::Relaxed);
        heavy();
        for shard in 0..self.layout.shards {
            let mut spins = 0u32;
            // Acquire: pairs with the owner's Release at the end of its bracket, so the
            // cache it left is what we read.
            while self.line(shard).busy.load(Ordering::Acquire) != 0 {
                spins = spins.wrapping_add(1);
                backoff(spins);
            }
        }
    }

    /// Opens the gate again: takes `bits` off.
    pub(crate) fn open_gate(&self, gate: &Gate, bits: u32) {
        // Release: an owner whose bracket reads the gate open (Acquire) sees what we
        // changed in its cache.
        gate.0.fetch_sub(bits, Ordering::Release);
    }

    /// Steals from the owners' caches, or (with `check_full`) proves the pool full
    /// (module docs). `home` is where the caller looked first; the caches are visited
    /// from the steal order. Without `check_full`, finding every cache empty answers
    /// [`Drained::Changed`].
    #[cold]
    #[inline(never)]
    pub(crate) fn drain_caches(
        &self,
        home: u32,
        transit: &Transit,
        stock: &Stock,
        gate: &Gate,
        check_full: bool,
    ) -> Drained {
        transit.lock();
        self.close_gate(gate, REQUEST);
        let order = core::iter::once(home).chain(self.steal_order(home, transit));
        let mut found = Drained::Changed;
        let mut stole = false;
        for shard in order {
            if let Some((index, wake)) = self.steal_half(shard, stock) {
                found = Drained::Got(index, wake);
                stole = true;
                break;
            }
        }
        if !stole && check_full && self.proven_full(transit) {
            found = Drained::Full;
        }
        self.open_gate(gate, REQUEST);
        transit.unlock();
        found
    }

    /// `true` when some shard's cache looks non-empty (a snapshot, one relaxed load per
    /// shard): worth a handshake to steal from.
    pub(crate) fn any_cache_holds_slots(&self) -> bool {
        (0..self.layout.shards).any(|shard| !self.cache_empty(shard))
    }

    /// Takes the upper half (rounded up) of shard `shard`'s cache: returns its top slot
    /// and pushes the rest onto the shard's shared stack. `None` if the cache is empty.
    /// The caller holds the lock and closed the gate.
    fn steal_half(&self, shard: u32, stock: &Stock) -> Option<(u32, bool)> {
        let line = self.line(shard);
        // Relaxed: the cache is frozen and its last writer's Release was acquired
        // through `busy` (or, for our own earlier steals, through the lock).
        let top = line.cache.load(Ordering::Relaxed);
        if top == NIL {
            return None;
        }
        let mut len = 0u32;
        let mut at = top;
        while at != NIL {
            len += 1;
            at = self.link(at).load(Ordering::Relaxed);
        }
        // The top `ceil(len / 2)` slots: ours is the first, the rest go on the stack.
        let take = len.div_ceil(2);
        let mut last = top;
        for _ in 1..take {
            last = self.link(last).load(Ordering::Relaxed);
        }
        let rest = self.link(last).load(Ordering::Relaxed);
        line.cache.store(rest, Ordering::Relaxed);
        let wake = if take > 1 {
            let second = self.link(top).load(Ordering::Relaxed);
            // SeqCst: Release as any push (the run's links and its slots' past lives);
            // SeqCst for the full check's double collect (module docs).
            self.push_run(
                self.head(shard),
                shard,
                second,
                last,
                Ordering::SeqCst,
                stock,
            )
        } else {
            false
        };
        Some((top, wake))
    }
}
