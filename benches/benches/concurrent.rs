//! Many threads allocating into one arena: `ConcurrentScope` (through `&self` and
//! through `local()`) against blink-alloc's `SyncBlinkAlloc` + `local()`, bumpalo-herd,
//! bump-scope's `BumpPool` and `Box`, in one run, at 1, 2, 4, ... threads up to
//! `available_parallelism()` (set `CONCURRENT_THREADS=1,2,8` to choose).
//!
//! Three workloads: a `u64`, a 48-byte struct, and a copied slice of 16 `u32`. One
//! criterion iteration is one allocation on every thread at once, so the figure to
//! compare is the aggregate: the median time per iteration divided by the threads. Each
//! arena is reset between rounds of `ROUND` allocations per thread, outside the timed
//! part (each thread times its own loop; a round counts as long as its slowest
//! thread). Every arena lives for a whole benchmark point, so after the warm-up none
//! pays for fresh pages. `Box` frees its objects at the end of each round, untimed.
//!
//! Run with `cargo bench -p benches --bench concurrent`. A table of aggregate ns per allocation,
//! allocations per second and the ratios against `local()` is printed at the end.

mod common;

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, Throughput};
use scope_stack::{ConcurrentConfig, ConcurrentScope, LinearAllocator};

/// A 48-byte game object (its fields are only written: the benchmark measures placing it).
#[allow(dead_code)]
#[derive(Clone, Copy)]
struct Obj48 {
    position: [f32; 4],
    velocity: [f32; 4],
    id: u64,
    flags: u64,
}

#[derive(Clone, Copy, PartialEq)]
enum Work {
    U64,
    Obj48,
    Slice16,
}

impl Work {
    fn name(self) -> &'static str {
        match self {
            Work::U64 => "u64",
            Work::Obj48 => "obj48",
            Work::Slice16 => "slice16",
        }
    }

    /// Bytes one allocation takes (for sizing the block).
    fn bytes(self) -> usize {
        match self {
            Work::U64 => 8,
            Work::Obj48 => 48,
            Work::Slice16 => 64,
        }
    }
}

/// Allocations per thread between two resets.
fn round() -> u64 {
    if common::measuring() || probe_rounds().is_some() {
        20_000
    } else {
        100
    }
}

fn obj(i: u64) -> Obj48 {
    Obj48 {
        position: [i as f32; 4],
        velocity: [1.0; 4],
        id: i,
        flags: i ^ 7,
    }
}

/// One thread's allocator handle: what each contender gives a worker.
trait Handle {
    fn u64(&self, v: u64) -> *const u8;
    fn obj(&self, v: Obj48) -> *const u8;
    fn slice(&self, v: &[u32; 16]) -> *const u8;
}

/// `n` allocations of `work`, timed.
#[inline(never)]
fn alloc_loop<H: Handle>(h: &H, work: Work, seed: u64, n: u64) -> Duration {
    let src: [u32; 16] = std::array::from_fn(|i| i as u32 + seed as u32);
    let t0 = Instant::now();
    match work {
        Work::U64 => {
            for i in 0..n {
                black_box(h.u64(black_box(seed + i)));
            }
        }
        Work::Obj48 => {
            for i in 0..n {
                black_box(h.obj(obj(black_box(seed + i))));
            }
        }
        Work::Slice16 => {
            for _ in 0..n {
                black_box(h.slice(black_box(&src)));
            }
        }
    }
    t0.elapsed()
}

/// Runs `per_thread(t)` on `threads` threads released together; returns the longest
/// time any of them reported.
fn round_on(threads: usize, per_thread: impl Fn(usize) -> Duration + Sync) -> Duration {
    let start = Barrier::new(threads);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (start, per_thread) = (&start, &per_thread);
                s.spawn(move || {
                    start.wait();
                    per_thread(t)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .max()
            .unwrap_or_default()
    })
}

/// Splits `iters` allocations per thread into rounds; `round_fn(n)` runs one round of
/// `n` per thread and returns its time.
fn rounds(iters: u64, mut round_fn: impl FnMut(u64) -> Duration) -> Duration {
    let mut left = iters;
    let mut total = Duration::ZERO;
    while left > 0 {
        let n = left.min(round());
        total += round_fn(n);
        left -= n;
    }
    total
}

// ----- scope-stack -----

struct Shared<'a, 'e>(&'a ConcurrentScope<'e>);
impl Handle for Shared<'_, '_> {
    #[inline(always)]
    fn u64(&self, v: u64) -> *const u8 {
        (self.0.new_pod(v) as *const u64).cast()
    }
    #[inline(always)]
    fn obj(&self, v: Obj48) -> *const u8 {
        (self.0.new_pod(v) as *const Obj48).cast()
    }
    #[inline(always)]
    fn slice(&self, v: &[u32; 16]) -> *const u8 {
        self.0.alloc_slice_copy(v).as_ptr().cast()
    }
}

impl Handle for scope_stack::LocalScope<'_> {
    #[inline(always)]
    fn u64(&self, v: u64) -> *const u8 {
        (self.new_pod(v) as *const u64).cast()
    }
    #[inline(always)]
    fn obj(&self, v: Obj48) -> *const u8 {
        (self.new_pod(v) as *const Obj48).cast()
    }
    #[inline(always)]
    fn slice(&self, v: &[u32; 16]) -> *const u8 {
        self.alloc_slice_copy(v).as_ptr().cast()
    }
}

/// A block big enough for one round of `work` on `threads` threads.
fn block_for(threads: usize, work: Work) -> LinearAllocator {
    let bytes = threads * round() as usize * (work.bytes() + 16) + (1 << 20);
    LinearAllocator::with_capacity(bytes).unwrap()
}

fn scope_stack_run(
    memory: &mut LinearAllocator,
    threads: usize,
    work: Work,
    iters: u64,
    via: Via,
    chunk: Option<usize>,
) -> Duration {
    rounds(iters, |n| {
        memory.scope("bench", |scope| {
            let mut config = ConcurrentConfig::new().threads(threads.max(32) + 2);
            if let Some(bytes) = chunk {
                config = config.chunk_size(bytes);
            }
            scope.scope_concurrent_with("jobs", config, |jobs| {
                round_on(threads, |t| match via {
                    Via::Local => alloc_loop(&jobs.local(), work, (t as u64) << 40, n),
                    Via::Shared => {
                        // A fresh thread's first look-up registers its thread index,
                        // which may wait for the last round's threads to exit (see
                        // docs/PERFORMANCE.md). Every other contender gets its
                        // per-thread handle before the timer starts; so does this one.
                        let _ = jobs.local();
                        alloc_loop(&Shared(jobs), work, (t as u64) << 40, n)
                    }
                    Via::SharedCold => alloc_loop(&Shared(jobs), work, (t as u64) << 40, n),
                })
            })
        })
    })
}

/// How the scope-stack contenders reach the concurrent scope.
#[derive(Clone, Copy)]
enum Via {
    /// `ConcurrentScope::local()`, taken before the timer starts.
    Local,
    /// `&ConcurrentScope`, with the thread registered before the timer starts.
    Shared,
    /// `&ConcurrentScope` on a fresh thread: its first allocation registers it, inside
    /// the timed loop (the probe's `&self-cold`).
    SharedCold,
}

// ----- independent per-thread scope stacks (the reference: no sharing at all) -----

/// One block per thread, each with a scope per round. With `rotate`, thread `t` gets
/// block `(t + r) % threads` in round `r` (the probe's experiment: memory that another
/// core wrote in the round before); otherwise thread `t` always gets block `t`.
fn stacks_run(
    blocks: &mut [LinearAllocator],
    threads: usize,
    work: Work,
    iters: u64,
    rotate: Option<&mut usize>,
) -> Duration {
    let mut shift = rotate.as_ref().map_or(0, |r| **r);
    let d = rounds(iters, |n| {
        let cells: Vec<std::sync::Mutex<Option<&mut LinearAllocator>>> = blocks[..threads]
            .iter_mut()
            .map(|b| std::sync::Mutex::new(Some(b)))
            .collect();
        let d = round_on(threads, |t| {
            let block = cells[(t + shift) % threads].lock().unwrap().take().unwrap();
            block.scope("bench", |scope| {
                alloc_loop(&StackH(scope), work, (t as u64) << 40, n)
            })
        });
        shift = shift.wrapping_add(rotate.is_some() as usize);
        d
    });
    if let Some(r) = rotate {
        *r = shift;
    }
    d
}

struct StackH<'a, 'c, 'e>(&'a scope_stack::Scope<'c, 'e>);
impl Handle for StackH<'_, '_, '_> {
    #[inline(always)]
    fn u64(&self, v: u64) -> *const u8 {
        (self.0.new_pod(v) as *const u64).cast()
    }
    #[inline(always)]
    fn obj(&self, v: Obj48) -> *const u8 {
        (self.0.new_pod(v) as *const Obj48).cast()
    }
    #[inline(always)]
    fn slice(&self, v: &[u32; 16]) -> *const u8 {
        self.0.alloc_slice_copy(v).as_ptr().cast()
    }
}

// ----- blink-alloc -----

struct BlinkH<'a>(blink_alloc::Blink<blink_alloc::LocalBlinkAlloc<'a>>);
impl Handle for BlinkH<'_> {
    #[inline(always)]
    fn u64(&self, v: u64) -> *const u8 {
        (self.0.put_no_drop(v) as *const u64).cast()
    }
    #[inline(always)]
    fn obj(&self, v: Obj48) -> *const u8 {
        (self.0.put_no_drop(v) as *const Obj48).cast()
    }
    #[inline(always)]
    fn slice(&self, v: &[u32; 16]) -> *const u8 {
        self.0.copy_slice(v).as_ptr().cast()
    }
}

fn blink_run(
    shared: &mut blink_alloc::SyncBlinkAlloc,
    threads: usize,
    work: Work,
    iters: u64,
) -> Duration {
    rounds(iters, |n| {
        let d = round_on(threads, |t| {
            let h = BlinkH(blink_alloc::Blink::new_in(shared.local()));
            alloc_loop(&h, work, (t as u64) << 40, n)
        });
        shared.reset();
        d
    })
}

// ----- bumpalo-herd -----

struct HerdH<'h>(bumpalo_herd::Member<'h>);
impl Handle for HerdH<'_> {
    #[inline(always)]
    fn u64(&self, v: u64) -> *const u8 {
        (self.0.alloc(v) as *const u64).cast()
    }
    #[inline(always)]
    fn obj(&self, v: Obj48) -> *const u8 {
        (self.0.alloc(v) as *const Obj48).cast()
    }
    #[inline(always)]
    fn slice(&self, v: &[u32; 16]) -> *const u8 {
        self.0.alloc_slice_copy(v).as_ptr().cast()
    }
}

fn herd_run(herd: &mut bumpalo_herd::Herd, threads: usize, work: Work, iters: u64) -> Duration {
    rounds(iters, |n| {
        let d = round_on(threads, |t| {
            alloc_loop(&HerdH(herd.get()), work, (t as u64) << 40, n)
        });
        herd.reset();
        d
    })
}

// ----- bump-scope -----

struct PoolH<'b>(bump_scope::BumpPoolGuard<'b>);
impl Handle for PoolH<'_> {
    #[inline(always)]
    fn u64(&self, v: u64) -> *const u8 {
        (self.0.alloc(v).into_ref() as *const u64).cast()
    }
    #[inline(always)]
    fn obj(&self, v: Obj48) -> *const u8 {
        (self.0.alloc(v).into_ref() as *const Obj48).cast()
    }
    #[inline(always)]
    fn slice(&self, v: &[u32; 16]) -> *const u8 {
        self.0.alloc_slice_copy(v).into_ref().as_ptr().cast()
    }
}

fn bump_pool_run(
    pool: &mut bump_scope::BumpPool,
    threads: usize,
    work: Work,
    iters: u64,
) -> Duration {
    rounds(iters, |n| {
        let d = round_on(threads, |t| {
            alloc_loop(&PoolH(pool.get()), work, (t as u64) << 40, n)
        });
        pool.reset();
        d
    })
}

// ----- Box -----

struct BoxH(std::cell::RefCell<Vec<Box<dyn std::any::Any>>>);
impl Handle for BoxH {
    #[inline(always)]
    fn u64(&self, v: u64) -> *const u8 {
        let b = Box::new(v);
        let p = (&*b as *const u64).cast();
        self.0.borrow_mut().push(b);
        p
    }
    #[inline(always)]
    fn obj(&self, v: Obj48) -> *const u8 {
        let b = Box::new(v);
        let p = (&*b as *const Obj48).cast();
        self.0.borrow_mut().push(b);
        p
    }
    #[inline(always)]
    fn slice(&self, v: &[u32; 16]) -> *const u8 {
        let b: Box<[u32]> = Box::from(&v[..]);
        let p = b.as_ptr().cast();
        self.0.borrow_mut().push(Box::new(b));
        p
    }
}

fn box_run(threads: usize, work: Work, iters: u64) -> Duration {
    rounds(iters, |n| {
        round_on(threads, |t| {
            // The boxes are kept (so the allocator cannot reuse one at once) and freed
            // after the timed loop.
            let h = BoxH(std::cell::RefCell::new(Vec::with_capacity(n as usize)));
            alloc_loop(&h, work, (t as u64) << 40, n)
        })
    })
}

// ----- driver -----

fn thread_counts() -> Vec<usize> {
    if let Ok(list) = std::env::var("CONCURRENT_THREADS") {
        return list
            .split(',')
            .filter_map(|n| n.trim().parse().ok())
            .collect();
    }
    let max = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut counts: Vec<usize> = std::iter::successors(Some(1), |n| Some(n * 2))
        .take_while(|&n| n < max)
        .collect();
    counts.push(max);
    counts
}

const CONTENDERS: [&str; 7] = [
    "local()",
    "&self",
    "stacks",
    "blink-alloc",
    "bumpalo-herd",
    "BumpPool",
    "Box",
];

fn bench_point(c: &mut Criterion, work: Work, threads: usize) {
    let mut g = c.benchmark_group(format!("concurrent/{}/{threads}", work.name()));
    g.throughput(Throughput::Elements(threads as u64));
    // Each arena lives for the whole point and is reset between rounds, so no contender
    // pays for fresh pages after the warm-up.
    let mut memory = block_for(threads, work);
    g.bench_function(CONTENDERS[0], |b| {
        b.iter_custom(|i| scope_stack_run(&mut memory, threads, work, i, Via::Local, None))
    });
    g.bench_function(CONTENDERS[1], |b| {
        b.iter_custom(|i| scope_stack_run(&mut memory, threads, work, i, Via::Shared, None))
    });
    let mut blocks = stack_blocks(threads, work);
    g.bench_function(CONTENDERS[2], |b| {
        b.iter_custom(|i| stacks_run(&mut blocks, threads, work, i, None))
    });
    let mut blink = blink_alloc::SyncBlinkAlloc::new();
    g.bench_function(CONTENDERS[3], |b| {
        b.iter_custom(|i| blink_run(&mut blink, threads, work, i))
    });
    let mut herd = bumpalo_herd::Herd::new();
    g.bench_function(CONTENDERS[4], |b| {
        b.iter_custom(|i| herd_run(&mut herd, threads, work, i))
    });
    let mut pool = bump_scope::BumpPool::new();
    g.bench_function(CONTENDERS[5], |b| {
        b.iter_custom(|i| bump_pool_run(&mut pool, threads, work, i))
    });
    g.bench_function(CONTENDERS[6], |b| {
        b.iter_custom(|i| box_run(threads, work, i))
    });
    g.finish();
}

/// One block per thread, each big enough for a round of `work`.
fn stack_blocks(threads: usize, work: Work) -> Vec<LinearAllocator> {
    (0..threads)
        .map(|_| {
            LinearAllocator::with_capacity(round() as usize * (work.bytes() + 16) + (64 << 10))
                .unwrap()
        })
        .collect()
}

fn main() {
    if let Some(n) = probe_rounds() {
        probe(n);
        return;
    }
    let started = SystemTime::now();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(10)
        .without_plots()
        .configure_from_args();
    let counts = thread_counts();
    let mut points = Vec::new();
    for work in [Work::U64, Work::Obj48, Work::Slice16] {
        for &threads in &counts {
            bench_point(&mut c, work, threads);
            points.push((work, threads));
        }
    }
    c.final_summary();
    print_table(&points, started);
}

/// Prints aggregate ns per allocation, millions of allocations per second through
/// `local()`, and `local()`'s ratios against each other contender.
fn print_table(points: &[(Work, usize)], started: SystemTime) {
    if !common::measuring() {
        return;
    }
    let Some(dir) = common::criterion_dir() else {
        return;
    };
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!();
    println!("Aggregate ns per allocation (median iteration / threads), {cpus} CPUs:");
    print!("{:<8} {:>7}", "work", "threads");
    for name in CONTENDERS {
        print!(" {name:>12}");
    }
    println!(
        " {:>10}  local() / peer (below 1 = local() faster)",
        "local Ma/s"
    );
    for &(work, threads) in points {
        let group = format!("concurrent/{}/{threads}", work.name());
        let per: Vec<Option<f64>> = CONTENDERS
            .iter()
            .map(|name| {
                common::fresh_median(&dir, &group, name, started).map(|ns| ns / threads as f64)
            })
            .collect();
        print!("{:<8} {:>7}", work.name(), threads);
        for v in &per {
            print!(
                " {:>12}",
                v.map_or("-".to_string(), |ns| format!("{ns:.2}"))
            );
        }
        let ratios: Vec<String> = per[1..]
            .iter()
            .zip(&CONTENDERS[1..])
            .filter_map(|(p, name)| Some(format!("{name} {:.2}", per[0]? / (*p)?)))
            .collect();
        println!(
            " {:>10}  {}",
            per[0].map_or("-".to_string(), |ns| format!("{:.0}", 1e3 / ns)),
            ratios.join(", ")
        );
    }
}

// ----- the probe: counting experiments, rounds interleaved -----

/// `CONCURRENT_PROBE=<rounds>` runs the probe instead of criterion.
fn probe_rounds() -> Option<usize> {
    std::env::var("CONCURRENT_PROBE").ok()?.parse().ok()
}

/// The probe's contenders: the criterion ones (less `Box`) plus three experiments.
/// `&self-cold` is `&self` without registering the thread before the timer starts.
/// `stacks-rot` is `stacks` with the blocks handed round the threads each round, so
/// each thread writes memory another core wrote last; `local-1chunk` is `local()` with
/// a chunk big enough for a thread's whole round, so each thread claims once per round.
const PROBE: [&str; 9] = [
    "local()",
    "&self",
    "&self-cold",
    "stacks",
    "stacks-rot",
    "local-1chunk",
    "blink-alloc",
    "bumpalo-herd",
    "BumpPool",
];

/// Runs about `rounds` rounds of every probe contender at each thread count, in
/// interleaved blocks (see `BLOCK`), and prints the median
/// aggregate ns per allocation of each, with `local()`'s ratios and the scaling
/// (1-thread median / k-thread median, k-fold is perfect).
fn probe(rounds_each: usize) {
    let n = round();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("probe: {rounds_each} rounds of {n} allocations per thread, {cpus} CPUs");
    for work in [Work::U64, Work::Obj48, Work::Slice16] {
        let mut table: Vec<(usize, Vec<f64>)> = Vec::new();
        for threads in thread_counts() {
            let mut memory = block_for(threads, work);
            let one_chunk = (n as usize * (work.bytes() + 16) + 4096).next_multiple_of(4096);
            // Room for 34 slots' quarter-region clamp on the chunk size.
            let mut big = LinearAllocator::with_capacity(4 * 35 * one_chunk + (1 << 20)).unwrap();
            let mut blocks = stack_blocks(threads, work);
            let mut rot = 0usize;
            let mut blink = blink_alloc::SyncBlinkAlloc::new();
            let mut herd = bumpalo_herd::Herd::new();
            let mut pool = bump_scope::BumpPool::new();
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); PROBE.len()];
            // `CONCURRENT_PROBE_ONLY=stacks` runs one contender (for `perf stat`).
            let only = std::env::var("CONCURRENT_PROBE_ONLY").ok();
            // Blocks of `BLOCK` counted rounds per contender, after one uncounted round
            // that brings its memory back into this core's caches: a contender whose
            // round writes about 1 MB per thread (the struct and slice workloads) would
            // otherwise gain or lose by whose memory the round before it left cached.
            const BLOCK: usize = 4;
            for r in 0..rounds_each.div_ceil(BLOCK) {
                for k in 0..PROBE.len() {
                    let c = (k + r) % PROBE.len();
                    if only.as_deref().is_some_and(|o| o != PROBE[c]) {
                        continue;
                    }
                    for b in 0..=BLOCK {
                        let d = match c {
                            0 => scope_stack_run(&mut memory, threads, work, n, Via::Local, None),
                            1 => scope_stack_run(&mut memory, threads, work, n, Via::Shared, None),
                            2 => scope_stack_run(
                                &mut memory,
                                threads,
                                work,
                                n,
                                Via::SharedCold,
                                None,
                            ),
                            3 => stacks_run(&mut blocks, threads, work, n, None),
                            4 => stacks_run(&mut blocks, threads, work, n, Some(&mut rot)),
                            5 => scope_stack_run(
                                &mut big,
                                threads,
                                work,
                                n,
                                Via::Local,
                                Some(one_chunk),
                            ),
                            6 => blink_run(&mut blink, threads, work, n),
                            7 => herd_run(&mut herd, threads, work, n),
                            _ => bump_pool_run(&mut pool, threads, work, n),
                        };
                        if b > 0 {
                            times[c].push(d.as_nanos() as f64 / (n as f64 * threads as f64));
                        }
                    }
                }
            }
            table.push((threads, times.into_iter().map(median).collect()));
        }
        println!();
        println!("{}: median aggregate ns per allocation", work.name());
        print!("{:>7}", "threads");
        for name in PROBE {
            print!(" {name:>12}");
        }
        println!("  local/stacks local/stacks-rot  scale: local stacks herd BumpPool");
        let base = table[0].1.clone();
        for (threads, m) in &table {
            print!("{threads:>7}");
            for v in m {
                print!(" {v:>12.3}");
            }
            let scale = |i: usize| base[i] / m[i];
            println!(
                "  {:>12.2} {:>16.2}  {:>12.2} {:>6.2} {:>4.2} {:>8.2}",
                m[0] / m[3],
                m[0] / m[4],
                scale(0),
                scale(3),
                scale(7),
                scale(8)
            );
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}
