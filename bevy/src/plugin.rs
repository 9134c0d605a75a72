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
//! threads reached is in [`ScratchStats::warmed_threads`]. Warm-ups in one process
//! (several apps, as in tests) take turns, since the pools are global.

use std::collections::HashSet;
use std::sync::{Condvar, Mutex, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use bevy_app::{App, First, Last, Plugin, PreUpdate};
use bevy_ecs::prelude::*;
use bevy_tasks::{AsyncComputeTaskPool, ComputeTaskPool, IoTaskPool, TaskPool};
use scope_stack::SlotRoot;

use crate::frames::{rotate_frames, FrameArena};
use crate::levels::{swap_levels, warm_level_messages, LevelMessage, LevelSlots};
use crate::map::{serve_memory_map_requests, MemoryMapRequest, MemoryMaps};
use crate::scratch::{update_scratch_stats, ScratchArenas, ScratchStats};
use crate::stats::{FrameArenaStats, LevelSlotsStats};

/// Scratch for every thread of Bevy's task pools, warmed at start-up, and the
/// [`ScratchStats`] resource kept up to date each frame.
///
/// Add it after `TaskPoolPlugin` (as `MinimalPlugins` and `DefaultPlugins` do): it
/// warms the pools in `build` when they exist already, and otherwise in `finish`
/// (which `App::run` calls; a test that drives `app.update()` itself calls
/// `app.finish()` first).
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
/// ```
#[derive(Clone, Debug)]
pub struct ScopeStackPlugin {
    /// Bytes in each thread's scratch pad ([`ScratchArenas`]).
    pub scratch_capacity: usize,
    /// How long the warm-up of one pool waits for all its threads to take a task.
    pub warm_timeout: Duration,
}

impl Default for ScopeStackPlugin {
    /// 1 MiB of scratch per thread, and a 2 s warm-up limit per pool.
    ///
    /// ```
    /// let plugin = scope_stack_bevy::ScopeStackPlugin::default();
    /// assert_eq!(plugin.scratch_capacity, 1 << 20);
    /// ```
    fn default() -> Self {
        ScopeStackPlugin {
            scratch_capacity: 1 << 20,
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

    /// Warms the pools once they exist and the app has not been warmed yet.
    fn warm(&self, app: &mut App) {
        if app.world().resource::<ScratchStats>().warmed_threads > 0
            || ComputeTaskPool::try_get().is_none()
        {
            return;
        }
        let reached = warm_task_pools(app.world().resource::<ScratchArenas>(), self.warm_timeout);
        app.world_mut()
            .resource_mut::<ScratchStats>()
            .warmed_threads = reached;
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
    /// [`First`]: each [`FrameArena`] loads the new frame and unloads the oldest.
    RotateFrames,
    /// [`PreUpdate`]: each [`LevelSlots`] swaps in a level whose build finished.
    SwapLevels,
    /// [`Last`]: [`ScratchStats`] takes the frame's figures.
    ScratchStats,
    /// [`Last`], after the stats: a pending [`MemoryMapRequest`] is served.
    MemoryMap,
}

impl Plugin for ScopeStackPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(ScratchArenas::new(self.scratch_capacity))
            .init_resource::<ScratchStats>()
            .init_resource::<MemoryMaps>()
            .init_resource::<MemoryMapRequest>()
            .configure_sets(
                Last,
                ScopeStackSystems::MemoryMap.after(ScopeStackSystems::ScratchStats),
            )
            .add_systems(
                Last,
                (
                    update_scratch_stats.in_set(ScopeStackSystems::ScratchStats),
                    serve_memory_map_requests.in_set(ScopeStackSystems::MemoryMap),
                ),
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
    // One warm-up at a time (the pools are global): two at once would each hold some
    // threads at their gates, and neither would reach all of them.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
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
        reached.extend(warm_pool(pool, arenas, timeout));
    }
    reached.len()
}

/// Gives the calling thread its pad and its thread-local scratch arenas.
fn warm_here(arenas: &ScratchArenas) {
    // A pad that cannot be reserved fails again, with the error, at its first use.
    let _ = arenas.pads().warm();
    scope_stack::scratch::warm();
}

/// One warm-up task per thread of `pool`, each held at a gate until all have arrived
/// (or `timeout` passed), so each runs on a thread of its own. Returns their threads.
fn warm_pool(pool: &TaskPool, arenas: &ScratchArenas, timeout: Duration) -> Vec<ThreadId> {
    let threads = pool.thread_num();
    let gate = Gate {
        arrived: Mutex::new(0),
        all_in: Condvar::new(),
        deadline: Instant::now() + timeout,
    };
    let gate = &gate;
    // The scope's own thread does not tick the pool's executor (`false`), so every
    // task runs on one of the pool's threads.
    pool.scope_with_executor(false, None, |s| {
        for _ in 0..threads {
            s.spawn(async move {
                warm_here(arenas);
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
    /// [`First`] ([`ScopeStackSystems::RotateFrames`]), and lists its map in
    /// [`MemoryMaps`].
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
        self.insert_resource(arena).add_systems(
            First,
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
            swap_levels::<R>.in_set(ScopeStackSystems::SwapLevels),
        )
    }
}
