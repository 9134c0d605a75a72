//! Reads per second while another thread commits, and the cost of write + commit:
//! `Store` against `RwLock<HashMap<Id, T>>` and a `Vec` of `arc_swap::ArcSwap<T>`.
//!
//! A third group measures one writer's `write` + `commit` rate while 0, 1, 3 and 7
//! reader threads read (see `write_commit_with_readers`).
//!
//! Run with `cargo bench -p benches --bench store`. Each read benchmark starts a writer thread
//! that keeps replacing objects for as long as the benchmark runs, so reads always
//! compete with writes (the store's readers never wait; the RwLock's readers do).

mod common;

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use scope_stack::store::Id;
use scope_stack::{LinearAllocator, Store};

/// A small asset record: a transform and some flags (the transform is payload that
/// every write copies; the benchmarks only read the flags).
#[derive(Clone)]
#[allow(dead_code)]
struct Asset {
    position: [f32; 3],
    rotation: [f32; 4],
    flags: u64,
}

impl Asset {
    fn new(i: u64) -> Asset {
        Asset {
            position: [i as f32, 0.0, 0.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
            flags: i,
        }
    }
}

const OBJECTS: usize = 1024;
/// Reads per benchmark iteration.
const BATCH: u64 = 1024;
/// Commits per frame in the write + commit benchmark.
const COMMITS_PER_FRAME: usize = 256;

fn next(i: &mut u64) -> usize {
    // A cheap scramble, so reads do not walk memory in order.
    *i = i
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*i >> 33) as usize % OBJECTS
}

/// Batches of reads per frame: the writer thread runs for one frame at a time.
const BATCHES_PER_FRAME: u64 = 32;

/// Times `iters` batches of reads, in frames. In each frame a writer thread runs
/// `writer` until the frame's reads are done; then `end_frame` runs (untimed). Every
/// contender pays the same thread start per frame, outside the timed part.
fn frames<S: Sync>(
    iters: u64,
    state: &mut S,
    mut end_frame: impl FnMut(&mut S),
    writer: impl Fn(&S, &AtomicBool) + Sync,
    reader: impl Fn(&S, u64, &mut u64) + Sync,
) -> std::time::Duration {
    let mut total = std::time::Duration::ZERO;
    let mut left = iters;
    let mut seed = 1;
    while left > 0 {
        let n = left.min(BATCHES_PER_FRAME);
        left -= n;
        let shared = &*state;
        let stop = AtomicBool::new(false);
        total += std::thread::scope(|s| {
            s.spawn(|| writer(shared, &stop));
            let start = std::time::Instant::now();
            reader(shared, n, &mut seed);
            let t = start.elapsed();
            stop.store(true, Ordering::Relaxed);
            t
        });
        end_frame(state);
    }
    total
}

fn reads_under_write_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("store/read_under_writes");
    group.throughput(Throughput::Elements(BATCH));

    // Version slots for the live objects plus every commit of one frame.
    let versions = OBJECTS + (1 << 18);
    let need = Store::<Asset>::memory_needed(OBJECTS, versions).unwrap();
    let mut memory = LinearAllocator::with_capacity(need).unwrap();
    memory.scope("bench", |scope| {
        let mut store = scope.new_store::<Asset>(OBJECTS, versions);
        let ids: Vec<Id> = (0..OBJECTS as u64)
            .map(|i| store.create(Asset::new(i)).ok().unwrap())
            .collect();
        let ids = &ids;
        group.bench_function("scope_stack::Store", |b| {
            b.iter_custom(|iters| {
                frames(
                    iters,
                    &mut store,
                    |store| {
                        store.end_frame();
                    },
                    |store, stop| {
                        let mut i = 7;
                        while !stop.load(Ordering::Relaxed) {
                            match store.write(ids[next(&mut i)]) {
                                Some(mut d) => {
                                    d.flags += 1;
                                    let _ = store.commit(d);
                                }
                                None => std::thread::yield_now(),
                            }
                        }
                    },
                    |store, n, i| {
                        for _ in 0..n * BATCH {
                            let a = store.read(black_box(ids[next(i)])).unwrap();
                            black_box(a.flags);
                        }
                    },
                )
            })
        });
    });

    let map: RwLock<HashMap<u64, Asset>> =
        RwLock::new((0..OBJECTS as u64).map(|i| (i, Asset::new(i))).collect());
    let mut map = map;
    group.bench_function("RwLock<HashMap>", |b| {
        b.iter_custom(|iters| {
            frames(
                iters,
                &mut map,
                |_| {},
                |map, stop| {
                    let mut i = 7;
                    while !stop.load(Ordering::Relaxed) {
                        let k = next(&mut i) as u64;
                        let mut copy = map.read().unwrap()[&k].clone();
                        copy.flags += 1;
                        map.write().unwrap().insert(k, copy);
                    }
                },
                |map, n, i| {
                    for _ in 0..n * BATCH {
                        let k = black_box(next(i) as u64);
                        black_box(map.read().unwrap()[&k].flags);
                    }
                },
            )
        })
    });

    let swaps: Vec<ArcSwap<Asset>> = (0..OBJECTS as u64)
        .map(|i| ArcSwap::from_pointee(Asset::new(i)))
        .collect();
    let mut swaps = swaps;
    group.bench_function("Vec<ArcSwap>", |b| {
        b.iter_custom(|iters| {
            frames(
                iters,
                &mut swaps,
                |_| {},
                |swaps, stop| {
                    let mut i = 7;
                    while !stop.load(Ordering::Relaxed) {
                        let slot = &swaps[next(&mut i)];
                        let mut copy = Asset::clone(&slot.load());
                        copy.flags += 1;
                        slot.store(Arc::new(copy));
                    }
                },
                |swaps, n, i| {
                    for _ in 0..n * BATCH {
                        let slot = &swaps[black_box(next(i))];
                        black_box(slot.load().flags);
                    }
                },
            )
        })
    });
    group.finish();
}

/// Runs `f` with a store of `OBJECTS` assets and room for `versions` versions, in a
/// block of exactly the memory it needs, and the ids of its objects.
fn with_store(versions: usize, f: impl FnOnce(&mut Store<'_, Asset>, &[Id])) {
    let need = Store::<Asset>::memory_needed(OBJECTS, versions).unwrap();
    let mut memory = LinearAllocator::with_capacity(need).unwrap();
    memory.scope("bench", |scope| {
        let store = scope.new_store::<Asset>(OBJECTS, versions);
        let ids: Vec<Id> = (0..OBJECTS as u64)
            .map(|i| store.create(Asset::new(i)).ok().unwrap())
            .collect();
        f(store, &ids);
    });
}

fn write_and_commit(c: &mut Criterion) {
    let mut group = c.benchmark_group("store/write_commit");
    group.throughput(Throughput::Elements(COMMITS_PER_FRAME as u64));

    with_store(OBJECTS + COMMITS_PER_FRAME + 8, |store, ids| {
        // One frame of commits, then end_frame (which frees them): the full cost.
        group.bench_function("scope_stack::Store", |b| {
            let mut i = 3;
            b.iter(|| {
                for _ in 0..COMMITS_PER_FRAME {
                    let mut d = store.write(black_box(ids[next(&mut i)])).unwrap();
                    d.flags += 1;
                    store.commit(d).ok().unwrap();
                }
                store.end_frame()
            })
        });
    });

    let map: RwLock<HashMap<u64, Asset>> =
        RwLock::new((0..OBJECTS as u64).map(|i| (i, Asset::new(i))).collect());
    group.bench_function("RwLock<HashMap>", |b| {
        let mut i = 3;
        b.iter(|| {
            for _ in 0..COMMITS_PER_FRAME {
                let k = black_box(next(&mut i) as u64);
                let mut copy = map.read().unwrap()[&k].clone();
                copy.flags += 1;
                map.write().unwrap().insert(k, copy);
            }
        })
    });

    let swaps: Vec<ArcSwap<Asset>> = (0..OBJECTS as u64)
        .map(|i| ArcSwap::from_pointee(Asset::new(i)))
        .collect();
    group.bench_function("Vec<ArcSwap>", |b| {
        let mut i = 3;
        b.iter(|| {
            for _ in 0..COMMITS_PER_FRAME {
                let slot = &swaps[black_box(next(&mut i))];
                let mut copy = Asset::clone(&slot.load());
                copy.flags += 1;
                slot.store(Arc::new(copy));
            }
        })
    });
    group.finish();
}

/// Commits per frame in the write + commit benchmark with readers: enough that a frame
/// is long next to starting its reader threads.
const COMMITS_PER_READ_FRAME: u64 = 4096;

/// One writer doing `write` + `commit` while `readers` threads read random objects as
/// fast as they can. Readers never block the writer, and the versions come from the
/// store's sharded pool, so the writer's rate must not fall as readers are added.
///
/// The time reported is the writer thread's CPU time during its commits (wall time
/// where no per-thread clock exists), so that on a machine with fewer cores than
/// threads the figure shows what the readers cost the writer through shared memory,
/// not the CPU share the scheduler gives it. On a machine with a core per thread the
/// two agree.
fn write_commit_with_readers(c: &mut Criterion) {
    let mut group = c.benchmark_group("store/write_commit_readers");
    group.throughput(Throughput::Elements(1));
    with_store(
        OBJECTS + COMMITS_PER_READ_FRAME as usize + 8,
        |store, ids| {
            for readers in [0usize, 1, 3, 7] {
                group.bench_function(format!("readers_{readers}"), |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        let mut left = iters;
                        let mut i = 11;
                        while left > 0 {
                            let n = left.min(COMMITS_PER_READ_FRAME);
                            left -= n;
                            let shared = &*store;
                            let stop = AtomicBool::new(false);
                            let running = AtomicUsize::new(0);
                            total += std::thread::scope(|s| {
                                for r in 0..readers {
                                    let (stop, running) = (&stop, &running);
                                    s.spawn(move || {
                                        running.fetch_add(1, Ordering::Relaxed);
                                        let mut j = r as u64 + 100;
                                        while !stop.load(Ordering::Relaxed) {
                                            for _ in 0..64 {
                                                let a = shared.read(ids[next(&mut j)]).unwrap();
                                                black_box(a.flags);
                                            }
                                        }
                                    });
                                }
                                while running.load(Ordering::Relaxed) < readers {
                                    std::thread::yield_now();
                                }
                                let (wall, cpu) = (Instant::now(), common::thread_cpu_time());
                                for _ in 0..n {
                                    let mut d = shared.write(black_box(ids[next(&mut i)])).unwrap();
                                    d.flags += 1;
                                    shared.commit(d).ok().unwrap();
                                }
                                let took = match (cpu, common::thread_cpu_time()) {
                                    (Some(a), Some(b)) => b - a,
                                    _ => wall.elapsed(),
                                };
                                stop.store(true, Ordering::Relaxed);
                                took
                            });
                            store.end_frame();
                        }
                        total
                    })
                });
            }
        },
    );
    group.finish();
}

criterion_group!(
    benches,
    reads_under_write_load,
    write_and_commit,
    write_commit_with_readers
);
criterion_main!(benches);
