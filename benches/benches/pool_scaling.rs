//! How the concurrent containers scale with threads: `Pool` against sharded-slab,
//! `Mutex<slab::Slab>`, `Box` and `Box<MiMalloc>`, in one run, at 1, 2, 4, ... threads up
//! to `available_parallelism()` (set `POOL_SCALING_THREADS=1,2,8` to choose).
//!
//! The two `Box` rows are general-purpose heaps: `Box` is the binary's global allocator
//! (glibc's malloc), and `Box<MiMalloc>` is a box whose memory comes from mimalloc, called
//! directly (the global allocator stays glibc's, for the other rows). mimalloc is here
//! because it is the design `Pool` is moving to: a per-thread free list whose fast path is
//! a plain store, and a separate thread-free list for objects freed on another thread.
//!
//! Three patterns, each a stream of insert + free pairs:
//! - **ring**: each thread keeps its last 16 objects and frees the oldest as it inserts
//!   a new one (objects that live a little while, freed by the thread that made them);
//! - **lifo**: each thread inserts an object and frees it at once;
//! - **cross**: threads work in pairs; one inserts and hands each object over a bounded
//!   queue (64 entries), and the other frees it (objects freed on another thread).
//!
//! One criterion iteration is one pair per thread (per pair of threads, in cross), all
//! threads running at once, so the figure to compare is the aggregate cost: the median
//! time per iteration divided by the pairs it holds. A table of those, with the pairs
//! per second and `Pool`'s ratios, is printed at the end of a full run.
//!
//! Run with `cargo bench -p benches --bench pool_scaling`.

mod common;

use std::alloc::{handle_alloc_error, GlobalAlloc, Layout};
use std::cell::UnsafeCell;
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, Throughput};
use crossbeam_utils::CachePadded;
use mimalloc::MiMalloc;
use scope_stack::{LinearAllocator, Pool, PoolBox};

/// A small game object: position, velocity, a couple of ids.
type Obj = [u64; 4];

/// Objects each thread keeps alive in the ring pattern.
const RING: usize = 16;
/// Entries in each cross pair's queue.
const QUEUE: usize = 64;

fn obj(i: u64) -> Obj {
    [i, i + 1, i + 2, i + 3]
}

/// A container under test, seen as "make an object, get something that frees it".
trait Contender: Sync {
    /// What an insert returns: a box, or a key.
    type Key<'a>: Send
    where
        Self: 'a;
    fn insert(&self, value: Obj) -> Self::Key<'_>;
    fn free<'a>(&'a self, key: Self::Key<'a>);
}

struct PoolC<'p, 's>(&'p Pool<'s, Obj>);
impl Contender for PoolC<'_, '_> {
    type Key<'a>
        = PoolBox<'a, Obj>
    where
        Self: 'a;
    #[inline]
    fn insert(&self, value: Obj) -> PoolBox<'_, Obj> {
        self.0.insert(value).unwrap_or_else(|_| panic!("pool full"))
    }
    #[inline]
    fn free<'a>(&'a self, key: PoolBox<'a, Obj>) {
        drop(key)
    }
}

struct ShardedSlabC(sharded_slab::Slab<Obj>);
impl Contender for ShardedSlabC {
    type Key<'a> = usize;
    #[inline]
    fn insert(&self, value: Obj) -> usize {
        self.0.insert(value).expect("sharded-slab full")
    }
    #[inline]
    fn free(&self, key: usize) {
        black_box(self.0.remove(key));
    }
}

struct MutexSlabC(Mutex<slab::Slab<Obj>>);
impl Contender for MutexSlabC {
    type Key<'a> = usize;
    #[inline]
    fn insert(&self, value: Obj) -> usize {
        self.0.lock().unwrap().insert(value)
    }
    #[inline]
    fn free(&self, key: usize) {
        black_box(self.0.lock().unwrap().remove(key));
    }
}

struct BoxC;
impl Contender for BoxC {
    type Key<'a> = Box<Obj>;
    #[inline]
    fn insert(&self, value: Obj) -> Box<Obj> {
        Box::new(value)
    }
    #[inline]
    fn free(&self, key: Box<Obj>) {
        drop(key)
    }
}

struct MiBoxC;
impl Contender for MiBoxC {
    type Key<'a> = MiBox<Obj>;
    #[inline]
    fn insert(&self, value: Obj) -> MiBox<Obj> {
        MiBox::new(value)
    }
    #[inline]
    fn free(&self, key: MiBox<Obj>) {
        drop(key)
    }
}

/// What `Box<T, MiMalloc>` would be (the `Allocator` parameter of `Box` is unstable): a
/// `T` in memory from mimalloc, through `MiMalloc`'s `GlobalAlloc` impl, dropped and
/// freed with it again. The binary's global allocator is not switched to mimalloc,
/// since that would change the `Box` row and `Pool`'s setup too.
struct MiBox<T>(NonNull<T>);

// SAFETY: a `MiBox<T>` owns its `T` as a `Box<T>` does, and mimalloc frees a block on any
// thread (one freed off the thread that allocated it goes to its thread-free list).
unsafe impl<T: Send> Send for MiBox<T> {}

impl<T> MiBox<T> {
    #[inline]
    fn new(value: T) -> Self {
        const { assert!(size_of::<T>() != 0, "MiBox of a zero-sized T") };
        let layout = Layout::new::<T>();
        // SAFETY: `layout` has a non-zero size (checked above).
        let ptr = unsafe { MiMalloc.alloc(layout) }.cast::<T>();
        let Some(ptr) = NonNull::new(ptr) else {
            handle_alloc_error(layout)
        };
        // SAFETY: `ptr` is a fresh block for `layout`: valid for a write of `T` and
        // aligned for it.
        unsafe { ptr.as_ptr().write(value) };
        MiBox(ptr)
    }
}

impl<T> Drop for MiBox<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `self.0` points to the live `T` this `MiBox` owns, in a block that
        // `MiMalloc` allocated with `Layout::new::<T>()`; it is dropped once, then the
        // block is freed with that same layout and never used again.
        unsafe {
            self.0.as_ptr().drop_in_place();
            MiMalloc.dealloc(self.0.as_ptr().cast(), Layout::new::<T>());
        }
    }
}

// ----- patterns -----

#[derive(Clone, Copy, PartialEq)]
enum Pattern {
    Ring,
    Lifo,
    Cross,
}

impl Pattern {
    fn name(self) -> &'static str {
        match self {
            Pattern::Ring => "ring",
            Pattern::Lifo => "lifo",
            Pattern::Cross => "cross",
        }
    }

    /// Insert + free pairs in one criterion iteration with `threads` threads.
    fn pairs(self, threads: usize) -> usize {
        match self {
            Pattern::Cross => threads / 2,
            _ => threads,
        }
    }
}

fn ring<C: Contender>(c: &C, seed: u64, iters: u64) {
    let mut live: [Option<C::Key<'_>>; RING] = std::array::from_fn(|_| None);
    for i in 0..iters {
        let k = c.insert(obj(black_box(seed + i)));
        black_box(&k);
        if let Some(old) = live[i as usize % RING].replace(k) {
            c.free(old);
        }
    }
    for k in live.into_iter().flatten() {
        c.free(k);
    }
}

fn lifo<C: Contender>(c: &C, seed: u64, iters: u64) {
    for i in 0..iters {
        let k = c.insert(obj(black_box(seed + i)));
        black_box(&k);
        c.free(k);
    }
}

/// Runs `work(thread)` on `threads` threads released together; returns the time from
/// their release until the last one finished.
fn timed(threads: usize, work: impl Fn(usize) + Sync) -> Duration {
    let start = Barrier::new(threads + 1);
    let t0 = std::thread::scope(|s| {
        for t in 0..threads {
            let (start, work) = (&start, &work);
            s.spawn(move || {
                start.wait();
                work(t);
            });
        }
        start.wait();
        Instant::now()
        // The scope joins every thread before returning.
    });
    t0.elapsed()
}

fn run<C: Contender>(c: &C, pattern: Pattern, threads: usize, iters: u64) -> Duration {
    match pattern {
        Pattern::Ring => timed(threads, |t| ring(c, (t as u64) << 40, iters)),
        Pattern::Lifo => timed(threads, |t| lifo(c, (t as u64) << 40, iters)),
        Pattern::Cross => {
            let queues: Vec<Spsc<C::Key<'_>>> = (0..threads / 2).map(|_| Spsc::new()).collect();
            timed(threads / 2 * 2, |t| {
                let q = &queues[t / 2];
                if t % 2 == 0 {
                    for i in 0..iters {
                        q.push(c.insert(obj(black_box(((t as u64) << 40) + i))));
                    }
                } else {
                    for _ in 0..iters {
                        c.free(black_box(q.pop()));
                    }
                }
            })
        }
    }
}

// ----- a bounded single-producer single-consumer queue for the cross pattern -----

/// The hand-over queue of one cross pair: a ring of `QUEUE` entries; the producer
/// spins while it is full and the consumer while it is empty. Each side caches the
/// other's index, so a transfer touches the shared indices only when the cache runs out.
struct Spsc<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    /// Entries taken (written by the consumer).
    head: CachePadded<AtomicUsize>,
    /// Entries put (written by the producer).
    tail: CachePadded<AtomicUsize>,
}

// SAFETY: entries move from the one producer to the one consumer; each slot is written
// by the producer before a Release store of `tail`, and read by the consumer after an
// Acquire load of it (and the reverse through `head` for reuse).
unsafe impl<T: Send> Sync for Spsc<T> {}

impl<T> Spsc<T> {
    fn new() -> Self {
        Spsc {
            slots: (0..QUEUE)
                .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
                .collect(),
            head: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// Producer side only.
    fn push(&self, value: T) {
        let tail = self.tail.load(Ordering::Relaxed);
        let mut spins = 0u32;
        while tail - self.head.load(Ordering::Acquire) == QUEUE {
            backoff(&mut spins);
        }
        // SAFETY: the slot is free (the consumer moved past it, Acquire above), and only
        // the producer writes slots.
        unsafe { (*self.slots[tail % QUEUE].get()).write(value) };
        self.tail.store(tail + 1, Ordering::Release);
    }

    /// Consumer side only.
    fn pop(&self) -> T {
        let head = self.head.load(Ordering::Relaxed);
        let mut spins = 0u32;
        while self.tail.load(Ordering::Acquire) == head {
            backoff(&mut spins);
        }
        // SAFETY: the producer wrote this slot before its Release of `tail`, which the
        // Acquire above saw; only the consumer reads slots.
        let value = unsafe { (*self.slots[head % QUEUE].get()).assume_init_read() };
        self.head.store(head + 1, Ordering::Release);
        value
    }
}

impl<T> Drop for Spsc<T> {
    fn drop(&mut self) {
        let (head, tail) = (*self.head.get_mut(), *self.tail.get_mut());
        for i in head..tail {
            // SAFETY: entries between head and tail were written and never read.
            unsafe { self.slots[i % QUEUE].get_mut().assume_init_drop() };
        }
    }
}

fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

// ----- driver -----

fn thread_counts() -> Vec<usize> {
    if let Ok(list) = std::env::var("POOL_SCALING_THREADS") {
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

const CONTENDERS: [&str; 5] = [
    "Pool",
    "sharded-slab",
    "Mutex<Slab>",
    "Box",
    "Box<MiMalloc>",
];

fn bench_point(c: &mut Criterion, pool: &Pool<'_, Obj>, pattern: Pattern, threads: usize) {
    let mut g = c.benchmark_group(format!("pool_scaling/{}/{threads}", pattern.name()));
    g.throughput(Throughput::Elements(pattern.pairs(threads) as u64));
    let pool_c = PoolC(pool);
    g.bench_function("Pool", |b| {
        b.iter_custom(|iters| run(&pool_c, pattern, threads, iters))
    });
    g.bench_function("sharded-slab", |b| {
        let slab = ShardedSlabC(sharded_slab::Slab::new());
        b.iter_custom(|iters| run(&slab, pattern, threads, iters))
    });
    g.bench_function("Mutex<Slab>", |b| {
        let slab = MutexSlabC(Mutex::new(slab::Slab::with_capacity(4096)));
        b.iter_custom(|iters| run(&slab, pattern, threads, iters))
    });
    g.bench_function("Box", |b| {
        b.iter_custom(|iters| run(&BoxC, pattern, threads, iters))
    });
    g.bench_function("Box<MiMalloc>", |b| {
        b.iter_custom(|iters| run(&MiBoxC, pattern, threads, iters))
    });
    g.finish();
}

fn main() {
    let started = SystemTime::now();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(10)
        .without_plots()
        .configure_from_args();

    let counts = thread_counts();
    let max = counts.iter().copied().max().unwrap_or(1);
    // Room for every thread's ring, or every pair's queue plus the objects in flight.
    let capacity = (max * (RING + QUEUE + 2)).max(1024);
    let mut memory =
        LinearAllocator::with_capacity(Pool::<Obj>::memory_needed(capacity).unwrap()).unwrap();
    let mut points = Vec::new();
    memory.scope("bench", |scope| {
        let pool = &*scope.new_pool::<Obj>(capacity);
        for pattern in [Pattern::Ring, Pattern::Lifo, Pattern::Cross] {
            for &threads in &counts {
                if pattern == Pattern::Cross && threads < 2 {
                    continue;
                }
                bench_point(&mut c, pool, pattern, threads);
                points.push((pattern, threads));
            }
        }
    });
    c.final_summary();
    print_table(&points, started);
}

/// Prints ns per insert + free pair (aggregate: the median iteration time divided by
/// the pairs in it), pairs per second, and `Pool`'s ratios against each peer.
fn print_table(points: &[(Pattern, usize)], started: SystemTime) {
    if !common::measuring() {
        return;
    }
    let Some(dir) = common::criterion_dir() else {
        return;
    };
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!();
    println!("Aggregate ns per insert + free pair (median iteration / pairs), {cpus} CPUs:");
    println!(
        "{:<7} {:>7} {:>9} {:>13} {:>12} {:>9} {:>13} {:>11}  Pool/peer ratios (below 1 = Pool faster)",
        "pattern", "threads", "Pool", "sharded-slab", "Mutex<Slab>", "Box", "Box<MiMalloc>", "Pool Mp/s"
    );
    for &(pattern, threads) in points {
        let group = format!("pool_scaling/{}/{threads}", pattern.name());
        let per_pair: Vec<Option<f64>> = CONTENDERS
            .iter()
            .map(|name| {
                common::fresh_median(&dir, &group, name, started)
                    .map(|ns| ns / pattern.pairs(threads) as f64)
            })
            .collect();
        let cell = |v: Option<f64>| v.map_or("-".to_string(), |ns| format!("{ns:.1}"));
        let ratios: Vec<String> = per_pair[1..]
            .iter()
            .zip(&CONTENDERS[1..])
            .filter_map(|(peer, name)| Some(format!("{name} {:.2}", per_pair[0]? / (*peer)?)))
            .collect();
        println!(
            "{:<7} {:>7} {:>9} {:>13} {:>12} {:>9} {:>13} {:>11}  {}",
            pattern.name(),
            threads,
            cell(per_pair[0]),
            cell(per_pair[1]),
            cell(per_pair[2]),
            cell(per_pair[3]),
            cell(per_pair[4]),
            per_pair[0].map_or("-".to_string(), |ns| format!("{:.1}", 1e3 / ns)),
            ratios.join(", ")
        );
    }
}
