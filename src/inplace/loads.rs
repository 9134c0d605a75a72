//! The in-place loads of the three slot kinds: [`Slots::load_archived`] (plain),
//! [`Slots::load_archived_concurrent`] (shared: a loader thread loads, the game thread
//! plays) and [`Slots::load_archived_task`] (task), and the `unsafe` loads that skip
//! validation for trusted files.
//!
//! Each is the slots' own `try_` load whose build is [`Catch::place`] then
//! [`Catch::check`]: a failure of the bytes is kept in the catch and the slot is freed
//! by `try_load` before the error comes back. The `unsafe` loads build with
//! [`Catch::place_trusted`] instead, which takes the placed bytes as they lie. No
//! `try_` forms of their own: these loads always return a `Result`, as the serde file
//! loads do.
#![allow(clippy::result_large_err)]

use rkyv::api::high::HighValidator;
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor;
use rkyv::{Archive, Archived};

use crate::slots::{Loaded, Shared, Slots, Task};

use super::error::LoadError;
use super::fill::Catch;
use super::root::ArchivedRoot;
use super::source::Source;

impl Slots {
    /// Takes a free slot, copies (or reads) the archived bytes of a `T` into it at the
    /// alignment rkyv needs, validates them with bytecheck, and hands out the slot with
    /// the archived level as its root (feature `rkyv`). The level is read where it
    /// lies for as long as the `Loaded` is held; dropping it frees the slot in one
    /// step. No heap buffer is used: a byte slice is copied once, a
    /// [`FromReader`](super::FromReader) reads straight into the slot.
    ///
    /// The slot holds the archive's bytes (at the front of the slot, aligned to 16 or
    /// to the archived root's alignment, if larger), the archive's row in the memory
    /// map (16 words, placed after it: the row `- Archive Level` that
    /// [`ScopeStack::report`](crate::ScopeStack::report) lists under the slot), and the
    /// root (one reference); with the `tracy` feature, while a profiler is connected,
    /// also the record that ends the archive's own profiler pool (see
    /// [`crate::inplace`]).
    ///
    /// # Errors
    /// A [`LoadError`] that names the set and the load: every slot held, the slot too
    /// small for the archive, bytes that do not validate (cut short, altered, another
    /// type, another rkyv format), or a reader that failed. The slot is free again at
    /// once.
    ///
    /// ```
    /// use scope_stack::inplace::LoadErrorKind;
    /// use scope_stack::LinearAllocator;
    ///
    /// #[derive(rkyv::Archive, rkyv::Serialize)]
    /// struct Level {
    ///     name: String,
    ///     spawns: Vec<[f32; 2]>,
    /// }
    ///
    /// // Cooked offline, from the same type the game uses.
    /// let level = Level { name: "forest".into(), spawns: vec![[1.0, 2.0], [3.0, 4.0]] };
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&level).unwrap();
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 2, 64 << 10);
    ///     let forest = levels.load_archived::<Level>("forest", &file).unwrap();
    ///     forest.with(|l| {
    ///         assert_eq!(l.name, "forest");
    ///         assert_eq!(l.spawns[1][0].to_native(), 3.0);
    ///     });
    ///     // A file cut short is refused, and its slot is free again.
    ///     let err = levels.load_archived::<Level>("cut", &file[..file.len() / 2]).unwrap_err();
    ///     assert_eq!(err.kind(), LoadErrorKind::Invalid);
    ///     assert_eq!(levels.loaded(), 1);
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived<T>(
        &self,
        name: &str,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>>, LoadError>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        let len = source.len();
        let mut catch = Catch::new();
        self.try_load::<ArchivedRoot<T>>(name, |s| {
            let bytes = catch.place::<T, _>(s, source)?;
            catch.check::<T>(bytes)
        })
        .map_err(|e| catch.finish(e, len))
    }

    /// As [`load_archived`](Self::load_archived), through the slot's concurrent scope,
    /// so a loader thread can load the level and send it to the game thread (a shared
    /// `Loaded` is `Send` when `Archived<T>` is `Sync`, as rkyv's archived types are).
    ///
    /// # Errors
    /// As [`load_archived`](Self::load_archived).
    ///
    /// ```
    /// use scope_stack::Slots;
    ///
    /// #[derive(rkyv::Archive, rkyv::Serialize)]
    /// struct Level {
    ///     name: String,
    /// }
    ///
    /// let levels = Slots::leak("levels", 2, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&Level { name: "castle".into() }).unwrap();
    /// let loader = std::thread::spawn(move || levels.load_archived_concurrent::<Level>("castle", &file).unwrap());
    /// let level = loader.join().unwrap();
    /// assert_eq!(level.with(|l| l.name.len()), 6);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_concurrent<T>(
        &self,
        name: &str,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>, Shared>, LoadError>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        let len = source.len();
        let mut catch = Catch::new();
        self.try_load_concurrent::<ArchivedRoot<T>>(name, |s| {
            let bytes = catch.place::<T, _>(s, source)?;
            catch.check::<T>(bytes)
        })
        .map_err(|e| catch.finish(e, len))
    }

    /// As [`load_archived`](Self::load_archived), through a task slot's
    /// [`TaskScope`](crate::TaskScope) (see [`load_task`](Self::load_task)): a level
    /// `Send` with the task that streams it, at a plain slot's cost.
    ///
    /// # Errors
    /// As [`load_archived`](Self::load_archived).
    ///
    /// ```
    /// use scope_stack::Slots;
    ///
    /// let chunks = Slots::leak("chunks", 4, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![1u32, 2, 3]).unwrap();
    /// let chunk = chunks.load_archived_task::<Vec<u32>>("chunk", &file).unwrap();
    /// let sum = std::thread::spawn(move || chunk.with(|c| c.iter().map(|x| x.to_native()).sum::<u32>()));
    /// assert_eq!(sum.join().unwrap(), 6);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_archived_task<T>(
        &self,
        name: &str,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>, Task>, LoadError>
    where
        T: Archive + 'static,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        let len = source.len();
        let mut catch = Catch::new();
        self.try_load_task::<ArchivedRoot<T>>(name, |s| {
            let bytes = catch.place::<T, _>(s, source)?;
            catch.check::<T>(bytes)
        })
        .map_err(|e| catch.finish(e, len))
    }

    /// As [`load_archived`](Self::load_archived), without validation: for files the
    /// game cooked itself and trusts, where the check's pass over the bytes is not
    /// wanted. The bytes are still copied into the slot at the right alignment.
    ///
    /// # Safety
    /// The bytes must be exactly what `rkyv::to_bytes` (or another rkyv serializer)
    /// wrote for a `T`, with the same rkyv format features (endianness, alignment,
    /// pointer width) this build uses, unaltered. An archive is relative pointers and
    /// lengths read as they lie: bytes that lie make references that lie (out of the
    /// slot, to a `str` that is not UTF-8, to an enum with no such variant), and no
    /// check stands between them and the game. That is why this is `unsafe`, and the
    /// validated [`load_archived`](Self::load_archived) is not.
    ///
    /// # Errors
    /// As [`load_archived`](Self::load_archived), less [`LoadErrorKind::Invalid`](super::LoadErrorKind::Invalid).
    ///
    /// ```
    /// use scope_stack::Slots;
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&String::from("trusted")).unwrap();
    /// // SAFETY: `file` is an archived `String`, written just above by this build.
    /// let level = unsafe { levels.load_archived_unchecked::<String>("level", &file) }.unwrap();
    /// assert_eq!(level.with(|s| s.as_str().len()), 7);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub unsafe fn load_archived_unchecked<T: Archive + 'static>(
        &self,
        name: &str,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>>, LoadError> {
        let len = source.len();
        let mut catch = Catch::new();
        self.try_load::<ArchivedRoot<T>>(name, |s| {
            // SAFETY: the caller vouches for the bytes `source` gives (this function's
            // contract, which is `place_trusted`'s).
            unsafe { catch.place_trusted::<T, _>(s, source) }
        })
        .map_err(|e| catch.finish(e, len))
    }

    /// As [`load_archived_concurrent`](Self::load_archived_concurrent), without
    /// validation.
    ///
    /// # Safety
    /// As [`load_archived_unchecked`](Self::load_archived_unchecked).
    ///
    /// # Errors
    /// As [`load_archived_unchecked`](Self::load_archived_unchecked).
    ///
    /// ```
    /// use scope_stack::Slots;
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![5u16; 4]).unwrap();
    /// // SAFETY: `file` is an archived `Vec<u16>`, written just above by this build.
    /// let level = unsafe { levels.load_archived_concurrent_unchecked::<Vec<u16>>("l", &file) }.unwrap();
    /// assert_eq!(std::thread::spawn(move || level.with(|v| v.len())).join().unwrap(), 4);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub unsafe fn load_archived_concurrent_unchecked<T: Archive + 'static>(
        &self,
        name: &str,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>, Shared>, LoadError> {
        let len = source.len();
        let mut catch = Catch::new();
        self.try_load_concurrent::<ArchivedRoot<T>>(name, |s| {
            // SAFETY: as in `load_archived_unchecked`.
            unsafe { catch.place_trusted::<T, _>(s, source) }
        })
        .map_err(|e| catch.finish(e, len))
    }

    /// As [`load_archived_task`](Self::load_archived_task), without validation: a
    /// trusted level `Send` with the task that streams it.
    ///
    /// # Safety
    /// As [`load_archived_unchecked`](Self::load_archived_unchecked).
    ///
    /// # Errors
    /// As [`load_archived_unchecked`](Self::load_archived_unchecked).
    ///
    /// ```
    /// use scope_stack::Slots;
    ///
    /// let chunks = Slots::leak("chunks", 1, 4096)?;
    /// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&vec![1u32, 2, 3]).unwrap();
    /// // SAFETY: `file` is an archived `Vec<u32>`, written just above by this build.
    /// let chunk = unsafe { chunks.load_archived_task_unchecked::<Vec<u32>>("chunk", &file) }.unwrap();
    /// let sum = std::thread::spawn(move || chunk.with(|c| c.iter().map(|x| x.to_native()).sum::<u32>()));
    /// assert_eq!(sum.join().unwrap(), 6);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub unsafe fn load_archived_task_unchecked<T: Archive + 'static>(
        &self,
        name: &str,
        source: impl Source,
    ) -> Result<Loaded<'_, ArchivedRoot<T>, Task>, LoadError> {
        let len = source.len();
        let mut catch = Catch::new();
        self.try_load_task::<ArchivedRoot<T>>(name, |s| {
            // SAFETY: as in `load_archived_unchecked`.
            unsafe { catch.place_trusted::<T, _>(s, source) }
        })
        .map_err(|e| catch.finish(e, len))
    }
}
