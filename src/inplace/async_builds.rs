//! The async in-place loads with a build step (features `rkyv` and `std`):
//! [`Slots::load_archived_async_with`], [`Slots::load_archived_concurrent_async_with`]
//! and [`Slots::load_archived_task_async_with`]. A service's task awaits a slot, copies
//! the archive into it, and builds the level's runtime half in the same slot.
//!
//! Each is the slots' `try_` async form ([`Slots::try_load_async`] and theirs) whose
//! build is the `_with` loads' ([`Steps::run`]: place, check, step), so the waiting
//! (the wakers, the ticket a dropped future gives back) is the slots' and the build is
//! [`builds`](super::builds)'; nothing of either is repeated here.
//!
//! Invariant: the future owns the source and the step and runs them only in the poll
//! that claims a slot, in that slot's fresh scope, so the archive lands at the front of
//! the slot as under every other form. A future dropped before then has claimed
//! nothing, read nothing and run nothing. A failure of the bytes or of the step is
//! kept in the [`Steps`], and `try_load`'s unwinding drops what the step placed, once,
//! and frees the slot before the future gives the error.
#![allow(clippy::result_large_err)]
// The futures spell out their lifetime (`+ 'n`: the name's borrow, not the set's) as
// the slot loads in `crate::slots::tasks` do.
#![allow(clippy::manual_async_fn)]

use core::future::Future;

use rkyv::api::high::HighValidator;
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor;
use rkyv::{Archive, Archived};

use crate::concurrent::ConcurrentScope;
use crate::scope::ScopeStack;
use crate::slots::{Loaded, Shared, SlotRoot, Slots, Task, TaskScope};

use super::builds::Steps;
use super::error::BuildError;
use super::root::InPlaceRoot;
use super::source::Source;

impl Slots {
    /// [`load_archived_with`](Self::load_archived_with) as a future that waits (as a
    /// task, not a thread) while every slot is held; see
    /// [`load_archived_async`](Self::load_archived_async). The future owns the source
    /// and the build step, and in the poll that gets a slot it copies (or reads) the
    /// archive, validates it, and runs `build` after the archive's bytes; dropping the
    /// future before then claims nothing, reads nothing and runs nothing.
    ///
    /// # Errors
    /// As [`load_archived_with`](Self::load_archived_with), except that a full set is
    /// waited out: [`BuildError::Load`] when the bytes were refused (the step did not
    /// run), [`BuildError::Build`] with the step's error. Either way the slot is free
    /// again, with what the step placed dropped once, when the future gives the error.
    ///
    /// ```
    /// use scope_stack::inplace::BuildError;
    /// use scope_stack::{slot_root, ScopeStack, Slots};
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
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = cook(vec![30, 80]);
    /// let level = block_on(levels.load_archived_async_with::<Level, Total, _>("forest", &file, total));
    /// assert_eq!(level.unwrap().with(|l| (l.archived.hp.len(), l.runtime)), (2, 110));
    /// // A step that refuses the level: its error, and the slot is free again.
    /// let empty = cook(vec![]);
    /// let err = block_on(levels.load_archived_async_with::<Level, Total, _>("empty", &empty, total));
    /// assert!(matches!(err, Err(BuildError::Build("no enemies"))));
    /// assert_eq!(levels.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_async_with<'a: 'n, 'n, T, U, B>(
        &'a self,
        name: &'n str,
        source: impl Source + 'n,
        build: impl for<'x> FnOnce(&'x Archived<T>, &'x ScopeStack<'x>) -> Result<U::Of<'x>, B> + 'n,
    ) -> impl Future<Output = Result<Loaded<'a, InPlaceRoot<T, U>>, BuildError<B>>> + 'n
    where
        T: Archive + 'static,
        Archived<T>: for<'b> CheckBytes<HighValidator<'b, rancor::Error>>,
        U: SlotRoot,
        B: 'n,
    {
        async move {
            let mut steps = Steps::new(source.len());
            let got = self
                .try_load_async::<InPlaceRoot<T, U>>(name, |s| {
                    steps.run(s, source, |a| build(a, s))
                })
                .await;
            got.map_err(|e| steps.finish(e))
        }
    }

    /// [`load_archived_concurrent_with`](Self::load_archived_concurrent_with) as a
    /// future; see [`load_archived_async_with`](Self::load_archived_async_with).
    /// `build` gets the slot's concurrent scope, and the [`Shared`] `Loaded` the future
    /// gives may cross threads.
    ///
    /// # Errors
    /// As [`load_archived_async_with`](Self::load_archived_async_with).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    ///
    /// slot_root!(struct Len = for<'s> usize);
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    /// let level = block_on(levels.load_archived_concurrent_async_with::<Vec<[f32; 2]>, Len, ()>(
    ///     "spawns",
    ///     &file,
    ///     |v, _| Ok(v.len()),
    /// ))
    /// .unwrap();
    /// let len = std::thread::spawn(move || level.with(|l| l.runtime)).join().unwrap();
    /// assert_eq!(len, 2);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_concurrent_async_with<'a: 'n, 'n, T, U, B>(
        &'a self,
        name: &'n str,
        source: impl Source + 'n,
        build: impl for<'x> FnOnce(&'x Archived<T>, &'x ConcurrentScope<'x>) -> Result<U::Of<'x>, B>
            + 'n,
    ) -> impl Future<Output = Result<Loaded<'a, InPlaceRoot<T, U>, Shared>, BuildError<B>>> + 'n
    where
        T: Archive + 'static,
        Archived<T>: for<'b> CheckBytes<HighValidator<'b, rancor::Error>>,
        U: SlotRoot,
        B: 'n,
    {
        async move {
            let mut steps = Steps::new(source.len());
            let got = self
                .try_load_concurrent_async::<InPlaceRoot<T, U>>(name, |s| {
                    steps.run(s, source, |a| build(a, s))
                })
                .await;
            got.map_err(|e| steps.finish(e))
        }
    }

    /// [`load_archived_task_with`](Self::load_archived_task_with) as a future; see
    /// [`load_archived_async_with`](Self::load_archived_async_with). `build` gets the
    /// slot's [`TaskScope`], and the [`Task`] `Loaded` the future gives may move with
    /// its task between threads. The future is `Send` when the source, the step and
    /// its error are.
    ///
    /// # Errors
    /// As [`load_archived_async_with`](Self::load_archived_async_with).
    ///
    /// ```
    /// use scope_stack::{slot_root, Place, Slots};
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    ///
    /// slot_root!(struct Doubled = for<'s> &'s [u32]);
    ///
    /// async fn serve(chunks: &'static Slots, file: Vec<u8>) -> Vec<u32> {
    ///     let chunk = chunks
    ///         .load_archived_task_async_with::<Vec<u32>, Doubled, ()>("chunk", &file, |v, arena| {
    ///             Ok(&*arena.alloc_iter_pod(v.iter().map(|x| x.to_native() * 2)))
    ///         })
    ///         .await
    ///         .unwrap();
    ///     chunk.with(|c| c.runtime.to_vec())
    /// }
    ///
    /// let chunks = Slots::leak("chunks", 2, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![1u32, 2, 3]).unwrap().to_vec();
    /// let doubled = std::thread::spawn(move || block_on(serve(chunks, file))).join().unwrap();
    /// assert_eq!(doubled, [2, 4, 6]);
    /// assert_eq!(chunks.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_task_async_with<'a: 'n, 'n, T, U, B>(
        &'a self,
        name: &'n str,
        source: impl Source + 'n,
        build: impl for<'x> FnOnce(&'x Archived<T>, TaskScope<'x>) -> Result<U::Of<'x>, B> + 'n,
    ) -> impl Future<Output = Result<Loaded<'a, InPlaceRoot<T, U>, Task>, BuildError<B>>> + 'n
    where
        T: Archive + 'static,
        Archived<T>: for<'b> CheckBytes<HighValidator<'b, rancor::Error>>,
        U: SlotRoot,
        B: 'n,
    {
        async move {
            let mut steps = Steps::new(source.len());
            let got = self
                .try_load_task_async::<InPlaceRoot<T, U>>(name, |s| {
                    steps.run(s, source, |a| build(a, s))
                })
                .await;
            got.map_err(|e| steps.finish(e))
        }
    }
}
