//! Core benchmarks: scope-stack against the allocators a user would otherwise pick, in
//! one run, with the same batching and resetting for every contender.
//!
//! ```text
//! cargo bench -p benches --bench core            # full run (a few minutes), prints a ratio table
//! cargo bench -p benches --bench core -- --test  # smoke mode: every benchmark runs once
//! ```
//!
//! Each measured iteration does a batch of [`BATCH`] operations and then gives the memory
//! back the way that allocator does it: a child scope for scope-stack, `reset()` for
//! bumpalo, `scoped` for bump-scope, and freeing every box for `Box`. Values and results
//! go through `black_box`. After the run, the medians criterion saved are turned into
//! ratios (scope-stack time / peer time, lower is better) and printed; see
//! `docs/PERFORMANCE.md`.

mod common;

use std::hint::black_box;
use std::ptr;
use std::time::{Duration, Instant, SystemTime};

use criterion::{measurement::WallTime, BenchmarkGroup, Criterion, Throughput};
use scope_stack::LinearAllocator;

/// Operations per measured iteration.
const BATCH: usize = 1_000;
/// Finalizers unwound per iteration in the unwind benchmark.
const UNWIND: usize = 10_000;
/// Arena size for every bump allocator: far more than one batch ever needs, so no
/// contender grows or fails mid-batch.
const ARENA: usize = 1 << 20;

/// A 48-byte plain-old-data value.
#[derive(Clone, Copy)]
struct Pod48 {
    _words: [u64; 6],
}

/// A small value with a destructor that does a little real work.
struct Tick(u64);

impl Drop for Tick {
    fn drop(&mut self) {
        black_box(self.0.wrapping_add(1));
    }
}

fn group<'a>(c: &'a mut Criterion, name: &str, elements: usize) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(elements as u64));
    g
}

/// Group 1: a batch of `BATCH` small values that need no drop.
fn small<T: Copy + 'static>(c: &mut Criterion, name: &str, value: T) {
    let mut g = group(c, name, BATCH);

    let mut arena = LinearAllocator::with_capacity(ARENA).expect("arena");
    g.bench_function("scope_stack", |b| {
        arena.scope("bench", |root| {
            b.iter(|| {
                root.scope("batch", |batch| {
                    for _ in 0..BATCH {
                        black_box(batch.new_pod(black_box(value)));
                    }
                })
            })
        })
    });

    let mut bump = bumpalo::Bump::with_capacity(ARENA);
    g.bench_function("bumpalo", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                black_box(bump.alloc(black_box(value)));
            }
            bump.reset();
        })
    });

    let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(ARENA);
    g.bench_function("bump_scope", |b| {
        b.iter(|| {
            bump.scoped(|scope| {
                for _ in 0..BATCH {
                    black_box(scope.alloc(black_box(value)).into_mut());
                }
            })
        })
    });

    let mut boxes: Vec<Box<T>> = Vec::with_capacity(BATCH);
    g.bench_function("box", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                boxes.push(Box::new(black_box(value)));
            }
            black_box(&mut boxes).clear();
        })
    });

    g.finish();
}

/// Group 2: a batch of `BATCH` `String`s that must be dropped. The strings are empty, so
/// the destructor is real (it checks the capacity) but frees nothing: the heap stays out
/// of the measurement and what is left is each allocator's own cost. bumpalo never runs
/// destructors; bump-scope's `BumpBox` drops its value where it goes out of scope.
fn object_string(c: &mut Criterion) {
    let mut g = group(c, "object_string", BATCH);

    let mut arena = LinearAllocator::with_capacity(ARENA).expect("arena");
    g.bench_function("scope_stack", |b| {
        arena.scope("bench", |root| {
            b.iter(|| {
                root.scope("batch", |batch| {
                    for _ in 0..BATCH {
                        black_box(batch.new_object(black_box(String::new())));
                    }
                })
            })
        })
    });

    let mut bump = bumpalo::Bump::with_capacity(ARENA);
    g.bench_function("bumpalo_no_drop", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                black_box(bump.alloc(black_box(String::new())));
            }
            bump.reset();
        })
    });

    let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(ARENA);
    g.bench_function("bump_scope", |b| {
        b.iter(|| {
            bump.scoped(|scope| {
                for _ in 0..BATCH {
                    black_box(scope.alloc(black_box(String::new())));
                }
            })
        })
    });

    let mut boxes: Vec<Box<String>> = Vec::with_capacity(BATCH);
    g.bench_function("box", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                boxes.push(Box::new(black_box(String::new())));
            }
            black_box(&mut boxes).clear();
        })
    });

    g.finish();
}

/// Group 3: opening and closing an empty scope, against three `new_pod::<u64>` calls.
///
/// The scope's name is a plain literal. Passing it through `black_box` would store the
/// `&str` as two words and reload it as one 16-byte copy, a store-forwarding stall that
/// costs more than the scope itself and would measure the benchmark, not the crate.
fn scope_open_close(c: &mut Criterion) {
    let mut g = group(c, "scope_open_close", BATCH);

    let mut arena = LinearAllocator::with_capacity(ARENA).expect("arena");
    g.bench_function("empty_scope", |b| {
        arena.scope("bench", |root| {
            b.iter(|| {
                for _ in 0..BATCH {
                    root.scope("empty", |empty| {
                        black_box(empty);
                    });
                }
            })
        })
    });

    g.bench_function("new_pod_u64_x3", |b| {
        arena.scope("bench", |root| {
            b.iter(|| {
                root.scope("batch", |batch| {
                    for _ in 0..BATCH {
                        black_box(batch.new_pod(black_box(1u64)));
                        black_box(batch.new_pod(black_box(2u64)));
                        black_box(batch.new_pod(black_box(3u64)));
                    }
                })
            })
        })
    });

    let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(ARENA);
    g.bench_function("bump_scope_scoped", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                bump.scoped(|scope| {
                    black_box(scope);
                });
            }
        })
    });

    g.finish();
}

/// Group 4: unwinding `UNWIND` finalizers, against running the same destructors directly
/// over a slice. Only the unwinding (or the dropping) is timed; building the values is not.
fn unwind(c: &mut Criterion) {
    let mut g = group(c, "unwind_10k", UNWIND);

    let mut arena = LinearAllocator::with_capacity(ARENA).expect("arena");
    g.bench_function("scope_stack", |b| {
        arena.scope("bench", |root| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let started = root.scope("objects", |objects| {
                        for i in 0..UNWIND {
                            objects.new_object(Tick(i as u64));
                        }
                        Instant::now()
                    });
                    total += started.elapsed();
                }
                total
            })
        })
    });

    let mut ticks: Vec<Tick> = Vec::with_capacity(UNWIND);
    g.bench_function("drop_in_place", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                ticks.extend((0..UNWIND).map(|i| Tick(i as u64)));
                let started = Instant::now();
                let live: *mut [Tick] = black_box(&mut ticks[..]);
                // SAFETY: forget the elements first so the Vec never touches them again,
                // then drop each exactly once, in place; the Vec keeps its buffer.
                unsafe {
                    ticks.set_len(0);
                    ptr::drop_in_place(live);
                }
                total += started.elapsed();
            }
            total
        })
    });

    g.finish();
}

/// Group 5: collecting a filtered iterator (length unknown up front: the filter keeps
/// about a third of `BATCH * 3` numbers) into a slice in the arena. scope-stack grows
/// the slice in place at the top of the block; bumpalo builds a `bumpalo::collections::Vec`
/// (which doubles and copies as it grows) and turns it into a slice; bump-scope has an
/// `alloc_iter` of its own.
fn iter_filtered(c: &mut Criterion) {
    let mut g = group(c, "alloc_iter_filtered", BATCH);
    let keep = |n: &u32| n.is_multiple_of(3);
    let source = || (0..(BATCH * 3) as u32).map(black_box).filter(keep);

    let mut arena = LinearAllocator::with_capacity(ARENA).expect("arena");
    g.bench_function("scope_stack", |b| {
        arena.scope("bench", |root| {
            b.iter(|| {
                root.scope("batch", |batch| {
                    black_box(batch.alloc_iter(source()));
                })
            })
        })
    });

    let mut bump = bumpalo::Bump::with_capacity(ARENA);
    g.bench_function("bumpalo", |b| {
        b.iter(|| {
            {
                let v = bumpalo::collections::Vec::from_iter_in(source(), &bump);
                black_box(v.into_bump_slice());
            }
            bump.reset();
        })
    });

    let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(ARENA);
    g.bench_function("bump_scope", |b| {
        b.iter(|| {
            bump.scoped(|scope| {
                black_box(scope.alloc_iter(source()).into_mut());
            })
        })
    });

    g.finish();
}

/// Group 6 (one placement API): collecting a filtered iterator of 256 items, as a job
/// does, on every surface: a plain scope, one thread's `LocalScope`, a shared
/// `&ConcurrentScope` (which looks the thread up on the call), bumpalo and bump-scope.
/// Every surface runs the same generic `alloc_iter`, which grows the slice in place at
/// the top of the scope or of the thread's chunk. Each contender collects `PER_RESET`
/// slices between resets (a scope closed, an arena reset), so opening a concurrent
/// scope (its slot table) is spread as thinly as a plain scope's open.
fn iter_filtered_256(c: &mut Criterion) {
    const ITEMS: usize = 256;
    const PER_RESET: u64 = 256;
    let mut g = group(c, "alloc_iter_256", ITEMS);
    let source = || {
        (0..(ITEMS * 3) as u32)
            .map(black_box)
            .filter_map(|n| n.is_multiple_of(3).then_some(n / 3))
    };
    // Runs `iters` collections, `PER_RESET` at a time through `batch`, timing all.
    let batches = |iters: u64, mut batch: Box<dyn FnMut(u64) + '_>| {
        let started = Instant::now();
        let mut left = iters;
        while left > 0 {
            let n = left.min(PER_RESET);
            batch(n);
            left -= n;
        }
        started.elapsed()
    };

    let mut arena = LinearAllocator::with_capacity(ARENA).expect("arena");
    g.bench_function("scope_stack", |b| {
        b.iter_custom(|iters| {
            batches(
                iters,
                Box::new(|n| {
                    arena.scope("batch", |batch| {
                        for _ in 0..n {
                            black_box(batch.alloc_iter(source()).len());
                        }
                    })
                }),
            )
        })
    });
    g.bench_function("local_scope", |b| {
        b.iter_custom(|iters| {
            batches(
                iters,
                Box::new(|n| {
                    arena.scope("batch", |batch| {
                        batch.scope_concurrent("jobs", |jobs| {
                            let here = jobs.local();
                            for _ in 0..n {
                                black_box(here.alloc_iter(source()).len());
                            }
                        })
                    })
                }),
            )
        })
    });
    g.bench_function("concurrent_scope", |b| {
        b.iter_custom(|iters| {
            batches(
                iters,
                Box::new(|n| {
                    arena.scope("batch", |batch| {
                        batch.scope_concurrent("jobs", |jobs| {
                            for _ in 0..n {
                                black_box(jobs.alloc_iter(source()).len());
                            }
                        })
                    })
                }),
            )
        })
    });

    let mut bump = bumpalo::Bump::with_capacity(ARENA);
    g.bench_function("bumpalo", |b| {
        b.iter_custom(|iters| {
            batches(
                iters,
                Box::new(|n| {
                    for _ in 0..n {
                        let v = bumpalo::collections::Vec::from_iter_in(source(), &bump);
                        black_box(v.into_bump_slice().len());
                    }
                    bump.reset();
                }),
            )
        })
    });

    let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(ARENA);
    g.bench_function("bump_scope", |b| {
        b.iter_custom(|iters| {
            batches(
                iters,
                Box::new(|n| {
                    bump.scoped(|scope| {
                        for _ in 0..n {
                            black_box(scope.alloc_iter(source()).into_mut().len());
                        }
                    })
                }),
            )
        })
    });

    g.finish();
}

fn main() {
    let started = SystemTime::now();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .without_plots()
        .configure_from_args();

    small(&mut c, "small_u8", 7u8);
    small(&mut c, "small_u32", 7u32);
    small(&mut c, "small_u64", 7u64);
    small(&mut c, "small_pod48", Pod48 { _words: [7; 6] });
    object_string(&mut c);
    scope_open_close(&mut c);
    unwind(&mut c);
    iter_filtered(&mut c);
    iter_filtered_256(&mut c);

    c.final_summary();
    print_ratios(started);
}

// ----- ratio report -----

/// (group, our benchmark, peer benchmark, target ratio if the issue sets one)
const RATIOS: &[(&str, &str, &str, Option<f64>)] = &[
    ("small_u8", "scope_stack", "bumpalo", Some(1.0)),
    ("small_u8", "scope_stack", "bump_scope", None),
    ("small_u8", "scope_stack", "box", None),
    ("small_u32", "scope_stack", "bumpalo", Some(1.0)),
    ("small_u32", "scope_stack", "bump_scope", None),
    ("small_u32", "scope_stack", "box", None),
    ("small_u64", "scope_stack", "bumpalo", Some(1.0)),
    ("small_u64", "scope_stack", "bump_scope", None),
    ("small_u64", "scope_stack", "box", None),
    ("small_pod48", "scope_stack", "bumpalo", Some(1.0)),
    ("small_pod48", "scope_stack", "bump_scope", None),
    ("small_pod48", "scope_stack", "box", None),
    ("object_string", "scope_stack", "bumpalo_no_drop", None),
    ("object_string", "scope_stack", "bump_scope", None),
    ("object_string", "scope_stack", "box", None),
    (
        "scope_open_close",
        "empty_scope",
        "new_pod_u64_x3",
        Some(1.0),
    ),
    ("scope_open_close", "empty_scope", "bump_scope_scoped", None),
    ("unwind_10k", "scope_stack", "drop_in_place", Some(1.5)),
    ("alloc_iter_filtered", "scope_stack", "bumpalo", None),
    ("alloc_iter_filtered", "scope_stack", "bump_scope", None),
    ("alloc_iter_256", "local_scope", "scope_stack", Some(1.1)),
    (
        "alloc_iter_256",
        "concurrent_scope",
        "scope_stack",
        Some(1.1),
    ),
    ("alloc_iter_256", "scope_stack", "bumpalo", None),
    ("alloc_iter_256", "scope_stack", "bump_scope", None),
    ("alloc_iter_256", "local_scope", "bumpalo", None),
];

/// Prints `RATIOS` from the medians criterion saved during this run. Silent in `--test`
/// and `--list` modes, and skips pairs that did not both run now (say, under a filter).
fn print_ratios(run_started: SystemTime) {
    if !common::measuring() {
        return;
    }
    let Some(dir) = common::criterion_dir() else {
        return;
    };
    let median = |group: &str, bench: &str| common::fresh_median(&dir, group, bench, run_started);

    println!();
    println!("Ratios of medians (scope-stack time / peer time; below 1.0 = scope-stack faster):");
    println!(
        "{:<18} {:<16} {:<18} {:>7}  target",
        "group", "ours", "peer", "ratio"
    );
    for &(group, ours, peer, target) in RATIOS {
        let (Some(a), Some(b)) = (median(group, ours), median(group, peer)) else {
            continue;
        };
        let ratio = a / b;
        let verdict = match target {
            Some(t) if ratio <= t => format!("<= {t:.1}  met"),
            Some(t) => format!("<= {t:.1}  missed by {:.1}%", (ratio / t - 1.0) * 100.0),
            None => String::new(),
        };
        println!("{group:<18} {ours:<16} {peer:<18} {ratio:>7.2}  {verdict}");
    }
}
