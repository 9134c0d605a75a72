//! A frame pipeline: a producer builds each frame's output (2,000 draw commands and 200
//! formatted labels) with worker jobs, a consumer thread reads it and drops it, with up
//! to 3 frames in flight.
//!
//! Contenders, in one run:
//! - `slots`: a `Slots` ring of 3 and `load_concurrent_wait` (jobs place straight into
//!   the frame's `ConcurrentScope`; the consumer drops the `Loaded`, freeing the slot).
//! - `bump_ring`: a ring of 3 frames of `bumpalo::Bump`s (one per job), recycled
//!   through a channel and reset on reuse.
//! - `herd_copy`: one `bumpalo_herd::Herd` reset every frame; the producer copies the
//!   frame into owned buffers (`Vec`, `String`) for the consumer.
//! - `vec`: a `Vec` per job per frame on the global heap, sent as they are.
//!
//! Jobs run on a rayon pool of 1, 2, ... workers (`PIPELINE_THREADS=1,2` to choose; up to
//! `available_parallelism()`); the producer itself is one of them, and splits a frame
//! with `rayon::join`. One criterion iteration is one frame through the pipeline. At
//! the end it prints the median per frame, the ratios, and the global-heap allocations
//! per frame after warm-up (`stats_alloc`'s counting global allocator, which counts
//! every thread's calls: an allocation or a reallocation counts one).
//!
//! Run with `cargo bench -p benches --bench pipeline -- --warm-up-time 1 --measurement-time 3`.

mod common;

use std::alloc::System;
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant, SystemTime};

use bumpalo::Bump;
use criterion::Criterion;
use scope_stack::{slot_root, ConcurrentScope, LinearAllocator, Loaded, Shared};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

// ----- counting the global heap -----

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

// ----- the frame's content -----

const DRAWS: usize = 2_000;
const LABELS: usize = 200;
const IN_FLIGHT: usize = 3;
/// The most jobs a frame is split into.
const MAX_JOBS: usize = 16;

#[derive(Clone, Copy)]
struct Draw {
    mesh: u32,
    material: u32,
    transform: [f32; 6],
}

fn draw(frame: usize, i: usize) -> Draw {
    Draw {
        mesh: (i % 97) as u32,
        material: (frame % 13) as u32,
        transform: [i as f32, frame as f32, 1.0, 0.0, 0.0, 1.0],
    }
}

/// Job `j` of `jobs` makes draws `range(DRAWS)` and labels `range(LABELS)`.
fn range(total: usize, j: usize, jobs: usize) -> std::ops::Range<usize> {
    total * j / jobs..total * (j + 1) / jobs
}

/// Runs `f(0..n)` as `n` rayon jobs (a tree of `join`s, which allocates nothing) and
/// returns their results in order.
fn split<T: Send>(n: usize, f: &(impl Fn(usize) -> T + Sync)) -> [Option<T>; MAX_JOBS] {
    fn go<T: Send>(lo: usize, hi: usize, f: &(impl Fn(usize) -> T + Sync), out: &mut [Option<T>]) {
        if hi - lo == 1 {
            out[0] = Some(f(lo));
            return;
        }
        let mid = (lo + hi) / 2;
        let (a, b) = out.split_at_mut(mid - lo);
        rayon::join(|| go(lo, mid, f, a), || go(mid, hi, f, b));
    }
    let mut out: [Option<T>; MAX_JOBS] = std::array::from_fn(|_| None);
    go(0, n, f, &mut out[..n]);
    out
}

/// What the consumer computes from a frame (so nothing is optimised away).
fn read(draws: impl Iterator<Item = Draw>, labels: impl Iterator<Item = usize>) -> u64 {
    let d: u64 = draws
        .map(|d| d.mesh as u64 + d.material as u64 + d.transform[0] as u64)
        .sum();
    d + labels.map(|l| l as u64).sum::<u64>()
}

// ----- ours: slots -----

struct Frame<'s> {
    draws: [&'s [Draw]; MAX_JOBS],
    labels: [&'s [&'s str]; MAX_JOBS],
    jobs: usize,
}
slot_root!(struct FrameRoot = for<'s> Frame<'s>);

fn build_slots<'x>(scope: &'x ConcurrentScope<'x>, frame: usize, jobs: usize) -> Frame<'x> {
    let parts = split(jobs, &|j| {
        let here = scope.local();
        let draws = &*here.alloc_slice_fill_with(range(DRAWS, j, jobs).len(), |i| draw(frame, i));
        let labels: [&str; LABELS] = std::array::from_fn(|i| {
            if range(LABELS, j, jobs).contains(&i) {
                &*here.alloc_fmt(format_args!("enemy {i} hp {}", (frame + i) % 100))
            } else {
                ""
            }
        });
        let r = range(LABELS, j, jobs);
        (draws, &*here.alloc_slice_copy(&labels[r]))
    });
    let mut out = Frame {
        draws: [&[]; MAX_JOBS],
        labels: [&[]; MAX_JOBS],
        jobs,
    };
    for (j, p) in parts.into_iter().take(jobs).enumerate() {
        let (d, l) = p.expect("every job ran");
        out.draws[j] = d;
        out.labels[j] = l;
    }
    out
}

fn run_slots(pool: &rayon::ThreadPool, jobs: usize, frames: usize) -> (Duration, usize) {
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("bench", |scope| {
        let ring = scope.new_slots("frames", IN_FLIGHT, 256 << 10);
        std::thread::scope(|t| {
            let (send, receive) = sync_channel::<Loaded<'_, FrameRoot, Shared>>(IN_FLIGHT);
            let consumer = t.spawn(move || {
                let mut sum = 0;
                for f in receive {
                    sum += f.with(|f| {
                        read(
                            f.draws[..f.jobs].iter().flat_map(|d| d.iter().copied()),
                            f.labels[..f.jobs]
                                .iter()
                                .flat_map(|l| l.iter().map(|s| s.len())),
                        )
                    });
                }
                sum
            });
            let timed = pool.install(|| {
                produce(frames, |n| {
                    let frame = ring
                        .load_concurrent_wait::<FrameRoot>("frame", |s| build_slots(s, n, jobs));
                    send.send(frame).unwrap();
                })
            });
            drop(send);
            black_box(consumer.join().unwrap());
            timed
        })
    })
}

/// Runs `frame(n)` for `frames` frames after a warm-up; returns the time and the heap
/// allocations of the timed frames.
fn produce(frames: usize, mut frame: impl FnMut(usize)) -> (Duration, usize) {
    for n in 0..WARM_UP {
        frame(n);
    }
    let region = Region::new(GLOBAL);
    let start = Instant::now();
    for n in WARM_UP..WARM_UP + frames {
        frame(n);
    }
    let elapsed = start.elapsed();
    let change = region.change();
    (elapsed, change.allocations + change.reallocations)
}

const WARM_UP: usize = 8;

// ----- a ring of bumpalo::Bump -----

/// A frame built in its own bumps: raw views into them, sent together with the bumps.
struct BumpFrame {
    bumps: Vec<Bump>,
    draws: Vec<(*const Draw, usize)>,
    labels: Vec<(*const &'static str, usize)>,
}
// SAFETY: the views point into `bumps`, which the frame owns and moves with it; bumpalo
// never moves a chunk, so the views stay valid until the bumps are reset or dropped.
unsafe impl Send for BumpFrame {}

fn run_bump_ring(pool: &rayon::ThreadPool, jobs: usize, frames: usize) -> (Duration, usize) {
    std::thread::scope(|t| {
        let (send, receive) = sync_channel::<BumpFrame>(IN_FLIGHT);
        let (give_back, free) = sync_channel::<BumpFrame>(IN_FLIGHT);
        for _ in 0..IN_FLIGHT {
            give_back
                .send(BumpFrame {
                    bumps: (0..jobs).map(|_| Bump::with_capacity(64 << 10)).collect(),
                    draws: Vec::with_capacity(jobs),
                    labels: Vec::with_capacity(jobs),
                })
                .unwrap();
        }
        let consumer = t.spawn(move || {
            let mut sum = 0;
            for f in receive {
                // SAFETY: the views point into the frame's own bumps (see `BumpFrame`).
                let draws = f.draws.iter().flat_map(|&(p, n)| {
                    unsafe { std::slice::from_raw_parts(p, n) }.iter().copied()
                });
                // SAFETY: as above.
                let labels = f.labels.iter().flat_map(|&(p, n)| {
                    unsafe { std::slice::from_raw_parts(p, n) }
                        .iter()
                        .map(|s| s.len())
                });
                sum += read(draws, labels);
                give_back.send(f).ok();
            }
            sum
        });
        let mut free = free;
        let free_ref = &mut free;
        let timed = pool.install(|| {
            // Held as `&mut`: a `Receiver` is `Send`, not `Sync`.
            let free = &mut *free_ref;
            produce(frames, |n| {
                let mut f = free.recv().unwrap();
                f.draws.clear();
                f.labels.clear();
                for b in &mut f.bumps {
                    b.reset();
                }
                let bumps: Vec<&mut Bump> = f.bumps.iter_mut().collect::<Vec<_>>();
                let parts = bump_parts(bumps, n, jobs);
                for ((d, dn), (l, ln)) in parts {
                    f.draws.push((std::ptr::with_exposed_provenance(d), dn));
                    f.labels.push((std::ptr::with_exposed_provenance(l), ln));
                }
                send.send(f).unwrap();
            })
        });
        drop(send);
        black_box(consumer.join().unwrap());
        timed
    })
}

/// A job's draws and labels, as (exposed address, length) pairs: what crosses back from
/// the job to the producer.
type Views = ((usize, usize), (usize, usize));

/// Each job fills its own bump; returns raw views of what it placed.
fn bump_parts(bumps: Vec<&mut Bump>, frame: usize, jobs: usize) -> Vec<Views> {
    struct Cells<'b>(Vec<std::sync::Mutex<Option<&'b mut Bump>>>);
    let cells = Cells(
        bumps
            .into_iter()
            .map(|b| std::sync::Mutex::new(Some(b)))
            .collect(),
    );
    let parts = split(jobs, &|j| {
        let bump: &mut Bump = cells.0[j].lock().unwrap().take().unwrap();
        let draws = bump.alloc_slice_fill_with(range(DRAWS, j, jobs).len(), |i| draw(frame, i));
        let r = range(LABELS, j, jobs);
        let bump: &Bump = bump;
        let labels: &[&str] = bump.alloc_slice_fill_with(r.len(), |k| {
            let i = r.start + k;
            let mut s = bumpalo::collections::String::new_in(bump);
            let _ = write!(s, "enemy {i} hp {}", (frame + i) % 100);
            s.into_bump_str()
        });
        // SAFETY: the strings live in the bump, which outlives the views (see
        // `BumpFrame`); `'static` only names that for the raw view's type.
        let labels: &[&'static str] =
            unsafe { std::mem::transmute::<&[&str], &[&'static str]>(labels) };
        (
            (draws.as_ptr().expose_provenance(), draws.len()),
            (labels.as_ptr().expose_provenance(), labels.len()),
        )
    });
    parts.into_iter().take(jobs).map(|p| p.unwrap()).collect()
}

// ----- bumpalo-herd, reset per frame, copied out -----

/// A frame copied into owned buffers.
struct OwnedFrame {
    draws: Vec<Draw>,
    text: String,
    label_ends: Vec<usize>,
}

fn run_herd(pool: &rayon::ThreadPool, jobs: usize, frames: usize) -> (Duration, usize) {
    let mut herd = bumpalo_herd::Herd::new();
    std::thread::scope(|t| {
        let (send, receive) = sync_channel::<OwnedFrame>(IN_FLIGHT);
        let consumer = t.spawn(move || {
            let mut sum = 0;
            for f in receive {
                let mut start = 0;
                let labels = f.label_ends.iter().map(|&end| {
                    let len = f.text[start..end].len();
                    start = end;
                    len
                });
                sum += read(f.draws.iter().copied(), labels);
            }
            sum
        });
        let timed = pool.install(|| {
            produce(frames, |n| {
                let owned = {
                    let h = &herd;
                    let parts = split(jobs, &|j| {
                        let member = h.get();
                        let draws: &[Draw] = member
                            .alloc_slice_fill_with(range(DRAWS, j, jobs).len(), |i| draw(n, i));
                        let r = range(LABELS, j, jobs);
                        let bump = member.as_bump();
                        let labels: &[&str] = member.alloc_slice_fill_with(r.len(), |k| {
                            let i = r.start + k;
                            let mut s = bumpalo::collections::String::new_in(bump);
                            let _ = write!(s, "enemy {i} hp {}", (n + i) % 100);
                            s.into_bump_str()
                        });
                        // Copy out before the member goes back to the herd.
                        let mut text = String::new();
                        let mut ends = Vec::with_capacity(labels.len());
                        for l in labels {
                            text.push_str(l);
                            ends.push(text.len());
                        }
                        (draws.to_vec(), text, ends)
                    });
                    let mut owned = OwnedFrame {
                        draws: Vec::with_capacity(DRAWS),
                        text: String::new(),
                        label_ends: Vec::with_capacity(LABELS),
                    };
                    for (d, text, ends) in parts.into_iter().take(jobs).map(|p| p.unwrap()) {
                        owned.draws.extend_from_slice(&d);
                        let base = owned.text.len();
                        owned.text.push_str(&text);
                        owned.label_ends.extend(ends.iter().map(|e| e + base));
                    }
                    owned
                };
                herd.reset();
                send.send(owned).unwrap();
            })
        });
        drop(send);
        black_box(consumer.join().unwrap());
        timed
    })
}

// ----- a Vec per job per frame -----

fn run_vec(pool: &rayon::ThreadPool, jobs: usize, frames: usize) -> (Duration, usize) {
    type Part = (Vec<Draw>, Vec<String>);
    std::thread::scope(|t| {
        let (send, receive) = sync_channel::<Vec<Part>>(IN_FLIGHT);
        let consumer = t.spawn(move || {
            let mut sum = 0;
            for f in receive {
                sum += read(
                    f.iter().flat_map(|p| p.0.iter().copied()),
                    f.iter().flat_map(|p| p.1.iter().map(|s| s.len())),
                );
            }
            sum
        });
        let timed = pool.install(|| {
            produce(frames, |n| {
                let parts = split(jobs, &|j| {
                    let draws: Vec<Draw> = range(DRAWS, j, jobs).map(|i| draw(n, i)).collect();
                    let labels: Vec<String> = range(LABELS, j, jobs)
                        .map(|i| format!("enemy {i} hp {}", (n + i) % 100))
                        .collect();
                    (draws, labels)
                });
                send.send(parts.into_iter().take(jobs).map(|p| p.unwrap()).collect())
                    .unwrap();
            })
        });
        drop(send);
        black_box(consumer.join().unwrap());
        timed
    })
}

// ----- the run -----

type Runner = fn(&rayon::ThreadPool, usize, usize) -> (Duration, usize);
const CONTENDERS: [(&str, Runner); 4] = [
    ("slots", run_slots),
    ("bump_ring", run_bump_ring),
    ("herd_copy", run_herd),
    ("vec", run_vec),
];

fn thread_counts() -> Vec<usize> {
    if let Ok(list) = std::env::var("PIPELINE_THREADS") {
        return list
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect();
    }
    let cpus = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_JOBS);
    let mut out = vec![1];
    let mut n = 2;
    while n <= cpus {
        out.push(n);
        n *= 2;
    }
    out
}

fn main() {
    let started = SystemTime::now();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10)
        .without_plots()
        .configure_from_args();
    let counts = thread_counts();
    let mut heap: Vec<(usize, &str, f64)> = Vec::new();
    for &threads in &counts {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut group = c.benchmark_group(format!("pipeline/{threads}"));
        for (name, run) in CONTENDERS {
            group.bench_function(name, |b| {
                b.iter_custom(|frames| run(&pool, threads, frames as usize).0);
            });
            let frames = 200;
            let (_, allocations) = run(&pool, threads, frames);
            heap.push((threads, name, allocations as f64 / frames as f64));
        }
        group.finish();
    }
    c.final_summary();
    if !common::measuring() {
        return;
    }
    let Some(dir) = common::criterion_dir() else {
        return;
    };
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("\nMedian us per frame ({DRAWS} draws + {LABELS} labels, {IN_FLIGHT} in flight), {cpus} CPUs:");
    print!("{:>7}", "workers");
    for (name, _) in CONTENDERS {
        print!(" {name:>10}");
    }
    println!("  slots / peer (below 1 = slots faster)");
    for &threads in &counts {
        let group = format!("pipeline/{threads}");
        let per: Vec<Option<f64>> = CONTENDERS
            .iter()
            .map(|(name, _)| common::fresh_median(&dir, &group, name, started))
            .collect();
        print!("{threads:>7}");
        for v in &per {
            print!(
                " {:>10}",
                v.map_or("-".to_string(), |ns| format!("{:.1}", ns / 1e3))
            );
        }
        let ratios: Vec<String> = per[1..]
            .iter()
            .zip(&CONTENDERS[1..])
            .filter_map(|(p, (name, _))| Some(format!("{name} {:.2}", per[0]? / (*p)?)))
            .collect();
        println!("  {}", ratios.join(", "));
    }
    println!("\nGlobal-heap allocations per frame after warm-up (all threads):");
    for (threads, name, per_frame) in heap {
        println!("  {threads} worker(s) {name:>10}: {per_frame:.1}");
    }
}
