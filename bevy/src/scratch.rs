//! Per-thread scratch for systems: [`ScratchArenas`] (the pads, a resource),
//! [`Scratch`] (the read-only system parameter) and [`ScratchStats`] (what the pads used
//! in the last frame, updated just before [`Last`](bevy_app::Last), in
//! [`ScopeStackPreLast`](crate::ScopeStackPreLast)).
//!
//! Invariant: systems reach the pads only through `Res` ([`Scratch`]), so any number of
//! them run at once, each thread on its own pad; the stats system alone takes `ResMut`,
//! which Bevy runs when no reader is live, so no scratch scope is open while it reads
//! the high-water marks and starts the next frame's period.

use bevy_ecs::batching::BatchingStrategy;
use bevy_ecs::prelude::*;
use bevy_ecs::query::{ArchetypeFilter, ContiguousQueryData, QueryContiguousParIter};
use bevy_ecs::system::SystemParam;
use scope_stack::{Scope, ScratchPads};

/// The per-thread scratch pads every [`Scratch`] parameter uses (a resource the
/// [`ScopeStackPlugin`](crate::ScopeStackPlugin) inserts).
///
/// ```
/// use scope_stack_bevy::ScratchArenas;
/// let arenas = ScratchArenas::new(64 << 10);
/// assert_eq!(arenas.capacity(), 64 << 10);
/// assert_eq!(arenas.with(|s| s.alloc_slice_copy(&[1, 2, 3]).len()), 3);
/// ```
#[derive(Resource, Debug)]
pub struct ScratchArenas {
    pads: ScratchPads,
}

impl ScratchArenas {
    /// Pads of `capacity` bytes per thread; each thread's is reserved when it is warmed
    /// (the plugin warms every task-pool thread) or on its first use.
    ///
    /// ```
    /// assert_eq!(scope_stack_bevy::ScratchArenas::new(4096).capacity(), 4096);
    /// ```
    pub fn new(capacity: usize) -> Self {
        ScratchArenas {
            pads: ScratchPads::new(capacity),
        }
    }

    /// Bytes in each thread's pad.
    ///
    /// ```
    /// assert_eq!(scope_stack_bevy::ScratchArenas::new(1 << 20).capacity(), 1 << 20);
    /// ```
    pub fn capacity(&self) -> usize {
        self.pads.capacity()
    }

    /// Runs `f` with a scratch scope on the calling thread's pad, then unwinds it.
    ///
    /// # Panics
    /// If the thread's pad cannot be reserved (only on a thread that was not warmed).
    ///
    /// ```
    /// let arenas = scope_stack_bevy::ScratchArenas::new(4096);
    /// let len = arenas.with(|s| s.alloc_fmt(format_args!("unit {}", 7)).len());
    /// assert_eq!(len, 6);
    /// ```
    #[track_caller]
    pub fn with<'env, T>(&self, f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> T) -> T {
        self.pads.with(f)
    }

    /// The pads themselves (for their `warm` or `try_with`).
    ///
    /// ```
    /// let arenas = scope_stack_bevy::ScratchArenas::new(4096);
    /// arenas.pads().warm().unwrap();
    /// ```
    pub fn pads(&self) -> &ScratchPads {
        &self.pads
    }

    /// The pads, mutably (for their `stats` and `reset_all`).
    ///
    /// ```
    /// let mut arenas = scope_stack_bevy::ScratchArenas::new(4096);
    /// arenas.with(|s| { s.alloc_raw(10, 1); });
    /// assert_eq!(arenas.pads_mut().stats().count(), 1);
    /// ```
    pub fn pads_mut(&mut self) -> &mut ScratchPads {
        &mut self.pads
    }
}

/// Per-thread scratch scopes for a system: `scratch.with(|s| ..)` opens a scope on the
/// running thread's pad and unwinds it when the closure returns. Read-only (it holds a
/// `Res`), so systems that take it still run in parallel.
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin, Update};
/// use scope_stack_bevy::{Scratch, ScopeStackPlugin};
///
/// fn label_lengths(scratch: Scratch) {
///     let total = scratch.with(|s| {
///         let labels = s.alloc_slice_fill_with(4, |i| s.alloc_fmt(format_args!("unit {i}")).len());
///         labels.iter().sum::<usize>()
///     });
///     assert_eq!(total, 24);
/// }
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .add_systems(Update, label_lengths);
/// app.update();
/// ```
#[derive(SystemParam)]
pub struct Scratch<'w> {
    arenas: Res<'w, ScratchArenas>,
}

impl Scratch<'_> {
    /// Runs `f` with a scratch scope on this thread's pad, then unwinds it (finalizers,
    /// then rewind). Calls nest like the call stack.
    ///
    /// # Panics
    /// If the thread's pad cannot be reserved (only on a thread that was not warmed).
    ///
    /// ```
    /// use bevy_app::{App, TaskPoolPlugin, Update};
    /// use scope_stack_bevy::{Scratch, ScopeStackPlugin};
    ///
    /// fn nested(scratch: Scratch) {
    ///     scratch.with(|outer| {
    ///         let a = outer.alloc_str("a");
    ///         let b = scratch.with(|inner| inner.alloc_str("bc").len());
    ///         assert_eq!(a.len() + b, 3);
    ///     });
    /// }
    /// let mut app = App::new();
    /// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
    ///     .add_systems(Update, nested);
    /// app.update();
    /// ```
    #[track_caller]
    pub fn with<'env, T>(&self, f: impl for<'c> FnOnce(&mut Scope<'c, 'env>) -> T) -> T {
        self.arenas.with(f)
    }

    /// Runs `f` on each batch of a contiguous parallel query iteration, with **one**
    /// scratch scope per batch on the running thread's pad (Bevy's `for_each_init`
    /// keeps one state per batch; this is its scratch form). A batch is a run of
    /// entities in one table, handed over as Bevy's contiguous item (`&[T]` for `&T`,
    /// `ContiguousMut<T>` for `&mut T`): get the iterator with
    /// `query.contiguous_par_iter()` or `contiguous_par_iter_mut()` (for queries of
    /// table components; a sparse-set query is `Err`, and then `par_iter().for_each`
    /// with [`with`](Self::with) per item serves).
    ///
    /// What `f` places lives until the batch ends, so per-item temporaries do not pile
    /// up: reuse one buffer placed per batch (as `for_each_init` reuses a `Vec`), or
    /// open a child scope per item (`s.scope("item", |item| ..)`, which skips the pad
    /// lookup). Results that outlive the batch go to a
    /// [`FrameArena`](crate::FrameArena) (one placement per batch through
    /// `with_scope`), to atomics, or to a `Parallel`.
    ///
    /// In a debug build this runs one batch per table: Bevy 0.20.1's contiguous fetch
    /// of `&T` has a `debug_assert` that a batch spans its whole table, which any
    /// smaller batch trips (see [`whole_tables_in_debug`]; a release build keeps the
    /// batching strategy you set).
    ///
    /// # Panics
    /// If a thread's pad cannot be reserved (only on a thread that was not warmed).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use bevy_app::{App, Startup, TaskPoolPlugin, Update};
    /// use bevy_ecs::prelude::*;
    /// use scope_stack_bevy::{Scratch, ScopeStackPlugin};
    ///
    /// #[derive(Component)]
    /// struct Samples([f32; 8]);
    /// #[derive(Resource, Default)]
    /// struct Noisy(AtomicUsize);
    ///
    /// fn spawn(mut commands: Commands) {
    ///     commands.spawn_batch((0..1000).map(|i| Samples([i as f32 % 7.0; 8])));
    /// }
    /// fn count_noisy(scratch: Scratch, units: Query<&Samples>, noisy: Res<Noisy>) {
    ///     let batches = units.contiguous_par_iter().expect("table components");
    ///     scratch.for_each_batch(batches, |s, samples: &[Samples]| {
    ///         let sorted = s.alloc_slice_copy(&[0.0f32; 8]); // one buffer per batch
    ///         for unit in samples {
    ///             sorted.copy_from_slice(&unit.0);
    ///             sorted.sort_unstable_by(f32::total_cmp);
    ///             if sorted[4] > 3.0 {
    ///                 noisy.0.fetch_add(1, Ordering::Relaxed);
    ///             }
    ///         }
    ///     });
    /// }
    ///
    /// let mut app = App::new();
    /// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
    ///     .init_resource::<Noisy>()
    ///     .add_systems(Startup, spawn)
    ///     .add_systems(Update, count_noisy);
    /// app.finish();
    /// app.update();
    /// assert_eq!(app.world().resource::<Noisy>().0.load(Ordering::Relaxed), 3 * 1000 / 7);
    /// ```
    #[track_caller]
    pub fn for_each_batch<'q, 's, 'env, D, F>(
        &self,
        batches: QueryContiguousParIter<'q, 's, D, F>,
        f: impl for<'c> Fn(&mut Scope<'c, 'env>, D::Contiguous<'q, 's>) + Send + Sync + Clone,
    ) where
        D: ContiguousQueryData,
        F: ArchetypeFilter,
    {
        let arenas = &*self.arenas;
        whole_tables_in_debug(batches).for_each(move |batch| arenas.with(|s| f(s, batch)));
    }

    /// The bytes in each thread's pad.
    ///
    /// ```
    /// use bevy_app::{App, TaskPoolPlugin, Update};
    /// use scope_stack_bevy::{Scratch, ScopeStackPlugin};
    /// fn check(scratch: Scratch) {
    ///     assert_eq!(scratch.capacity(), 256 << 10);
    /// }
    /// let mut app = App::new();
    /// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::with_scratch_capacity(256 << 10)))
    ///     .add_systems(Update, check);
    /// app.update();
    /// ```
    pub fn capacity(&self) -> usize {
        self.arenas.capacity()
    }
}

/// What the scratch pads used, updated once a frame just before
/// [`Last`](bevy_app::Last) (the
/// [`ScopeStackSystems::ScratchStats`](crate::ScopeStackSystems::ScratchStats) set, in
/// [`ScopeStackPreLast`](crate::ScopeStackPreLast)): every system in `Last` reads this
/// frame's figures; a pad used in `Last` counts in the next frame's.
///
/// Every figure is exact for the pads of [`ScratchArenas`]. The thread-local
/// [`scope_stack::scratch()`] arenas and serde staging blocks that the plugin warmed
/// (when its settings ask for them) are counted in
/// [`thread_scratch_bytes`](Self::thread_scratch_bytes) and
/// [`staging_bytes`](Self::staging_bytes), and per pool in [`warmed`](Self::warmed);
/// those a thread reserves later by using them are the core's, not counted here.
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin, Update};
/// use scope_stack_bevy::{Scratch, ScopeStackPlugin, ScratchStats};
///
/// fn big(scratch: Scratch) {
///     scratch.with(|s| { s.alloc_raw(10_000, 1); });
/// }
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .add_systems(Update, big);
/// app.finish();
/// app.update();
/// let stats = *app.world().resource::<ScratchStats>();
/// assert!(stats.frame_high_water >= 10_000);
/// assert!(stats.peak >= stats.frame_high_water);
/// assert_eq!(stats.pad_bytes, stats.threads * stats.capacity_each);
/// assert_eq!(stats.bytes_reserved, stats.pad_bytes + stats.thread_scratch_bytes + stats.staging_bytes);
/// ```
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScratchStats {
    /// Threads that hold a pad (warmed or used).
    pub threads: usize,
    /// Threads the plugin's warm-up reached (task-pool threads and the main thread).
    pub warmed_threads: usize,
    /// The largest high-water mark any one thread reached in the last frame, in bytes.
    pub frame_high_water: usize,
    /// The sum over threads of each one's high-water mark in the last frame: a bound on
    /// the bytes in use at once, not a measured figure.
    pub frame_high_water_total: usize,
    /// The largest high-water mark any one thread ever reached, in bytes.
    pub peak: usize,
    /// Every byte the plugin holds from the global heap for scratch:
    /// `pad_bytes + thread_scratch_bytes + staging_bytes`.
    pub bytes_reserved: usize,
    /// Bytes the pads hold: `threads * capacity_each` (warmed pads and pads reserved
    /// by a thread's first use alike).
    pub pad_bytes: usize,
    /// Bytes of the core's thread-local scratch arenas that the warm-up reserved (two
    /// per thread, with [`ScopeStackPlugin::thread_scratch`](crate::ScopeStackPlugin::thread_scratch)).
    pub thread_scratch_bytes: usize,
    /// Bytes of serde staging blocks that the warm-up reserved (with
    /// [`ScopeStackPlugin::warm_serde_staging`](crate::ScopeStackPlugin::warm_serde_staging)).
    pub staging_bytes: usize,
    /// What the warm-up reached and reserved, per pool.
    pub warmed: PoolsWarmed,
    /// Bytes in each thread's pad.
    pub capacity_each: usize,
    /// Frames counted so far (updates of this resource).
    pub frames: u64,
}

/// What the plugin's warm-up reserved on the threads of one pool (see
/// [`ScratchStats::warmed`]).
///
/// ```
/// let pool = scope_stack_bevy::PoolWarmed { threads: 2, pad_bytes: 2048, thread_scratch_bytes: 0, staging_bytes: 0 };
/// assert_eq!(pool.bytes(), 2048);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolWarmed {
    /// Threads of the pool the warm-up reached.
    pub threads: usize,
    /// Bytes of their [`ScratchArenas`] pads.
    pub pad_bytes: usize,
    /// Bytes of their thread-local [`scope_stack::scratch()`] arenas.
    pub thread_scratch_bytes: usize,
    /// Bytes of their serde staging blocks.
    pub staging_bytes: usize,
}

impl PoolWarmed {
    /// Every byte the warm-up reserved on these threads.
    ///
    /// ```
    /// let pool = scope_stack_bevy::PoolWarmed { threads: 1, pad_bytes: 1, thread_scratch_bytes: 2, staging_bytes: 3 };
    /// assert_eq!(pool.bytes(), 6);
    /// ```
    pub fn bytes(&self) -> usize {
        self.pad_bytes + self.thread_scratch_bytes + self.staging_bytes
    }
}

/// What the warm-up reserved, per pool: the main thread, then Bevy's three task pools.
///
/// ```
/// use scope_stack_bevy::{PoolWarmed, PoolsWarmed};
/// let one = PoolWarmed { threads: 1, pad_bytes: 10, ..Default::default() };
/// let pools = PoolsWarmed { main: one, compute: one, ..Default::default() };
/// assert_eq!((pools.total().threads, pools.total().bytes()), (2, 20));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolsWarmed {
    /// The thread that warmed the pools (the app's main thread).
    pub main: PoolWarmed,
    /// The `ComputeTaskPool`, which runs the systems.
    pub compute: PoolWarmed,
    /// The `AsyncComputeTaskPool`, which builds the levels.
    pub async_compute: PoolWarmed,
    /// The `IoTaskPool`.
    pub io: PoolWarmed,
}

impl PoolsWarmed {
    /// The four pools' figures added up.
    ///
    /// ```
    /// assert_eq!(scope_stack_bevy::PoolsWarmed::default().total().bytes(), 0);
    /// ```
    pub fn total(&self) -> PoolWarmed {
        let all = [self.main, self.compute, self.async_compute, self.io];
        all.iter().fold(PoolWarmed::default(), |sum, p| PoolWarmed {
            threads: sum.threads + p.threads,
            pad_bytes: sum.pad_bytes + p.pad_bytes,
            thread_scratch_bytes: sum.thread_scratch_bytes + p.thread_scratch_bytes,
            staging_bytes: sum.staging_bytes + p.staging_bytes,
        })
    }
}

/// Folds the pads' per-thread figures into [`ScratchStats`] and starts the next frame's
/// high-water period. The plugin runs it in
/// [`ScopeStackPreLast`](crate::ScopeStackPreLast), just before [`Last`](bevy_app::Last).
pub(crate) fn update_scratch_stats(
    mut arenas: ResMut<ScratchArenas>,
    mut stats: ResMut<ScratchStats>,
) {
    let capacity = arenas.capacity();
    let (mut threads, mut high, mut total, mut peak) = (0, 0, 0, stats.peak);
    for pad in arenas.pads.stats() {
        threads += 1;
        high = high.max(pad.high_water_mark);
        total += pad.high_water_mark;
        peak = peak.max(pad.peak);
    }
    arenas.pads.reset_all();
    stats.threads = threads;
    stats.frame_high_water = high;
    stats.frame_high_water_total = total;
    stats.peak = peak;
    stats.capacity_each = capacity;
    stats.pad_bytes = threads * capacity;
    stats.bytes_reserved = stats.pad_bytes + stats.thread_scratch_bytes + stats.staging_bytes;
    stats.frames += 1;
}

/// In a debug build, makes a contiguous parallel query iteration run one batch per
/// table; in a release build, returns it as it is. Bevy 0.20.1's contiguous fetch of a
/// `&T` component `debug_assert`s that a batch spans its whole table, so any smaller
/// batch panics in a debug build ([`Scratch::for_each_batch`] applies this itself).
///
/// ```
/// use bevy_ecs::prelude::*;
/// use scope_stack_bevy::whole_tables_in_debug;
///
/// #[derive(Component)]
/// struct Position([f32; 2]);
/// fn sum(units: Query<&Position>) {
///     let batches = whole_tables_in_debug(units.contiguous_par_iter().unwrap());
///     batches.for_each(|positions: &[Position]| {
///         let _x: f32 = positions.iter().map(|p| p.0[0]).sum();
///     });
/// }
/// # bevy_ecs::system::assert_is_system(sum);
/// ```
pub fn whole_tables_in_debug<'q, 's, D, F>(
    batches: QueryContiguousParIter<'q, 's, D, F>,
) -> QueryContiguousParIter<'q, 's, D, F>
where
    D: ContiguousQueryData,
    F: ArchetypeFilter,
{
    if cfg!(debug_assertions) {
        batches.batching_strategy(BatchingStrategy::fixed(u32::MAX as usize))
    } else {
        batches
    }
}
