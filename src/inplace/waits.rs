//! The waiting and async in-place loads (features `rkyv` and `std`):
//! [`Slots::load_archived_wait`], [`Slots::load_archived_wait_timeout`],
//! [`Slots::load_archived_async`] and their concurrent and task forms. A loader thread
//! blocks only while every slot is held; a service awaits a slot as a task.
//!
//! Each is one of the slots' own wait forms whose build is the in-place load's
//! ([`Catch::place`] then [`Catch::check`]), so the waiting (the futex, the wakers, no
//! lost wake-up) is theirs and nothing of it is repeated here; the bytes go where the
//! plain loads put them, since the wait forms hand the build the same slot scope, fresh:
//! the archive is the first thing placed, at the front of the slot, aligned to
//! `archive_align`.
//!
//! The async loads are the slots' `try_` async forms ([`Slots::try_load_async`] and
//! theirs), whose build may fail: a failure of the bytes is kept in the [`Catch`] and
//! the slot is free again when the future gives the error.
//!
//! The blocking loads go through [`Slots::load_wait_timeout`] and theirs (a wait with
//! no deadline is one whose timeout never runs out), whose build cannot fail, and an
//! archive can, so the build returns an [`Attempt`] root: `Some(level)` when the bytes
//! were placed and checked, `None` when they were not (the reason kept in a [`Trial`]).
//! A `None` is unloaded at once (the slot is free, everything placed dropped once) and
//! the error comes back; a `Some` becomes the caller's `Loaded` by pointing at the
//! level inside the `Option`.
//!
//! Invariant: a `Loaded<R, K>` made here from a `Loaded<Attempt<R>, K>` (which is
//! forgotten) owns the same slot, and its root pointer is the `Some` payload of the
//! `Option` the slot holds as its root, taken through `with_mut`, so it may write. The
//! slot still drops the whole `Option` when it unloads, which drops the level once;
//! `Option<T>` and `T` are the same family over the slot's lifetime, so what holds for
//! the one (rule 10, `Send` for a task or shared slot) holds for the other. (The serde
//! file loads make their `Loaded` the same way, in `crate::serde::slot_waits`.)
#![allow(clippy::result_large_err)]
// The async loads spell out their future's lifetime (`+ 'n`: the name's borrow, not the
// set's) as the slot loads in `crate::slots::tasks` do.
#![allow(clippy::manual_async_fn)]

use core::convert::Infallible;
use core::future::Future;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::time::Duration;

use rkyv::api::high::HighValidator;
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor;
use rkyv::{Archive, Archived};

use crate::error::AllocError;
use crate::slots::{Loaded, LoadedKind, Shared, SlotError, SlotRoot, Slots, Task};

use super::error::{BuildError, LoadError};
use super::fill::{refused, Catch};
use super::root::ArchivedRoot;
use super::source::Source;

/// The root a waiting in-place load builds: the level, or `None` when the bytes (or
/// the build step) failed.
pub(super) struct Attempt<R>(PhantomData<fn() -> R>);

impl<R: SlotRoot> SlotRoot for Attempt<R> {
    type Of<'s> = Option<R::Of<'s>>;
}

/// What a waiting in-place load keeps aside while the slot's build runs: why the bytes
/// were refused (the [`Catch`]), the allocation error that stopped them, and the build
/// step's error (`B`; `Infallible` for the loads without a step).
pub(super) struct Trial<B = Infallible> {
    catch: Catch,
    alloc: Option<AllocError>,
    step: Option<B>,
    /// The archive's length, for the error.
    len: usize,
}

impl<B> Trial<B> {
    /// A trial of an archive of `len` bytes.
    pub(super) fn new(len: usize) -> Self {
        Trial {
            catch: Catch::new(),
            alloc: None,
            step: None,
            len,
        }
    }

    /// Runs the load's build in the slot: `Some` root, or `None` with the reason kept
    /// (in the catch, the step's slot, and the allocation error it returned).
    pub(super) fn attempt<V>(
        &mut self,
        build: impl FnOnce(&mut Catch, &mut Option<B>) -> Result<V, AllocError>,
    ) -> Option<V> {
        match build(&mut self.catch, &mut self.step) {
            Ok(v) => Some(v),
            Err(e) => {
                self.alloc = Some(e);
                None
            }
        }
    }

    /// The caller's `Loaded` from the wait form's, or the load's or the step's error
    /// (a `None` root is unloaded first, so the slot is free when the error comes
    /// back). `level` takes the `Some` payload's address through `with_mut`.
    pub(super) fn finish<'a, R: SlotRoot, K: LoadedKind>(
        self,
        slots: &'a Slots,
        name: &str,
        got: Result<Loaded<'a, Attempt<R>, K>, SlotError>,
        level: impl FnOnce(&mut Loaded<'a, Attempt<R>, K>) -> Option<NonNull<u8>>,
    ) -> Result<Loaded<'a, R, K>, BuildError<B>> {
        let slot = match got {
            Ok(mut loaded) => match level(&mut loaded) {
                Some(at) => {
                    let index = loaded.slot();
                    // The slot passes to the new `Loaded` (see the module docs).
                    core::mem::forget(loaded);
                    return Ok(Loaded::new(slots, index, at));
                }
                None => {
                    // Frees the slot: the `None` root, then everything placed.
                    drop(loaded);
                    if let Some(b) = self.step {
                        return Err(BuildError::Build(b));
                    }
                    // `attempt` kept the allocation error (or the placeholder, when
                    // the catch has the bytes' own reason).
                    SlotError::alloc(slots, name, self.alloc.unwrap_or_else(refused))
                }
            },
            // The build failed and then the `None` did not fit either: the step's
            // error, or the bytes' allocation error, is the one to report.
            Err(e) => match (self.step, self.alloc) {
                (Some(b), _) => return Err(BuildError::Build(b)),
                (None, Some(alloc)) => SlotError::alloc(slots, name, alloc),
                (None, None) => e,
            },
        };
        Err(BuildError::Load(self.catch.finish(slot, self.len)))
    }
}

/// The load's error of a trial with no build step.
pub(super) fn no_step<L>(got: Result<L, BuildError<Infallible>>) -> Result<L, LoadError> {
    got.map_err(|e| match e {
        BuildError::Load(e) => e,
        BuildError::Build(never) => match never {},
    })
}

/// The `Some` payload of a root, as the pointer its `Loaded` keeps (taken from `&mut`).
pub(super) fn payload<T>(root: &mut Option<T>) -> Option<NonNull<u8>> {
    root.as_mut().map(|level| NonNull::from(level).cast::<u8>())
}

/// A wait with no deadline: a timeout too long to represent never runs out, so the
/// timed form waits for ever and still returns a root that did not fit as an error.
pub(super) const FOREVER: Duration = Duration::MAX;

impl Slots {
    /// [`load_archived`](Self::load_archived) that sleeps while every slot is held,
    /// until another thread drops a [`Loaded`] (see [`load_wait`](Self::load_wait)): a
    /// loader thread's call (features `rkyv` and `std`). The bytes are copied (or read)
    /// once a slot is had, to the front of the slot as in `load_archived`.
    ///
    /// # Errors
    /// As [`load_archived`](Self::load_archived), except that a full set is waited
    /// out; the slot is free again when the error comes back.
    ///
    /// ```
    /// use scope_stack::LinearAllocator;
    ///
    /// #[derive(rkyv::Archive, rkyv::Serialize)]
    /// struct Level {
    ///     name: String,
    /// }
    /// let cook = |name: &str| rkyv::to_bytes::<rkyv::rancor::Error>(&Level { name: name.into() }).unwrap();
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 4096);
    ///     let playing = levels.load_archived::<Level>("forest", &cook("forest")).unwrap();
    ///     std::thread::scope(|t| {
    ///         let loader = t.spawn(|| {
    ///             let next = levels.load_archived_wait::<Level>("castle", &cook("castle")).unwrap();
    ///             next.with(|l| l.name.to_string())
    ///         });
    ///         std::thread::sleep(std::time::Duration::from_millis(10));
    ///         drop(playing); // frees the slot and wakes the loader
    ///         assert_eq!(loader.join().unwrap(), "castle");
    ///     });
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_wait<T>(
        &self,
        name: &str,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>>, LoadError>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        self.load_archived_wait_timeout::<T>(name, FOREVER, source)
    }

    /// [`load_archived_wait`](Self::load_archived_wait) that gives up after about
    /// `timeout` (see [`load_wait_timeout`](Self::load_wait_timeout)). A zero timeout is
    /// one [`load_archived`](Self::load_archived).
    ///
    /// # Errors
    /// As [`load_archived`](Self::load_archived); when no slot was freed in time,
    /// [`LoadErrorKind::TimedOut`](super::LoadErrorKind::TimedOut), whose slot error
    /// names the holders, and the bytes were not read.
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::inplace::LoadErrorKind;
    /// use scope_stack::Slots;
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![1u32, 2]).unwrap();
    /// let playing = levels.load_archived::<Vec<u32>>("forest", &file).unwrap();
    /// let err = levels
    ///     .load_archived_wait_timeout::<Vec<u32>>("castle", Duration::from_millis(5), &file)
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), LoadErrorKind::TimedOut);
    /// assert!(err.to_string().contains("slot 0 holds \"forest\""));
    /// drop(playing);
    /// let castle = levels.load_archived_wait_timeout::<Vec<u32>>("castle", Duration::from_millis(5), &file);
    /// assert_eq!(castle.unwrap().with(|v| v.len()), 2);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_wait_timeout<T>(
        &self,
        name: &str,
        timeout: Duration,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>>, LoadError>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        let mut trial = Trial::new(source.len());
        let got = self.load_wait_timeout::<Attempt<ArchivedRoot<T>>>(name, timeout, |s| {
            trial.attempt(|c, _| {
                let bytes = c.place::<T, _>(s, source)?;
                c.check::<T>(bytes)
            })
        });
        no_step(trial.finish(self, name, got, |l| l.with_mut(|root, _| payload(root))))
    }

    /// [`load_archived_concurrent`](Self::load_archived_concurrent) that sleeps while
    /// every slot is held (see [`load_concurrent_wait`](Self::load_concurrent_wait)): a
    /// loader thread that streams levels into a ring of slots for the game thread
    /// blocks here only while every level is still in use.
    ///
    /// # Errors
    /// As [`load_archived_wait`](Self::load_archived_wait).
    ///
    /// ```
    /// use scope_stack::{inplace::ArchivedRoot, Loaded, Shared, Slots};
    ///
    /// let levels = Slots::leak("levels", 2, 4096)?;
    /// let (send, receive) = std::sync::mpsc::channel::<Loaded<'_, ArchivedRoot<u32>, Shared>>();
    /// let loader = std::thread::spawn(move || {
    ///     for n in 0..6u32 {
    ///         let file = rkyv::to_bytes::<rkyv::rancor::Error>(&n).unwrap();
    ///         send.send(levels.load_archived_concurrent_wait::<u32>("level", &file).unwrap()).unwrap();
    ///     }
    /// });
    /// let played: u32 = receive.iter().map(|level| level.with(|n| n.to_native())).sum();
    /// loader.join().unwrap();
    /// assert_eq!(played, 15);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_concurrent_wait<T>(
        &self,
        name: &str,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>, Shared>, LoadError>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        self.load_archived_concurrent_wait_timeout::<T>(name, FOREVER, source)
    }

    /// [`load_archived_concurrent_wait`](Self::load_archived_concurrent_wait) with a
    /// time limit; see [`load_archived_wait_timeout`](Self::load_archived_wait_timeout).
    ///
    /// # Errors
    /// As [`load_archived_wait_timeout`](Self::load_archived_wait_timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::inplace::LoadErrorKind;
    /// use scope_stack::Slots;
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&7u64).unwrap();
    /// let _playing = levels.load_archived_concurrent::<u64>("a", &file).unwrap();
    /// let err = levels
    ///     .load_archived_concurrent_wait_timeout::<u64>("b", Duration::from_millis(5), &file)
    ///     .unwrap_err();
    /// assert_eq!((err.kind(), err.load_name()), (LoadErrorKind::TimedOut, "b"));
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_concurrent_wait_timeout<T>(
        &self,
        name: &str,
        timeout: Duration,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>, Shared>, LoadError>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        let mut trial = Trial::new(source.len());
        let got =
            self.load_concurrent_wait_timeout::<Attempt<ArchivedRoot<T>>>(name, timeout, |s| {
                trial.attempt(|c, _| {
                    let bytes = c.place::<T, _>(s, source)?;
                    c.check::<T>(bytes)
                })
            });
        no_step(trial.finish(self, name, got, |l| l.with_mut(|root, _| payload(root))))
    }

    /// [`load_archived_task`](Self::load_archived_task) that sleeps while every slot is
    /// held (see [`load_task_wait`](Self::load_task_wait)): a thread pool's job waits
    /// here for a slot, and the level it gets may cross threads.
    ///
    /// # Errors
    /// As [`load_archived_wait`](Self::load_archived_wait).
    ///
    /// ```
    /// use scope_stack::Slots;
    ///
    /// let chunks = Slots::leak("chunks", 2, 4096)?;
    /// let sums: Vec<u32> = std::thread::scope(|t| {
    ///     let jobs: Vec<_> = (0..6u32)
    ///         .map(|n| t.spawn(move || {
    ///             let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![n; 3]).unwrap();
    ///             let chunk = chunks.load_archived_task_wait::<Vec<u32>>("chunk", &file).unwrap();
    ///             chunk.with(|c| c.iter().map(|x| x.to_native()).sum())
    ///         }))
    ///         .collect();
    ///     jobs.into_iter().map(|j| j.join().unwrap()).collect()
    /// });
    /// assert_eq!(sums, [0, 3, 6, 9, 12, 15]);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_task_wait<T>(
        &self,
        name: &str,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>, Task>, LoadError>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        self.load_archived_task_wait_timeout::<T>(name, FOREVER, source)
    }

    /// [`load_archived_task_wait`](Self::load_archived_task_wait) with a time limit;
    /// see [`load_archived_wait_timeout`](Self::load_archived_wait_timeout): a service
    /// that answers "busy" instead of queueing for ever.
    ///
    /// # Errors
    /// As [`load_archived_wait_timeout`](Self::load_archived_wait_timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::inplace::LoadErrorKind;
    /// use scope_stack::Slots;
    ///
    /// let chunks = Slots::leak("chunks", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&1u8).unwrap();
    /// let _first = chunks.load_archived_task::<u8>("first", &file).unwrap();
    /// let err = chunks.load_archived_task_wait_timeout::<u8>("second", Duration::from_millis(5), &file);
    /// assert_eq!(err.unwrap_err().kind(), LoadErrorKind::TimedOut);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_task_wait_timeout<T>(
        &self,
        name: &str,
        timeout: Duration,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>, Task>, LoadError>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        let mut trial = Trial::new(source.len());
        let got = self.load_task_wait_timeout::<Attempt<ArchivedRoot<T>>>(name, timeout, |s| {
            trial.attempt(|c, _| {
                let bytes = c.place::<T, _>(s, source)?;
                c.check::<T>(bytes)
            })
        });
        no_step(trial.finish(self, name, got, |l| l.with_mut(|root, _| payload(root))))
    }

    /// [`load_archived`](Self::load_archived) as a future that waits (as a task, not a
    /// thread) while every slot is held; see [`load_async`](Self::load_async). The
    /// future owns the source and copies (or reads) it in the poll that gets a slot;
    /// dropping the future before then claims nothing and reads nothing.
    ///
    /// # Errors
    /// As [`load_archived`](Self::load_archived), except that a full set is waited
    /// out; the slot is free again when the future gives the error.
    ///
    /// ```
    /// use scope_stack::inplace::LoadErrorKind;
    /// use scope_stack::Slots;
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    ///
    /// #[derive(rkyv::Archive, rkyv::Serialize)]
    /// struct Level {
    ///     names: Vec<String>,
    /// }
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&Level { names: vec!["oak".into(), "elm".into()] }).unwrap();
    /// let names = block_on(async {
    ///     let level = levels.load_archived_async::<Level>("forest", &file).await.unwrap();
    ///     level.with(|l| l.names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(" "))
    /// });
    /// assert_eq!(names, "oak elm");
    /// let err = block_on(levels.load_archived_async::<Level>("cut", &file[..file.len() - 2])).unwrap_err();
    /// assert_eq!(err.kind(), LoadErrorKind::Invalid);
    /// assert_eq!(levels.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_async<'a: 'n, 'n, T>(
        &'a self,
        name: &'n str,
        source: impl Source + 'n,
    ) -> impl Future<Output = Result<Loaded<'a, ArchivedRoot<T>>, LoadError>> + 'n
    where
        T: Archive + 'static,
        Archived<T>: for<'b> CheckBytes<HighValidator<'b, rancor::Error>>,
    {
        async move {
            let len = source.len();
            let mut catch = Catch::new();
            let got = self
                .try_load_async::<ArchivedRoot<T>>(name, |s| {
                    let bytes = catch.place::<T, _>(s, source)?;
                    catch.check::<T>(bytes)
                })
                .await;
            got.map_err(|e| catch.finish(e, len))
        }
    }

    /// [`load_archived_concurrent`](Self::load_archived_concurrent) as a future; see
    /// [`load_archived_async`](Self::load_archived_async). The [`Shared`] `Loaded` it
    /// gives may cross threads.
    ///
    /// # Errors
    /// As [`load_archived_async`](Self::load_archived_async).
    ///
    /// ```
    /// use scope_stack::Slots;
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    /// let level = block_on(levels.load_archived_concurrent_async::<Vec<[f32; 2]>>("spawns", &file)).unwrap();
    /// let far = std::thread::spawn(move || level.with(|s| s[1][0].to_native())).join().unwrap();
    /// assert_eq!(far, 3.0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_concurrent_async<'a: 'n, 'n, T>(
        &'a self,
        name: &'n str,
        source: impl Source + 'n,
    ) -> impl Future<Output = Result<Loaded<'a, ArchivedRoot<T>, Shared>, LoadError>> + 'n
    where
        T: Archive + 'static,
        Archived<T>: for<'b> CheckBytes<HighValidator<'b, rancor::Error>>,
    {
        async move {
            let len = source.len();
            let mut catch = Catch::new();
            let got = self
                .try_load_concurrent_async::<ArchivedRoot<T>>(name, |s| {
                    let bytes = catch.place::<T, _>(s, source)?;
                    catch.check::<T>(bytes)
                })
                .await;
            got.map_err(|e| catch.finish(e, len))
        }
    }

    /// [`load_archived_task`](Self::load_archived_task) as a future; see
    /// [`load_archived_async`](Self::load_archived_async): a service's task awaits a
    /// slot, and the [`Task`] `Loaded` it gets may move with it between threads. The
    /// future is `Send` when the source is.
    ///
    /// # Errors
    /// As [`load_archived_async`](Self::load_archived_async).
    ///
    /// ```
    /// use scope_stack::inplace::LoadErrorKind;
    /// use scope_stack::Slots;
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    ///
    /// async fn serve(chunks: &'static Slots, file: Vec<u8>) -> String {
    ///     match chunks.load_archived_task_async::<Vec<u16>>("chunk", &file).await {
    ///         Ok(chunk) => format!("200 {}", chunk.with(|c| c.len())),
    ///         Err(e) if e.kind() == LoadErrorKind::TooSmall => "413".into(),
    ///         Err(_) => "400".into(),
    ///     }
    /// }
    ///
    /// let chunks = Slots::leak("chunks", 2, 1024)?;
    /// let cook = |n| rkyv::to_bytes::<rkyv::rancor::Error>(&vec![7u16; n]).unwrap().to_vec();
    /// assert_eq!(block_on(serve(chunks, cook(3))), "200 3");
    /// assert_eq!(block_on(serve(chunks, vec![1, 2, 3])), "400");
    /// assert_eq!(block_on(serve(chunks, cook(2000))), "413");
    /// assert_eq!(chunks.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_task_async<'a: 'n, 'n, T>(
        &'a self,
        name: &'n str,
        source: impl Source + 'n,
    ) -> impl Future<Output = Result<Loaded<'a, ArchivedRoot<T>, Task>, LoadError>> + 'n
    where
        T: Archive + 'static,
        Archived<T>: for<'b> CheckBytes<HighValidator<'b, rancor::Error>>,
    {
        async move {
            let len = source.len();
            let mut catch = Catch::new();
            let got = self
                .try_load_task_async::<ArchivedRoot<T>>(name, |s| {
                    let bytes = catch.place::<T, _>(s, source)?;
                    catch.check::<T>(bytes)
                })
                .await;
            got.map_err(|e| catch.finish(e, len))
        }
    }
}
