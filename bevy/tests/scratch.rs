//! The plugin warms every task-pool thread, `Scratch` systems run in parallel, and
//! `ScratchStats` follows each frame.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bevy_app::{App, First, Last, TaskPoolOptions, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use bevy_tasks::{AsyncComputeTaskPool, ComputeTaskPool, IoTaskPool};
use scope_stack_bevy::{ScopeStackPlugin, ScopeStackSystems, Scratch, ScratchStats};

fn app() -> App {
    let mut app = App::new();
    // Bevy's executor runs systems on the compute pool only (its own thread does not
    // take pool tasks), and on a two-core machine the default pools give compute one
    // thread: six threads in all give it at least two, so systems can overlap.
    app.add_plugins((
        TaskPoolPlugin {
            task_pool_options: TaskPoolOptions::with_num_threads(6),
        },
        ScopeStackPlugin::with_scratch_capacity(256 << 10),
    ));
    app.finish();
    app.cleanup();
    app
}

fn pool_threads() -> usize {
    ComputeTaskPool::get().thread_num()
        + AsyncComputeTaskPool::get().thread_num()
        + IoTaskPool::get().thread_num()
}

#[test]
fn every_pool_thread_and_the_main_thread_are_warmed() {
    let mut app = app();
    app.update();
    let stats = *app.world().resource::<ScratchStats>();
    assert_eq!(stats.warmed_threads, pool_threads() + 1);
    // Each warmed thread holds a pad, and nothing else has used one yet.
    assert_eq!(stats.threads, pool_threads() + 1);
    assert_eq!(stats.bytes_reserved, stats.threads * (256 << 10));
}

/// Two systems that take `Scratch` meet each frame: the first to arrive waits (up to
/// half a second) for the other, and if the other arrives meanwhile, the two ran at
/// once. A timeout rather than a barrier, so the test cannot hang the shared pools.
#[derive(Resource, Default)]
struct Meeting {
    arrived: AtomicUsize,
    overlapped: AtomicUsize,
    ran: AtomicUsize,
}

fn meet(scratch: Scratch, meeting: Res<Meeting>) {
    scratch.with(|s| {
        s.alloc_raw(1000, 1);
        if meeting.arrived.fetch_add(1, Ordering::AcqRel) == 0 {
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(500) {
                if meeting.arrived.load(Ordering::Acquire) == 2 {
                    meeting.overlapped.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                std::thread::yield_now();
            }
        }
    });
    meeting.ran.fetch_add(1, Ordering::Relaxed);
}

fn meet_too(scratch: Scratch, meeting: Res<Meeting>) {
    meet(scratch, meeting);
}

fn new_meeting(meeting: Res<Meeting>) {
    meeting.arrived.store(0, Ordering::Release);
}

#[test]
fn systems_that_take_scratch_run_in_parallel_and_no_thread_reserves_mid_game() {
    let mut app = app();
    app.init_resource::<Meeting>()
        .add_systems(First, new_meeting)
        .add_systems(Update, (meet, meet_too));
    app.update();
    let threads = app.world().resource::<ScratchStats>().threads;
    for _ in 0..9 {
        app.update();
    }
    let meeting = app.world().resource::<Meeting>();
    assert_eq!(meeting.ran.load(Ordering::Relaxed), 20);
    assert!(
        meeting.overlapped.load(Ordering::Relaxed) >= 1,
        "the two systems never ran at once"
    );
    let stats = *app.world().resource::<ScratchStats>();
    assert_eq!(stats.threads, threads, "no new pad after the warm-up");
    assert_eq!(stats.frames, 10);
    assert!(stats.frame_high_water >= 1000);
    assert!(stats.frame_high_water_total >= stats.frame_high_water);
}

#[derive(Resource, Default)]
struct Seen(Vec<ScratchStats>);

fn big_then_small(mut frame: Local<u32>, scratch: Scratch) {
    let bytes = if *frame == 0 { 50_000 } else { 100 };
    scratch.with(|s| {
        s.alloc_raw(bytes, 1);
    });
    *frame += 1;
}

fn record(stats: Res<ScratchStats>, mut seen: ResMut<Seen>) {
    seen.0.push(*stats);
}

#[test]
fn the_frame_high_water_restarts_each_frame_and_the_peak_stays() {
    let mut app = app();
    app.init_resource::<Seen>()
        .add_systems(Update, big_then_small)
        .add_systems(Last, record.after(ScopeStackSystems::ScratchStats));
    for _ in 0..3 {
        app.update();
    }
    let seen = &app.world().resource::<Seen>().0;
    assert_eq!(seen.len(), 3);
    assert!(seen[0].frame_high_water >= 50_000);
    assert!(seen[1].frame_high_water >= 100 && seen[1].frame_high_water < 50_000);
    assert!(seen[2].peak >= 50_000);
    assert_eq!(seen.iter().map(|s| s.frames).collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn warming_again_reaches_the_same_threads_and_reserves_nothing_new() {
    let app = app();
    let arenas = app.world().resource::<scope_stack_bevy::ScratchArenas>();
    let reached = scope_stack_bevy::warm_task_pools(arenas, Duration::from_secs(2));
    assert_eq!(reached, pool_threads() + 1);
}
