//! Threads spawned every frame reuse the scratch arenas of the threads that exited:
//! after warm-up, a frame of workers using `scratch()` makes no more heap allocations
//! than the same frame without scratch. `stats_alloc`'s counting global allocator counts
//! every thread's allocations (its counters are global), so this file holds one test.
//! An allocation or a reallocation counts one; the bytes are those allocated, and what
//! a reallocation grew by.

use std::alloc::System;
use std::hint::black_box;

use scope_stack::scratch;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const WORKERS: usize = 4;
const FRAMES: usize = if cfg!(miri) { 6 } else { 100 };

/// One frame: `WORKERS` threads spawned and joined, each doing a little work, in
/// scratch or not. Returns the allocations and bytes the frame made.
fn frame(with_scratch: bool) -> (usize, usize) {
    let region = Region::new(GLOBAL);
    std::thread::scope(|t| {
        for w in 0..WORKERS {
            t.spawn(move || {
                let sum = if with_scratch {
                    scratch(|s| {
                        let v = s.alloc_slice_fill_with(256, |i| (i * w) as u64);
                        scratch(|inner| inner.alloc_slice_copy(v).iter().sum::<u64>())
                    })
                } else {
                    (0..256).map(|i| (i * w) as u64).sum()
                };
                black_box(sum);
            });
        }
    });
    let change = region.change();
    (
        change.allocations + change.reallocations,
        change.bytes_allocated,
    )
}

#[test]
fn workers_spawned_every_frame_reuse_the_scratch_arenas_of_the_last_ones() {
    // The baseline: what spawning and joining the workers costs by itself.
    let plain: Vec<(usize, usize)> = (0..FRAMES).map(|_| frame(false)).collect();
    // The same frames with scratch. The first frame builds the workers' arenas.
    let first = frame(true);
    let with: Vec<(usize, usize)> = (1..FRAMES).map(|_| frame(true)).collect();

    let plain_allocs: usize = plain[1..].iter().map(|f| f.0).sum();
    let with_allocs: usize = with.iter().map(|f| f.0).sum();
    let with_bytes: usize = with.iter().map(|f| f.1).sum();
    let plain_bytes: usize = plain[1..].iter().map(|f| f.1).sum();
    eprintln!(
        "per frame after the first: {:.2} allocations / {:.0} bytes without scratch, \
         {:.2} / {:.0} with; the first scratch frame: {} / {}",
        plain_allocs as f64 / (FRAMES - 1) as f64,
        plain_bytes as f64 / (FRAMES - 1) as f64,
        with_allocs as f64 / (FRAMES - 1) as f64,
        with_bytes as f64 / (FRAMES - 1) as f64,
        first.0,
        first.1,
    );
    // At least one pair is built (a worker that starts after another has exited may
    // already take that one's pair).
    assert!(first.1 >= 2 * scratch::DEFAULT_CAPACITY, "{first:?}");
    // A worker of the next frame may start before the last frame's workers have
    // handed their arenas back (a thread's locals are destroyed after `thread::scope`
    // has seen it finish); it waits for a returning pair rather than build one (see
    // `tests/scratch_oversubscribed.rs`). The first frame's workers need not all live
    // at once, so a later frame may still raise the peak: at most one frame's worth of
    // workers in all 99 frames.
    let extra_bytes = with_bytes.saturating_sub(plain_bytes);
    assert!(
        extra_bytes <= WORKERS * 2 * scratch::DEFAULT_CAPACITY + 64 * 1024,
        "scratch added {extra_bytes} bytes over {} frames",
        FRAMES - 1
    );
    // Spawning costs the same number of allocations per frame with and without
    // scratch, give or take those few pairs (two allocations each) and the spare
    // list's own growth.
    assert!(
        with_allocs <= plain_allocs + WORKERS * 2 * 2 + 8,
        "{with_allocs} allocations with scratch, {plain_allocs} without"
    );
}
