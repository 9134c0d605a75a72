//! Scratch on rayon workers: after one documented call that warms every worker
//! (`pool.broadcast(|_| scratch::warm())`, and `ScratchPads::warm` for pads), frames
//! of jobs that use scratch on whichever worker steals them make no heap allocation,
//! whatever the stealing does (rayon's own allocations, the first time a worker
//! steals, are counted apart). Without it, a worker reserved its arenas the first time
//! it stole a job that used scratch, in a frame picked by chance (between frames 479
//! and 1,964 in a game that measured it). A counting global allocator counts every
//! thread's allocations, so this file holds one test.
//!
//! It is the one hand-written counting allocator left in the tests: it needs, in one
//! binary, every thread's count and the part of it made inside scratch on whichever
//! worker ran the job (a thread-local mark). `stats_alloc` counts every thread but
//! cannot tell them apart, `allocation-counter` counts one thread at a time, and a
//! binary has only one global allocator; a window over all threads around each job
//! would also count rayon's own allocations on other workers against scratch.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use scope_stack::{scratch, ScratchPads};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
/// Every allocation while counting, on any thread (rayon's own included).
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// Those made inside a call to `scratch` or `ScratchPads::with`.
static IN_SCRATCH_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static IN_SCRATCH: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn note() {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        if IN_SCRATCH.with(std::cell::Cell::get) {
            IN_SCRATCH_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Runs `f` marked as scratch's: what it allocates counts against scratch.
fn in_scratch<R>(f: impl FnOnce() -> R) -> R {
    IN_SCRATCH.with(|c| c.set(true));
    let r = f();
    IN_SCRATCH.with(|c| c.set(false));
    r
}

// SAFETY: forwards to `System`, adding a relaxed counter.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const WORKERS: usize = 4;

/// A frame: a tree of `rayon::join`s whose 2^depth leaves each use `scratch` (both
/// arenas) and the pads, on whichever worker runs them. Returns a checksum.
fn jobs(depth: u32, pads: &ScratchPads, seed: u64) -> u64 {
    if depth == 0 {
        return in_scratch(|| {
            let a = scratch(|s| {
                let v = s.alloc_slice_fill_with(64, |i| seed + i as u64);
                scratch::warm(); // warming a warm thread does nothing
                v.iter().sum::<u64>()
            });
            let b = pads.with(|s| s.alloc_slice_copy(&[seed; 16]).iter().sum::<u64>());
            a + b
        });
    }
    let (x, y) = rayon::join(
        || jobs(depth - 1, pads, seed * 2),
        || jobs(depth - 1, pads, seed * 2 + 1),
    );
    x + y
}

/// A tree of `rayon::join`s that uses no scratch.
fn plain(depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (x, y) = rayon::join(|| plain(depth - 1), || plain(depth - 1));
    x + y
}

#[cfg(not(miri))] // rayon's epoch collector is not strict-provenance clean.
#[test]
fn warmed_rayon_workers_use_scratch_without_the_heap() {
    let frames = 2_000;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(WORKERS)
        .build()
        .unwrap();
    let pads = ScratchPads::new(64 << 10);
    // The one call: every worker gets its scratch arenas and its pad.
    let warmed = pool.broadcast(|_| {
        scratch::warm();
        pads.warm().is_ok()
    });
    assert_eq!(warmed, vec![true; WORKERS]);
    // The game loop runs inside the pool (`install` from outside pushes a job onto
    // rayon's injector queue, which allocates a block every few dozen pushes: rayon's
    // cost, not scratch's). Inside, only the frames' `join`s are counted.
    let total = pool.install(|| {
        // Rayon's own first steal and wake-up paths run once before counting, with jobs
        // that use no scratch (so they warm nothing by chance).
        let mut total = plain(6);
        COUNTING.store(true, Ordering::SeqCst);
        for frame in 0..frames {
            total = total.wrapping_add(jobs(4, &pads, frame));
        }
        COUNTING.store(false, Ordering::SeqCst);
        total
    });
    let in_scratch = IN_SCRATCH_ALLOCATIONS.load(Ordering::SeqCst);
    let all = ALLOCATIONS.load(Ordering::SeqCst);
    assert!(total > 0);
    assert_eq!(
        in_scratch, 0,
        "scratch made {in_scratch} heap allocations over {frames} frames after warming every worker"
    );
    // Rayon itself may allocate the first time a worker steals a job (crossbeam's
    // epoch registers the thread): that is outside scratch, and counted apart.
    assert!(
        all <= 2 * WORKERS,
        "{all} heap allocations in all over {frames} frames"
    );
}
