//! The heap's lock: a small spin lock on one atomic word.
//!
//! Invariant: at most one [`Guard`] exists per lock at a time. Taking the lock is a
//! compare-exchange with acquire ordering and dropping the guard a release store, so
//! everything one holder wrote is seen by the next holder. The heap's critical sections
//! are a TLSF call and a few counters (constant time, no allocation, no user code), so
//! a waiter spins briefly; with `std` it yields its time slice after a few dozen spins,
//! so a holder that was preempted on a busy machine gets the core back.
//!
//! The atomic comes from `crate::sync`, so a `--cfg loom` build sees it (under loom a
//! waiter yields to loom's scheduler on every spin), and the heap's state sits in
//! `crate::sync`'s cell: `tests/loom/loom_heap.rs` checks mutual exclusion and the
//! holders' happens-before edges.
use crate::sync::{spin_hint, AtomicU32, Ordering};

/// A spin lock with no data of its own: the heap keeps its state beside it.
pub(super) struct SpinLock {
    /// 0 when free, 1 when held.
    state: AtomicU32,
}

/// Proof that the lock is held; dropping it releases the lock.
pub(super) struct Guard<'a> {
    lock: &'a SpinLock,
}

impl SpinLock {
    /// A free lock.
    pub(super) fn new() -> SpinLock {
        SpinLock {
            state: AtomicU32::new(0),
        }
    }

    /// Waits until the lock is free and takes it.
    #[inline]
    pub(super) fn lock(&self) -> Guard<'_> {
        // Acquire: what the previous holder wrote before its release is visible here.
        if self
            .state
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_slow();
        }
        Guard { lock: self }
    }

    #[cold]
    fn lock_slow(&self) {
        let mut spins = 0u32;
        loop {
            // Read before trying again, so waiters share the line until it is freed.
            while self.state.load(Ordering::Relaxed) != 0 {
                spins = spins.wrapping_add(1);
                #[cfg(all(feature = "std", not(loom)))]
                if spins % 64 == 0 {
                    std::thread::yield_now();
                    continue;
                }
                spin_hint();
            }
            if self
                .state
                .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

impl Drop for Guard<'_> {
    #[inline]
    fn drop(&mut self) {
        // Release: the next holder's acquire sees everything written under this guard.
        self.lock.state.store(0, Ordering::Release);
    }
}
