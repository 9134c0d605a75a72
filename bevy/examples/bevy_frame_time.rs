//! Frame time and heap allocations per frame of the same five systems written four
//! ways, each in its own Bevy app, the apps' frames interleaved in one run:
//!
//! 1. **empty**: the five systems do nothing (Bevy's floor: its executor's cost);
//! 2. **heap**: a `Vec` or `String` per system, and per entity in the parallel one;
//! 3. **idiom**: Bevy's own idiom for that: `Local<Vec<_>>`, `Local<String>`,
//!    `bevy_utils::Parallel` with `par_iter().for_each_init(|| p.borrow_local_mut(), ..)`;
//! 4. **scope-stack**: `ScopeStackPlugin`, `Scratch` (one scope per system, and one per
//!    `par_iter` batch with `Scratch::for_each_batch`), a `FrameArena` the draw system
//!    fills through `Res` (one slice per batch), and a `LevelSlots` with a level loaded.
//!
//! The systems, beside the game's `move_units` (every mode): `nearest` sorts the
//! units' distances to the centre; `hud` formats a line; `crowd` sorts eight beacon
//! distances per unit in parallel (a temporary per entity); `draw` copies every
//! position into a draw list in parallel; `render` reads the draw list.
//!
//! It prints, per mode, the median and 90th percentile frame time (`app.update()`, wall
//! clock) and the mean heap allocations per frame (every thread, `stats_alloc`), and
//! checks that the scope-stack mode allocates no more than the idiom (Bevy's
//! multi-threaded executor allocates for each system it runs and for each `par_iter`'s
//! batch tasks; the plugin's every-frame systems run in its single-threaded schedules,
//! in place, and its other systems only behind run conditions). Frame times
//! are only meaningful in a release build on a quiet machine:
//!
//! ```text
//! cargo run --release -p scope-stack-bevy --example bevy_frame_time
//! FRAME_TIME_ROUNDS=40 FRAME_TIME_UNITS=500 cargo run --release -p scope-stack-bevy --example bevy_frame_time
//! ```
//!
//! A debug build runs few frames (for CI: it checks the allocation figures).
//!
//! `FRAME_TIME_SYSTEMS=1` also times each system's own run, per mode, and prints the
//! median of each (after the frame table, which it leaves as it is):
//!
//! ```text
//! FRAME_TIME_SYSTEMS=1 cargo run --release -p scope-stack-bevy --example bevy_frame_time
//! ```
//!
//! Each system is then wrapped in a Bevy `AdapterSystem` that reads an `Instant` around
//! the system's run (its parameters fetched and its body run, on the thread the executor
//! runs it on; a `par_iter` system's time is the whole call, since the system waits for
//! its batches). The samples go to vectors reserved before the first frame, so the
//! timing adds no heap allocation per frame and the allocation figures stay exact.

use std::alloc::System;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bevy_app::{App, Startup, TaskPoolOptions, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use bevy_ecs::system::{
    Adapt, IntoAdapterSystem, RunSystemError, System as BevySystem, SystemIn, SystemInput,
};
use bevy_ecs::utils::Parallel;
use scope_stack::{slot_root, ConcurrentScope, Place, Pool};
use scope_stack_bevy::{
    whole_tables_in_debug, FrameArena, LevelSlots, ScopeStackAppExt, ScopeStackPlugin, Scratch,
};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

/// Counts every allocation (and reallocation) of every thread; a `Region` reads them.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const BEACONS: [[f32; 2]; 8] = [
    [0.0, 0.0],
    [100.0, 0.0],
    [0.0, 100.0],
    [100.0, 100.0],
    [50.0, 0.0],
    [0.0, 50.0],
    [100.0, 50.0],
    [50.0, 100.0],
];

fn setting(name: &str, debug: usize, release: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            debug
        } else {
            release
        })
}

#[derive(Component, Clone, Copy)]
struct Position([f32; 2]);

#[derive(Component, Clone, Copy)]
struct Velocity([f32; 2]);

/// What the systems compute, so no mode's work can be optimised away.
#[derive(Resource, Default)]
struct Census {
    near: AtomicUsize,
    crowded: AtomicUsize,
    hud_len: AtomicUsize,
    drawn: AtomicUsize,
}

#[derive(Resource)]
struct Units(usize);

fn spawn_units(mut commands: Commands, units: Res<Units>) {
    commands.spawn_batch((0..units.0).map(|i| {
        let f = i as f32;
        (
            Position([f % 100.0, (f / 20.0) % 100.0]),
            Velocity([(f * 0.37).sin(), (f * 0.11).cos()]),
        )
    }));
}

fn move_units(mut units: Query<(&mut Position, &Velocity)>) {
    units.par_iter_mut().for_each(|(mut p, v)| {
        p.0[0] = (p.0[0] + v.0[0] * 0.016).rem_euclid(100.0);
        p.0[1] = (p.0[1] + v.0[1] * 0.016).rem_euclid(100.0);
    });
}

fn centre_distance(p: &Position) -> f32 {
    (p.0[0] - 50.0).powi(2) + (p.0[1] - 50.0).powi(2)
}

/// Fills `out` with the unit's squared distances to the beacons, sorted; says whether
/// the median one is close.
fn crowded(p: &Position, out: &mut [f32]) -> bool {
    for (d, b) in out.iter_mut().zip(BEACONS) {
        *d = (p.0[0] - b[0]).powi(2) + (p.0[1] - b[1]).powi(2);
    }
    out.sort_unstable_by(f32::total_cmp);
    out[4] < 4000.0
}

fn nearest_sum(sorted: &[f32]) -> usize {
    sorted.iter().take(16).sum::<f32>() as usize
}

// --- 1. empty --------------------------------------------------------------------------

mod empty {
    pub fn nearest() {}
    pub fn hud() {}
    pub fn crowd() {}
    pub fn draw() {}
    pub fn render() {}
}

// --- 2. a Vec or String per system (and per entity) -----------------------------------

mod heap {
    use super::*;

    #[derive(Resource, Default)]
    pub struct Draws(pub Vec<[f32; 2]>);

    pub fn nearest(units: Query<&Position>, census: Res<Census>) {
        let mut d: Vec<f32> = units.iter().map(centre_distance).collect();
        d.sort_unstable_by(f32::total_cmp);
        census.near.store(nearest_sum(&d), Ordering::Relaxed);
    }

    pub fn hud(census: Res<Census>) {
        let line = format!(
            "near {} crowded {} drawn {}",
            census.near.load(Ordering::Relaxed),
            census.crowded.load(Ordering::Relaxed),
            census.drawn.load(Ordering::Relaxed)
        );
        census.hud_len.store(line.len(), Ordering::Relaxed);
    }

    pub fn crowd(units: Query<&Position>, census: Res<Census>) {
        census.crowded.store(0, Ordering::Relaxed);
        units.par_iter().for_each(|p| {
            let mut d = vec![0.0; BEACONS.len()];
            if crowded(p, &mut d) {
                census.crowded.fetch_add(1, Ordering::Relaxed);
            }
        });
    }

    pub fn draw(units: Query<&Position>, mut draws: ResMut<Draws>) {
        draws.0 = units.iter().map(|p| p.0).collect();
    }

    pub fn render(draws: Res<Draws>, census: Res<Census>) {
        census.drawn.store(draws.0.len(), Ordering::Relaxed);
    }
}

// --- 3. Bevy's idiom ----------------------------------------------------------------------

mod idiom {
    use super::*;

    #[derive(Resource, Default)]
    pub struct Draws(pub Parallel<Vec<[f32; 2]>>);

    pub fn nearest(units: Query<&Position>, census: Res<Census>, mut d: Local<Vec<f32>>) {
        d.clear();
        d.extend(units.iter().map(centre_distance));
        d.sort_unstable_by(f32::total_cmp);
        census.near.store(nearest_sum(&d), Ordering::Relaxed);
    }

    pub fn hud(census: Res<Census>, mut line: Local<String>) {
        line.clear();
        let _ = write!(
            line,
            "near {} crowded {} drawn {}",
            census.near.load(Ordering::Relaxed),
            census.crowded.load(Ordering::Relaxed),
            census.drawn.load(Ordering::Relaxed)
        );
        census.hud_len.store(line.len(), Ordering::Relaxed);
    }

    pub fn crowd(units: Query<&Position>, census: Res<Census>, buffers: Local<Parallel<Vec<f32>>>) {
        census.crowded.store(0, Ordering::Relaxed);
        units.par_iter().for_each_init(
            || buffers.borrow_local_mut(),
            |d, p| {
                d.clear();
                d.resize(BEACONS.len(), 0.0);
                if crowded(p, d) {
                    census.crowded.fetch_add(1, Ordering::Relaxed);
                }
            },
        );
    }

    pub fn draw(units: Query<&Position>, mut draws: ResMut<Draws>) {
        for list in draws.0.iter_mut() {
            list.clear();
        }
        let draws = &draws.0;
        units
            .par_iter()
            .for_each_init(|| draws.borrow_local_mut(), |list, p| list.push(p.0));
    }

    pub fn render(mut draws: ResMut<Draws>, census: Res<Census>) {
        let drawn = draws.0.iter_mut().map(|list| list.len()).sum();
        census.drawn.store(drawn, Ordering::Relaxed);
    }
}

// --- 4. scope-stack-bevy ------------------------------------------------------------------

/// This frame's draw list: one slice per `par_iter` batch, placed in the frame.
struct Draws<'s> {
    batches: &'s Pool<'s, &'s [[f32; 2]]>,
}
slot_root!(struct DrawsRoot => Draws);

fn new_frame<'s>(scope: &'s ConcurrentScope<'s>) -> Draws<'s> {
    Draws {
        batches: scope.new_pool_pod(256),
    }
}

/// A level, loaded once: the plugin's level system has nothing to do while it plays.
struct Level<'s> {
    name: &'s str,
}
slot_root!(struct LevelRoot => Level);

mod ours {
    use super::*;

    pub fn nearest(scratch: Scratch, units: Query<&Position>, census: Res<Census>) {
        let near = scratch.with(|s| {
            let d = s.alloc_iter_pod(units.iter().map(centre_distance));
            d.sort_unstable_by(f32::total_cmp);
            nearest_sum(d)
        });
        census.near.store(near, Ordering::Relaxed);
    }

    pub fn hud(scratch: Scratch, census: Res<Census>) {
        let len = scratch.with(|s| {
            s.alloc_fmt(format_args!(
                "near {} crowded {} drawn {}",
                census.near.load(Ordering::Relaxed),
                census.crowded.load(Ordering::Relaxed),
                census.drawn.load(Ordering::Relaxed)
            ))
            .len()
        });
        census.hud_len.store(len, Ordering::Relaxed);
    }

    pub fn crowd(scratch: Scratch, units: Query<&Position>, census: Res<Census>) {
        census.crowded.store(0, Ordering::Relaxed);
        let batches = units.contiguous_par_iter().expect("table components");
        scratch.for_each_batch(batches, |s, units: &[Position]| {
            // One buffer per batch, as `for_each_init` keeps one `Vec` per batch.
            let d = s.alloc_slice_fill_copy(BEACONS.len(), 0.0f32);
            let mut n = 0;
            for p in units {
                n += usize::from(crowded(p, d));
            }
            census.crowded.fetch_add(n, Ordering::Relaxed);
        });
    }

    pub fn draw(frame: Res<FrameArena<DrawsRoot>>, units: Query<&Position>) {
        frame.with_scope(|draws, jobs| {
            let batches = units.contiguous_par_iter().expect("table components");
            whole_tables_in_debug(batches).for_each(|units: &[Position]| {
                let slice = jobs.alloc_slice_fill_with(units.len(), |i| units[i].0);
                let _kept = draws.batches.insert(&*slice).map(|b| b.into_handle());
            });
        });
    }

    pub fn render(frame: Res<FrameArena<DrawsRoot>>, census: Res<Census>) {
        let drawn = frame.with(|d| d.batches.values().map(|b| b.len()).sum());
        census.drawn.store(drawn, Ordering::Relaxed);
    }
}

// --- Per-system times (FRAME_TIME_SYSTEMS=1) ------------------------------------------------

/// The systems timed one by one: the five, and the game's `move_units` (the same in
/// every mode: how far apart two apps' runs of one system land).
const SYSTEMS: [&str; 6] = ["nearest", "hud", "crowd", "draw", "render", "move_units"];

/// One system's run times in one mode, in a vector reserved up front: a sample past its
/// capacity is dropped, never pushed into a reallocation.
type Samples = Arc<Mutex<Vec<Duration>>>;

/// The adapter that times the system it wraps.
struct Timed(Samples);

impl<S: BevySystem> Adapt<S> for Timed {
    type In = S::In;
    type Out = S::Out;

    fn adapt(
        &mut self,
        input: <Self::In as SystemInput>::Inner<'_>,
        run_system: impl FnOnce(SystemIn<'_, S>) -> Result<S::Out, RunSystemError>,
    ) -> Result<Self::Out, RunSystemError> {
        let t = Instant::now();
        let out = run_system(input);
        let time = t.elapsed();
        let mut samples = self.0.lock().unwrap();
        if samples.len() < samples.capacity() {
            samples.push(time);
        }
        out
    }
}

// --- The runs -------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Empty,
    Heap,
    Idiom,
    Ours,
}

const MODES: [(Mode, &str); 4] = [
    (Mode::Empty, "empty systems (Bevy's floor)"),
    (Mode::Heap, "Vec/String per system"),
    (Mode::Idiom, "Bevy's idiom (Local, Parallel)"),
    (Mode::Ours, "scope-stack-bevy"),
];

/// The app for `mode`, and the frames it ran already (loading the level). With `timed`
/// (one sample list per entry of `SYSTEMS`), each system is wrapped in a `Timed`.
fn app(mode: Mode, units: usize, timed: Option<&[Samples]>) -> (App, usize) {
    let mut app = App::new();
    // Four threads in all, as in `bevy_game`.
    app.add_plugins(TaskPoolPlugin {
        task_pool_options: TaskPoolOptions::with_num_threads(4),
    })
    .insert_resource(Units(units))
    .init_resource::<Census>()
    .add_systems(Startup, spawn_units);
    // `Timed` keeps the system's own sets, so `.after(system)` still orders by it.
    let timed_by = |i: usize| Timed(Arc::clone(&timed.unwrap()[i]));
    match timed {
        None => app.add_systems(Update, move_units),
        Some(_) => app.add_systems(Update, IntoAdapterSystem::new(timed_by(5), move_units)),
    };
    macro_rules! five {
        ($m:ident) => {
            match timed {
                None => app.add_systems(
                    Update,
                    (
                        $m::nearest.after(move_units),
                        $m::hud,
                        $m::crowd.after(move_units),
                        $m::draw.after(move_units),
                        $m::render.after($m::draw),
                    ),
                ),
                Some(_) => app.add_systems(
                    Update,
                    (
                        IntoAdapterSystem::new(timed_by(0), $m::nearest).after(move_units),
                        IntoAdapterSystem::new(timed_by(1), $m::hud),
                        IntoAdapterSystem::new(timed_by(2), $m::crowd).after(move_units),
                        IntoAdapterSystem::new(timed_by(3), $m::draw).after(move_units),
                        IntoAdapterSystem::new(timed_by(4), $m::render).after($m::draw),
                    ),
                ),
            }
        };
    }
    match mode {
        Mode::Empty => five!(empty),
        Mode::Heap => five!(heap).init_resource::<heap::Draws>(),
        Mode::Idiom => five!(idiom).init_resource::<idiom::Draws>(),
        Mode::Ours => {
            let levels = LevelSlots::<LevelRoot>::new("levels", 2, 16 << 10).unwrap();
            five!(ours)
                .add_plugins(ScopeStackPlugin::with_scratch_capacity(64 << 10))
                .insert_frame_arena(
                    FrameArena::<DrawsRoot>::new("frames", 2, (64 << 10) + units * 16, new_frame)
                        .unwrap(),
                )
                .insert_level_slots(levels)
        }
    };
    app.finish();
    app.cleanup();
    let mut frames = 0;
    if mode == Mode::Ours {
        app.world_mut()
            .resource_mut::<LevelSlots<LevelRoot>>()
            .stream("arena", |s| Level {
                name: s.alloc_str("arena"),
            });
        let start = Instant::now();
        while app.world().resource::<LevelSlots<LevelRoot>>().is_loading() {
            assert!(start.elapsed().as_secs() < 10, "the level never loaded");
            app.update();
            frames += 1;
        }
        let levels = app.world().resource::<LevelSlots<LevelRoot>>();
        assert_eq!(levels.with(|l| l.name.len()), Some(5));
    }
    (app, frames)
}

#[derive(Default)]
struct Figures {
    times: Vec<Duration>,
    allocations: Vec<u64>,
}

/// Per system, its median run time in each mode, and the crate's over the idiom's.
fn print_system_times(system_times: &[Vec<Samples>]) {
    println!("per system: median of its own run (Instant around the system), µs");
    println!(
        "{:<12} {:>9} {:>9} {:>9} {:>9} {:>12}",
        "system", "empty", "Vec", "idiom", "crate", "crate/idiom"
    );
    for (s, name) in SYSTEMS.iter().enumerate() {
        let medians: Vec<f64> = system_times
            .iter()
            .map(|mode| {
                let mut times = mode[s].lock().unwrap().clone();
                times.sort();
                median(&times, 0.5).as_secs_f64() * 1e6
            })
            .collect();
        println!(
            "{name:<12} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>11.2}x",
            medians[0],
            medians[1],
            medians[2],
            medians[3],
            medians[3] / medians[2]
        );
    }
}

fn median(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let units = setting("FRAME_TIME_UNITS", 2000, 2000);
    let rounds = setting("FRAME_TIME_ROUNDS", 3, 40);
    let per_round = setting("FRAME_TIME_FRAMES", 10, 50);
    let warm_up = setting("FRAME_TIME_WARM_UP", 10, 100);
    let by_system = setting("FRAME_TIME_SYSTEMS", 0, 0) != 0;
    let started = Instant::now();

    // Per mode, per system: room for every measured frame, reserved now.
    let system_times: Vec<Vec<Samples>> = MODES
        .iter()
        .map(|_| {
            SYSTEMS
                .iter()
                .map(|_| Arc::new(Mutex::new(Vec::with_capacity(rounds * per_round))))
                .collect()
        })
        .collect();
    let built: Vec<(App, usize)> = MODES
        .iter()
        .zip(&system_times)
        .map(|(&(mode, _), times)| app(mode, units, by_system.then_some(&times[..])))
        .collect();
    // Every app runs as many frames, so all compute the same figures.
    let ahead = built.iter().map(|(_, frames)| *frames).max().unwrap_or(0);
    let mut apps = Vec::new();
    for (mut app, frames) in built {
        for _ in frames..ahead + warm_up {
            app.update();
        }
        apps.push(app);
    }
    // The warm-up's samples go; the vectors keep their room.
    for samples in system_times.iter().flatten() {
        samples.lock().unwrap().clear();
    }
    let mut figures: Vec<Figures> = MODES.iter().map(|_| Figures::default()).collect();
    for round in 0..rounds {
        // Interleaved, in a rotating order, so drift on the machine hits every mode.
        for k in 0..MODES.len() {
            let m = (round + k) % MODES.len();
            for _ in 0..per_round {
                let region = Region::new(GLOBAL);
                let t = Instant::now();
                apps[m].update();
                let time = t.elapsed();
                let change = region.change();
                figures[m].times.push(time);
                figures[m]
                    .allocations
                    .push((change.allocations + change.reallocations) as u64);
            }
        }
    }

    // Every mode computed the same figures.
    let census = |app: &App| {
        let c = app.world().resource::<Census>();
        let load = |a: &AtomicUsize| a.load(Ordering::Relaxed);
        (load(&c.near), load(&c.crowded), load(&c.drawn))
    };
    for app in &apps[2..] {
        assert_eq!(census(app), census(&apps[1]), "the modes disagree");
    }
    assert_eq!(census(&apps[3]).2, units);

    println!(
        "{units} units, {rounds} rounds of {per_round} frames per mode, interleaved, after {warm_up} warm-up frames ({} build)",
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
    println!(
        "{:<32} {:>12} {:>12} {:>10} {:>14}",
        "mode", "median", "p90", "vs idiom", "allocs/frame"
    );
    let mut medians = Vec::new();
    let mut allocs = Vec::new();
    for (f, _) in figures.iter_mut().zip(MODES) {
        f.times.sort();
        medians.push(median(&f.times, 0.5));
        allocs.push(f.allocations.iter().sum::<u64>() as f64 / f.allocations.len() as f64);
    }
    for (i, (f, (_, label))) in figures.iter().zip(MODES).enumerate() {
        println!(
            "{label:<32} {:>9.1} µs {:>9.1} µs {:>9.2}x {:>14.2}",
            medians[i].as_secs_f64() * 1e6,
            median(&f.times, 0.9).as_secs_f64() * 1e6,
            medians[i].as_secs_f64() / medians[2].as_secs_f64(),
            allocs[i],
        );
    }
    if by_system {
        print_system_times(&system_times);
    }
    println!("took {:.1} s", started.elapsed().as_secs_f64());
    // Allocations are exact; times are not checked (a shared machine is noisy). Bevy
    // allocates for each system its multi-threaded executor runs (a task) and for each
    // `par_iter` (its batch tasks). The plugin's every-frame systems (the frame rotation,
    // the scratch stats) run in its single-threaded schedules, in place, and its other
    // systems only behind run conditions, so this mode's floor is the idiom's count:
    // the same systems, the same `par_iter`s. (Half an allocation of slack: how often a
    // pool thread sets up its executor runner inside a `par_iter` scope varies.)
    assert!(
        allocs[3] <= allocs[2] + 0.5,
        "scope-stack-bevy allocated {:.2} per frame, Bevy's idiom {:.2}",
        allocs[3],
        allocs[2]
    );
}
