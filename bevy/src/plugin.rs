//! The plugin: inserts the scratch resources, warms every task-pool thread, and
//! schedules the crate's systems; plus [`ScopeStackAppExt`], which adds frame arenas
//! and level slots to an app.
//!
//! Warming: Bevy's task pools have no "run once on every thread" call, so the warm-up
//! spawns one task per thread on a pool and makes each task wait at a gate until all of
//! them have arrived. A task that waits keeps its thread busy, so the tasks end up on
//! distinct threads, and each warms its thread (the pads of [`ScratchArenas`] and the
//! thread-local [`scope_stack::scratch()`] arenas). The gate gives up after a timeout, so a
//! pool whose threads are busy with long tasks cannot hang the start-up; the count of
//! threads reached is in [`ScratchStats::warmed_threads`], and what each pool's threads
//! reserved in [`ScratchStats::warmed`]. Warm-ups in one process (several apps, as in
//! tests) take turns, since the pools are global. What is warmed is the plugin's
//! settings: see [`ScopeStackPlugin`].
//!
//! Per-frame work: the plugin's systems that run every frame (the frame rotation and
//! the scratch stats) live in two schedules of its own, [`ScopeStackFirst`] (before
//! [`First`]) and [`ScopeStackPreLast`] (between [`PostUpdate`] and [`Last`]), with
//! Bevy's single-threaded executor. Bevy's multi-threaded executor allocates a task for
//! every system it runs (about one heap allocation each, every frame); the
//! single-threaded one runs a system in place, so the crate's every-frame work adds no
//! allocation to a frame. Systems that have nothing to do on most frames (the level
//! swap, the memory-map request) stay in Bevy's schedules behind run conditions, which
//! the executor evaluates without a task.

use std::collections::HashSet;
use std::sync::{Condvar, Mutex, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use bevy_app::{App, First, Last, MainScheduleOrder, Plugin, PostUpdate, PreUpdate};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel, SingleThreadedExecutor};
use bevy_tasks::{AsyncComputeTaskPool, ComputeTaskPool, IoTaskPool, TaskPool};
use scope_stack::SlotRoot;

use crate::frames::{rotate_frames, FrameArena};
use crate::levels::{swap_levels, swap_needed, warm_level_messages, LevelMessage, LevelSlots};
use crate::map::{memory_map_requested, serve_memory_map_requests, MemoryMapRequest, MemoryMaps};
use crate::scratch::{update_scratch_stats, PoolWarmed, PoolsWarmed, ScratchArenas, ScratchStats};
use crate::stats::{FrameArenaStats, LevelSlotsStats};

/// Scratch for every thread of Bevy's task pools, warmed at start-up as its settings
/// say, and the [`ScratchStats`] resource kept up to date each frame.
///
/// Add it after `TaskPoolPlugin` (as `MinimalPlugins` and `DefaultPlugins` do): it
/// warms the pools in `build` when they exist already, and otherwise in `finish`
/// (which `App::run` calls; a test that drives `app.update()` itself calls
/// `app.finish()` first).
///
/// # What it reserves, by default and on request
///
/// | setting | default | reserves at start-up |
/// | --- | --- | --- |
/// | [`warm_pads`](Self::warm_pads) | `true` | a [`ScratchArenas`] pad of [`scratch_capacity`](Self::scratch_capacity) (1 MiB) on the main thread and every task-pool thread |
/// | [`thread_scratch`](Self::thread_scratch) | `None` | with `Some(bytes)`: the core's two thread-local [`scope_stack::scratch()`] arenas of `bytes` each, on the same threads |
/// | [`warm_serde_staging`](Self::warm_serde_staging) | `false` | with `true` (feature `serde`): the core's first serde staging block (1 MiB) on each `AsyncComputeTaskPool` thread, where [`LevelSlots`] builds levels |
///
/// So by default the plugin reserves `threads × scratch_capacity` and nothing else,
/// where `threads` is the main thread plus every task-pool thread (Bevy's default
/// pools have about one thread per core; the counts are in [`ScratchStats::warmed`]). What is not warmed is reserved on a
/// thread's first use instead (mid-game, once): set `thread_scratch` if systems call
/// `scope_stack::scratch()`, and `warm_serde_staging` if levels are built from files
/// and the first load must not reserve. [`ScratchStats`] counts every byte the plugin
/// reserved, per pool and in all. [`lean`](Self::lean) warms nothing.
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin};
/// use scope_stack_bevy::{ScopeStackPlugin, ScratchStats};
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::with_scratch_capacity(64 << 10)));
/// app.finish();
/// app.update();
/// let stats = app.world().resource::<ScratchStats>();
/// assert!(stats.warmed_threads >= 2); // the main thread and at least one pool thread
/// assert_eq!(stats.capacity_each, 64 << 10);
/// assert_eq!(stats.bytes_reserved, stats.pad_bytes); // no thread-local scratch, no staging
/// ```
#[derive(Clone, Debug)]
pub struct ScopeStackPlugin {
    /// Bytes in each thread's scratch pad ([`ScratchArenas`]).
    pub scratch_capacity: usize,
    /// Whether to reserve each task-pool thread's pad (and the main thread's) at
    /// start-up; otherwise a pad is reserved on its thread's first [`Scratch`] use.
    ///
    /// [`Scratch`]: crate::Scratch
    pub warm_pads: bool,
    /// With `Some(bytes)`, gives each task-pool thread (and the main thread) the core's
    /// thread-local [`scope_stack::scratch()`] arenas at start-up, two of `bytes` each;
    /// with `None`, a thread reserves them (two of the core's default, 1 MiB) on its
    /// first `scope_stack::scratch()` call.
    pub thread_scratch: Option<usize>,
    /// Whether to reserve the core's first serde staging block (1 MiB) on each
    /// `AsyncComputeTaskPool` thread at start-up (feature `serde`; without it, ignored),
    /// so the first level built from a file there reserves nothing. A level whose
    /// sequences outgrow the block still reserves a larger one on its first load.
    pub warm_serde_staging: bool,
    /// How long the warm-up of one pool waits for all its threads to take a task.
    pub warm_timeout: Duration,
}

impl Default for ScopeStackPlugin {
    /// 1 MiB pads, warmed on every thread; no thread-local scratch and no serde staging
    /// warmed; a 2 s warm-up limit per pool.
    ///
    /// ```
    /// let plugin = scope_stack_bevy::ScopeStackPlugin::default();
    /// assert_eq!(plugin.scratch_capacity, 1 << 20);
    /// assert!(plugin.warm_pads && plugin.thread_scratch.is_none() && !plugin.warm_serde_staging);
    /// ```
    fn default() -> Self {
        ScopeStackPlugin {
            scratch_capacity: 1 << 20,
            warm_pads: true,
            thread_scratch: None,
            warm_serde_staging: false,
            warm_timeout: Duration::from_secs(2),
        }
    }
}

impl ScopeStackPlugin {
    /// The default plugin with `bytes` of scratch per thread.
    ///
    /// ```
    /// let plugin = scope_stack_bevy::ScopeStackPlugin::with_scratch_capacity(4096);
    /// assert_eq!(plugin.scratch_capacity, 4096);
    /// ```
    pub fn with_scratch_capacity(bytes: usize) -> Self {
        ScopeStackPlugin {
            scratch_capacity: bytes,
            ..Default::default()
        }
    }

    /// A plugin that warms nothing: every pad, thread-local arena and staging block is
    /// reserved on its thread's first use.
    ///
    /// ```
    /// let plugin = scope_stack_bevy::ScopeStackPlugin::lean();
    /// assert!(!plugin.warm_pads && plugin.thread_scratch.is_none() && !plugin.warm_serde_staging);
    /// ```
    pub fn lean() -> Self {
        ScopeStackPlugin {
            warm_pads: false,
            ..Default::default()
        }
    }

    /// This plugin, warming the core's thread-local scratch arenas (two of `bytes` per
    /// thread) too.
    ///
    /// ```
    /// let plugin = scope_stack_bevy::ScopeStackPlugin::default().with_thread_scratch(256 << 10);
    /// assert_eq!(plugin.thread_scratch, Some(256 << 10));
    /// ```
    pub fn with_thread_scratch(mut self, bytes: usize) -> Self {
        self.thread_scratch = Some(bytes);
        self
    }

    /// This plugin, warming the serde staging block on the level-loading threads too
    /// (feature `serde`).
    ///
    /// ```
    /// let plugin = scope_stack_bevy::ScopeStackPlugin::default().with_serde_staging();
    /// assert!(plugin.warm_serde_staging);
    /// ```
    pub fn with_serde_staging(mut self) -> Self {
        self.warm_serde_staging = true;
        self
    }

    /// What to warm on each thread of one pool.
    fn warm_kind(&self, staging: bool) -> Warm {
        Warm {
            pads: self.warm_pads,
            thread_scratch: self.thread_scratch,
            staging: staging && self.warm_serde_staging && cfg!(feature = "serde"),
        }
    }

    /// Warms the pools once they exist and the app has not been warmed yet.
    fn warm(&self, app: &mut App) {
        if app.world().contains_resource::<Warmed>() || ComputeTaskPool::try_get().is_none() {
            return;
        }
        app.insert_resource(Warmed);
        let capacity = self.scratch_capacity;
        let plain = self.warm_kind(false);
        let loaders = self.warm_kind(true);
        if !plain.any() && !loaders.any() {
            return;
        }
        let arenas = app.world().resource::<ScratchArenas>();
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
        let mut reached = HashSet::new();
        let mut pools = PoolsWarmed::default();
        if plain.any() {
            plain.here(arenas);
            reached.insert(std::thread::current().id());
            pools.main = plain.reserved(1, capacity);
        }
        let each: [(&mut PoolWarmed, Option<&TaskPool>, Warm); 3] = [
            (
                &mut pools.compute,
                ComputeTaskPool::try_get().map(|p| &**p),
                plain,
            ),
            (
                &mut pools.async_compute,
                AsyncComputeTaskPool::try_get().map(|p| &**p),
                loaders,
            ),
            (&mut pools.io, IoTaskPool::try_get().map(|p| &**p), plain),
        ];
        for (figures, pool, warm) in each {
            let (Some(pool), true) = (pool, warm.any()) else {
                continue;
            };
            let threads = warm_pool(pool, self.warm_timeout, || warm.here(arenas));
            *figures = warm.reserved(threads.len(), capacity);
            reached.extend(threads);
        }
        let mut stats = app.world_mut().resource_mut::<ScratchStats>();
        stats.warmed_threads = reached.len();
        stats.warmed = pools;
        stats.thread_scratch_bytes = pools.total().thread_scratch_bytes;
        stats.staging_bytes = pools.total().staging_bytes;
    }
}

/// Marks an app whose pools the plugin has warmed (or found nothing to warm in).
#[derive(Resource)]
struct Warmed;

/// The first serde staging block of a thread, in bytes.
#[cfg(feature = "serde")]
const STAGING_BLOCK: usize = scope_stack::serde::STAGING_BYTES;
#[cfg(not(feature = "serde"))]
const STAGING_BLOCK: usize = 0;

/// What to warm on a thread.
#[derive(Clone, Copy)]
struct Warm {
    pads: bool,
    thread_scratch: Option<usize>,
    staging: bool,
}

impl Warm {
    fn any(&self) -> bool {
        self.pads || self.thread_scratch.is_some() || self.staging
    }

    /// Warms the calling thread.
    fn here(&self, arenas: &ScratchArenas) {
        if self.pads {
            // A pad that cannot be reserved fails again, with the error, at its first use.
            let _ = arenas.pads().warm();
        }
        if let Some(bytes) = self.thread_scratch {
            // Busy only inside a scratch scope (never in a warm-up task); a failed
            // reservation is met again at the thread's first use.
            let _ = scope_stack::scratch::set_capacity(bytes);
        }
        #[cfg(feature = "serde")]
        if self.staging {
            crate::levels::warm_serde_staging();
        }
    }

    /// What warming `threads` threads this way reserved.
    fn reserved(&self, threads: usize, pad_capacity: usize) -> PoolWarmed {
        PoolWarmed {
            threads,
            pad_bytes: if self.pads { threads * pad_capacity } else { 0 },
            thread_scratch_bytes: threads * 2 * self.thread_scratch.unwrap_or(0),
            staging_bytes: if self.staging {
                threads * STAGING_BLOCK
            } else {
                0
            },
        }
    }
}

/// The crate's system sets, to order systems around them.
///
/// ```
/// use bevy_app::{App, Last, TaskPoolPlugin};
/// use bevy_ecs::prelude::*;
/// use scope_stack_bevy::{ScopeStackPlugin, ScopeStackSystems, ScratchStats};
///
/// fn read_stats(stats: Res<ScratchStats>) {
///     assert!(stats.frames >= 1);
/// }
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .add_systems(Last, read_stats.after(ScopeStackSystems::ScratchStats));
/// app.update();
/// ```
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScopeStackSystems {
    /// [`ScopeStackFirst`], before [`First`]: each [`FrameArena`] loads the new frame
    /// and unloads the oldest. Every system in `First` and later sees the new frame.
    RotateFrames,
    /// [`PreUpdate`]: each [`LevelSlots`] swaps in a level whose build finished (run
    /// only while a build is pending, or the set changed, or its level is a shared one
    /// that systems may fill: a quiet frame costs no system task).
    SwapLevels,
    /// [`ScopeStackPreLast`], after [`PostUpdate`] and before [`Last`]:
    /// [`ScratchStats`] takes the frame's figures. Every system in `Last` sees them (a
    /// pad used in `Last` counts in the next frame's figures).
    ScratchStats,
    /// [`Last`]: a pending [`MemoryMapRequest`] is served (run only when one is
    /// pending), after the scratch figures are taken.
    MemoryMap,
}

/// The schedule of the plugin's frame-start work ([`ScopeStackSystems::RotateFrames`]):
/// it runs once a frame just before [`First`] (placed in Bevy's `MainScheduleOrder`),
/// with Bevy's single-threaded executor, so its systems run in place and cost no
/// system task (a heap allocation per system per frame on the multi-threaded one).
///
/// ```
/// use bevy_app::{App, First, TaskPoolPlugin};
/// use bevy_ecs::prelude::*;
/// use scope_stack::slot_root;
/// use scope_stack_bevy::{FrameArena, ScopeStackAppExt, ScopeStackFirst, ScopeStackPlugin};
/// slot_root!(struct Unit = for<'s> ());
///
/// fn in_first(arena: Res<FrameArena<Unit>>) {
///     assert!(arena.frame() >= 1); // rotated before `First`
/// }
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .insert_frame_arena(FrameArena::<Unit>::new("frames", 2, 4096, |_| ()).unwrap())
///     .add_systems(First, in_first);
/// app.update();
/// assert!(app.get_schedule(ScopeStackFirst).is_some());
/// ```
#[derive(ScheduleLabel, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScopeStackFirst;

/// The schedule of the plugin's frame-end work ([`ScopeStackSystems::ScratchStats`]):
/// it runs once a frame between [`PostUpdate`] and [`Last`], with Bevy's
/// single-threaded executor (see [`ScopeStackFirst`]).
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin};
/// use scope_stack_bevy::{ScopeStackPlugin, ScopeStackPreLast, ScratchStats};
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()));
/// app.update();
/// assert!(app.get_schedule(ScopeStackPreLast).is_some());
/// assert_eq!(app.world().resource::<ScratchStats>().frames, 1);
/// ```
#[derive(ScheduleLabel, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScopeStackPreLast;

/// The schedules that take the crate's every-frame systems: ([`ScopeStackFirst`],
/// [`ScopeStackPreLast`]), added (single-threaded) and placed in the app's
/// `MainScheduleOrder` on the first call. An app without that order, or whose order
/// lacks `First` or `PostUpdate`, gets ([`First`], [`Last`]) instead.
fn frame_schedules(app: &mut App) -> (InternedScheduleLabel, InternedScheduleLabel) {
    let placed = |order: &MainScheduleOrder| {
        [First.intern(), PostUpdate.intern()]
            .iter()
            .all(|l| order.labels.contains(l))
    };
    match app.world().get_resource::<MainScheduleOrder>() {
        Some(order) if order.labels.contains(&ScopeStackFirst.intern()) => {}
        Some(order) if placed(order) => {
            let mut first = Schedule::new(ScopeStackFirst);
            first.set_executor(SingleThreadedExecutor::new());
            let mut pre_last = Schedule::new(ScopeStackPreLast);
            pre_last.set_executor(SingleThreadedExecutor::new());
            app.add_schedule(first).add_schedule(pre_last);
            let mut order = app.world_mut().resource_mut::<MainScheduleOrder>();
            order.insert_before(First, ScopeStackFirst);
            order.insert_after(PostUpdate, ScopeStackPreLast);
        }
        _ => return (First.intern(), Last.intern()),
    }
    (ScopeStackFirst.intern(), ScopeStackPreLast.intern())
}

impl Plugin for ScopeStackPlugin {
    fn build(&self, app: &mut App) {
        let (_, pre_last) = frame_schedules(app);
        app.insert_resource(ScratchArenas::new(self.scratch_capacity))
            .init_resource::<ScratchStats>()
            .init_resource::<MemoryMaps>()
            .init_resource::<MemoryMapRequest>()
            // Every frame, in place (single-threaded): no system task.
            .add_systems(
                pre_last,
                update_scratch_stats.in_set(ScopeStackSystems::ScratchStats),
            )
            // After the stats (`ScopeStackPreLast` runs before `Last`; without it, both
            // are in `Last`). Skipped (no task spawned) on frames with no request.
            .configure_sets(
                Last,
                ScopeStackSystems::MemoryMap.after(ScopeStackSystems::ScratchStats),
            )
            .add_systems(
                Last,
                serve_memory_map_requests
                    .run_if(memory_map_requested)
                    .in_set(ScopeStackSystems::MemoryMap),
            );
        #[cfg(feature = "diagnostic")]
        crate::diagnostic::register_scratch(app);
        self.warm(app);
    }

    fn finish(&self, app: &mut App) {
        self.warm(app);
    }
}

/// Warms the calling thread and every thread of Bevy's three task pools (those that
/// exist): each gets its [`ScratchArenas`] pad and its [`scope_stack::scratch()`] arenas,
/// so none reserves scratch memory mid-game. Returns the number of distinct threads
/// reached. Each pool waits at most `timeout` for all its threads to take a warm-up task.
///
/// The [`ScopeStackPlugin`] calls this once; call it again after building pools of
/// your own.
///
/// ```
/// use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};
/// use scope_stack_bevy::{ScratchArenas, warm_task_pools};
///
/// ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
/// let arenas = ScratchArenas::new(4096);
/// let threads = warm_task_pools(&arenas, std::time::Duration::from_secs(2));
/// assert!(threads >= 3); // this thread and the pool's two (and any other pool's)
/// ```
pub fn warm_task_pools(arenas: &ScratchArenas, timeout: Duration) -> usize {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let mut reached = HashSet::new();
    warm_here(arenas);
    reached.insert(std::thread::current().id());
    let pools: [Option<&TaskPool>; 3] = [
        ComputeTaskPool::try_get().map(|p| &**p),
        AsyncComputeTaskPool::try_get().map(|p| &**p),
        IoTaskPool::try_get().map(|p| &**p),
    ];
    for pool in pools.into_iter().flatten() {
        reached.extend(warm_pool(pool, timeout, || warm_here(arenas)));
    }
    reached.len()
}

/// One warm-up at a time (the pools are global): two at once would each hold some
/// threads at their gates, and neither would reach all of them.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Gives the calling thread its pad and its thread-local scratch arenas.
fn warm_here(arenas: &ScratchArenas) {
    // A pad that cannot be reserved fails again, with the error, at its first use.
    let _ = arenas.pads().warm();
    scope_stack::scratch::warm();
}

/// One warm-up task per thread of `pool`, each running `warm` and then held at a gate
/// until all have arrived (or `timeout` passed), so each runs on a thread of its own.
/// Returns their threads.
fn warm_pool(pool: &TaskPool, timeout: Duration, warm: impl Fn() + Sync) -> Vec<ThreadId> {
    let threads = pool.thread_num();
    let gate = Gate {
        arrived: Mutex::new(0),
        all_in: Condvar::new(),
        deadline: Instant::now() + timeout,
    };
    let gate = &gate;
    let warm = &warm;
    // The scope's own thread does not tick the pool's executor (`false`), so every
    // task runs on one of the pool's threads.
    pool.scope_with_executor(false, None, |s| {
        for _ in 0..threads {
            s.spawn(async move {
                warm();
                gate.arrive_and_wait(threads);
                std::thread::current().id()
            });
        }
    })
}

/// Counts arrivals; each waits until `n` have arrived or the deadline passed.
struct Gate {
    arrived: Mutex<usize>,
    all_in: Condvar,
    deadline: Instant,
}

impl Gate {
    fn arrive_and_wait(&self, n: usize) {
        let mut arrived = self.arrived.lock().unwrap_or_else(PoisonError::into_inner);
        *arrived += 1;
        if *arrived >= n {
            self.all_in.notify_all();
            return;
        }
        while *arrived < n {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            arrived = self
                .all_in
                .wait_timeout(arrived, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// Adds the crate's resources to an app with their systems, and registers their memory
/// maps with [`MemoryMaps`]. Needs the [`ScopeStackPlugin`] (for [`MemoryMaps`]).
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin};
/// use scope_stack::slot_root;
/// use scope_stack_bevy::{FrameArena, ScopeStackAppExt, ScopeStackPlugin};
///
/// slot_root!(struct Draws = for<'s> ());
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .insert_frame_arena(FrameArena::<Draws>::new("frames", 3, 64 << 10, |_| ()).unwrap());
/// app.update();
/// assert_eq!(app.world().resource::<FrameArena<Draws>>().frame(), 1);
/// ```
pub trait ScopeStackAppExt {
    /// Inserts `arena` as a resource with its [`FrameArenaStats`], rotates it in
    /// [`ScopeStackFirst`], just before [`First`] ([`ScopeStackSystems::RotateFrames`]:
    /// no system task), and lists its map in [`MemoryMaps`].
    fn insert_frame_arena<R>(&mut self, arena: FrameArena<R>) -> &mut Self
    where
        R: SlotRoot,
        R::Of<'static>: Send + Sync;

    /// Inserts `levels` as a resource, swaps finished levels in during [`PreUpdate`]
    /// ([`ScopeStackSystems::SwapLevels`]), registers their [`LevelMessage`]s (with
    /// buffers sized so a swap allocates nothing), inserts its [`LevelSlotsStats`], and
    /// lists its map in [`MemoryMaps`].
    fn insert_level_slots<R>(&mut self, levels: LevelSlots<R>) -> &mut Self
    where
        R: SlotRoot,
        R::Of<'static>: Send + Sync;
}

impl ScopeStackAppExt for App {
    fn insert_frame_arena<R>(&mut self, arena: FrameArena<R>) -> &mut Self
    where
        R: SlotRoot,
        R::Of<'static>: Send + Sync,
    {
        if let Some(mut maps) = self.world_mut().get_resource_mut::<MemoryMaps>() {
            maps.add_slots(arena.slots());
        }
        let stats = FrameArenaStats::<R>::new(arena.stats());
        self.insert_resource(stats);
        #[cfg(feature = "diagnostic")]
        crate::diagnostic::register_frames::<R>(self, arena.slots().name());
        let (first, _) = frame_schedules(self);
        self.insert_resource(arena).add_systems(
            first,
            rotate_frames::<R>.in_set(ScopeStackSystems::RotateFrames),
        )
    }

    fn insert_level_slots<R>(&mut self, mut levels: LevelSlots<R>) -> &mut Self
    where
        R: SlotRoot,
        R::Of<'static>: Send + Sync,
    {
        if let Some(mut maps) = self.world_mut().get_resource_mut::<MemoryMaps>() {
            maps.add_slots(levels.slots());
        }
        #[cfg(feature = "diagnostic")]
        crate::diagnostic::register_levels::<R>(self, levels.slots().name());
        let stats = LevelSlotsStats::<R>::new(levels.stats());
        self.insert_resource(stats).add_message::<LevelMessage<R>>();
        warm_level_messages(
            &mut self
                .world_mut()
                .resource_mut::<bevy_ecs::message::Messages<LevelMessage<R>>>(),
        );
        self.insert_resource(levels).add_systems(
            PreUpdate,
            // Skipped (no task spawned) on frames with nothing to swap or count.
            swap_levels::<R>
                .run_if(swap_needed::<R>)
                .in_set(ScopeStackSystems::SwapLevels),
        )
    }
}
