//! Workers spawned every frame never reserve a new scratch pair after warm-up, even on
//! an oversubscribed machine where a worker's thread-local destructor (which hands its
//! pair back) runs after the frame's `thread::scope` has returned. The test makes every
//! exit late (0 to 3 ms), beside busy loops, so the next frame's workers always ask
//! while pairs are still on their way back. `stats_alloc`'s counting global allocator
//! counts every thread's heap use (its counters are global), so this file holds one
//! test. An arena reservation allocates a whole arena, [`scratch::DEFAULT_CAPACITY`]
//! bytes (1 MiB): a stretch that allocated fewer bytes than that in all, on every
//! thread, reserved no arena (a frame's four thread spawns take about 550 bytes), and one that
//! allocated `2 * DEFAULT_CAPACITY` or more reserved at least one pair's worth.
//!
//! Run it many times, and several copies at once, to see that it does not flake:
//! `for i in $(seq 30); do cargo test --release --test scratch_oversubscribed || break; done`.

use std::alloc::System;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use scope_stack::scratch;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const WORKERS: usize = 4;
/// Frames after warm-up; fewer under Miri, which is slow.
const FRAMES: usize = if cfg!(miri) { 4 } else { 100 };

/// A thread-local whose destructor dawdles, as a preempted exiting thread does. It is
/// first touched after the thread's scratch arenas, so its destructor runs before
/// theirs (thread-local destructors run newest first): the worker's pair is handed
/// back only after this delay, well after the frame's `thread::scope` has returned.
struct LateExit(Duration);

impl Drop for LateExit {
    fn drop(&mut self) {
        let until = Instant::now() + self.0;
        while Instant::now() < until {
            std::thread::yield_now();
        }
    }
}

std::thread_local! {
    static LATE_EXIT: std::cell::Cell<Option<LateExit>> = const { std::cell::Cell::new(None) };
}

/// Scratch work of one worker: a slice, and a nested scope that reads it; then the
/// thread exits late by `delay`.
fn work(w: usize, delay: Duration) -> u64 {
    let sum = scratch(|s| {
        let v = s.alloc_slice_fill_with(256, |i| (i * w) as u64);
        scratch(|inner| inner.alloc_slice_copy(v).iter().sum::<u64>())
    });
    LATE_EXIT.with(|l| l.set(Some(LateExit(delay))));
    sum
}

#[test]
fn late_returns_never_force_a_new_reservation_after_warm_up() {
    // More threads than cores: busy loops beside the workers (two per core the test
    // can see, so the workers' exits are often delayed past the frame's end).
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let busy_loops = if cfg!(miri) { 1 } else { 2 * cores };
    let stop = AtomicBool::new(false);
    let (late_frames, waited) = std::thread::scope(|outer| {
        for _ in 0..busy_loops {
            outer.spawn(|| {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    if cfg!(miri) {
                        std::thread::yield_now();
                    }
                }
            });
        }
        // Warm-up: all workers hold scratch at once, so the program's peak is known.
        let warm_up = Region::new(GLOBAL);
        let all_in = Barrier::new(WORKERS);
        std::thread::scope(|t| {
            for w in 0..WORKERS {
                let all_in = &all_in;
                t.spawn(move || {
                    scratch(|s| {
                        s.new_pod(w);
                        all_in.wait();
                    })
                });
            }
        });
        let warm = warm_up.change().bytes_allocated;
        assert!(
            warm >= 2 * scratch::DEFAULT_CAPACITY,
            "the warm-up reserved the workers' pairs ({warm} bytes)"
        );
        // The frames: new workers each time, spawned right after the last ones' closures
        // returned, while their thread-locals may still be on their way out.
        let mut late_frames = Vec::new();
        let mut slowest = Duration::ZERO;
        for frame in 0..FRAMES {
            let this_frame = Region::new(GLOBAL);
            let started = Instant::now();
            std::thread::scope(|t| {
                for w in 0..WORKERS {
                    // 0 to 3 ms late, different for each worker and frame.
                    let delay = Duration::from_micros(((frame * 7 + w * 3) % 4) as u64 * 1000);
                    t.spawn(move || black_box(work(w, delay)));
                }
            });
            slowest = slowest.max(started.elapsed());
            if this_frame.change().bytes_allocated >= scratch::DEFAULT_CAPACITY {
                late_frames.push(frame);
            }
        }
        stop.store(true, Ordering::Relaxed);
        (late_frames, slowest)
    });
    eprintln!(
        "{FRAMES} frames of {WORKERS} workers beside {busy_loops} busy loops: slowest \
         frame {waited:?}, frames that reserved a pair: {late_frames:?}"
    );
    assert!(
        late_frames.is_empty(),
        "frames {late_frames:?} reserved a new scratch pair after warm-up"
    );
}
