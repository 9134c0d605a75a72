//! [`LevelSlots`]: levels built on the [`AsyncComputeTaskPool`] and swapped in during
//! [`PreUpdate`](bevy_app::PreUpdate).
//!
//! Invariant: at most one build is pending, as a task on the async compute pool that
//! takes a free slot ([`Slots::load_concurrent`]) and builds the level there. (Not
//! the waiting [`Slots::load_concurrent_async`]: the slot a build waits for is often
//! the playing level's, which only the swap frees, so a build with no free slot fails
//! at once into [`LevelSlots::last_error`] instead of waiting for ever.)
//! The swap moves the finished level into `current` and drops the one it replaces on
//! the main schedule's thread, so its slot unloads there and is free for the next
//! build. A build needs a free slot while the current level plays: give the set at
//! least two slots.

use bevy_ecs::prelude::*;
use bevy_tasks::{futures::check_ready, AsyncComputeTaskPool, Task};
use scope_stack::{AllocError, ConcurrentScope, Loaded, MapHandle, Shared, SlotRoot, Slots};

/// What a build task gives back: the level, or the text of why it failed.
type Built<R> = Result<Loaded<'static, R, Shared>, String>;

/// Level slots as a resource: levels stream in on the [`AsyncComputeTaskPool`] while
/// the current one plays, and swap in during [`PreUpdate`](bevy_app::PreUpdate) (with
/// [`ScopeStackAppExt::insert_level_slots`](crate::ScopeStackAppExt::insert_level_slots)).
/// The replaced level unloads at the swap: its finalizers run and its slot rewinds.
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin};
/// use scope_stack::slot_root;
/// use scope_stack_bevy::{LevelSlots, ScopeStackAppExt, ScopeStackPlugin};
///
/// struct Level<'s> {
///     spawns: &'s [[f32; 2]],
/// }
/// slot_root!(struct LevelRoot => Level);
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .insert_level_slots(LevelSlots::<LevelRoot>::new("levels", 2, 64 << 10).unwrap());
/// app.world_mut().resource_mut::<LevelSlots<LevelRoot>>().stream("forest", |s| Level {
///     spawns: s.alloc_slice_fill_with(100, |i| [i as f32, 0.0]),
/// });
/// while app.world().resource::<LevelSlots<LevelRoot>>().current().is_none() {
///     app.update();
/// }
/// let levels = app.world().resource::<LevelSlots<LevelRoot>>();
/// assert_eq!(levels.with(|l| l.spawns.len()), Some(100));
/// ```
#[derive(Resource)]
pub struct LevelSlots<R>
where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
{
    slots: &'static Slots,
    current: Option<Loaded<'static, R, Shared>>,
    pending: Option<Task<Built<R>>>,
    swaps: u64,
    last_error: Option<String>,
}

impl<R> LevelSlots<R>
where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
{
    /// Leaks a set of `count` level slots of `bytes_each` bytes (see [`Slots::leak`]).
    /// Two slots let the next level build while the current one plays.
    ///
    /// # Errors
    /// Those of [`Slots::leak`].
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// assert!(levels.current().is_none() && !levels.is_loading());
    /// ```
    pub fn new(name: &str, count: usize, bytes_each: usize) -> Result<Self, AllocError> {
        Ok(LevelSlots {
            slots: Slots::leak(name, count, bytes_each)?,
            current: None,
            pending: None,
            swaps: 0,
            last_error: None,
        })
    }

    /// Starts building level `name` with `build` on the [`AsyncComputeTaskPool`] (in a
    /// concurrent scope on a free slot; with every slot held, the build fails and
    /// [`last_error`](Self::last_error) names the holders). A build still pending is
    /// cancelled (its task is dropped; a level it had finished unloads).
    ///
    /// # Panics
    /// When the async compute pool does not exist (add `TaskPoolPlugin`). A root that
    /// does not fit in its slot makes the task panic, and the swap with it.
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::slot_root;
    /// slot_root!(struct Name = for<'s> &'s str);
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<Name>::new("levels", 2, 4096).unwrap();
    /// levels.stream("castle", |s| s.alloc_str("castle"));
    /// assert!(levels.is_loading());
    /// while !levels.swap() {}
    /// assert_eq!(levels.with(|n| n.len()), Some(6));
    /// ```
    pub fn stream(
        &mut self,
        name: impl Into<String>,
        build: impl for<'x> FnOnce(&'x ConcurrentScope<'x>) -> R::Of<'x> + Send + 'static,
    ) {
        let name = name.into();
        let slots = self.slots;
        self.pending = Some(AsyncComputeTaskPool::get().spawn(async move {
            slots
                .load_concurrent::<R>(&name, build)
                .map_err(|e| e.to_string())
        }));
    }

    /// Starts a build on the [`AsyncComputeTaskPool`] that may fail: `read` gets the
    /// set and the name, loads a slot (with `load_concurrent` or, with the `serde`
    /// feature, `load_concurrent_from`) and returns the level or an error, which
    /// [`last_error`](Self::last_error) then shows. A build still pending is cancelled.
    ///
    /// # Panics
    /// When the async compute pool does not exist.
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::slot_root;
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<Bytes>::new("levels", 2, 4096).unwrap();
    /// levels.stream_with("too big", |slots, name| {
    ///     slots.try_load_concurrent::<Bytes>(name, |s| Ok(&*s.try_alloc_slice_copy(&[0u8; 8192])?))
    /// });
    /// while !levels.swap() {}
    /// assert!(levels.current().is_none());
    /// assert!(levels.last_error().unwrap().contains("too big"));
    /// ```
    pub fn stream_with<E: std::fmt::Display>(
        &mut self,
        name: impl Into<String>,
        read: impl FnOnce(&'static Slots, &str) -> Result<Loaded<'static, R, Shared>, E>
            + Send
            + 'static,
    ) {
        let name = name.into();
        let slots = self.slots;
        self.pending = Some(
            AsyncComputeTaskPool::get()
                .spawn(async move { read(slots, &name).map_err(|e| e.to_string()) }),
        );
    }

    /// Swaps in a finished build, if any: the new level becomes current and the old one
    /// unloads (or, for a failed build, the error goes to
    /// [`last_error`](Self::last_error)). Returns whether a build finished.
    /// [`swap_levels`] calls this in [`PreUpdate`](bevy_app::PreUpdate).
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// assert!(!levels.swap()); // nothing pending
    /// ```
    pub fn swap(&mut self) -> bool {
        let Some(task) = self.pending.as_mut() else {
            return false;
        };
        let Some(built) = check_ready(task) else {
            return false;
        };
        self.pending = None;
        match built {
            Ok(level) => {
                self.current = Some(level);
                self.swaps += 1;
                self.last_error = None;
            }
            Err(e) => self.last_error = Some(e),
        }
        true
    }

    /// The level playing now, if one has been swapped in.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// assert!(levels.current().is_none());
    /// ```
    pub fn current(&self) -> Option<&Loaded<'static, R, Shared>> {
        self.current.as_ref()
    }

    /// Lends the current level's root to `f`; `None` before the first swap.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// assert_eq!(levels.with(|_| 1), None);
    /// ```
    pub fn with<T>(&self, f: impl for<'x, 'y> FnOnce(&'y R::Of<'x>) -> T) -> Option<T> {
        self.current.as_ref().map(|level| level.with(f))
    }

    /// Lends the current level's root shared, with its concurrent scope (see
    /// [`Loaded::with_scope`]); `None` before the first swap.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// assert_eq!(levels.with_scope(|_, _| 1), None);
    /// ```
    pub fn with_scope<T>(
        &self,
        f: impl for<'x, 'y> FnOnce(&'y R::Of<'x>, &'x ConcurrentScope<'x>) -> T,
    ) -> Option<T> {
        self.current.as_ref().map(|level| level.with_scope(f))
    }

    /// Lends the current level's root mutably, with its concurrent scope; `None`
    /// before the first swap.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// assert_eq!(levels.with_mut(|_, _| 1), None);
    /// ```
    pub fn with_mut<T>(
        &mut self,
        f: impl for<'x, 'y> FnOnce(&'y mut R::Of<'x>, &'x ConcurrentScope<'x>) -> T,
    ) -> Option<T> {
        self.current.as_mut().map(|level| level.with_mut(f))
    }

    /// Unloads the current level now (its slot is free again).
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// levels.unload();
    /// assert_eq!(levels.slots().loaded(), 0);
    /// ```
    pub fn unload(&mut self) {
        self.current = None;
    }

    /// Whether a build is pending.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// assert!(!scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap().is_loading());
    /// ```
    pub fn is_loading(&self) -> bool {
        self.pending.is_some()
    }

    /// How many levels have been swapped in.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// assert_eq!(scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap().swaps(), 0);
    /// ```
    pub fn swaps(&self) -> u64 {
        self.swaps
    }

    /// Why the last finished build failed, until a build succeeds.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// assert!(scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap().last_error().is_none());
    /// ```
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// The leaked slot set.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// assert_eq!(levels.slots().count(), 2);
    /// ```
    pub fn slots(&self) -> &'static Slots {
        self.slots
    }

    /// A handle on the set's memory map, for any thread.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// assert!(levels.map_handle().report().to_string().contains("levels"));
    /// ```
    pub fn map_handle(&self) -> MapHandle<'static> {
        self.slots
            .map_handle()
            .expect("a leaked set has a map of its own")
    }
}

#[cfg(feature = "serde")]
impl<R> LevelSlots<R>
where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
    for<'x> R::Of<'x>: scope_stack::DeserializeIn<'x>,
{
    /// Builds level `name` from a file's `bytes` on the [`AsyncComputeTaskPool`]
    /// (feature `serde`): `read` makes the format's deserializer over the bytes and
    /// hands it to [`LevelReader::read`], which deserializes the root straight into a
    /// slot ([`Slots::load_concurrent_from`]). A failed read leaves its error in
    /// [`last_error`](Self::last_error) and the slot free. A build still pending is
    /// cancelled.
    ///
    /// # Panics
    /// When the async compute pool does not exist.
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::{slot_root, DeserializeIn};
    ///
    /// #[derive(DeserializeIn)]
    /// struct Level<'s> {
    ///     name: &'s str,
    ///     spawns: &'s [[f32; 2]],
    /// }
    /// slot_root!(struct LevelRoot => Level);
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<LevelRoot>::new("levels", 2, 64 << 10).unwrap();
    /// let file = br#"{"name": "forest", "spawns": [[1, 2], [3, 4]]}"#.to_vec();
    /// levels.stream_from_bytes("forest", file, |bytes, reader| {
    ///     reader.read(&mut serde_json::Deserializer::from_slice(bytes))
    /// });
    /// while !levels.swap() {}
    /// assert_eq!(levels.with(|l| (l.name.len(), l.spawns.len())), Some((6, 2)));
    /// ```
    pub fn stream_from_bytes<E: std::fmt::Display>(
        &mut self,
        name: impl Into<String>,
        bytes: Vec<u8>,
        read: impl FnOnce(&[u8], LevelReader<'_, R>) -> Result<Loaded<'static, R, Shared>, E>
            + Send
            + 'static,
    ) {
        self.stream_with(name, move |slots, name| {
            read(
                &bytes,
                LevelReader {
                    slots,
                    name,
                    _root: std::marker::PhantomData,
                },
            )
        });
    }
}

/// Reads one level into a slot from a deserializer (feature `serde`); handed to the
/// closure of [`LevelSlots::stream_from_bytes`].
///
/// ```
/// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
/// use scope_stack::slot_root;
/// slot_root!(struct Names = for<'s> &'s [&'s str]);
///
/// AsyncComputeTaskPool::get_or_init(TaskPool::new);
/// let mut levels = scope_stack_bevy::LevelSlots::<Names>::new("levels", 2, 4096).unwrap();
/// levels.stream_from_bytes("bad", b"[1, 2]".to_vec(), |bytes, reader| {
///     reader.read(&mut serde_json::Deserializer::from_slice(bytes))
/// });
/// while !levels.swap() {}
/// assert!(levels.current().is_none() && levels.last_error().is_some());
/// assert_eq!(levels.slots().loaded(), 0);
/// ```
#[cfg(feature = "serde")]
pub struct LevelReader<'a, R: SlotRoot> {
    slots: &'static Slots,
    name: &'a str,
    _root: std::marker::PhantomData<fn() -> R>,
}

#[cfg(feature = "serde")]
impl<R> LevelReader<'_, R>
where
    R: SlotRoot,
    for<'x> R::Of<'x>: scope_stack::DeserializeIn<'x>,
{
    /// Deserializes the level's root into a free slot of the set
    /// ([`Slots::load_concurrent_from`]).
    ///
    /// # Errors
    /// The deserializer's error (bad input), with the slot's own beside it when the slot
    /// was the reason (too small, every slot held): a [`LoadError`](scope_stack::serde::LoadError).
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::slot_root;
    /// slot_root!(struct Spawns = for<'s> &'s [[f32; 2]]);
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<Spawns>::new("levels", 2, 4096).unwrap();
    /// levels.stream_from_bytes("spawns", b"[[1, 2]]".to_vec(), |bytes, reader| {
    ///     reader.read(&mut serde_json::Deserializer::from_slice(bytes))
    /// });
    /// while !levels.swap() {}
    /// assert_eq!(levels.with(|s| s[0]), Some([1.0, 2.0]));
    /// ```
    // `LoadError` carries the slot's error inline (about 500 bytes), as the core's slot
    // loads do, so a failed read allocates nothing.
    #[allow(clippy::result_large_err)]
    pub fn read<'de, D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Loaded<'static, R, Shared>, scope_stack::serde::LoadError<D::Error>> {
        self.slots
            .load_concurrent_from::<R, D>(self.name, deserializer)
    }
}

/// Swaps in a finished level of `levels` (see [`LevelSlots::swap`]); the
/// [`ScopeStackAppExt::insert_level_slots`](crate::ScopeStackAppExt::insert_level_slots)
/// call schedules it in [`PreUpdate`](bevy_app::PreUpdate).
///
/// ```
/// use bevy_app::{App, PreUpdate};
/// use scope_stack::slot_root;
/// use scope_stack_bevy::{swap_levels, LevelSlots};
/// slot_root!(struct Unit = for<'s> ());
///
/// let mut app = App::new();
/// app.insert_resource(LevelSlots::<Unit>::new("levels", 2, 4096).unwrap())
///     .add_systems(PreUpdate, swap_levels::<Unit>);
/// app.update();
/// assert_eq!(app.world().resource::<LevelSlots<Unit>>().swaps(), 0);
/// ```
pub fn swap_levels<R>(mut levels: ResMut<LevelSlots<R>>)
where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
{
    // Checked through `bypass_change_detection`, so the resource shows as changed
    // only on the frame a build finishes.
    if levels.bypass_change_detection().swap() {
        levels.set_changed();
    }
}
