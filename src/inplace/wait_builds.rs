//! The waiting in-place loads with a build step (features `rkyv` and `std`):
//! [`Slots::load_archived_wait_with`], [`Slots::load_archived_wait_timeout_with`] and
//! their concurrent and task forms. A loader thread that streams levels into a ring of
//! slots copies each archive once, builds the level's runtime half in the same slot,
//! and blocks only while every slot is held.
//!
//! Each is the waiting load of [`waits`](super::waits) whose build also runs the step
//! (`builds::step`), so the waiting, and the invariant that makes the caller's `Loaded`
//! from the `Option` root, are that module's and nothing of them is repeated here. A
//! step's error wins over the slot's when both happen (the step ran, so the archive was
//! valid and the slot was had).
#![allow(clippy::result_large_err)]

use core::time::Duration;

use rkyv::api::high::HighValidator;
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor;
use rkyv::{Archive, Archived};

use crate::concurrent::ConcurrentScope;
use crate::scope::ScopeStack;
use crate::slots::{Loaded, Shared, SlotRoot, Slots, Task, TaskScope};

use super::builds::step;
use super::error::BuildError;
use super::root::InPlaceRoot;
use super::source::Source;
use super::waits::{payload, Attempt, Trial, FOREVER};

impl Slots {
    /// [`load_archived_with`](Self::load_archived_with) that sleeps while every slot is
    /// held, until another thread drops a [`Loaded`] (see
    /// [`load_archived_wait`](Self::load_archived_wait)). The archive is copied once a
    /// slot is had, validated, and `build` makes the runtime half in the same slot.
    ///
    /// # Errors
    /// As [`load_archived_with`](Self::load_archived_with), except that a full set is
    /// waited out.
    ///
    /// ```
    /// use scope_stack::inplace::BuildError;
    /// use scope_stack::{slot_root, LinearAllocator, ScopeStack};
    ///
    /// #[derive(rkyv::Archive, rkyv::Serialize)]
    /// struct Level {
    ///     hp: Vec<u32>,
    /// }
    /// slot_root!(struct Total = for<'s> u32);
    /// let cook = |hp: Vec<u32>| rkyv::to_bytes::<rkyv::rancor::Error>(&Level { hp }).unwrap();
    ///
    /// /// The build step: the runtime half is the level's total hit points.
    /// fn total<'s>(l: &'s ArchivedLevel, _: &'s ScopeStack<'s>) -> Result<u32, &'static str> {
    ///     match l.hp.iter().map(|h| h.to_native()).sum() {
    ///         0 => Err("no enemies"),
    ///         n => Ok(n),
    ///     }
    /// }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 4096);
    ///     let playing = levels.load_archived_wait_with::<Level, Total, _>("forest", &cook(vec![30]), total).unwrap();
    ///     std::thread::scope(|t| {
    ///         let loader = t.spawn(|| {
    ///             let next = levels.load_archived_wait_with::<Level, Total, _>("castle", &cook(vec![30, 80]), total);
    ///             next.unwrap().with(|l| l.runtime)
    ///         });
    ///         std::thread::sleep(std::time::Duration::from_millis(10));
    ///         drop(playing); // frees the slot and wakes the loader
    ///         assert_eq!(loader.join().unwrap(), 110);
    ///     });
    ///     // A step that refuses the level: its error, and the slot is free again.
    ///     let err = levels.load_archived_wait_with::<Level, Total, _>("empty", &cook(vec![]), total);
    ///     assert!(matches!(err, Err(BuildError::Build("no enemies"))));
    ///     assert_eq!(levels.loaded(), 0);
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_wait_with<T, U, B>(
        &self,
        name: &str,
        source: impl Source,
        build: impl for<'x> FnOnce(&'x Archived<T>, &'x ScopeStack<'x>) -> Result<U::Of<'x>, B>,
    ) -> Result<Loaded<'_, InPlaceRoot<T, U>>, BuildError<B>>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
        U: SlotRoot,
    {
        self.load_archived_wait_timeout_with::<T, U, B>(name, FOREVER, source, build)
    }

    /// [`load_archived_wait_with`](Self::load_archived_wait_with) that gives up after
    /// about `timeout`; see [`load_archived_wait_timeout`](Self::load_archived_wait_timeout).
    ///
    /// # Errors
    /// As [`load_archived_with`](Self::load_archived_with); when no slot was freed in
    /// time, [`BuildError::Load`] with
    /// [`LoadErrorKind::TimedOut`](super::LoadErrorKind::TimedOut), and the step did
    /// not run.
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::inplace::LoadErrorKind;
    /// use scope_stack::{slot_root, ScopeStack, Slots};
    ///
    /// slot_root!(struct Doubled = for<'s> u32);
    ///
    /// fn double<'s>(n: &'s rkyv::Archived<u32>, _: &'s ScopeStack<'s>) -> Result<u32, ()> {
    ///     Ok(n.to_native() * 2)
    /// }
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&21u32).unwrap();
    /// let held = levels.load_archived::<u32>("held", &file).unwrap();
    /// let err = levels
    ///     .load_archived_wait_timeout_with::<u32, Doubled, _>("next", Duration::from_millis(5), &file, double)
    ///     .unwrap_err();
    /// assert_eq!(err.load_error().unwrap().kind(), LoadErrorKind::TimedOut);
    /// drop(held);
    /// let next = levels
    ///     .load_archived_wait_timeout_with::<u32, Doubled, _>("next", Duration::from_millis(5), &file, double)
    ///     .unwrap();
    /// assert_eq!(next.with(|n| n.runtime), 42);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_wait_timeout_with<T, U, B>(
        &self,
        name: &str,
        timeout: Duration,
        source: impl Source,
        build: impl for<'x> FnOnce(&'x Archived<T>, &'x ScopeStack<'x>) -> Result<U::Of<'x>, B>,
    ) -> Result<Loaded<'_, InPlaceRoot<T, U>>, BuildError<B>>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
        U: SlotRoot,
    {
        let mut trial = Trial::new(source.len());
        let got = self.load_wait_timeout::<Attempt<InPlaceRoot<T, U>>>(name, timeout, |s| {
            trial.attempt(|c, kept| {
                let bytes = c.place::<T, _>(s, source)?;
                let archived = c.check::<T>(bytes)?;
                step(archived, kept, |a| build(a, s))
            })
        });
        trial.finish(self, name, got, |l| l.with_mut(|root, _| payload(root)))
    }

    /// [`load_archived_concurrent_with`](Self::load_archived_concurrent_with) that
    /// sleeps while every slot is held; see
    /// [`load_archived_wait_with`](Self::load_archived_wait_with). The level may then be
    /// sent to another thread.
    ///
    /// # Errors
    /// As [`load_archived_wait_with`](Self::load_archived_wait_with).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    ///
    /// slot_root!(struct Len = for<'s> usize);
    ///
    /// let levels = Slots::leak("levels", 2, 4096)?;
    /// let (send, receive) = std::sync::mpsc::channel();
    /// let loader = std::thread::spawn(move || {
    ///     for n in 1..=4usize {
    ///         let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![0u8; n]).unwrap();
    ///         let level = levels
    ///             .load_archived_concurrent_wait_with::<Vec<u8>, Len, ()>("level", &file, |v, _| Ok(v.len()))
    ///             .unwrap();
    ///         send.send(level).unwrap();
    ///     }
    /// });
    /// assert_eq!(receive.iter().map(|l| l.with(|l| l.runtime)).sum::<usize>(), 10);
    /// loader.join().unwrap();
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_concurrent_wait_with<T, U, B>(
        &self,
        name: &str,
        source: impl Source,
        build: impl for<'x> FnOnce(&'x Archived<T>, &'x ConcurrentScope<'x>) -> Result<U::Of<'x>, B>,
    ) -> Result<Loaded<'_, InPlaceRoot<T, U>, Shared>, BuildError<B>>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
        U: SlotRoot,
    {
        self.load_archived_concurrent_wait_timeout_with::<T, U, B>(name, FOREVER, source, build)
    }

    /// [`load_archived_concurrent_wait_with`](Self::load_archived_concurrent_wait_with)
    /// with a time limit; see
    /// [`load_archived_wait_timeout_with`](Self::load_archived_wait_timeout_with).
    ///
    /// # Errors
    /// As [`load_archived_wait_timeout_with`](Self::load_archived_wait_timeout_with).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::inplace::LoadErrorKind;
    /// use scope_stack::{slot_root, Slots};
    ///
    /// slot_root!(struct Nothing = for<'s> ());
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&3u16).unwrap();
    /// let _held = levels.load_archived_concurrent::<u16>("held", &file).unwrap();
    /// let err = levels
    ///     .load_archived_concurrent_wait_timeout_with::<u16, Nothing, ()>("next", Duration::from_millis(5), &file, |_, _| Ok(()))
    ///     .unwrap_err();
    /// assert_eq!(err.load_error().unwrap().kind(), LoadErrorKind::TimedOut);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_concurrent_wait_timeout_with<T, U, B>(
        &self,
        name: &str,
        timeout: Duration,
        source: impl Source,
        build: impl for<'x> FnOnce(&'x Archived<T>, &'x ConcurrentScope<'x>) -> Result<U::Of<'x>, B>,
    ) -> Result<Loaded<'_, InPlaceRoot<T, U>, Shared>, BuildError<B>>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
        U: SlotRoot,
    {
        let mut trial = Trial::new(source.len());
        let got =
            self.load_concurrent_wait_timeout::<Attempt<InPlaceRoot<T, U>>>(name, timeout, |s| {
                trial.attempt(|c, kept| {
                    let bytes = c.place::<T, _>(s, source)?;
                    let archived = c.check::<T>(bytes)?;
                    step(archived, kept, |a| build(a, s))
                })
            });
        trial.finish(self, name, got, |l| l.with_mut(|root, _| payload(root)))
    }

    /// [`load_archived_task_with`](Self::load_archived_task_with) that sleeps while
    /// every slot is held; see [`load_archived_wait_with`](Self::load_archived_wait_with).
    ///
    /// # Errors
    /// As [`load_archived_wait_with`](Self::load_archived_wait_with).
    ///
    /// ```
    /// use scope_stack::{slot_root, Place, Slots};
    ///
    /// slot_root!(struct Doubled = for<'s> &'s [u32]);
    ///
    /// let chunks = Slots::leak("chunks", 2, 4096)?;
    /// let sums: Vec<u32> = std::thread::scope(|t| {
    ///     let jobs: Vec<_> = (0..4u32)
    ///         .map(|n| t.spawn(move || {
    ///             let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![n, n]).unwrap();
    ///             let chunk = chunks
    ///                 .load_archived_task_wait_with::<Vec<u32>, Doubled, ()>("chunk", &file, |v, arena| {
    ///                     Ok(&*arena.alloc_iter_pod(v.iter().map(|x| x.to_native() * 2)))
    ///                 })
    ///                 .unwrap();
    ///             chunk.with(|c| c.runtime.iter().sum())
    ///         }))
    ///         .collect();
    ///     jobs.into_iter().map(|j| j.join().unwrap()).collect()
    /// });
    /// assert_eq!(sums, [0, 4, 8, 12]);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_task_wait_with<T, U, B>(
        &self,
        name: &str,
        source: impl Source,
        build: impl for<'x> FnOnce(&'x Archived<T>, TaskScope<'x>) -> Result<U::Of<'x>, B>,
    ) -> Result<Loaded<'_, InPlaceRoot<T, U>, Task>, BuildError<B>>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
        U: SlotRoot,
    {
        self.load_archived_task_wait_timeout_with::<T, U, B>(name, FOREVER, source, build)
    }

    /// [`load_archived_task_wait_with`](Self::load_archived_task_wait_with) with a time
    /// limit; see [`load_archived_wait_timeout_with`](Self::load_archived_wait_timeout_with).
    ///
    /// # Errors
    /// As [`load_archived_wait_timeout_with`](Self::load_archived_wait_timeout_with).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::inplace::{BuildError, LoadErrorKind};
    /// use scope_stack::{slot_root, Slots, TaskScope};
    ///
    /// slot_root!(struct Nothing = for<'s> ());
    ///
    /// fn refuse<'s>(_: &'s rkyv::Archived<u32>, _: TaskScope<'s>) -> Result<(), &'static str> {
    ///     Err("empty chunk")
    /// }
    ///
    /// let chunks = Slots::leak("chunks", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&0u32).unwrap();
    /// let err = chunks.load_archived_task_wait_timeout_with::<u32, Nothing, _>("c", Duration::from_millis(5), &file, refuse);
    /// assert!(matches!(err, Err(BuildError::Build("empty chunk"))));
    /// let err = chunks.load_archived_task_wait_timeout_with::<u32, Nothing, _>("c", Duration::from_millis(5), &file[..1], refuse);
    /// assert_eq!(err.unwrap_err().load_error().unwrap().kind(), LoadErrorKind::Invalid);
    /// assert_eq!(chunks.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_task_wait_timeout_with<T, U, B>(
        &self,
        name: &str,
        timeout: Duration,
        source: impl Source,
        build: impl for<'x> FnOnce(&'x Archived<T>, TaskScope<'x>) -> Result<U::Of<'x>, B>,
    ) -> Result<Loaded<'_, InPlaceRoot<T, U>, Task>, BuildError<B>>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
        U: SlotRoot,
    {
        let mut trial = Trial::new(source.len());
        let got = self.load_task_wait_timeout::<Attempt<InPlaceRoot<T, U>>>(name, timeout, |s| {
            trial.attempt(|c, kept| {
                let bytes = c.place::<T, _>(s, source)?;
                let archived = c.check::<T>(bytes)?;
                step(archived, kept, |a| build(a, s))
            })
        });
        trial.finish(self, name, got, |l| l.with_mut(|root, _| payload(root)))
    }
}
