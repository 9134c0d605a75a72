//! Waiting for a slot: the `_wait` and `_wait_timeout` loads sleep on the slots' futex
//! until another thread drops a `Loaded` (the back-pressure of a frame pipeline).
//!
//! This module owns the free/wait handshake. Invariant (no lost wake-up): a waiter
//! announces itself (`waiters += 1`), then reads the futex word, then looks for a free
//! slot, and sleeps only while the word is unchanged; a thread that frees a slot stores
//! `FREE`, then reads `waiters`, and bumps the word if anyone waits. Both sides put a
//! `SeqCst` fence between their write and their read, so at least one of them sees the
//! other's write: either the waiter finds the freed slot, or the freer sees the waiter
//! and bumps the word (after which the waiter's sleep returns, or its look finds the
//! slot, since the bump is ordered after the free). `tests/loom/loom_slots.rs` checks it.

// A `SlotError` keeps its names inline (no heap, so it works without `alloc`): it is
// large, but built only on the cold path, and a `Result` of it costs nothing more on
// the success path than the `Loaded` it holds.
#![allow(clippy::result_large_err)]

use core::time::Duration;

use crate::concurrent::ConcurrentScope;
use crate::scope::ScopeStack;
use crate::sync::{fence, Deadline, Ordering};

use super::carve::Slots;
use super::error::{SlotError, SlotErrorKind};
use super::loaded::{Loaded, Plain, Shared, Task};
use super::root::SlotRoot;
use super::task_scope::TaskScope;

impl Slots {
    /// Wakes the threads waiting for a slot, if any (called after a slot is freed).
    #[inline]
    pub(crate) fn wake(&self) {
        // Pairs with the fence in `claim_wait`: see the module docs.
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::Relaxed) != 0 {
            // Threads sleeping in a blocking load, and tasks waiting in an async one
            // (`super::tasks`), count in the same `waiters`.
            self.futex.bump_and_wake_all();
            self.tasks.wake_all(&self.waiters);
        }
    }

    /// Claims a slot, sleeping while none is free, until `deadline` (`None`: forever).
    fn claim_wait(&self, deadline: Option<&Deadline>) -> Option<usize> {
        loop {
            if let Some(i) = self.claim() {
                return Some(i);
            }
            let left = match deadline {
                Some(d) => match d.left() {
                    Some(left) if left.is_zero() => return None,
                    left => left,
                },
                None => None,
            };
            self.waiters.fetch_add(1, Ordering::Relaxed);
            let seen = self.futex.load();
            // Pairs with the fence in `wake`: see the module docs.
            fence(Ordering::SeqCst);
            let got = self.claim();
            if got.is_none() {
                match left {
                    Some(left) => self.futex.wait_timeout(seen, left),
                    None => self.futex.wait(seen),
                }
            }
            self.waiters.fetch_sub(1, Ordering::Relaxed);
            if got.is_some() {
                return got;
            }
        }
    }

    /// Like [`load`](Self::load), but when every slot is held, sleeps until another
    /// thread drops a [`Loaded`] and takes its slot. The thread sleeps on a futex (it
    /// does not spin), and no wake-up is lost. Requires the `std` feature.
    ///
    /// # Panics
    /// When the root does not fit in the slot (see [`load`](Self::load); that is
    /// the only error left once a slot is had).
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Number = for<'s> u32);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 1, 1024);
    ///     let held = slots.load::<Number>("first", |_| 1).unwrap();
    ///     std::thread::scope(|t| {
    ///         let waiter = t.spawn(|| slots.load_wait::<Number>("second", |_| 2).with(|n| *n));
    ///         std::thread::sleep(std::time::Duration::from_millis(10));
    ///         drop(held); // frees the slot and wakes the waiter
    ///         assert_eq!(waiter.join().unwrap(), 2);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn load_wait<R: SlotRoot>(
        &self,
        name: &str,
        build: impl for<'x> FnOnce(&'x ScopeStack<'x>) -> R::Of<'x>,
    ) -> Loaded<'_, R> {
        let index = self
            .claim_wait(None)
            .expect("a wait without deadline ends with a slot");
        // SAFETY: this thread just claimed slot `index`.
        match unsafe { self.build_plain::<R, Plain>(index, name, |s| Ok(build(s))) } {
            Ok(l) => l,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`load_wait`](Self::load_wait), but gives up after about `timeout` with a
    /// [`SlotErrorKind::TimedOut`] error that names the slots' holders. A zero timeout
    /// is one [`load`](Self::load) (whose error is then `Full`).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use scope_stack::{slot_root, LinearAllocator, SlotErrorKind};
    /// slot_root!(struct Unit = for<'s> ());
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("frames", 1, 1024);
    ///     let _held = slots.load::<Unit>("frame 1", |_| ()).unwrap();
    ///     let started = Instant::now();
    ///     let err = slots.load_wait_timeout::<Unit>("frame 2", Duration::from_millis(20), |_| ()).unwrap_err();
    ///     assert_eq!(err.kind(), SlotErrorKind::TimedOut);
    ///     assert!(started.elapsed() >= Duration::from_millis(20));
    ///     assert!(err.to_string().contains("slot 0 holds \"frame 1\""));
    /// });
    /// ```
    pub fn load_wait_timeout<R: SlotRoot>(
        &self,
        name: &str,
        timeout: Duration,
        build: impl for<'x> FnOnce(&'x ScopeStack<'x>) -> R::Of<'x>,
    ) -> Result<Loaded<'_, R>, SlotError> {
        if timeout.is_zero() {
            return self.load::<R>(name, build);
        }
        let Some(index) = self.claim_wait(Some(&Deadline::after(timeout))) else {
            return Err(SlotError::busy(SlotErrorKind::TimedOut, self, name));
        };
        // SAFETY: this thread just claimed slot `index`.
        unsafe { self.build_plain::<R, Plain>(index, name, |s| Ok(build(s))) }
    }

    /// [`load_task`](Self::load_task) that sleeps while every slot is held (see
    /// [`load_wait`](Self::load_wait)); a thread pool's job that serves one request
    /// waits here for a slot.
    ///
    /// # Panics
    /// As [`load_wait`](Self::load_wait).
    ///
    /// ```
    /// use scope_stack::{slot_root, Place, Slots};
    /// slot_root!(struct Reply = for<'s> &'s str);
    ///
    /// let requests = Slots::leak("requests", 2, 4096)?;
    /// let replies: Vec<String> = std::thread::scope(|t| {
    ///     let jobs: Vec<_> = (0..6)
    ///         .map(|n| t.spawn(move || {
    ///             let reply = requests.load_task_wait::<Reply>("job", |a| a.alloc_fmt(format_args!("{n}")));
    ///             reply.with(|r| r.to_string())
    ///         }))
    ///         .collect();
    ///     jobs.into_iter().map(|j| j.join().unwrap()).collect()
    /// });
    /// assert_eq!(replies.concat(), "012345");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[track_caller]
    pub fn load_task_wait<R: SlotRoot>(
        &self,
        name: &str,
        build: impl for<'x> FnOnce(TaskScope<'x>) -> R::Of<'x>,
    ) -> Loaded<'_, R, Task> {
        let index = self
            .claim_wait(None)
            .expect("a wait without deadline ends with a slot");
        // SAFETY: this thread just claimed slot `index`; `build` sees the handle only
        // through a `TaskScope`.
        match unsafe { self.build_plain::<R, Task>(index, name, |s| Ok(build(TaskScope::new(s)))) }
        {
            Ok(l) => l,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`load_task_wait`](Self::load_task_wait) with a time limit; see
    /// [`load_wait_timeout`](Self::load_wait_timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::{slot_root, SlotErrorKind, Slots};
    /// slot_root!(struct Unit = for<'s> ());
    ///
    /// let requests = Slots::leak("requests", 1, 4096)?;
    /// let _busy = requests.load_task::<Unit>("first", |_| ())?;
    /// let err = requests
    ///     .load_task_wait_timeout::<Unit>("second", Duration::from_millis(5), |_| ())
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), SlotErrorKind::TimedOut);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`SlotErrorKind::TimedOut`] when no slot was freed in time (`Full` for a zero
    /// timeout); [`SlotErrorKind::Alloc`] when the root does not fit.
    pub fn load_task_wait_timeout<R: SlotRoot>(
        &self,
        name: &str,
        timeout: Duration,
        build: impl for<'x> FnOnce(TaskScope<'x>) -> R::Of<'x>,
    ) -> Result<Loaded<'_, R, Task>, SlotError> {
        if timeout.is_zero() {
            return self.load_task::<R>(name, build);
        }
        let Some(index) = self.claim_wait(Some(&Deadline::after(timeout))) else {
            return Err(SlotError::busy(SlotErrorKind::TimedOut, self, name));
        };
        // SAFETY: this thread just claimed slot `index`; `build` sees the handle only
        // through a `TaskScope`.
        unsafe { self.build_plain::<R, Task>(index, name, |s| Ok(build(TaskScope::new(s)))) }
    }

    /// [`load_concurrent`](Self::load_concurrent) that sleeps while every slot is held:
    /// the frame ring's back-pressure. The game thread blocks here only when every
    /// frame is still in flight.
    ///
    /// # Panics
    /// As [`load_wait`](Self::load_wait).
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Number = for<'s> u64);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("renderer", |renderer| {
    ///     let frames = renderer.new_slots("frames", 2, 16 << 10);
    ///     let (send, receive) = std::sync::mpsc::channel();
    ///     std::thread::scope(|t| {
    ///         let render = t.spawn(move || receive.iter().map(|f: scope_stack::Loaded<'_, Number, _>| f.with(|n| *n)).sum::<u64>());
    ///         for n in 0..20 {
    ///             send.send(frames.load_concurrent_wait::<Number>("frame", |_| n)).unwrap();
    ///         }
    ///         drop(send);
    ///         assert_eq!(render.join().unwrap(), 190);
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn load_concurrent_wait<R: SlotRoot>(
        &self,
        name: &str,
        build: impl for<'x> FnOnce(&'x ConcurrentScope<'x>) -> R::Of<'x>,
    ) -> Loaded<'_, R, Shared> {
        let index = self
            .claim_wait(None)
            .expect("a wait without deadline ends with a slot");
        // SAFETY: this thread just claimed slot `index`.
        match unsafe { self.build_shared::<R>(index, name, |s| Ok(build(s))) } {
            Ok(l) => l,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`load_concurrent_wait`](Self::load_concurrent_wait) with a time limit; see
    /// [`load_wait_timeout`](Self::load_wait_timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::{slot_root, LinearAllocator, SlotErrorKind};
    /// slot_root!(struct Unit = for<'s> ());
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("renderer", |renderer| {
    ///     let frames = renderer.new_slots("frames", 1, 16 << 10);
    ///     let _in_flight = frames.load_concurrent::<Unit>("frame 1", |_| ()).unwrap();
    ///     let err = frames
    ///         .load_concurrent_wait_timeout::<Unit>("frame 2", Duration::from_millis(5), |_| ())
    ///         .unwrap_err();
    ///     assert_eq!(err.kind(), SlotErrorKind::TimedOut);
    /// });
    /// ```
    pub fn load_concurrent_wait_timeout<R: SlotRoot>(
        &self,
        name: &str,
        timeout: Duration,
        build: impl for<'x> FnOnce(&'x ConcurrentScope<'x>) -> R::Of<'x>,
    ) -> Result<Loaded<'_, R, Shared>, SlotError> {
        if timeout.is_zero() {
            return self.load_concurrent::<R>(name, build);
        }
        let Some(index) = self.claim_wait(Some(&Deadline::after(timeout))) else {
            return Err(SlotError::busy(SlotErrorKind::TimedOut, self, name));
        };
        // SAFETY: this thread just claimed slot `index`.
        unsafe { self.build_shared::<R>(index, name, |s| Ok(build(s))) }
    }
}
