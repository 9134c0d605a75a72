//! A level from a file into a slot in one call: [`Slots::load_from`],
//! [`Slots::load_concurrent_from`] and [`Slots::load_task_from`].
//!
//! Invariant: a load whose deserialization fails frees its slot before returning (what
//! it placed is dropped and the slot's memory rewinds, as for any failed `try_load`),
//! so the slot can be loaded again at once; the error that comes back is the
//! deserializer's own.
#![allow(clippy::result_large_err)]

use serde::de::{Deserializer, Error};

use crate::concurrent::ConcurrentScope;
use crate::error::{AllocError, AllocErrorKind};
use crate::scope::ScopeStack;
use crate::slots::{Loaded, Shared, SlotRoot, Slots, Task, TaskScope};

use super::trait_in::DeserializeIn;

/// The placeholder error that tells `try_load` the build failed; the real error is
/// kept aside and returned instead.
fn failed() -> AllocError {
    AllocError::in_scope(AllocErrorKind::Format, 0, 1, 0, 0, "")
}

/// Turns a slot error (all slots held, or a root that did not fit) into the
/// deserializer's error, unless the deserializer's own error was kept aside.
fn slot_error<E: Error>(kept: Option<E>, e: crate::slots::SlotError) -> E {
    kept.unwrap_or_else(|| E::custom(e))
}

impl Slots {
    /// Takes a free slot and deserializes its root there from a file (feature `serde`):
    /// [`load`](Self::load) with [`DeserializeIn`] as the build. On any error the slot
    /// is free again at once, with everything the load placed dropped and rewound.
    ///
    /// # Errors
    /// The deserializer's error: bad input, a wrong type, a missing field, the slot
    /// too small (the text names the slot's scope and the bytes asked for), or every
    /// slot held (the text names the holders).
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
    ) -> Result<Loaded<'_, R>, D::Error>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut kept = None;
        let build = build_plain::<R, _>(|s| {
            R::Of::deserialize_in(s, deserializer).map_err(|e| {
                kept = Some(e);
                failed()
            })
        });
        match self.try_load::<R>(name, build) {
            Ok(loaded) => Ok(loaded),
            Err(e) => Err(slot_error(kept, e)),
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
    ) -> Result<Loaded<'_, R, Shared>, D::Error>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut kept = None;
        let build = build_shared::<R, _>(|s| {
            R::Of::deserialize_in(s, deserializer).map_err(|e| {
                kept = Some(e);
                failed()
            })
        });
        match self.try_load_concurrent::<R>(name, build) {
            Ok(loaded) => Ok(loaded),
            Err(e) => Err(slot_error(kept, e)),
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
    ) -> Result<Loaded<'_, R, Task>, D::Error>
    where
        R: SlotRoot,
        for<'x> R::Of<'x>: DeserializeIn<'x>,
        D: Deserializer<'de>,
    {
        let mut kept = None;
        let build = build_task::<R, _>(|s| {
            R::Of::deserialize_in(s, deserializer).map_err(|e| {
                kept = Some(e);
                failed()
            })
        });
        match self.try_load_task::<R>(name, build) {
            Ok(loaded) => Ok(loaded),
            Err(e) => Err(slot_error(kept, e)),
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
