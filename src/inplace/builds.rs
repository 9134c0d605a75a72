//! The in-place loads with a build step, the runtime half of a level:
//! [`Slots::load_archived_with`], [`Slots::load_archived_concurrent_with`] and
//! [`Slots::load_archived_task_with`].
//!
//! Invariant: the build step runs only on a validated archive, in the same slot,
//! after the archive's bytes, and what it returns becomes
//! [`InPlace::runtime`](super::InPlace) beside the archived level. If the step fails,
//! its error is kept aside (in a [`Steps`], which the async forms of `async_builds`
//! share), the build returns the placeholder, and `try_load` drops what the step
//! placed and frees the slot before the error comes back. The step's
//! error type `B` is chosen outside the slot's lifetime, so it cannot borrow from the
//! slot it outlives.
#![allow(clippy::result_large_err)]

use rkyv::api::high::HighValidator;
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor;
use rkyv::{Archive, Archived};

use crate::concurrent::ConcurrentScope;
use crate::error::AllocError;
use crate::scope::place::Place;
use crate::scope::ScopeStack;
use crate::slots::{Loaded, Shared, SlotError, SlotRoot, Slots, Task, TaskScope};

use super::error::BuildError;
use super::fill::{refused, Catch};
use super::root::{InPlace, InPlaceRoot};
use super::source::Source;

/// Runs the build step on the validated archive; keeps its error aside.
pub(super) fn step<'x, T: Archive, U, B>(
    archived: &'x Archived<T>,
    kept: &mut Option<B>,
    build: impl FnOnce(&'x Archived<T>) -> Result<U, B>,
) -> Result<InPlace<'x, T, U>, AllocError> {
    match build(archived) {
        Ok(runtime) => Ok(InPlace { archived, runtime }),
        Err(b) => {
            *kept = Some(b);
            Err(refused())
        }
    }
}

/// What a load with a build step keeps aside while the slot's build runs (for the
/// slots' `try_` loads, plain and async, whose build may fail): why the bytes were
/// refused, the step's error, and the archive's length, for the error.
pub(super) struct Steps<B> {
    catch: Catch,
    kept: Option<B>,
    len: usize,
}

impl<B> Steps<B> {
    /// Steps for an archive of `len` bytes.
    pub(super) fn new(len: usize) -> Self {
        Steps {
            catch: Catch::new(),
            kept: None,
            len,
        }
    }

    /// The slot's build: places the archive in `scope`, checks it, and runs the step
    /// on it; any failure is kept aside and the build returns an error.
    pub(super) fn run<'x, T, U, P: Place<'x>>(
        &mut self,
        scope: P,
        source: impl Source,
        build: impl FnOnce(&'x Archived<T>) -> Result<U, B>,
    ) -> Result<InPlace<'x, T, U>, AllocError>
    where
        T: Archive,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        let bytes = self.catch.place::<T, _>(scope, source)?;
        let archived = self.catch.check::<T>(bytes)?;
        step(archived, &mut self.kept, build)
    }

    /// The error of the failed load: the step's, when it ran and failed; the load's
    /// otherwise.
    pub(super) fn finish(self, slot: SlotError) -> BuildError<B> {
        match self.kept {
            Some(b) => BuildError::Build(b),
            None => BuildError::Load(self.catch.finish(slot, self.len)),
        }
    }
}

impl Slots {
    /// [`load_archived`](Self::load_archived), then a build step in the same slot that
    /// makes the level's runtime half (feature `rkyv`): `build` gets the validated
    /// archived level and the slot's scope, carves what the game changes (a pool of
    /// live enemies filled from the archived spawn list, a heap, counters) after the
    /// archive's bytes, and returns it. The `Loaded`'s root is an [`InPlace`]: the
    /// archived level and the runtime half side by side; [`Loaded::with_mut`] lends the
    /// runtime half mutably.
    ///
    /// # Errors
    /// [`BuildError::Load`] with the [`LoadError`](super::LoadError) of
    /// [`load_archived`](Self::load_archived) (the step did not run), or
    /// [`BuildError::Build`] with the step's error. Either way the slot is free again,
    /// with what the step placed dropped once.
    ///
    /// ```
    /// use scope_stack::inplace::BuildError;
    /// use scope_stack::{slot_root, LinearAllocator, Pool};
    ///
    /// #[derive(rkyv::Archive, rkyv::Serialize)]
    /// struct Level {
    ///     name: String,
    ///     spawns: Vec<Spawn>,
    /// }
    /// #[derive(rkyv::Archive, rkyv::Serialize)]
    /// struct Spawn {
    ///     kind: String,
    ///     hp: u32,
    /// }
    /// /// What the game changes: live enemies, borrowing their names from the archive (no
    /// /// drop, so a pod pool holds them).
    /// struct Enemy<'s> {
    ///     kind: &'s str,
    ///     hp: u32,
    /// }
    /// slot_root!(struct Live = for<'s> &'s mut Pool<'s, Enemy<'s>>);
    ///
    /// let cooked = Level {
    ///     name: "forest".into(),
    ///     spawns: vec![Spawn { kind: "wolf".into(), hp: 30 }, Spawn { kind: "bear".into(), hp: 80 }],
    /// };
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&cooked).unwrap();
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 64 << 10);
    ///     let mut level = levels
    ///         .load_archived_with::<Level, Live, &str>("forest", &file, |level, scope| {
    ///             let enemies = scope.try_new_pool_pod(level.spawns.len() * 2).map_err(|_| "no room")?;
    ///             for s in level.spawns.iter() {
    ///                 let enemy = Enemy { kind: s.kind.as_str(), hp: s.hp.to_native() };
    ///                 let _ = enemies.insert(enemy).map_err(|_| "full")?.into_handle();
    ///             }
    ///             Ok(enemies)
    ///         })
    ///         .unwrap();
    ///     level.with_mut(|l, _| {
    ///         for e in l.runtime.values_mut() {
    ///             e.hp -= 10; // the game changes the runtime half...
    ///         }
    ///     });
    ///     level.with(|l| {
    ///         assert_eq!(l.archived.name, "forest"); // ...and reads the archived half in place
    ///         let mut hp: Vec<_> = l.runtime.values().map(|e| (e.kind, e.hp)).collect();
    ///         hp.sort();
    ///         assert_eq!(hp, [("bear", 70), ("wolf", 20)]);
    ///     });
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_with<T, U, B>(
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
        let mut steps = Steps::new(source.len());
        self.try_load::<InPlaceRoot<T, U>>(name, |s| steps.run(s, source, |a| build(a, s)))
            .map_err(|e| steps.finish(e))
    }

    /// [`load_archived_concurrent`](Self::load_archived_concurrent) with a build step:
    /// see [`load_archived_with`](Self::load_archived_with). `build` gets the slot's
    /// concurrent scope (it may share it with worker threads), and the level may then
    /// be sent to another thread.
    ///
    /// # Errors
    /// As [`load_archived_with`](Self::load_archived_with).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    ///
    /// #[derive(rkyv::Archive, rkyv::Serialize)]
    /// struct Path {
    ///     points: Vec<[f32; 2]>,
    /// }
    /// slot_root!(struct Length = for<'s> f32);
    ///
    /// let paths = Slots::leak("paths", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&Path { points: vec![[0.0, 0.0], [3.0, 4.0]] }).unwrap();
    /// let path = paths
    ///     .load_archived_concurrent_with::<Path, Length, ()>("p", &file, |p, _| {
    ///         let xy = |i: usize| [p.points[i][0].to_native(), p.points[i][1].to_native()];
    ///         Ok((1..p.points.len()).map(|i| (xy(i)[0] - xy(i - 1)[0]).hypot(xy(i)[1] - xy(i - 1)[1])).sum())
    ///     })
    ///     .unwrap();
    /// let length = std::thread::spawn(move || path.with(|p| p.runtime)).join().unwrap();
    /// assert_eq!(length, 5.0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_concurrent_with<T, U, B>(
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
        let mut steps = Steps::new(source.len());
        self.try_load_concurrent::<InPlaceRoot<T, U>>(name, |s| {
            steps.run(s, source, |a| build(a, s))
        })
        .map_err(|e| steps.finish(e))
    }

    /// [`load_archived_task`](Self::load_archived_task) with a build step: see
    /// [`load_archived_with`](Self::load_archived_with). `build` gets the slot's
    /// [`TaskScope`].
    ///
    /// # Errors
    /// As [`load_archived_with`](Self::load_archived_with).
    ///
    /// ```
    /// use scope_stack::{slot_root, Place, Slots};
    ///
    /// slot_root!(struct Doubled = for<'s> &'s [u32]);
    ///
    /// let chunks = Slots::leak("chunks", 2, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![1u32, 2, 3]).unwrap();
    /// let chunk = chunks
    ///     .load_archived_task_with::<Vec<u32>, Doubled, ()>("c", &file, |v, arena| {
    ///         Ok(&*arena.alloc_iter_pod(v.iter().map(|x| x.to_native() * 2)))
    ///     })
    ///     .unwrap();
    /// let doubled = std::thread::spawn(move || chunk.with(|c| c.runtime.to_vec())).join().unwrap();
    /// assert_eq!(doubled, [2, 4, 6]);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_task_with<T, U, B>(
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
        let mut steps = Steps::new(source.len());
        self.try_load_task::<InPlaceRoot<T, U>>(name, |s| steps.run(s, source, |a| build(a, s)))
            .map_err(|e| steps.finish(e))
    }
}
