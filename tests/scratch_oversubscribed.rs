//! Workers spawned every frame never reserve a new scratch pair after warm-up, even on
//! an oversubscribed machine where a worker's thread-local destructor (which hands its
//! pair back) runs after the frame's `thread::scope` has returned. The test makes every
//! exit late (0 to 3 ms), beside busy loops, so the next frame's workers always ask
//! while pairs are still on their way back. A counting
//! global allocator counts the arena reservations (allocations of a whole arena), so
//! this file holds one test.
//!
//! Run it many times, and several copies at once, to see that it does not flake:
//! `for i in $(seq 30); do cargo test --release --test scratch_oversubscribed || break; done`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use scope_stack::scratch;

struct Counting;

/// Allocations at least as large as one scratch arena: arena reservations.
static RESERVATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to `System`, adding one relaxed counter.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= scratch::DEFAULT_CAPACITY {
            RESERVATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
        let warm = RESERVATIONS.load(Ordering::SeqCst);
        assert!(
            warm >= 2,
            "the warm-up reserved the workers' pairs ({warm})"
        );
        // The frames: new workers each time, spawned right after the last ones' closures
        // returned, while their thread-locals may still be on their way out.
        let mut late_frames = Vec::new();
        let mut slowest = Duration::ZERO;
        for frame in 0..FRAMES {
            let before = RESERVATIONS.load(Ordering::SeqCst);
            let started = Instant::now();
            std::thread::scope(|t| {
                for w in 0..WORKERS {
                    // 0 to 3 ms late, different for each worker and frame.
                    let delay = Duration::from_micros(((frame * 7 + w * 3) % 4) as u64 * 1000);
                    t.spawn(move || black_box(work(w, delay)));
                }
            });
            slowest = slowest.max(started.elapsed());
            if RESERVATIONS.load(Ordering::SeqCst) != before {
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
