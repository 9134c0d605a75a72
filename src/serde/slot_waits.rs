//! The waiting file loads (feature `serde` with `std`): [`Slots::load_wait_from`],
//! [`Slots::load_wait_timeout_from`], [`Slots::load_async_from`] and their concurrent
//! and task forms. Each is one of the slots' own wait forms whose build deserializes,
//! so the waiting (the futex, the wakers, no lost wake-up) is theirs and nothing of it
//! is repeated here. None of them panics: a file that is bad, or too big for its slot,
//! and a root that no longer fits after the file, are errors.
//!
//! The async loads are the slots' `try_` async forms ([`Slots::try_load_async`] and
//! theirs) with the build of [`Slots::load_from`]: the build's error is the allocation
//! error that stopped the file (or a placeholder when the file itself was bad, its
//! error kept aside in a `Catch`), and the slot is free again when the future gives
//! the error. The catch starts in the build, so on the thread, and in the poll, that
//! reads the file.
//!
//! The blocking loads go through [`Slots::load_wait_timeout`] and theirs (a wait with
//! no deadline is one whose timeout never runs out), whose build cannot fail, and a
//! file can, so the build returns an [`Attempt`] root: `Some(level)` when the file was
//! read, `None` when it was not (the error kept aside in a [`Trial`]). A `None` is
//! unloaded at once (the slot is free, everything placed dropped once) and the error
//! comes back; a `Some` becomes the caller's `Loaded` by pointing at the level inside
//! the `Option`; a root (the `Option`) that does not fit is the timed form's error.
//!
//! Invariant: a `Loaded<R, K>` made here from a `Loaded<Attempt<R>, K>` (which is
//! forgotten) owns the same slot, and its root pointer is the `Some` payload of the
//! `Option` the slot holds as its root, taken through `with_mut`, so it may write.
//! The slot still drops the whole `Option` when it unloads, which drops the level once;
//! `Option<T>` and `T` are the same family over the slot's lifetime, so what holds for
//! the one (rule 10, `Send` for a task or shared slot) holds for the other.
#![allow(clippy::result_large_err)]
// The async loads spell out their future's lifetime (`+ 'n`: the name's borrow, not the
// set's) as the slot loads in `crate::slots::tasks` do; `async fn` would tie it to all.
#![allow(clippy::manual_async_fn)]

use core::convert::Infallible;
use core::future::Future;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::time::Duration;

use serde::de::{Deserializer, Error};

use crate::error::AllocError;
use crate::slots::{Loaded, LoadedKind, Shared, SlotError, SlotRoot, Slots, Task};

use super::slots::{BuildError, Catch, LoadError};
use super::trait_in::DeserializeIn;
use crate::scope::place::Place;

/// The root a waiting file load builds: the level, or `None` when the file failed.
pub(super) struct Attempt<R>(PhantomData<fn() -> R>);

impl<R: SlotRoot> SlotRoot for Attempt<R> {
    type Of<'s> = Option<R::Of<'s>>;
}

/// What a waiting file load keeps aside while the slot's build runs: the file's
/// error and the build step's (`B`; `Infallible` for the loads without a step).
pub(super) struct Trial<E, B = Infallible> {
    /// Started in the build (so on the thread, and in the poll, that reads the file).
    catch: Option<Catch<E>>,
    /// The allocation error that stopped the file, when the slot ran out of room.
    alloc: Option<AllocError>,
    /// The build step's error, when the file was read and the step refused it.
    step: Option<B>,
}

impl<E: Error, B> Trial<E, B> {
    pub(super) fn new() -> Self {
        Trial {
            catch: None,
            alloc: None,
            step: None,
        }
    }

    /// Reads the level into the slot's scope `s`, then runs `build` on it in the same
    /// scope: `Some` when the file was read and the step agreed.
    pub(super) fn read_with<'x, 'de, R, P, D>(
        &mut self,
        s: P,
        de: D,
        build: impl FnOnce(&mut R::Of<'x>, P) -> Result<(), B>,
    ) -> Option<R::Of<'x>>
    where
        R: SlotRoot,
        R::Of<'x>: DeserializeIn<'x>,
        P: Place<'x> + Copy,
        D: Deserializer<'de, Error = E>,
    {
        let catch = self.catch.insert(Catch::start());
        match R::Of::deserialize_in(s, de) {
            Ok(mut root) => match build(&mut root, s) {
                Ok(()) => Some(root),
                Err(b) => {
                    // The level is dropped here; what it placed goes with the slot.
                    self.step = Some(b);
                    None
                }
            },
            Err(e) => {
                let alloc = catch.fail(e);
                self.alloc = Some(alloc);
                None
            }
        }
    }

    /// The caller's `Loaded` from the wait form's, or the load's or the step's error
    /// (a `None` root is unloaded first).
    pub(super) fn finish_with<'a, R: SlotRoot, K: LoadedKind>(
        self,
        slots: &'a Slots,
        name: &str,
        got: Result<Loaded<'a, Attempt<R>, K>, SlotError>,
        level: impl FnOnce(&mut Loaded<'a, Attempt<R>, K>) -> Option<NonNull<u8>>,
    ) -> Result<Loaded<'a, R, K>, BuildError<E, B>> {
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
                    // `read_with` kept the allocation error (or the placeholder).
                    let alloc = self.alloc.unwrap_or_else(super::slots::failed);
                    SlotError::alloc(slots, name, alloc)
                }
            },
            // The file or the step failed and then the `None` did not fit either: the
            // step's error, or the file's allocation error, is the one to report.
            Err(e) => match (self.step, self.alloc) {
                (Some(b), _) => return Err(BuildError::Build(b)),
                (None, Some(alloc)) => SlotError::alloc(slots, name, alloc),
                (None, None) => e,
            },
        };
        // No build ran (no slot in time, or the root did not fit): a fresh catch.
        let catch = self.catch.unwrap_or_else(Catch::start);
        Err(BuildError::Load(catch.finish(slot)))
    }
}

impl<E: Error> Trial<E> {
    /// Reads the level into the slot's scope `s`: `Some` when the file was read.
    fn read<'x, 'de, R, P, D>(&mut self, s: P, de: D) -> Option<R::Of<'x>>
    where
        R: SlotRoot,
        R::Of<'x>: DeserializeIn<'x>,
        P: Place<'x> + Copy,
        D: Deserializer<'de, Error = E>,
    {
        self.read_with::<R, P, D>(s, de, |_, _| Ok(()))
    }

    /// [`finish_with`](Self::finish_with) for a load with no build step.
    fn finish<'a, R: SlotRoot, K: LoadedKind>(
        self,
        slots: &'a Slots,
        name: &str,
        got: Result<Loaded<'a, Attempt<R>, K>, SlotError>,
        level: impl FnOnce(&mut Loaded<'a, Attempt<R>, K>) -> Option<NonNull<u8>>,
    ) -> Result<Loaded<'a, R, K>, LoadError<E>> {
        self.finish_with(slots, name, got, level)
            .map_err(|e| match e {
                BuildError::Load(e) => e,
                BuildError::Build(never) => match never {},
            })
    }
}

/// The `Some` payload of a root, as the pointer its `Loaded` keeps (taken from `&mut`).
pub(super) fn payload<T>(root: &mut Option<T>) -> Option<NonNull<u8>> {
    root.as_mut().map(|level| NonNull::from(level).cast::<u8>())
}

/// Pins a closure to the higher-ranked signature a plain wait form takes.
pub(super) fn read_plain<R: SlotRoot, F>(f: F) -> F
where
    F: for<'x> FnOnce(&'x crate::ScopeStack<'x>) -> Option<R::Of<'x>>,
{
    f
}

/// Pins a closure to the higher-ranked signature a concurrent wait form takes.
pub(super) fn read_shared<R: SlotRoot, F>(f: F) -> F
where
    F: for<'x> FnOnce(&'x crate::ConcurrentScope<'x>) -> Option<R::Of<'x>>,
{
    f
}

/// Pins a closure to the higher-ranked signature a task wait form takes.
pub(super) fn read_task<R: SlotRoot, F>(f: F) -> F
where
    F: for<'x> FnOnce(crate::TaskScope<'x>) -> Option<R::Of<'x>>,
{
    f
}

/// Reads the level into the slot's scope `s`: the build of an async file load, for
/// the slots' `try_` async forms. The catch starts here, in the poll that got the slot
/// and reads the file (the record of allocation errors is the thread's, and a task
/// may move between threads from one poll to the next).
fn read_in<'x, 'de, R, P, D>(
    catch: &mut Option<Catch<D::Error>>,
    s: P,
    de: D,
) -> Result<R::Of<'x>, AllocError>
where
    R: SlotRoot,
    R::Of<'x>: DeserializeIn<'x>,
    P: Place<'x> + Copy,
    D: Deserializer<'de>,
{
    let catch = catch.insert(Catch::start());
    R::Of::deserialize_in(s, de).map_err(|e| catch.fail(e))
}

/// Pins a closure to the higher-ranked signature `try_load_async` takes.
fn try_plain<R: SlotRoot, F>(f: F) -> F
where
    F: for<'x> FnOnce(&'x crate::ScopeStack<'x>) -> Result<R::Of<'x>, AllocError>,
{
    f
}

/// Pins a closure to the higher-ranked signature `try_load_concurrent_async` takes.
fn try_shared<R: SlotRoot, F>(f: F) -> F
where
    F: for<'x> FnOnce(&'x crate::ConcurrentScope<'x>) -> Result<R::Of<'x>, AllocError>,
{
    f
}

/// Pins a closure to the higher-ranked signature `try_load_task_async` takes.
fn try_task<R: SlotRoot, F>(f: F) -> F
where
    F: for<'x> FnOnce(crate::TaskScope<'x>) -> Result<R::Of<'x>, AllocError>,
{
    f
}

/// A wait with no deadline: a timeout too long to represent never runs out, so the
/// timed form waits for ever and still returns a root that did not fit as an error.
pub(super) const FOREVER: Duration = Duration::MAX;

impl Slots {
    /// [`load_from`](Self::load_from) that sleeps while every slot is held, until
    /// another thread drops a [`Loaded`] (see [`load_wait`](Self::load_wait)): a
    /// loader thread's call. The file is read once a slot is had.
    ///
    /// # Errors
    /// As [`load_from`](Self::load_from), except that a full set is waited out; a
    /// root that does not fit is an error here (not a panic as in `load_wait`).
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    ///
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 16 << 10);
    ///     let mut de = serde_json::Deserializer::from_str(r#"["forest"]"#);
    ///     let playing = levels.load_from::<Names, _>("forest", &mut de).unwrap();
    ///     std::thread::scope(|t| {
    ///         let loader = t.spawn(|| {
    ///             let mut de = serde_json::Deserializer::from_str(r#"["castle", "keep"]"#);
    ///             let next = levels.load_wait_from::<Names, _>("castle", &mut de).unwrap();
    ///             next.with(|n| n.len())
    ///         });
    ///         std::thread::sleep(std::time::Duration::from_millis(10));
    ///         drop(playing); // frees the slot and wakes the loader
    ///         assert_eq!(loader.join().unwrap(), 2);
    ///     });
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_wait_from<'de, R, D>(
        &self,
        name: &str,
        deserializer: D,
    ) -> Result<Loaded<'_, R>, LoadError<D::Error>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        self.load_wait_timeout_from::<R, D>(name, FOREVER, deserializer)
    }

    /// [`load_wait_from`](Self::load_wait_from) that gives up after about `timeout`
    /// (see [`load_wait_timeout`](Self::load_wait_timeout)). A zero timeout is one
    /// [`load_from`](Self::load_from).
    ///
    /// # Errors
    /// As [`load_from`](Self::load_from); when no slot was freed in time, the slot
    /// error is [`SlotErrorKind::TimedOut`](crate::SlotErrorKind::TimedOut), naming
    /// the holders, and the file was not read.
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::{slot_root, SlotErrorKind, Slots};
    ///
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let mut de = serde_json::Deserializer::from_str(r#"["forest"]"#);
    /// let _playing = levels.load_from::<Names, _>("forest", &mut de).unwrap();
    /// let mut de = serde_json::Deserializer::from_str(r#"["castle"]"#);
    /// let err = levels
    ///     .load_wait_timeout_from::<Names, _>("castle", Duration::from_millis(5), &mut de)
    ///     .unwrap_err();
    /// assert_eq!(err.slot_error().unwrap().kind(), SlotErrorKind::TimedOut);
    /// assert!(err.to_string().contains("slot 0 holds \"forest\""));
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_wait_timeout_from<'de, R, D>(
        &self,
        name: &str,
        timeout: Duration,
        deserializer: D,
    ) -> Result<Loaded<'_, R>, LoadError<D::Error>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut trial = Trial::new();
        let read = read_plain::<R, _>(|s| trial.read::<R, _, _>(s, deserializer));
        let got = self.load_wait_timeout::<Attempt<R>>(name, timeout, read);
        trial.finish(self, name, got, |l| l.with_mut(|root, _| payload(root)))
    }

    /// [`load_concurrent_from`](Self::load_concurrent_from) that sleeps while every
    /// slot is held (see [`load_concurrent_wait`](Self::load_concurrent_wait)): a
    /// loader thread that streams levels into a ring of slots blocks here only while
    /// every level is still in use.
    ///
    /// # Errors
    /// As [`load_wait_from`](Self::load_wait_from).
    ///
    /// ```
    /// use scope_stack::{slot_root, Loaded, LinearAllocator, Shared};
    ///
    /// slot_root!(struct Spawns = for<'s> &'s [[f32; 2]]);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 2, 16 << 10);
    ///     let (send, receive) = std::sync::mpsc::channel::<Loaded<'_, Spawns, Shared>>();
    ///     std::thread::scope(|t| {
    ///         t.spawn(move || {
    ///             for n in 0..6 {
    ///                 let file = format!("[[{n}, 0]]");
    ///                 let mut de = serde_json::Deserializer::from_str(&file);
    ///                 send.send(levels.load_concurrent_wait_from::<Spawns, _>("level", &mut de).unwrap()).unwrap();
    ///             }
    ///         });
    ///         let played: f32 = receive.iter().map(|level| level.with(|s| s[0][0])).sum();
    ///         assert_eq!(played, 15.0);
    ///     });
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_concurrent_wait_from<'de, R, D>(
        &self,
        name: &str,
        deserializer: D,
    ) -> Result<Loaded<'_, R, Shared>, LoadError<D::Error>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        self.load_concurrent_wait_timeout_from::<R, D>(name, FOREVER, deserializer)
    }

    /// [`load_concurrent_wait_from`](Self::load_concurrent_wait_from) with a time
    /// limit; see [`load_wait_timeout_from`](Self::load_wait_timeout_from).
    ///
    /// # Errors
    /// As [`load_wait_timeout_from`](Self::load_wait_timeout_from).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::{slot_root, SlotErrorKind, Slots};
    ///
    /// slot_root!(struct Spawns = for<'s> &'s [[f32; 2]]);
    ///
    /// let levels = Slots::leak("levels", 1, 16 << 10)?;
    /// let mut de = serde_json::Deserializer::from_str("[[1, 2]]");
    /// let playing = levels.load_concurrent_from::<Spawns, _>("a", &mut de).unwrap();
    /// let mut de = serde_json::Deserializer::from_str("[[3, 4]]");
    /// let err = levels
    ///     .load_concurrent_wait_timeout_from::<Spawns, _>("b", Duration::from_millis(5), &mut de)
    ///     .unwrap_err();
    /// assert_eq!(err.slot_error().unwrap().kind(), SlotErrorKind::TimedOut);
    /// drop(playing);
    /// let mut de = serde_json::Deserializer::from_str("[[3, 4]]");
    /// let next = levels
    ///     .load_concurrent_wait_timeout_from::<Spawns, _>("b", Duration::from_millis(5), &mut de)
    ///     .unwrap();
    /// assert_eq!(next.with(|s| s[0]), [3.0, 4.0]);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_concurrent_wait_timeout_from<'de, R, D>(
        &self,
        name: &str,
        timeout: Duration,
        deserializer: D,
    ) -> Result<Loaded<'_, R, Shared>, LoadError<D::Error>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut trial = Trial::new();
        let read = read_shared::<R, _>(|s| trial.read::<R, _, _>(s, deserializer));
        let got = self.load_concurrent_wait_timeout::<Attempt<R>>(name, timeout, read);
        trial.finish(self, name, got, |l| l.with_mut(|root, _| payload(root)))
    }

    /// [`load_task_from`](Self::load_task_from) that sleeps while every slot is held
    /// (see [`load_task_wait`](Self::load_task_wait)): a thread pool's job that serves
    /// one request parses its body here once a slot is free.
    ///
    /// # Errors
    /// As [`load_wait_from`](Self::load_wait_from).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    ///
    /// slot_root!(struct Body = for<'s> &'s [&'s str]);
    ///
    /// let requests = Slots::leak("requests", 2, 4096)?;
    /// let paths: Vec<String> = std::thread::scope(|t| {
    ///     let jobs: Vec<_> = (0..6)
    ///         .map(|n| t.spawn(move || {
    ///             let text = format!(r#"["GET", "/{n}"]"#);
    ///             let mut de = serde_json::Deserializer::from_str(&text);
    ///             let body = requests.load_task_wait_from::<Body, _>("body", &mut de).unwrap();
    ///             body.with(|b| b[1].to_string())
    ///         }))
    ///         .collect();
    ///     jobs.into_iter().map(|j| j.join().unwrap()).collect()
    /// });
    /// assert_eq!(paths.concat(), "/0/1/2/3/4/5");
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_task_wait_from<'de, R, D>(
        &self,
        name: &str,
        deserializer: D,
    ) -> Result<Loaded<'_, R, Task>, LoadError<D::Error>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        self.load_task_wait_timeout_from::<R, D>(name, FOREVER, deserializer)
    }

    /// [`load_task_wait_from`](Self::load_task_wait_from) with a time limit; see
    /// [`load_wait_timeout_from`](Self::load_wait_timeout_from): a service that
    /// answers "busy" instead of queueing for ever.
    ///
    /// # Errors
    /// As [`load_wait_timeout_from`](Self::load_wait_timeout_from).
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::{slot_root, SlotErrorKind, Slots};
    ///
    /// slot_root!(struct Body = for<'s> &'s [&'s str]);
    ///
    /// let requests = Slots::leak("requests", 1, 4096)?;
    /// let mut de = serde_json::Deserializer::from_str(r#"["GET", "/a"]"#);
    /// let _first = requests.load_task_from::<Body, _>("first", &mut de).unwrap();
    /// let mut de = serde_json::Deserializer::from_str(r#"["GET", "/b"]"#);
    /// let err = requests
    ///     .load_task_wait_timeout_from::<Body, _>("second", Duration::from_millis(5), &mut de)
    ///     .unwrap_err();
    /// assert_eq!(err.slot_error().unwrap().kind(), SlotErrorKind::TimedOut);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_task_wait_timeout_from<'de, R, D>(
        &self,
        name: &str,
        timeout: Duration,
        deserializer: D,
    ) -> Result<Loaded<'_, R, Task>, LoadError<D::Error>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut trial = Trial::new();
        let read = read_task::<R, _>(|s| trial.read::<R, _, _>(s, deserializer));
        let got = self.load_task_wait_timeout::<Attempt<R>>(name, timeout, read);
        trial.finish(self, name, got, |l| l.with_mut(|root, _| payload(root)))
    }

    /// [`load_from`](Self::load_from) as a future that waits (as a task, not a
    /// thread) while every slot is held; see [`load_async`](Self::load_async). The
    /// future owns the deserializer (pass `&mut de` to keep it, or a deserializer
    /// that owns its bytes) and reads the file in the poll that gets a slot; dropping
    /// the future before then claims nothing and reads nothing. A bad file, one too
    /// big for the slot, and one that fits but leaves too little room for the root
    /// itself are errors, not panics (it is [`try_load_async`](Self::try_load_async)
    /// whose build deserializes), and the slot is free again.
    ///
    /// # Errors
    /// As [`load_from`](Self::load_from), except that a full set is waited out.
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
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
    /// let names = block_on(async {
    ///     let mut de = serde_json::Deserializer::from_str(r#"["forest", "castle"]"#);
    ///     let level = levels.load_async_from::<Names, _>("names", &mut de).await.unwrap();
    ///     level.with(|n| n.join(" "))
    /// });
    /// assert_eq!(names, "forest castle");
    /// let mut de = serde_json::Deserializer::from_str(r#"["forest", 7]"#);
    /// assert!(block_on(levels.load_async_from::<Names, _>("bad", &mut de)).is_err());
    /// assert_eq!(levels.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_async_from<'a: 'n, 'n, 'de, R, D>(
        &'a self,
        name: &'n str,
        deserializer: D,
    ) -> impl Future<Output = Result<Loaded<'a, R>, LoadError<D::Error>>> + 'n
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de> + 'n,
    {
        async move {
            let mut catch = None;
            let build = try_plain::<R, _>(|s| read_in::<R, _, _>(&mut catch, s, deserializer));
            let got = self.try_load_async::<R>(name, build).await;
            got.map_err(|e| catch.unwrap_or_else(Catch::start).finish(e))
        }
    }

    /// [`load_concurrent_from`](Self::load_concurrent_from) as a future; see
    /// [`load_async_from`](Self::load_async_from). The [`Shared`] `Loaded` it gives
    /// is `Send` when its root is.
    ///
    /// # Errors
    /// As [`load_async_from`](Self::load_async_from).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    /// slot_root!(struct Spawns = for<'s> &'s [[f32; 2]]);
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    ///
    /// let levels = Slots::leak("levels", 1, 16 << 10)?;
    /// let mut de = serde_json::Deserializer::from_str("[[1, 2], [3, 4]]");
    /// let level = block_on(levels.load_concurrent_async_from::<Spawns, _>("spawns", &mut de)).unwrap();
    /// // The level crosses threads.
    /// let far = std::thread::spawn(move || level.with(|s| s[1])).join().unwrap();
    /// assert_eq!(far, [3.0, 4.0]);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_concurrent_async_from<'a: 'n, 'n, 'de, R, D>(
        &'a self,
        name: &'n str,
        deserializer: D,
    ) -> impl Future<Output = Result<Loaded<'a, R, Shared>, LoadError<D::Error>>> + 'n
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de> + 'n,
    {
        async move {
            let mut catch = None;
            let build = try_shared::<R, _>(|s| read_in::<R, _, _>(&mut catch, s, deserializer));
            let got = self.try_load_concurrent_async::<R>(name, build).await;
            got.map_err(|e| catch.unwrap_or_else(Catch::start).finish(e))
        }
    }

    /// [`load_task_from`](Self::load_task_from) as a future; see
    /// [`load_async_from`](Self::load_async_from): a request body parsed into the
    /// request's arena. The [`Task`] `Loaded` it gives is `Send` when its root is. A
    /// body too big for its slot is an error the service can answer.
    ///
    /// # Errors
    /// As [`load_async_from`](Self::load_async_from).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots, SlotErrorKind};
    /// slot_root!(struct Body = for<'s> &'s [&'s str]);
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl std::task::Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => return v, _ => std::thread::park() } }
    /// # }
    ///
    /// async fn serve(requests: &'static Slots, text: String) -> String {
    ///     let mut de = serde_json::Deserializer::from_str(&text);
    ///     match requests.load_task_async_from::<Body, _>("request", &mut de).await {
    ///         Ok(body) => body.with(|b| format!("200 {}", b.len())),
    ///         Err(e) if e.slot_error().is_some_and(|s| s.kind() == SlotErrorKind::Alloc) => "413".into(),
    ///         Err(_) => "400".into(),
    ///     }
    /// }
    ///
    /// let requests = Slots::leak("requests", 2, 1024)?;
    /// assert_eq!(block_on(serve(requests, r#"["GET", "/"]"#.into())), "200 2");
    /// assert_eq!(block_on(serve(requests, "[1]".into())), "400");
    /// let big = serde_json::to_string(&vec!["x"; 1000]).unwrap();
    /// assert_eq!(block_on(serve(requests, big)), "413");
    /// assert_eq!(requests.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_task_async_from<'a: 'n, 'n, 'de, R, D>(
        &'a self,
        name: &'n str,
        deserializer: D,
    ) -> impl Future<Output = Result<Loaded<'a, R, Task>, LoadError<D::Error>>> + 'n
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de> + 'n,
    {
        async move {
            let mut catch = None;
            let build = try_task::<R, _>(|s| read_in::<R, _, _>(&mut catch, s, deserializer));
            let got = self.try_load_task_async::<R>(name, build).await;
            got.map_err(|e| catch.unwrap_or_else(Catch::start).finish(e))
        }
    }
}
