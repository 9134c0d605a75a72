//! rayon jobs filling a concurrent scope: per frame, a rayon pool culls batches of
//! objects in parallel; each job places its visible list through its worker's
//! `local()` handle (in a helper that takes `&ConcurrentScope`), and the main thread
//! reads every list after the pool returns. The frame scope rewinds it all at once.
//!
//! The frame scope itself never goes to a worker (it is not `Send`; the compiler would
//! name `scope_stack::NotThreadSafe`): `install` runs inside the concurrent scope, and
//! the workers get `&ConcurrentScope`.
//!
//! Run it with `cargo run --release --example jobs`.

use rayon::prelude::*;
use scope_stack::{ConcurrentScope, LinearAllocator};

/// One job: the indices of the objects in `batch` closer than `range`, placed in the
/// concurrent scope through this worker's handle. The list lives as long as the scope.
fn visible<'c>(jobs: &'c ConcurrentScope<'_>, first: u32, batch: &[f32], range: f32) -> &'c [u32] {
    let here = jobs.local(); // this worker's chunk: no atomics per allocation
    let near = batch.iter().enumerate().filter(|&(_, d)| *d < range);
    here.alloc_iter(near.map(|(i, _)| first + i as u32))
}

fn main() {
    const OBJECTS: usize = 100_000;
    const BATCH: usize = 4096;
    let frames = if cfg!(debug_assertions) { 20 } else { 200 };
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .max(2);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool");

    let mut memory = LinearAllocator::with_capacity(8 << 20).expect("8 MiB block");
    let seen = memory.scope("level", |level| {
        // Level data: distances, placed once, read by every job of every frame.
        let distance = level.alloc_slice_fill_with(OBJECTS, |i| ((i * 7919) % 1000) as f32);
        let mut seen = 0usize;
        for frame_no in 0..frames {
            let range = 10.0 + (frame_no % 50) as f32;
            // The main thread reads the workers' lists inside the concurrent scope.
            level.scope("frame", |frame| {
                seen += frame.scope_concurrent("cull", |jobs| {
                    let lists: Vec<&[u32]> = pool.install(|| {
                        distance
                            .par_chunks(BATCH)
                            .enumerate()
                            .map(|(b, batch)| visible(jobs, (b * BATCH) as u32, batch, range))
                            .collect()
                    });
                    let count: usize = lists.iter().map(|l| l.len()).sum();
                    let first = lists.iter().flat_map(|l| l.iter()).next().copied();
                    assert!(first.is_none_or(|i| distance[i as usize] < range));
                    count
                });
            });
        }
        seen
    });
    println!("{frames} frames on {threads} rayon threads: {seen} visible objects in all");
    assert_eq!(memory.used(), 0);
}
