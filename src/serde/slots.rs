//! A level from a file into a slot in one call: [`Slots::load_from`],
//! [`Slots::load_concurrent_from`] and [`Slots::load_task_from`], and their error,
//! [`LoadError`]: the deserializer's own error, beside the crate's.
//!
//! Invariant: a load whose deserialization fails frees its slot before returning (what
//! it placed is dropped and the slot's memory rewinds, as for any failed `try_load`),
//! so the slot can be loaded again at once. The [`LoadError`] that comes back holds
//! the deserializer's error and, when the slot is the reason, the [`SlotError`] (which
//! holds the [`AllocError`]) of this load and of no other: the thread's record of
//! allocation errors is cleared when a load starts and taken when it fails.
#![allow(clippy::result_large_err)]

use core::cell::Cell;
use core::fmt;

use serde::de::{Deserializer, Error};

use crate::concurrent::ConcurrentScope;
use crate::error::{AllocError, AllocErrorKind};
use crate::scope::ScopeStack;
use crate::slots::{Loaded, Shared, SlotError, SlotRoot, Slots, Task, TaskScope};

use super::trait_in::{take_recorded, DeserializeIn};

/// A slot's file load failed: the deserializer's error, and the slot's side of the
/// story when the slot was the reason (feature `serde`).
///
/// [`Slots::load_from`], [`load_concurrent_from`](Slots::load_concurrent_from) and
/// [`load_task_from`](Slots::load_task_from) return it. Some formats keep the message
/// the crate gives them and some drop it: postcard answers every message with "Serde
/// Deserialization Error". So the load keeps its own error beside the format's:
///
/// - [`slot_error`](Self::slot_error): every slot was held (the error names the
///   holders), or the slot was too small (it names the set, the slot's size and the
///   load);
/// - [`alloc_error`](Self::alloc_error): for a slot too small, the allocation that did
///   not fit (the scope, the bytes asked for, the bytes left);
/// - [`format_error`](Self::format_error): the deserializer's error, as before.
///
/// Its `Display` is the format's message, followed in parentheses by the slot error
/// when the format did not write that down itself, so the text says everything once:
/// with postcard, `Serde Deserialization Error (a slot of "levels" (4096 bytes) is too
/// small for "forest": scope-stack: out of memory in scope "forest": ...)`; with
/// serde_json, its own message alone, which already carries the allocation error.
/// Its [`source`](core::error::Error::source) is the format error's source: the
/// format's message is part of this one's, so it is not repeated down the chain.
///
/// The allocation error of a deserialization that ran out of room is known only with
/// the `std` feature (a thread-local record); without it, a slot too small for what
/// the file places gives the format's error alone, as a failure of the format does.
///
/// ```
/// use scope_stack::{slot_root, AllocErrorKind, LinearAllocator};
///
/// slot_root!(struct Names = for<'s> &'s [&'s str]);
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
/// memory.scope("game", |game| {
///     let levels = game.new_slots("levels", 1, 256);
///     let names = vec!["forest"; 100];
///     let file = postcard::to_allocvec(&names).unwrap();
///     let err = levels
///         .load_from::<Names, _>("names", &mut postcard::Deserializer::from_bytes(&file))
///         .unwrap_err();
///     // postcard's own error says nothing of the slot...
///     assert_eq!(err.format_error().to_string(), "Serde Deserialization Error");
///     // ...the load's error does.
///     let alloc = err.alloc_error().unwrap();
///     assert_eq!((alloc.kind(), alloc.scope_name()), (AllocErrorKind::OutOfMemory, "names"));
///     let text = err.to_string();
///     assert!(text.starts_with("Serde Deserialization Error (a slot of \"levels\" (256 bytes)"));
///     assert_eq!(levels.loaded(), 0); // and the slot is free again
/// });
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct LoadError<E> {
    /// The deserializer's error.
    error: E,
    /// The slot's side, when the slot was the reason.
    slot: Option<SlotError>,
    /// The format wrote the slot's side into `error` already.
    shown: bool,
}

impl<E> LoadError<E> {
    /// The deserializer's error, as the format made it: bad input, a wrong type, a
    /// missing field, or the crate's message when the slot was the reason (which the
    /// format may have kept or dropped).
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    ///
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 4096);
    ///     let mut de = serde_json::Deserializer::from_str(r#"["forest", 7]"#);
    ///     let err = levels.load_from::<Names, _>("names", &mut de).unwrap_err();
    ///     assert_eq!(err.format_error().line(), 1);
    ///     assert!(err.format_error().is_data());
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn format_error(&self) -> &E {
        &self.error
    }

    /// The deserializer's error, for a caller whose own error type is the format's
    /// (the slot's side is dropped).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    ///
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
    ///
    /// fn load(levels: &Slots, text: &str) -> Result<usize, serde_json::Error> {
    ///     let mut de = serde_json::Deserializer::from_str(text);
    ///     let names = levels
    ///         .load_from::<Names, _>("names", &mut de)
    ///         .map_err(|e| e.into_format_error())?;
    ///     Ok(names.with(|n| n.len()))
    /// }
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// assert_eq!(load(levels, r#"["forest", "castle"]"#).unwrap(), 2);
    /// assert!(load(levels, "[").is_err());
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn into_format_error(self) -> E {
        self.error
    }

    /// The slot's side, when the slot was the reason: every slot was held
    /// ([`SlotErrorKind::Full`](crate::SlotErrorKind::Full), naming the holders), or
    /// the slot was too small for what the file places or for the root
    /// ([`SlotErrorKind::Alloc`](crate::SlotErrorKind::Alloc), with the
    /// [`AllocError`]). `None` when the file or the format was the reason.
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator, SlotErrorKind};
    ///
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 4096);
    ///     let file = postcard::to_allocvec(&vec!["forest"]).unwrap();
    ///     let held = levels
    ///         .load_from::<Names, _>("forest", &mut postcard::Deserializer::from_bytes(&file))
    ///         .unwrap();
    ///     let err = levels
    ///         .load_from::<Names, _>("castle", &mut postcard::Deserializer::from_bytes(&file))
    ///         .unwrap_err();
    ///     let slot = err.slot_error().unwrap();
    ///     assert_eq!(slot.kind(), SlotErrorKind::Full);
    ///     assert_eq!(slot.holders().collect::<Vec<_>>(), ["forest"]);
    ///     drop(held);
    ///     // A file cut short is the file's fault, not the slot's.
    ///     let err = levels
    ///         .load_from::<Names, _>("cut", &mut postcard::Deserializer::from_bytes(&file[..3]))
    ///         .unwrap_err();
    ///     assert!(err.slot_error().is_none());
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn slot_error(&self) -> Option<&SlotError> {
        self.slot.as_ref()
    }

    /// For a slot too small: the allocation that did not fit, which names the scope
    /// the load placed in, the bytes asked for and the bytes left. Without the `std`
    /// feature, only when the root itself did not fit (see the type's docs).
    ///
    /// ```
    /// use scope_stack::{slot_root, AllocErrorKind, LinearAllocator};
    ///
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 1024);
    ///     let file = postcard::to_allocvec(&vec![7u8; 2000]).unwrap();
    ///     let err = levels
    ///         .load_from::<Bytes, _>("big", &mut postcard::Deserializer::from_bytes(&file))
    ///         .unwrap_err();
    ///     let alloc = err.alloc_error().unwrap();
    ///     assert_eq!(alloc.kind(), AllocErrorKind::OutOfMemory);
    ///     assert!(alloc.size() > alloc.remaining());
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn alloc_error(&self) -> Option<&AllocError> {
        self.slot.as_ref().and_then(SlotError::alloc_error)
    }
}

impl<E: fmt::Display> fmt::Display for LoadError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)?;
        match &self.slot {
            Some(slot) if !self.shown => write!(f, " ({slot})"),
            _ => Ok(()),
        }
    }
}

impl<E: fmt::Debug> fmt::Debug for LoadError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadError")
            .field("error", &self.error)
            .field("slot", &self.slot)
            .finish()
    }
}

impl<E: core::error::Error> core::error::Error for LoadError<E> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        self.error.source()
    }
}

/// The placeholder error that tells `try_load` the build failed when the deserializer
/// failed for a reason of its own (the file, the format); its error is kept aside and
/// returned instead.
pub(super) fn failed() -> AllocError {
    AllocError::in_scope(AllocErrorKind::Format, 0, 1, 0, 0, "")
}

/// What one file load keeps aside while `try_load` runs its build.
pub(super) struct Catch<E> {
    /// The deserializer's error, when the build failed.
    kept: Option<E>,
    /// The build failed because the slot ran out of room: the `SlotError` that
    /// `try_load` returns holds the real allocation error.
    alloc: bool,
    /// The format wrote the allocation error's text into `kept`.
    shown: bool,
}

impl<E: Error> Catch<E> {
    /// Starts a load: forgets an allocation error that an earlier load on this thread
    /// left behind.
    pub(super) fn start() -> Self {
        let _stale = take_recorded();
        Catch {
            kept: None,
            alloc: false,
            shown: false,
        }
    }

    /// The build's error for `try_load`: the allocation error that stopped the
    /// deserializer, or the placeholder when something else did.
    pub(super) fn fail(&mut self, e: E) -> AllocError {
        self.kept = Some(e);
        match take_recorded() {
            Some(r) => {
                self.alloc = true;
                self.shown = r.shown;
                r.error
            }
            None => failed(),
        }
    }

    /// The load's error from `try_load`'s.
    pub(super) fn finish(self, slot: SlotError) -> LoadError<E> {
        match self.kept {
            Some(error) => LoadError {
                error,
                slot: self.alloc.then_some(slot),
                shown: self.shown,
            },
            // No slot was free, or the root did not fit: the deserializer's error is
            // made from the slot's.
            None => {
                let shown = Cell::new(false);
                let error = E::custom(Shown {
                    slot: &slot,
                    shown: &shown,
                });
                LoadError {
                    error,
                    slot: Some(slot),
                    shown: shown.get(),
                }
            }
        }
    }
}

/// A slot error as a format's message; `shown` turns true once the format wrote all of
/// it.
struct Shown<'a> {
    slot: &'a SlotError,
    shown: &'a Cell<bool>,
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.slot, f)?;
        self.shown.set(true);
        Ok(())
    }
}

impl Slots {
    /// Takes a free slot and deserializes its root there from a file (feature `serde`):
    /// [`load`](Self::load) with [`DeserializeIn`] as the build. On any error the slot
    /// is free again at once, with everything the load placed dropped and rewound.
    ///
    /// # Errors
    /// A [`LoadError`]: the deserializer's error (bad input, a wrong type, a missing
    /// field), and when the slot was the reason, the slot's own error beside it: the
    /// slot too small (it names the set, the slot's size, the load's scope and the bytes
    /// asked for; [`LoadError::alloc_error`] has the figures) or every slot held (it
    /// names the holders). The error's text says it even with a format that drops
    /// messages, such as postcard (see [`LoadError`] for what needs the `std` feature).
    /// A caller whose error type is the format's takes it with
    /// [`into_format_error`](LoadError::into_format_error).
    ///
    /// A file nested deeper than the stack holds is not an error: the stack overflows
    /// and the process aborts. Before loading files from players or mods, see
    /// [files from players and mods](crate::serde#files-from-players-and-mods) (a
    /// depth-limited format such as serde_json, a loader thread with a bigger stack, or
    /// a level type that does not contain itself).
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    ///
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 64 << 10);
    ///     let mut de = serde_json::Deserializer::from_str(r#"["forest", "castle"]"#);
    ///     let names = levels.load_from::<Names, _>("names", &mut de).unwrap();
    ///     assert!(names.with(|n| n[1] == "castle"));
    ///     drop(names);
    ///     // A broken file: an error, and the slot is free again.
    ///     let mut bad = serde_json::Deserializer::from_str(r#"["forest", 7]"#);
    ///     assert!(levels.load_from::<Names, _>("bad", &mut bad).is_err());
    ///     assert_eq!(levels.loaded(), 0);
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_from<'de, R, D>(
        &self,
        name: &str,
        deserializer: D,
    ) -> Result<Loaded<'_, R>, LoadError<D::Error>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut catch = Catch::start();
        let build = build_plain::<R, _>(|s| {
            R::Of::deserialize_in(s, deserializer).map_err(|e| catch.fail(e))
        });
        match self.try_load::<R>(name, build) {
            Ok(loaded) => Ok(loaded),
            Err(e) => Err(catch.finish(e)),
        }
    }

    /// As [`load_from`](Self::load_from), through a concurrent scope, so the loaded
    /// level can be sent to another thread (see [`load_concurrent`](Self::load_concurrent)):
    /// the call for a loader thread.
    ///
    /// # Errors
    /// As [`load_from`](Self::load_from).
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    ///
    /// slot_root!(struct Spawns = for<'s> &'s [[f32; 2]]);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 2, 64 << 10);
    ///     let file = String::from("[[1, 2], [3, 4]]");
    ///     let level = std::thread::scope(|t| {
    ///         t.spawn(|| {
    ///             let mut de = serde_json::Deserializer::from_str(&file);
    ///             levels.load_concurrent_from::<Spawns, _>("spawns", &mut de).unwrap()
    ///         })
    ///         .join()
    ///         .unwrap()
    ///     });
    ///     drop(file); // the level holds copies
    ///     assert_eq!(level.with(|s| s[1]), [3.0, 4.0]);
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_concurrent_from<'de, R, D>(
        &self,
        name: &str,
        deserializer: D,
    ) -> Result<Loaded<'_, R, Shared>, LoadError<D::Error>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut catch = Catch::start();
        let build = build_shared::<R, _>(|s| {
            R::Of::deserialize_in(s, deserializer).map_err(|e| catch.fail(e))
        });
        match self.try_load_concurrent::<R>(name, build) {
            Ok(loaded) => Ok(loaded),
            Err(e) => Err(catch.finish(e)),
        }
    }

    /// As [`load_from`](Self::load_from), through a task slot's [`TaskScope`] (see
    /// [`load_task`](Self::load_task)): a request body parsed into the request's arena,
    /// `Send` with the task that serves it, at a plain slot's cost.
    ///
    /// # Errors
    /// As [`load_from`](Self::load_from).
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    ///
    /// slot_root!(struct Body = for<'s> &'s [&'s str]);
    ///
    /// let requests = Slots::leak("requests", 4, 16 << 10)?;
    /// let mut de = serde_json::Deserializer::from_str(r#"["GET", "/index"]"#);
    /// let body = requests.load_task_from::<Body, _>("body", &mut de).unwrap();
    /// let path = std::thread::spawn(move || body.with(|b| b[1].to_string())).join().unwrap();
    /// assert_eq!((path.as_str(), requests.loaded()), ("/index", 0));
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_task_from<'de, R, D>(
        &self,
        name: &str,
        deserializer: D,
    ) -> Result<Loaded<'_, R, Task>, LoadError<D::Error>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut catch = Catch::start();
        let build = build_task::<R, _>(|s| {
            R::Of::deserialize_in(s, deserializer).map_err(|e| catch.fail(e))
        });
        match self.try_load_task::<R>(name, build) {
            Ok(loaded) => Ok(loaded),
            Err(e) => Err(catch.finish(e)),
        }
    }
}

/// Pins a closure to the higher-ranked signature `try_load` takes.
fn build_plain<R: SlotRoot, F>(f: F) -> F
where
    F: for<'x> FnOnce(&'x ScopeStack<'x>) -> Result<R::Of<'x>, AllocError>,
{
    f
}

/// Pins a closure to the higher-ranked signature `try_load_concurrent` takes.
fn build_shared<R: SlotRoot, F>(f: F) -> F
where
    F: for<'x> FnOnce(&'x ConcurrentScope<'x>) -> Result<R::Of<'x>, AllocError>,
{
    f
}

/// Pins a closure to the higher-ranked signature `try_load_task` takes.
fn build_task<R: SlotRoot, F>(f: F) -> F
where
    F: for<'x> FnOnce(TaskScope<'x>) -> Result<R::Of<'x>, AllocError>,
{
    f
}

/// A slot's file load with a build step failed (feature `serde`): the load's own
/// [`LoadError`] (the file, the format, or the slot), or the build step's error.
///
/// [`Slots::load_from_with`], [`load_concurrent_from_with`](Slots::load_concurrent_from_with)
/// and [`load_task_from_with`](Slots::load_task_from_with) return it. Either way the
/// slot is free again when it comes back, with everything the load placed dropped once.
///
/// ```
/// use scope_stack::serde::BuildError;
/// use scope_stack::{slot_root, ScopeStack, Slots};
///
/// slot_root!(struct Names = for<'s> &'s [&'s str]);
///
/// fn no_empty<'s>(names: &mut &'s [&'s str], _: &'s ScopeStack<'s>) -> Result<(), &'static str> {
///     if names.is_empty() { Err("no names") } else { Ok(()) }
/// }
///
/// let levels = Slots::leak("levels", 1, 4096)?;
/// let mut de = serde_json::Deserializer::from_str("[]");
/// let err = levels.load_from_with::<Names, _, _>("empty", &mut de, no_empty).unwrap_err();
/// assert!(matches!(err, BuildError::Build("no names")));
/// assert_eq!(err.to_string(), "no names");
/// let mut de = serde_json::Deserializer::from_str("[7]");
/// let err = levels.load_from_with::<Names, _, _>("bad", &mut de, no_empty).unwrap_err();
/// assert!(err.load_error().unwrap().format_error().is_data());
/// assert_eq!(levels.loaded(), 0);
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
// The `Load` variant is as large as `LoadError` (a `SlotError` with the names inline),
// kept unboxed so that a failed load allocates nothing, as `try_load`'s error does.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum BuildError<E, B> {
    /// The load failed before the build step ran: the file, the format, or the slot
    /// (every slot held, or too small); the build step did not run.
    Load(LoadError<E>),
    /// The build step returned this error (after the file was read); what the file
    /// placed was dropped.
    Build(B),
}

impl<E, B> BuildError<E, B> {
    /// The load's error, when the load failed before the build step ran.
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    ///
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let mut de = serde_json::Deserializer::from_str("[");
    /// let err = levels
    ///     .load_from_with::<Names, _, ()>("cut", &mut de, |_, _| Ok(()))
    ///     .unwrap_err();
    /// assert!(err.load_error().unwrap().format_error().is_eof());
    /// assert!(err.build_error().is_none());
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_error(&self) -> Option<&LoadError<E>> {
        match self {
            BuildError::Load(e) => Some(e),
            BuildError::Build(_) => None,
        }
    }

    /// The build step's error, when the build step failed.
    ///
    /// ```
    /// use scope_stack::{slot_root, Slots};
    ///
    /// slot_root!(struct Names = for<'s> &'s [&'s str]);
    ///
    /// let levels = Slots::leak("levels", 1, 4096)?;
    /// let mut de = serde_json::Deserializer::from_str(r#"["a"]"#);
    /// let err = levels
    ///     .load_from_with::<Names, _, _>("a", &mut de, |_, _| Err(42))
    ///     .unwrap_err();
    /// assert_eq!(err.build_error(), Some(&42));
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn build_error(&self) -> Option<&B> {
        match self {
            BuildError::Load(_) => None,
            BuildError::Build(b) => Some(b),
        }
    }
}

impl<E: fmt::Display, B: fmt::Display> fmt::Display for BuildError<E, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Load(e) => fmt::Display::fmt(e, f),
            BuildError::Build(b) => fmt::Display::fmt(b, f),
        }
    }
}

impl<E, B> core::error::Error for BuildError<E, B>
where
    E: core::error::Error,
    B: core::error::Error,
{
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            BuildError::Load(e) => e.source(),
            BuildError::Build(b) => b.source(),
        }
    }
}

impl<E, B> From<LoadError<E>> for BuildError<E, B> {
    fn from(e: LoadError<E>) -> Self {
        BuildError::Load(e)
    }
}

/// The error of a failed load with a build step: the step's own, when it ran and
/// failed; the load's otherwise.
/// The body every `*_from_with` load runs in its slot: the file into a root through
/// `scope`, then the build step on it. A file error is kept in `catch`, a step's error
/// in `step`; either way the root (if any) is dropped here, before the slot unloads.
fn read_then_build<'x, 'de, R, P, D, B>(
    scope: P,
    deserializer: D,
    catch: &mut Catch<D::Error>,
    step: &mut Option<B>,
    build: impl FnOnce(&mut R::Of<'x>, P) -> Result<(), B>,
) -> Result<R::Of<'x>, AllocError>
where
    R: SlotRoot,
    R::Of<'x>: DeserializeIn<'x>,
    P: crate::scope::place::Place<'x> + Copy,
    D: Deserializer<'de>,
{
    let mut root = R::Of::deserialize_in(scope, deserializer).map_err(|e| catch.fail(e))?;
    match build(&mut root, scope) {
        Ok(()) => Ok(root),
        Err(b) => {
            *step = Some(b);
            Err(failed())
        }
    }
}

fn build_failed<E: Error, B>(
    catch: Catch<E>,
    step: Option<B>,
    slot: SlotError,
) -> BuildError<E, B> {
    match step {
        Some(b) => BuildError::Build(b),
        None => BuildError::Load(catch.finish(slot)),
    }
}

impl Slots {
    /// [`load_from`](Self::load_from), then a build step in the same slot before the
    /// level is handed out: `build` gets the root just read and the slot's scope (as
    /// [`Loaded::with_mut`] lends them), and fills what the file does not hold (an
    /// index from names to pool handles, kept in a heap it carves; a field that is
    /// `#[serde(skip)]` in the file). On any error, the file's, the slot's or the build
    /// step's, the slot is free again at once, with everything the load and the step
    /// placed dropped once.
    ///
    /// # Errors
    /// [`BuildError::Load`] with the [`LoadError`] of [`load_from`](Self::load_from)
    /// (the build step did not run), or [`BuildError::Build`] with the step's own
    /// error. A root that does not fit after the step is a `Load` error whose slot
    /// error is [`SlotErrorKind::Alloc`](crate::SlotErrorKind::Alloc).
    ///
    /// A failing load and a build step together:
    ///
    /// ```
    /// use allocator_api2::vec::Vec as HeapVec;
    /// use scope_stack::serde::{BuildError, DeserializeIn, PoolIn};
    /// use scope_stack::{slot_root, AllocError, Handle, Heap, LinearAllocator, ScopeStack};
    ///
    /// #[derive(DeserializeIn)]
    /// struct Level<'s> {
    ///     name: &'s str,
    ///     enemies: PoolIn<'s, (&'s str, u32)>,
    ///     /// Not in the file: enemy names to their handles, sorted, built after the load.
    ///     #[serde(skip)]
    ///     index: Option<HeapVec<(&'s str, Handle<(&'s str, u32)>), &'s Heap>>,
    /// }
    /// slot_root!(struct LevelRoot => Level);
    ///
    /// /// The build step: indexes the pool the file filled, in a heap carved from the slot.
    /// fn build<'s>(level: &mut Level<'s>, scope: &'s ScopeStack<'s>) -> Result<(), AllocError> {
    ///     let heap = scope.try_new_heap(2048)?;
    ///     let mut index = HeapVec::new_in(heap);
    ///     for &h in level.enemies.file_handles() {
    ///         index.push((level.enemies.get(h).unwrap().0, h));
    ///     }
    ///     index.sort_unstable_by_key(|e| e.0);
    ///     level.index = Some(index);
    ///     Ok(())
    /// }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 16 << 10);
    ///     // A broken file: the build step never runs, and the slot is free again.
    ///     let mut de = serde_json::Deserializer::from_str(r#"{"name": "forest", "enemies": [["wolf"]]}"#);
    ///     let err = levels.load_from_with::<LevelRoot, _, _>("forest", &mut de, build).unwrap_err();
    ///     assert!(matches!(&err, BuildError::Load(e) if e.format_error().is_data()));
    ///     assert_eq!(levels.loaded(), 0);
    ///     // A good one: read, then indexed, in the same slot.
    ///     let file = r#"{"name": "forest", "enemies": [["wolf", 30], ["bear", 80]]}"#;
    ///     let mut de = serde_json::Deserializer::from_str(file);
    ///     let level = levels.load_from_with::<LevelRoot, _, _>("forest", &mut de, build).unwrap();
    ///     level.with(|l| {
    ///         let index = l.index.as_ref().unwrap();
    ///         let at = index.binary_search_by_key(&"bear", |e| e.0).unwrap();
    ///         assert_eq!(l.enemies.get(index[at].1).unwrap().1, 80);
    ///     });
    /// });
    /// # Ok::<(), AllocError>(())
    /// ```
    pub fn load_from_with<'de, R, D, B>(
        &self,
        name: &str,
        deserializer: D,
        build: impl for<'x> FnOnce(&mut R::Of<'x>, &'x ScopeStack<'x>) -> Result<(), B>,
    ) -> Result<Loaded<'_, R>, BuildError<D::Error, B>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut catch = Catch::start();
        let mut step = None;
        let load = build_plain::<R, _>(|s| {
            read_then_build::<R, _, _, _>(s, deserializer, &mut catch, &mut step, build)
        });
        self.try_load::<R>(name, load)
            .map_err(|e| build_failed(catch, step, e))
    }

    /// [`load_concurrent_from`](Self::load_concurrent_from) with a build step: see
    /// [`load_from_with`](Self::load_from_with). `build` gets the slot's concurrent
    /// scope (it may share it with worker threads), and the level may then be sent to
    /// another thread.
    ///
    /// # Errors
    /// As [`load_from_with`](Self::load_from_with).
    ///
    /// ```
    /// use scope_stack::serde::{BuildError, DeserializeIn};
    /// use scope_stack::{slot_root, ConcurrentScope, LinearAllocator};
    ///
    /// #[derive(DeserializeIn)]
    /// struct Path<'s> {
    ///     points: &'s [[f32; 2]],
    ///     #[serde(skip)]
    ///     length: f32,
    /// }
    /// slot_root!(struct PathRoot => Path);
    ///
    /// fn measure<'s>(p: &mut Path<'s>, _: &'s ConcurrentScope<'s>) -> Result<(), &'static str> {
    ///     if p.points.len() < 2 {
    ///         return Err("a path needs two points");
    ///     }
    ///     p.length = p.points.windows(2).map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1])).sum();
    ///     Ok(())
    /// }
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    /// memory.scope("game", |game| {
    ///     let paths = game.new_slots("paths", 1, 16 << 10);
    ///     let mut de = serde_json::Deserializer::from_str(r#"{"points": [[0, 0], [3, 4]]}"#);
    ///     let path = paths.load_concurrent_from_with::<PathRoot, _, _>("p", &mut de, measure).unwrap();
    ///     let length = std::thread::scope(|t| t.spawn(move || path.with(|p| p.length)).join().unwrap());
    ///     assert_eq!(length, 5.0);
    ///     let mut de = serde_json::Deserializer::from_str(r#"{"points": [[0, 0]]}"#);
    ///     let err = paths.load_concurrent_from_with::<PathRoot, _, _>("q", &mut de, measure);
    ///     assert!(matches!(err, Err(BuildError::Build("a path needs two points"))));
    ///     assert_eq!(paths.loaded(), 0);
    /// });
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_concurrent_from_with<'de, R, D, B>(
        &self,
        name: &str,
        deserializer: D,
        build: impl for<'x> FnOnce(&mut R::Of<'x>, &'x ConcurrentScope<'x>) -> Result<(), B>,
    ) -> Result<Loaded<'_, R, Shared>, BuildError<D::Error, B>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut catch = Catch::start();
        let mut step = None;
        let load = build_shared::<R, _>(|s| {
            read_then_build::<R, _, _, _>(s, deserializer, &mut catch, &mut step, build)
        });
        self.try_load_concurrent::<R>(name, load)
            .map_err(|e| build_failed(catch, step, e))
    }

    /// [`load_task_from`](Self::load_task_from) with a build step: see
    /// [`load_from_with`](Self::load_from_with). `build` gets the slot's
    /// [`TaskScope`]: a request body parsed and checked in the request's arena, `Send`
    /// with the task that serves it.
    ///
    /// # Errors
    /// As [`load_from_with`](Self::load_from_with).
    ///
    /// ```
    /// use scope_stack::serde::BuildError;
    /// use scope_stack::{slot_root, Place, Slots, TaskScope};
    ///
    /// slot_root!(struct Body = for<'s> &'s [&'s str]);
    ///
    /// fn check<'s>(b: &mut &'s [&'s str], arena: TaskScope<'s>) -> Result<(), &'static str> {
    ///     match b.first() {
    ///         Some(&"GET") => {
    ///             *b = arena.alloc_slice_copy(&b[1..]); // keep the path alone
    ///             Ok(())
    ///         }
    ///         _ => Err("only GET"),
    ///     }
    /// }
    /// let requests = Slots::leak("requests", 2, 16 << 10)?;
    /// let mut de = serde_json::Deserializer::from_str(r#"["GET", "/index"]"#);
    /// let body = requests.load_task_from_with::<Body, _, _>("r", &mut de, check).unwrap();
    /// let path = std::thread::spawn(move || body.with(|b| b.concat())).join().unwrap();
    /// assert_eq!(path, "/index");
    /// let mut de = serde_json::Deserializer::from_str(r#"["PUT", "/index"]"#);
    /// let err = requests.load_task_from_with::<Body, _, _>("r", &mut de, check).unwrap_err();
    /// assert_eq!(err.build_error(), Some(&"only GET"));
    /// assert_eq!(requests.loaded(), 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn load_task_from_with<'de, R, D, B>(
        &self,
        name: &str,
        deserializer: D,
        build: impl for<'x> FnOnce(&mut R::Of<'x>, TaskScope<'x>) -> Result<(), B>,
    ) -> Result<Loaded<'_, R, Task>, BuildError<D::Error, B>>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut catch = Catch::start();
        let mut step = None;
        let load = build_task::<R, _>(|s| {
            read_then_build::<R, _, _, _>(s, deserializer, &mut catch, &mut step, build)
        });
        self.try_load_task::<R>(name, load)
            .map_err(|e| build_failed(catch, step, e))
    }
}
