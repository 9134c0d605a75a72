//! Waiting for a full pool: `insert_wait` sleeps on the pool's futex until a slot is
//! freed; `insert_wait_timeout` gives up after a deadline.
//!
//! This module owns blocking inserts. Invariant: a waiter sleeps only after marking
//! every shard's head "empty, with waiters", and the push that replaces a mark wakes all
//! sleepers, so a free that happens after the waiter's last look is never missed.

use super::{Pool, PoolBox};
impl<'s, T> Pool<'s, T> {
    /// Like [`insert`](Self::insert), but when the pool is full, sleeps until a slot
    /// is freed and then tries again, as often as needed.
    ///
    /// The thread sleeps on a futex, so it does not spin a core. A thread that frees a
    /// slot while others wait wakes all of them (one will get the slot; the others go
    /// back to sleep); no wake-up is lost. Requires the `std` feature.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = &*level.new_pool::<u32>(1);
    ///     let held = pool.insert(1).unwrap();
    ///     std::thread::scope(|s| {
    ///         let waiter = s.spawn(|| *pool.insert_wait(2));
    ///         std::thread::sleep(std::time::Duration::from_millis(10));
    ///         drop(held); // frees the slot and wakes the waiter
    ///         assert_eq!(waiter.join().unwrap(), 2);
    ///     });
    /// });
    /// ```
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn insert_wait(&self, mut value: T) -> PoolBox<'_, T> {
        loop {
            // Without the full check: the gate and the marks below decide whether to
            // sleep, and stolen cache slots come back through the next round.
            let who = self.core.home();
            match self.insert_searching(who.shard, who, value, false) {
                Ok(b) => return b,
                Err(v) => value = v,
            }
            // Read the futex *before* announcing ourselves (see `announce_waiter`): a
            // push that sees our announcement bumps it past this value. We announce on
            // every shard, so a free into any of them wakes us; a shard that got a
            // slot meanwhile sends us back to `insert`.
            let seen = self.core.quiet.futex.load();
            // Owners' frees go to the shared stacks while `waiting` lives, and wake us.
            let waiting = self.core.free.start_waiting(&self.core.quiet.gate);
            let all_marked = waiting.may_sleep();
            if all_marked {
                self.core.quiet.futex.wait(seen);
            }
            drop(waiting);
        }
    }

    /// Like [`insert_wait`](Self::insert_wait), but gives up after about `timeout`:
    /// the value comes back if no slot could be had by then.
    ///
    /// The thread sleeps (it does not spin) and wakes when any slot of any shard is
    /// freed, as in `insert_wait`; no wake-up is lost, so it returns as soon as it
    /// gets a slot, long before the timeout if one frees early. It sleeps at most about
    /// `timeout` in all (plus the scheduler's wake-up latency), trying once more at
    /// the end. A zero timeout is one [`insert`](Self::insert). Timed sleeps use std's
    /// `Mutex` + `Condvar::wait_timeout` (see the `Futex` notes in the source), so a
    /// free that wakes waiters takes one more uncontended lock. Requires the `std`
    /// feature.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// use std::time::{Duration, Instant};
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = &*level.new_pool::<u32>(1);
    ///     let held = pool.insert(1).unwrap();
    ///     // Nobody frees: the value comes back after about 20 ms.
    ///     let started = Instant::now();
    ///     assert_eq!(pool.insert_wait_timeout(2, Duration::from_millis(20)).err(), Some(2));
    ///     assert!(started.elapsed() >= Duration::from_millis(20));
    ///     std::thread::scope(|s| {
    ///         let waiter = s.spawn(|| pool.insert_wait_timeout(3, Duration::from_secs(60)).map(|b| *b));
    ///         std::thread::sleep(Duration::from_millis(10));
    ///         drop(held); // wakes the waiter long before its minute is up
    ///         assert_eq!(waiter.join().unwrap(), Ok(3));
    ///     });
    /// });
    /// ```
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn insert_wait_timeout(
        &self,
        mut value: T,
        timeout: core::time::Duration,
    ) -> Result<PoolBox<'_, T>, T> {
        let deadline = crate::sync::Deadline::after(timeout);
        loop {
            // Without the full check: the gate and the marks below decide whether to
            // sleep, and stolen cache slots come back through the next round.
            let who = self.core.home();
            match self.insert_searching(who.shard, who, value, false) {
                Ok(b) => return Ok(b),
                Err(v) => value = v,
            }
            let left = deadline.left();
            if left.is_some_and(|left| left.is_zero()) {
                return Err(value);
            }
            // As in `insert_wait`: read the futex, then announce on every shard.
            let seen = self.core.quiet.futex.load();
            // Owners' frees go to the shared stacks while `waiting` lives, and wake us.
            let waiting = self.core.free.start_waiting(&self.core.quiet.gate);
            let all_marked = waiting.may_sleep();
            if all_marked {
                match left {
                    Some(left) => self.core.quiet.futex.wait_timeout(seen, left),
                    None => self.core.quiet.futex.wait(seen),
                }
            }
            drop(waiting);
        }
    }
}
