//! [`LevelSlots`]: levels built on the [`AsyncComputeTaskPool`] and swapped in during
//! [`PreUpdate`](bevy_app::PreUpdate).
//!
//! Invariant: at most one build is pending, as a task on the async compute pool that
//! takes a free slot and builds the level there. (Not a waiting load such as
//! [`Slots::load_task_async`]: the slot a build waits for is often
//! the playing level's, which only the swap frees, so a build with no free slot fails
//! at once into [`LevelSlots::last_error`] instead of waiting for ever.)
//! The swap moves the finished level into `current` and drops the one it replaces on
//! the main schedule's thread, so its slot unloads there and is free for the next
//! build. A build needs a free slot while the current level plays: give the set at
//! least two slots.
//!
//! # Which slot kind a level takes
//!
//! A level built by one thread (the async task that runs [`LevelSlots::stream`] or
//! reads a file with [`LevelSlots::stream_from_bytes`]) loads through a *task* slot
//! ([`Slots::load_task`]): the slot's plain scope, one bump pointer, no per-thread
//! table, so it takes what a plain load of the same data takes. A level that several
//! threads build at once, or that systems add to through `Res` while it plays
//! ([`LevelSlots::with_scope`]), loads through a *concurrent* slot
//! ([`LevelSlots::stream_concurrent`], [`LevelReader::read_concurrent`]): each thread
//! that places into it claims a chunk of the slot, so it takes more bytes for the
//! same data (about 2.2× for a small JSON level; the README has the figures). The two
//! kinds are one type to the app, [`LoadedLevel`].
//!
//! Each finished build announces itself with a [`LevelMessage`] (ready, then swapped
//! in; or failed), written by [`swap_levels`]. The names and errors are shared text
//! (`Arc<str>`) made when the stream starts or the build fails, and the message
//! buffers are sized when the set is added to the app, so a swap frame allocates
//! nothing.
//!
//! # Removing from a level's pools through shared access
//!
//! A system that removes enemies from a level's [`Pool`](scope_stack::Pool) by handle
//! needs `ResMut<LevelSlots<R>>` (through [`LevelSlots::with_mut`]), because
//! [`Pool::remove`](scope_stack::Pool::remove) takes `&mut`: a remove through `&Pool`
//! would drop an object that a `&T` from [`Pool::get`](scope_stack::Pool::get) on
//! another thread may still be reading. The pool has no shared removal by handle, and
//! cannot have a sound one. Its shared path frees only slots owned by a
//! [`PoolBox`](scope_stack::PoolBox) (dropping the box, through `&Pool`), which suits
//! a value one system inserts and drops, not one that lives from frame to frame.
//!
//! The pattern that keeps the level's readers parallel: the systems that decide who
//! dies hold `Res<LevelSlots<R>>` and mark the objects (an atomic flag in the pooled
//! value, or a [`Message`] naming the handle), and one system holding `ResMut` sweeps
//! them once a frame with [`Pool::retain`](scope_stack::Pool::retain) or `remove`,
//! ordered after the markers. Only the sweep is serialised, and it visits the pool once
//! (the seed's "garbage deferred to the frame boundary"):
//!
//! ```
//! use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
//! use bevy_app::{App, PostUpdate, TaskPoolPlugin, Update};
//! use bevy_ecs::prelude::*;
//! use scope_stack::{slot_root, Carve, Pool};
//! use scope_stack_bevy::{LevelSlots, ScopeStackAppExt, ScopeStackPlugin};
//!
//! struct Enemy {
//!     hp: AtomicU32,
//!     dead: AtomicBool,
//! }
//! struct Level<'s> {
//!     enemies: &'s mut Pool<'s, Enemy>,
//! }
//! slot_root!(struct LevelRoot => Level);
//!
//! // Shared access: runs beside every other reader of the level.
//! fn hit(levels: Res<LevelSlots<LevelRoot>>) {
//!     levels.with(|level| {
//!         for enemy in level.enemies.values() {
//!             if enemy.hp.fetch_sub(1, Ordering::Relaxed) == 1 {
//!                 enemy.dead.store(true, Ordering::Relaxed);
//!             }
//!         }
//!     });
//! }
//!
//! // Exclusive access, once a frame, after the markers.
//! fn sweep(mut levels: ResMut<LevelSlots<LevelRoot>>) {
//!     levels.with_mut(|level, _| level.enemies.retain(|_, e| !*e.dead.get_mut()));
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
//!     .insert_level_slots(LevelSlots::<LevelRoot>::new("levels", 2, 64 << 10).unwrap())
//!     .add_systems(Update, hit)
//!     .add_systems(PostUpdate, sweep);
//! app.world_mut().resource_mut::<LevelSlots<LevelRoot>>().stream("arena", |s| {
//!     let enemies = s.new_pool(8);
//!     for hp in 1..=3 {
//!         let enemy = Enemy { hp: AtomicU32::new(hp), dead: AtomicBool::new(false) };
//!         enemies.insert(enemy).ok().unwrap().into_handle();
//!     }
//!     Level { enemies }
//! });
//! // The frame that swaps the level in (`PreUpdate`) hits each enemy once (`Update`),
//! // and the enemy with 1 hp is swept (`PostUpdate`).
//! while app.world().resource::<LevelSlots<LevelRoot>>().current().is_none() {
//!     app.update();
//! }
//! let levels = app.world().resource::<LevelSlots<LevelRoot>>();
//! assert_eq!(levels.with(|l| l.enemies.len()), Some(2));
//! ```

use std::marker::PhantomData;
use std::sync::Arc;

use bevy_ecs::message::{Message, Messages};
use bevy_ecs::prelude::*;
use bevy_tasks::{futures::check_ready, AsyncComputeTaskPool, Task as BevyTask};
use scope_stack::{
    AllocError, ConcurrentScope, Loaded, MapHandle, Shared, SlotRoot, Slots, Task, TaskScope,
};

use crate::stats::{LevelSlotsStats, LevelStats};

/// What a build task gives back: the level's name, and the level or the text of why it
/// failed.
type Built<R> = (Arc<str>, Result<LoadedLevel<R>, Arc<str>>);

/// A level loaded in a slot of a [`LevelSlots`], of either kind: built by one thread in
/// a task slot ([`LevelSlots::stream`], [`LevelReader::read`]), or in a concurrent
/// slot that several threads may fill ([`LevelSlots::stream_concurrent`],
/// [`LevelReader::read_concurrent`]). [`LevelSlots::current`] lends it; dropping it
/// unloads the slot.
///
/// ```
/// use scope_stack::{slot_root, Slots};
/// use scope_stack_bevy::LoadedLevel;
/// slot_root!(struct Bytes = for<'s> &'s [u8]);
///
/// let slots = Slots::leak("levels", 2, 64 << 10)?;
/// let task: LoadedLevel<Bytes> = slots.load_task::<Bytes>("a", |s| {
///     use scope_stack::Place;
///     &*s.alloc_slice_copy(&[7u8; 1000])
/// })?.into();
/// let shared: LoadedLevel<Bytes> =
///     slots.load_concurrent::<Bytes>("b", |s| &*s.alloc_slice_copy(&[7u8; 1000]))?.into();
/// assert_eq!((task.kind(), shared.kind()), ("task", "shared"));
/// assert_eq!(task.with(|b| b.len()), shared.with(|b| b.len()));
/// assert!(task.used() < shared.used()); // no per-thread chunk
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub enum LoadedLevel<R: SlotRoot> {
    /// Built by one thread, through a task slot's [`TaskScope`]: a plain load's bytes.
    Task(Loaded<'static, R, Task>),
    /// Built through a concurrent slot's [`ConcurrentScope`], which systems may keep
    /// filling through `Res` ([`LevelSlots::with_scope`]).
    Shared(Loaded<'static, R, Shared>),
}

impl<R: SlotRoot> LoadedLevel<R> {
    /// Lends the root to `f` (see [`Loaded::with`]).
    ///
    /// ```
    /// # use scope_stack::{slot_root, Slots};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let slots = Slots::leak("levels", 1, 4096)?;
    /// let level = scope_stack_bevy::LoadedLevel::from(slots.load_task::<Unit>("a", |_| ())?);
    /// assert_eq!(level.with(|_| 1), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn with<T>(&self, f: impl for<'x, 'y> FnOnce(&'y R::Of<'x>) -> T) -> T {
        match self {
            LoadedLevel::Task(level) => level.with(f),
            LoadedLevel::Shared(level) => level.with(f),
        }
    }

    /// Lends the root mutably with the slot's placement surface (see
    /// [`Loaded::with_mut`]).
    ///
    /// ```
    /// # use scope_stack::{slot_root, Slots};
    /// use scope_stack_bevy::{LevelScope, LoadedLevel};
    /// slot_root!(struct Names = for<'s> Vec<&'s str>);
    /// let slots = Slots::leak("levels", 1, 4096)?;
    /// let mut level = LoadedLevel::from(slots.load_task::<Names>("a", |_| Vec::new())?);
    /// level.with_mut(|names, scope| {
    ///     use scope_stack::Place;
    ///     if let LevelScope::Task(s) = scope {
    ///         names.push(s.alloc_str("added"));
    ///     }
    /// });
    /// assert_eq!(level.with(|n| n.len()), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_mut<T>(
        &mut self,
        f: impl for<'x, 'y> FnOnce(&'y mut R::Of<'x>, LevelScope<'x>) -> T,
    ) -> T {
        match self {
            LoadedLevel::Task(level) => level.with_mut(|root, s| f(root, LevelScope::Task(s))),
            LoadedLevel::Shared(level) => level.with_mut(|root, s| f(root, LevelScope::Shared(s))),
        }
    }

    /// Lends the root shared with the slot's concurrent scope, on a
    /// [`Shared`](LoadedLevel::Shared) level (see [`Loaded::with_scope`]); `None` on a
    /// task level, whose scope is not shared.
    ///
    /// ```
    /// # use scope_stack::{slot_root, Slots};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let slots = Slots::leak("levels", 2, 4096)?;
    /// let task = scope_stack_bevy::LoadedLevel::from(slots.load_task::<Unit>("a", |_| ())?);
    /// let shared = scope_stack_bevy::LoadedLevel::from(slots.load_concurrent::<Unit>("b", |_| ())?);
    /// assert_eq!((task.with_scope(|_, _| 1), shared.with_scope(|_, _| 1)), (None, Some(1)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_scope<T>(
        &self,
        f: impl for<'x, 'y> FnOnce(&'y R::Of<'x>, &'x ConcurrentScope<'x>) -> T,
    ) -> Option<T> {
        match self {
            LoadedLevel::Task(_) => None,
            LoadedLevel::Shared(level) => Some(level.with_scope(f)),
        }
    }

    /// The name the level was loaded with.
    ///
    /// ```
    /// # use scope_stack::{slot_root, Slots};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let slots = Slots::leak("levels", 1, 4096)?;
    /// let level = scope_stack_bevy::LoadedLevel::from(slots.load_task::<Unit>("moon", |_| ())?);
    /// assert_eq!(level.name(), "moon");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(&self) -> &str {
        match self {
            LoadedLevel::Task(level) => level.name(),
            LoadedLevel::Shared(level) => level.name(),
        }
    }

    /// Bytes in use in the level's slot (see [`Loaded::used`]): what to size the slots
    /// from.
    ///
    /// ```
    /// # use scope_stack::{slot_root, Slots};
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    /// let slots = Slots::leak("levels", 1, 4096)?;
    /// let level = scope_stack_bevy::LoadedLevel::from(slots.load_task::<Bytes>("a", |s| {
    ///     use scope_stack::Place;
    ///     &*s.alloc_slice_copy(&[0u8; 1000])
    /// })?);
    /// assert!(level.used() >= 1000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn used(&self) -> usize {
        match self {
            LoadedLevel::Task(level) => level.used(),
            LoadedLevel::Shared(level) => level.used(),
        }
    }

    /// Which slot of the set holds the level.
    ///
    /// ```
    /// # use scope_stack::{slot_root, Slots};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let slots = Slots::leak("levels", 1, 4096)?;
    /// assert_eq!(scope_stack_bevy::LoadedLevel::from(slots.load_task::<Unit>("a", |_| ())?).slot(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slot(&self) -> usize {
        match self {
            LoadedLevel::Task(level) => level.slot(),
            LoadedLevel::Shared(level) => level.slot(),
        }
    }

    /// `"task"` or `"shared"`: which kind of slot the level was loaded through.
    ///
    /// ```
    /// # use scope_stack::{slot_root, Slots};
    /// # slot_root!(struct Unit = for<'s> ());
    /// let slots = Slots::leak("levels", 1, 4096)?;
    /// assert_eq!(scope_stack_bevy::LoadedLevel::from(slots.load_concurrent::<Unit>("a", |_| ())?).kind(), "shared");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            LoadedLevel::Task(_) => "task",
            LoadedLevel::Shared(_) => "shared",
        }
    }
}

impl<R: SlotRoot> From<Loaded<'static, R, Task>> for LoadedLevel<R> {
    fn from(level: Loaded<'static, R, Task>) -> Self {
        LoadedLevel::Task(level)
    }
}

impl<R: SlotRoot> From<Loaded<'static, R, Shared>> for LoadedLevel<R> {
    fn from(level: Loaded<'static, R, Shared>) -> Self {
        LoadedLevel::Shared(level)
    }
}

impl<R: SlotRoot> std::fmt::Debug for LoadedLevel<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadedLevel::Task(level) => level.fmt(f),
            LoadedLevel::Shared(level) => level.fmt(f),
        }
    }
}

/// The placement surface [`LevelSlots::with_mut`] lends with the level's root: a task
/// slot's [`TaskScope`] or a concurrent slot's [`ConcurrentScope`], as the level was
/// built. Both place through [`Place`](scope_stack::Place) and
/// [`Carve`](scope_stack::Carve), so a generic helper serves both arms.
///
/// ```
/// use scope_stack::{slot_root, Place, Slots};
/// use scope_stack_bevy::{LevelScope, LoadedLevel};
/// slot_root!(struct Names = for<'s> Vec<&'s str>);
///
/// fn label<'s>(place: impl Place<'s>, n: u32) -> &'s str {
///     place.alloc_fmt(format_args!("wave {n}"))
/// }
/// let slots = Slots::leak("levels", 1, 4096)?;
/// let mut level = LoadedLevel::from(slots.load_concurrent::<Names>("a", |_| Vec::new())?);
/// level.with_mut(|names, scope| {
///     names.push(match scope {
///         LevelScope::Task(s) => label(s, 2),
///         LevelScope::Shared(s) => label(s, 2),
///     })
/// });
/// assert_eq!(level.with(|n| n[0].len()), 6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub enum LevelScope<'x> {
    /// A level built through a task slot.
    Task(TaskScope<'x>),
    /// A level built through a concurrent slot.
    Shared(&'x ConcurrentScope<'x>),
}

/// What happened to a level of a [`LevelSlots<R>`](LevelSlots): a Bevy [`Message`]
/// that [`swap_levels`] writes in [`PreUpdate`](bevy_app::PreUpdate) when a build
/// finishes. A good build sends [`Ready`](LevelEvent::Ready) and then
/// [`Swapped`](LevelEvent::Swapped) in the same frame; a failed one sends
/// [`Failed`](LevelEvent::Failed) with its error, and the playing level stays.
/// [`ScopeStackAppExt::insert_level_slots`](crate::ScopeStackAppExt::insert_level_slots)
/// registers the message type.
///
/// Unlike `resource_changed::<LevelSlots<R>>` (which any `ResMut` access or stream
/// request sets), a message is written only when a level arrives or fails.
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin, Update};
/// use bevy_ecs::prelude::*;
/// use scope_stack::{slot_root, Place};
/// use scope_stack_bevy::{LevelEvent, LevelMessage, LevelSlots, ScopeStackAppExt, ScopeStackPlugin};
/// slot_root!(struct Name = for<'s> &'s str);
///
/// #[derive(Resource, Default)]
/// struct Heard(Vec<String>);
///
/// fn listen(mut messages: MessageReader<LevelMessage<Name>>, mut heard: ResMut<Heard>) {
///     for m in messages.read() {
///         if let LevelEvent::Swapped { .. } = m.event {
///             heard.0.push(m.name.to_string());
///         }
///     }
/// }
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .insert_level_slots(LevelSlots::<Name>::new("levels", 2, 4096).unwrap())
///     .init_resource::<Heard>()
///     .add_systems(Update, listen);
/// app.world_mut().resource_mut::<LevelSlots<Name>>().stream("moon", |s| s.alloc_str("moon"));
/// while app.world().resource::<Heard>().0.is_empty() {
///     app.update();
/// }
/// assert_eq!(app.world().resource::<Heard>().0, ["moon"]);
/// ```
pub struct LevelMessage<R> {
    /// The level's name (the one given to `stream`).
    pub name: Arc<str>,
    /// What happened to it.
    pub event: LevelEvent,
    _root: PhantomData<fn() -> R>,
}

impl<R> LevelMessage<R> {
    /// A message about level `name` (to write one yourself, in a test for example).
    ///
    /// ```
    /// use scope_stack::slot_root;
    /// use scope_stack_bevy::{LevelEvent, LevelMessage};
    /// slot_root!(struct Unit = for<'s> ());
    /// let m = LevelMessage::<Unit>::new("castle".into(), LevelEvent::Ready);
    /// assert_eq!((&*m.name, &m.event), ("castle", &LevelEvent::Ready));
    /// ```
    pub fn new(name: Arc<str>, event: LevelEvent) -> Self {
        LevelMessage {
            name,
            event,
            _root: PhantomData,
        }
    }
}

impl<R: 'static> Message for LevelMessage<R> {}

impl<R> Clone for LevelMessage<R> {
    fn clone(&self) -> Self {
        LevelMessage::new(self.name.clone(), self.event.clone())
    }
}

impl<R> std::fmt::Debug for LevelMessage<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LevelMessage")
            .field("name", &self.name)
            .field("event", &self.event)
            .finish()
    }
}

impl<R> PartialEq for LevelMessage<R> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.event == other.event
    }
}

impl<R> Eq for LevelMessage<R> {}

/// What a [`LevelMessage`] says happened.
///
/// ```
/// use scope_stack_bevy::LevelEvent;
/// let failed = LevelEvent::Failed { error: "expected `,`".into() };
/// assert!(matches!(failed, LevelEvent::Failed { ref error } if error.contains("expected")));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LevelEvent {
    /// The build finished and the level is loaded in its slot.
    Ready,
    /// The level became the current one; `replaced` names the level it replaced (which
    /// has unloaded), if one was playing.
    Swapped {
        /// The level that played before, now unloaded.
        replaced: Option<Arc<str>>,
    },
    /// The build failed (bad input, a slot too small, every slot held); the playing
    /// level, if any, stays. The same text is in [`LevelSlots::last_error`].
    Failed {
        /// Why, as the error's text (for a file, the deserializer's error with the
        /// slot's beside it: [`LoadError`](scope_stack::serde::LoadError)'s `Display`).
        error: Arc<str>,
    },
}

/// Level slots as a resource: levels stream in on the [`AsyncComputeTaskPool`] while
/// the current one plays, and swap in during [`PreUpdate`](bevy_app::PreUpdate) (with
/// [`ScopeStackAppExt::insert_level_slots`](crate::ScopeStackAppExt::insert_level_slots)).
/// The replaced level unloads at the swap: its finalizers run and its slot rewinds.
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin};
/// use scope_stack::{slot_root, Place};
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
    current: Option<LoadedLevel<R>>,
    /// The current level's name, shared with the messages about it.
    current_name: Option<Arc<str>>,
    pending: Option<BevyTask<Built<R>>>,
    swaps: u64,
    failures: u64,
    /// The most bytes any level used (as last seen by `stats_now`).
    high_water: usize,
    last_error: Option<Arc<str>>,
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
            current_name: None,
            pending: None,
            swaps: 0,
            failures: 0,
            high_water: 0,
            last_error: None,
        })
    }

    /// Starts building level `name` with `build` on the [`AsyncComputeTaskPool`], in a
    /// task slot ([`Slots::load_task`]: one thread builds, and the level takes what a
    /// plain load of it takes). `build` places through [`Place`](scope_stack::Place)
    /// and [`Carve`](scope_stack::Carve) (bring them into scope); a value that needs
    /// drop must be `Send`. With every slot held the build fails and
    /// [`last_error`](Self::last_error) names the holders. A build still pending is
    /// cancelled (its task is dropped; a level it had finished unloads).
    ///
    /// For a level whose build fans out to worker threads, or that systems add to
    /// through `Res` while it plays, use [`stream_concurrent`](Self::stream_concurrent).
    ///
    /// # Panics
    /// When the async compute pool does not exist (add `TaskPoolPlugin`). A root that
    /// does not fit in its slot makes the task panic, and the swap with it.
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::{slot_root, Place};
    /// slot_root!(struct Name = for<'s> &'s str);
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<Name>::new("levels", 2, 4096).unwrap();
    /// levels.stream("castle", |s| s.alloc_str("castle"));
    /// assert!(levels.is_loading());
    /// while !levels.swap() {}
    /// assert_eq!(levels.with(|n| n.len()), Some(6));
    /// assert_eq!(levels.current().unwrap().kind(), "task");
    /// ```
    // The build's `SlotError` stays inline (no heap on a failed load), as in the core.
    #[allow(clippy::result_large_err)]
    pub fn stream(
        &mut self,
        name: impl Into<String>,
        build: impl for<'x> FnOnce(TaskScope<'x>) -> R::Of<'x> + Send + 'static,
    ) {
        self.stream_with(name, move |slots, name| slots.load_task::<R>(name, build));
    }

    /// Starts building level `name` with `build` on the [`AsyncComputeTaskPool`], in a
    /// concurrent slot ([`Slots::load_concurrent`]): `build` may hand the
    /// [`ConcurrentScope`] to worker threads that place into it at once, and systems
    /// may keep adding to the playing level through `Res` with
    /// [`with_scope`](Self::with_scope). Each thread that places claims a chunk of the
    /// slot, so the level takes more bytes than through [`stream`](Self::stream)
    /// (see the README's sizing table). Otherwise as `stream`.
    ///
    /// # Panics
    /// As [`stream`](Self::stream).
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::slot_root;
    /// slot_root!(struct Name = for<'s> &'s str);
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<Name>::new("levels", 2, 4096).unwrap();
    /// levels.stream_concurrent("castle", |s| s.alloc_str("castle"));
    /// while !levels.swap() {}
    /// assert_eq!(levels.current().unwrap().kind(), "shared");
    /// assert_eq!(levels.with_scope(|n, _| n.len()), Some(6));
    /// ```
    #[allow(clippy::result_large_err)]
    pub fn stream_concurrent(
        &mut self,
        name: impl Into<String>,
        build: impl for<'x> FnOnce(&'x ConcurrentScope<'x>) -> R::Of<'x> + Send + 'static,
    ) {
        self.stream_with(name, move |slots, name| {
            slots.load_concurrent::<R>(name, build)
        });
    }

    /// Starts a build on the [`AsyncComputeTaskPool`] that may fail: `read` gets the
    /// set and the name, loads a slot of either kind (`load_task`, `try_load_task`,
    /// `load_concurrent`, ... or, with the `serde` feature, `load_task_from` and
    /// `load_concurrent_from`) and returns the [`Loaded`] level or an error, which
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
    ///     use scope_stack::Place;
    ///     slots.try_load_task::<Bytes>(name, |s| Ok(&*s.try_alloc_slice_copy(&[0u8; 8192])?))
    /// });
    /// while !levels.swap() {}
    /// assert!(levels.current().is_none());
    /// assert!(levels.last_error().unwrap().contains("too big"));
    /// ```
    pub fn stream_with<L: Into<LoadedLevel<R>>, E: std::fmt::Display>(
        &mut self,
        name: impl Into<String>,
        read: impl FnOnce(&'static Slots, &str) -> Result<L, E> + Send + 'static,
    ) {
        let name: Arc<str> = name.into().into();
        let slots = self.slots;
        self.pending = Some(AsyncComputeTaskPool::get().spawn(async move {
            let built = match read(slots, &name) {
                Ok(level) => Ok(level.into()),
                Err(e) => Err(e.to_string().into()),
            };
            (name, built)
        }));
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
        self.swap_and_tell(|_| {})
    }

    /// [`swap`](Self::swap), handing what happened to `tell` (ready then swapped, or
    /// failed). Sharing the name and error text allocates nothing.
    fn swap_and_tell(&mut self, mut tell: impl FnMut(LevelMessage<R>)) -> bool {
        let Some(task) = self.pending.as_mut() else {
            return false;
        };
        let Some((name, built)) = check_ready(task) else {
            return false;
        };
        self.pending = None;
        match built {
            Ok(level) => {
                tell(LevelMessage::new(name.clone(), LevelEvent::Ready));
                // The replaced level unloads here, before the message that says so.
                self.current = Some(level);
                let replaced = self.current_name.replace(name.clone());
                self.swaps += 1;
                self.last_error = None;
                tell(LevelMessage::new(name, LevelEvent::Swapped { replaced }));
            }
            Err(error) => {
                self.failures += 1;
                self.last_error = Some(error.clone());
                tell(LevelMessage::new(name, LevelEvent::Failed { error }));
            }
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
    pub fn current(&self) -> Option<&LoadedLevel<R>> {
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
    /// [`Loaded::with_scope`]); `None` before the first swap, and on a level built in
    /// a task slot ([`stream`](Self::stream), [`LevelReader::read`]), whose scope one
    /// thread at a time uses: build a level that systems add to through `Res` with
    /// [`stream_concurrent`](Self::stream_concurrent) or
    /// [`LevelReader::read_concurrent`].
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
        self.current.as_ref().and_then(|level| level.with_scope(f))
    }

    /// Lends the current level's root mutably, with its slot's placement surface (a
    /// [`LevelScope`]: the task slot's or the concurrent slot's, as the level was
    /// built); `None` before the first swap.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// let mut levels = scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    /// assert_eq!(levels.with_mut(|_, _| 1), None);
    /// ```
    pub fn with_mut<T>(
        &mut self,
        f: impl for<'x, 'y> FnOnce(&'y mut R::Of<'x>, LevelScope<'x>) -> T,
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
        self.current_name = None;
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

    /// What the set has loaded (see [`LevelStats`]); the high-water mark is the most
    /// bytes any level used as of the last call of this or of [`swap_levels`].
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::{slot_root, Place};
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<Bytes>::new("levels", 2, 4096).unwrap();
    /// levels.stream("small", |s| &*s.alloc_slice_copy(&[1u8; 1000]));
    /// while !levels.swap() {}
    /// let stats = levels.stats();
    /// assert_eq!((stats.loads, stats.failures, stats.loading), (1, 0, false));
    /// assert!(stats.current_bytes >= 1000 && stats.high_water >= stats.current_bytes);
    /// ```
    pub fn stats(&mut self) -> LevelStats {
        let current_bytes = self.current.as_ref().map_or(0, |level| level.used());
        self.high_water = self.high_water.max(current_bytes);
        LevelStats {
            loads: self.swaps,
            failures: self.failures,
            current_bytes,
            high_water: self.high_water,
            bytes_each: self.slots.bytes_each(),
            loading: self.pending.is_some(),
        }
    }

    /// How many builds have failed.
    ///
    /// ```
    /// # use scope_stack::slot_root;
    /// # slot_root!(struct Unit = for<'s> ());
    /// assert_eq!(scope_stack_bevy::LevelSlots::<Unit>::new("levels", 2, 4096).unwrap().failures(), 0);
    /// ```
    pub fn failures(&self) -> u64 {
        self.failures
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
    /// task slot ([`Slots::load_task_from`]; or [`LevelReader::read_concurrent`], into
    /// a concurrent slot). A failed read leaves its error in
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
    pub fn stream_from_bytes<L, E: std::fmt::Display>(
        &mut self,
        name: impl Into<String>,
        bytes: Vec<u8>,
        read: impl FnOnce(&[u8], LevelReader<'_, R>) -> Result<L, E> + Send + 'static,
    ) where
        L: Into<LoadedLevel<R>>,
    {
        self.stream_with(name, move |slots, name| {
            read(&bytes, LevelReader::new(slots, name))
        });
    }
}

/// Reserves the calling thread's first serde staging block (the plugin's
/// `warm_serde_staging`), through the core's `serde::warm_staging`.
#[cfg(feature = "serde")]
pub(crate) fn warm_serde_staging() {
    scope_stack::serde::warm_staging();
}

/// Reads one level into a slot from a deserializer (feature `serde`); handed to the
/// closure of [`LevelSlots::stream_from_bytes`], [`LevelSlots::stream_file`] and
/// [`LevelSlots::stream_from_reader`].
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
impl<'a, R: SlotRoot> LevelReader<'a, R> {
    /// A reader for level `name` into a free slot of `slots` (the stream calls, on the
    /// loader task).
    pub(crate) fn new(slots: &'static Slots, name: &'a str) -> Self {
        LevelReader {
            slots,
            name,
            _root: std::marker::PhantomData,
        }
    }
}

#[cfg(feature = "serde")]
impl<R> LevelReader<'_, R>
where
    R: SlotRoot,
    for<'x> R::Of<'x>: scope_stack::DeserializeIn<'x>,
{
    /// Deserializes the level's root into a free task slot of the set
    /// ([`Slots::load_task_from`]): the task reading the file is the one thread that
    /// builds, so the level takes what a plain load of it takes.
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
    ) -> Result<Loaded<'static, R, Task>, scope_stack::serde::LoadError<D::Error>> {
        self.slots.load_task_from::<R, D>(self.name, deserializer)
    }

    /// Deserializes the level's root into a free concurrent slot of the set
    /// ([`Slots::load_concurrent_from`]), for a level that systems add to through
    /// `Res` while it plays ([`LevelSlots::with_scope`]). It takes more bytes than
    /// [`read`](Self::read) (the README's sizing table).
    ///
    /// # Errors
    /// As [`read`](Self::read).
    ///
    /// ```
    /// use bevy_tasks::{AsyncComputeTaskPool, TaskPool};
    /// use scope_stack::slot_root;
    /// slot_root!(struct Spawns = for<'s> &'s [[f32; 2]]);
    ///
    /// AsyncComputeTaskPool::get_or_init(TaskPool::new);
    /// let mut levels = scope_stack_bevy::LevelSlots::<Spawns>::new("levels", 2, 4096).unwrap();
    /// levels.stream_from_bytes("spawns", b"[[1, 2]]".to_vec(), |bytes, reader| {
    ///     reader.read_concurrent(&mut serde_json::Deserializer::from_slice(bytes))
    /// });
    /// while !levels.swap() {}
    /// assert_eq!(levels.current().unwrap().kind(), "shared");
    /// ```
    #[allow(clippy::result_large_err)]
    pub fn read_concurrent<'de, D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Loaded<'static, R, Shared>, scope_stack::serde::LoadError<D::Error>> {
        self.slots
            .load_concurrent_from::<R, D>(self.name, deserializer)
    }
}

/// Swaps in a finished level of `levels` (see [`LevelSlots::swap`]), writes its
/// [`LevelMessage`]s when the app has registered them (`app.add_message`), and updates
/// its [`LevelSlotsStats`] when the app has them. The
/// [`ScopeStackAppExt::insert_level_slots`](crate::ScopeStackAppExt::insert_level_slots)
/// call registers both and schedules this system in [`PreUpdate`](bevy_app::PreUpdate).
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
pub fn swap_levels<R>(
    mut levels: ResMut<LevelSlots<R>>,
    mut messages: Option<ResMut<Messages<LevelMessage<R>>>>,
    stats: Option<ResMut<LevelSlotsStats<R>>>,
) where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
{
    // Checked through `bypass_change_detection`, so the resource (and the messages)
    // show as changed only on the frame a build finishes.
    let swapped = levels.bypass_change_detection().swap_and_tell(|m| {
        if let Some(messages) = messages.as_mut() {
            messages.write(m);
        }
    });
    if swapped {
        levels.set_changed();
    }
    if let Some(mut stats) = stats {
        // A few loads and compares; written only when a figure changed.
        let now = levels.bypass_change_detection().stats();
        LevelSlotsStats::set_if_neq(&mut stats, now);
    }
}

/// The run condition of [`swap_levels`] as the plugin schedules it: a build is pending
/// (it may finish this frame), the set changed since the condition last ran (a
/// `ResMut` access: `with_mut`, `unload`, a stream request, last frame's swap), or the
/// playing level is a shared one, which systems may fill through `Res`. On any other
/// frame nothing can have changed, and the swap and its stats are skipped.
pub(crate) fn swap_needed<R>(levels: Res<LevelSlots<R>>) -> bool
where
    R: SlotRoot,
    R::Of<'static>: Send + Sync,
{
    levels.is_loading()
        || levels.is_changed()
        || matches!(levels.current, Some(LoadedLevel::Shared(_)))
}

/// Sizes both message buffers of `messages` for a swap's two messages, so the first
/// swaps allocate nothing, and leaves them empty (readers see none of these).
pub(crate) fn warm_level_messages<R: 'static>(messages: &mut Messages<LevelMessage<R>>) {
    let name: Arc<str> = Arc::from("");
    for _ in 0..2 {
        messages.write_batch((0..4).map(|_| LevelMessage::new(name.clone(), LevelEvent::Ready)));
        messages.update();
    }
    messages.update();
}
