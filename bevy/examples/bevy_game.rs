//! A small Bevy game loop on scope-stack, run with a counting global allocator.
//!
//! Three apps run in this process, one after the other, with the same entities and the
//! same game systems (movement, bounce, a census, in parallel):
//! 1. plain Bevy, the game alone;
//! 2. plain Bevy with empty stand-in systems wherever the crate and the game's
//!    scope-stack systems go (same schedules, same count, same ordering): Bevy's
//!    multi-threaded executor allocates for each system it runs on its task pool, so
//!    this is the baseline the crate is measured against;
//! 3. the game with `ScopeStackPlugin`, a frame arena that parallel systems fill through
//!    `Res`, systems with per-thread `Scratch`, and levels streamed on the async
//!    compute pool.
//!
//! After a warm-up it prints heap allocations per frame for each and checks that run 3
//! allocates no more than run 2 on ordinary frames (a frame that starts a level stream
//! spawns one Bevy task, which allocates; those frames are counted apart).
//!
//! Run: `cargo run -p scope-stack-bevy --example bevy_game`

use std::alloc::System;

use bevy_app::{App, TaskPoolOptions, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use scope_stack::{slot_root, ConcurrentScope, Place, Pool};
use scope_stack_bevy::{
    FrameArena, LevelSlots, MemoryMapRequest, ScopeStackAppExt, ScopeStackPlugin, Scratch,
    ScratchStats,
};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

/// Counts every allocation (and reallocation) of every thread; a `Region` reads them.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const UNITS: usize = 2000;
const WARM_UP: usize = 60;
const MEASURED: usize = 240;
/// A new level is asked for on these frames (counted from the start).
const STREAM_AT: [usize; 3] = [10, 100, 200];

#[derive(Component, Clone, Copy)]
struct Position([f32; 2]);

#[derive(Component, Clone, Copy)]
struct Velocity([f32; 2]);

#[derive(Resource, Default)]
struct Census {
    units: usize,
    checksum: f32,
}

fn spawn_units(mut commands: Commands) {
    for i in 0..UNITS {
        let f = i as f32;
        commands.spawn((
            Position([f % 100.0, f / 20.0]),
            Velocity([(f * 0.37).sin(), (f * 0.11).cos()]),
        ));
    }
}

fn move_units(mut units: Query<(&mut Position, &Velocity)>) {
    units.par_iter_mut().for_each(|(mut p, v)| {
        p.0[0] += v.0[0] * 0.016;
        p.0[1] += v.0[1] * 0.016;
    });
}

fn bounce(mut units: Query<(&Position, &mut Velocity)>) {
    for (p, mut v) in &mut units {
        if !(0.0..100.0).contains(&p.0[0]) {
            v.0[0] = -v.0[0];
        }
        if !(0.0..100.0).contains(&p.0[1]) {
            v.0[1] = -v.0[1];
        }
    }
}

fn census(units: Query<&Position>, mut census: ResMut<Census>) {
    census.units = units.iter().count();
    census.checksum = units.iter().map(|p| p.0[0] + p.0[1]).sum();
}

// --- What the crate adds -------------------------------------------------------------

/// This frame's draw list, filled by several systems at once.
struct Draws<'s> {
    sprites: &'s Pool<'s, [f32; 2]>,
    markers: &'s Pool<'s, [f32; 2]>,
}
slot_root!(struct DrawsRoot => Draws);

fn new_frame<'s>(scope: &'s ConcurrentScope<'s>) -> Draws<'s> {
    Draws {
        sprites: scope.new_pool(UNITS),
        markers: scope.new_pool(64),
    }
}

/// A level: spawn points and a name, built on the async compute pool.
struct Level<'s> {
    name: &'s str,
    spawns: &'s [[f32; 2]],
}
slot_root!(struct LevelRoot => Level);

fn draw_sprites(frame: Res<FrameArena<DrawsRoot>>, units: Query<&Position>) {
    frame.with_scope(|draws, _| {
        for p in &units {
            let _kept = draws.sprites.insert(p.0).map(|b| b.into_handle());
        }
    });
}

fn draw_markers(frame: Res<FrameArena<DrawsRoot>>, levels: Res<LevelSlots<LevelRoot>>) {
    frame.with_scope(|draws, _| {
        levels.with(|level| {
            for s in level.spawns.iter().take(64) {
                let _kept = draws.markers.insert(*s).map(|b| b.into_handle());
            }
        });
    });
}

/// The 16 units nearest the centre, sorted in scratch.
fn nearest(scratch: Scratch, units: Query<&Position>, mut census: ResMut<Census>) {
    let near = scratch.with(|s| {
        let d = s.alloc_iter(
            units
                .iter()
                .map(|p| (p.0[0] - 50.0).powi(2) + (p.0[1] - 50.0).powi(2)),
        );
        d.sort_unstable_by(f32::total_cmp);
        d.iter().take(16).sum::<f32>()
    });
    census.checksum += near * 0.0;
}

/// A HUD line, formatted in scratch.
fn hud(scratch: Scratch, levels: Res<LevelSlots<LevelRoot>>, stats: Res<ScratchStats>) {
    let len = scratch.with(|s| {
        let level = levels.with(|l| l.name.len()).unwrap_or(0);
        s.alloc_fmt(format_args!(
            "level {level} scratch {} B",
            stats.frame_high_water
        ))
        .len()
    });
    assert!(len > 0);
}

fn render(frame: Res<FrameArena<DrawsRoot>>) {
    // The previous frame is still loaded: a render thread would be drawing it now.
    let drawn = frame.previous(1).map_or(0, |f| f.with(|d| d.sprites.len()));
    assert!(drawn == 0 || drawn == UNITS);
}

fn stream_level(levels: &mut LevelSlots<LevelRoot>, n: usize) {
    const NAMES: [&str; 3] = ["forest", "castle", "caves"];
    let name = NAMES[n % NAMES.len()];
    levels.stream(name, move |s| Level {
        name: s.alloc_str(name),
        spawns: s.alloc_slice_fill_with(10_000, |i| [(i % 100) as f32, (i / 100) as f32]),
    });
}

// --- The runs ------------------------------------------------------------------------

struct Run {
    /// Allocations in each measured frame.
    frames: Vec<u64>,
    /// Allocations in the frames that started a level stream.
    stream_frames: Vec<u64>,
}

fn run(app: &mut App, mut before_frame: impl FnMut(&mut App, usize) -> bool) -> Run {
    let mut frames = Vec::with_capacity(MEASURED);
    let mut stream_frames = Vec::new();
    for i in 0..WARM_UP + MEASURED {
        let streams = before_frame(app, i);
        let region = Region::new(GLOBAL);
        app.update();
        let change = region.change();
        let used = (change.allocations + change.reallocations) as u64;
        if streams {
            stream_frames.push(used);
        } else if i >= WARM_UP {
            frames.push(used);
        }
    }
    Run {
        frames,
        stream_frames,
    }
}

fn game_app() -> App {
    let mut app = App::new();
    // Four threads in all, so the compute pool (which runs the systems) has two even
    // on a two-core machine.
    app.add_plugins(TaskPoolPlugin {
        task_pool_options: TaskPoolOptions::with_num_threads(4),
    })
    .init_resource::<Census>()
    .add_systems(bevy_app::Startup, spawn_units)
    .add_systems(
        Update,
        (move_units, bounce.after(move_units), census.after(bounce)),
    );
    app
}

/// Stand-ins: empty systems where run 3 has the crate's and the game's scope-stack
/// systems, so run 2 pays Bevy's cost of running that many systems.
fn stand_ins(app: &mut App) {
    fn nothing() {}
    fn nothing_2() {}
    fn nothing_3() {}
    fn nothing_4() {}
    fn nothing_5() {}
    fn nothing_6() {}
    fn nothing_7() {}
    fn nothing_8() {}
    fn nothing_9() {}
    app.add_systems(bevy_app::First, nothing)
        .add_systems(bevy_app::PreUpdate, nothing_2)
        .add_systems(
            Update,
            (
                nothing_3,
                nothing_4,
                nothing_5.after(census),
                nothing_6,
                nothing_7,
            ),
        )
        .add_systems(bevy_app::Last, (nothing_8, nothing_9.after(nothing_8)));
}

fn summary(label: &str, run: &Run) -> (u64, u64) {
    let total: u64 = run.frames.iter().sum();
    let max = run.frames.iter().copied().max().unwrap_or(0);
    let min = run.frames.iter().copied().min().unwrap_or(0);
    println!(
        "{label:<28} {:>4} frames: {:>6} allocations, {:>6.2} per frame (min {min}, max {max})",
        run.frames.len(),
        total,
        total as f64 / run.frames.len() as f64,
    );
    (total, max)
}

fn main() {
    let started = std::time::Instant::now();

    // Baseline: plain Bevy, the game systems only.
    let mut baseline = game_app();
    baseline.finish();
    baseline.cleanup();
    let base = run(&mut baseline, |_, _| false);
    drop(baseline);

    // Plain Bevy with stand-ins where the scope-stack systems go.
    let mut stand_in = game_app();
    stand_ins(&mut stand_in);
    stand_in.finish();
    stand_in.cleanup();
    let empty = run(&mut stand_in, |_, _| false);
    drop(stand_in);

    // The same game with the crate.
    let mut game = game_app();
    game.add_plugins(ScopeStackPlugin::with_scratch_capacity(256 << 10))
        .insert_frame_arena(
            FrameArena::<DrawsRoot>::new("frames", 3, 256 << 10, new_frame).unwrap(),
        )
        .insert_level_slots(LevelSlots::<LevelRoot>::new("levels", 2, 256 << 10).unwrap())
        .add_systems(
            Update,
            (
                draw_sprites,
                draw_markers,
                nearest.after(census),
                hud,
                render,
            ),
        );
    game.finish();
    game.cleanup();
    let mut streamed = 0;
    let with = run(&mut game, |app, i| {
        if STREAM_AT.contains(&i) {
            stream_level(
                &mut app.world_mut().resource_mut::<LevelSlots<LevelRoot>>(),
                streamed,
            );
            streamed += 1;
            return true;
        }
        false
    });

    println!("heap allocations per frame, after {WARM_UP} warm-up frames ({UNITS} units):");
    summary("1. plain Bevy, the game", &base);
    let (base_total, base_max) = summary("2. + 9 empty systems", &empty);
    let (with_total, with_max) = summary("3. + scope-stack-bevy", &with);
    println!(
        "frames that started a level stream: {:?} allocations (the Bevy task and its state)",
        with.stream_frames
    );
    let world = game.world();
    let stats = *world.resource::<ScratchStats>();
    let levels = world.resource::<LevelSlots<LevelRoot>>();
    let frames = world.resource::<FrameArena<DrawsRoot>>();
    println!(
        "levels swapped in: {} (playing: {}), frames: {} ({} held), scratch: {} threads warmed, \
         {} with pads, peak {} B, {} B reserved",
        levels.swaps(),
        levels.current().map_or("none", |l| l.name()),
        frames.frame(),
        frames.frames_held(),
        stats.warmed_threads,
        stats.threads,
        stats.peak,
        stats.bytes_reserved,
    );

    // The memory map, printed from a system at the end of the next frame.
    game.world_mut().resource_mut::<MemoryMapRequest>().print = true;
    game.update();

    // Per frame, compared on the mean: run 3 has three fewer ordinary frames.
    let per_frame = |total: u64, frames: usize| total as f64 / frames as f64;
    let extra =
        per_frame(with_total, with.frames.len()) - per_frame(base_total, empty.frames.len());
    println!(
        "scope-stack-bevy over Bevy's baseline (run 3 - run 2): {extra:+.2} allocations per frame; took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(levels_swapped(&game), STREAM_AT.len() as u64);
    assert!(
        extra <= 0.05 && with_max <= base_max + 1,
        "the crate allocated on ordinary frames: {with_total} vs {base_total} (max {with_max} vs {base_max})"
    );
}

fn levels_swapped(app: &App) -> u64 {
    app.world().resource::<LevelSlots<LevelRoot>>().swaps()
}
