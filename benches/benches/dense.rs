//! `DensePool` against the containers a single-threaded gameplay system would otherwise
//! pick: slotmap's `SlotMap` and `DenseSlotMap`, `slab::Slab` and `thunderdome::Arena`.
//!
//! - `churn`: remove a random live object and insert a new one, 1000 pairs per
//!   iteration, in a container of 16384 slots holding 10 000 live objects.
//! - `iterate`: sum one field of every live object, after the same churn (so the
//!   sparse containers have holes and the pool's roster is shuffled).
//! - `iterate_keys`: the same walk with each object's key (`iter()`), folding the key's
//!   bits into the sum so that it is really built.
//!
//! Run with `cargo bench -p benches --bench dense`. The README quotes ratios taken within
//! runs (docs/PERFORMANCE.md says how many and shows each).
//!
//! Times are the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID` on Linux; wall
//! time elsewhere): on a shared machine, time spent running other processes does not
//! count, though what they do to the caches still does.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Bencher, Criterion, Throughput};
use scope_stack::{DensePool, LinearAllocator};
use slotmap::{DefaultKey, DenseSlotMap, Key, SlotMap};

/// A small game object: position, velocity, a couple of ids.
type Obj = [u64; 4];

/// Slots in every container.
const CAPACITY: usize = 16384;
/// Live objects during the measurements.
const LIVE: usize = 10_000;
/// Remove/insert pairs per churn iteration.
const PAIRS: usize = 1000;

fn obj(i: u64) -> Obj {
    [i, i + 1, i + 2, i + 3]
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

/// Runs `routine` as criterion asks, timed by this thread's CPU clock where there is
/// one (wall time otherwise).
fn measure(b: &mut Bencher<'_>, mut routine: impl FnMut()) {
    b.iter_custom(|iters| {
        let (wall, cpu) = (Instant::now(), common::thread_cpu_time());
        for _ in 0..iters {
            routine();
        }
        match (cpu, common::thread_cpu_time()) {
            (Some(start), Some(end)) => end - start,
            _ => wall.elapsed(),
        }
    })
}

/// A tiny xorshift: the same cheap sequence of picks for every container.
struct Rng(u64);

impl Rng {
    #[inline(always)]
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        // Multiply-shift instead of `%`: no division in the measured loop.
        ((self.0 as u32 as u64 * n as u64) >> 32) as usize
    }
}

/// What each container must offer the benchmark.
trait Container {
    type Key: Copy;
    fn insert(&mut self, v: Obj) -> Self::Key;
    fn remove(&mut self, k: Self::Key);
    fn sum(&self) -> u64;
    fn sum_with_keys(&self) -> u64;
}

impl Container for &mut DensePool<'_, Obj> {
    type Key = scope_stack::DenseHandle<Obj>;
    #[inline(always)]
    fn insert(&mut self, v: Obj) -> Self::Key {
        match DensePool::insert(self, v) {
            Ok(h) => h,
            Err(_) => unreachable!(),
        }
    }
    #[inline(always)]
    fn remove(&mut self, k: Self::Key) {
        black_box(DensePool::remove(self, k));
    }
    #[inline(always)]
    fn sum(&self) -> u64 {
        self.values().map(|o| o[0]).sum()
    }
    #[inline(always)]
    fn sum_with_keys(&self) -> u64 {
        self.iter()
            .map(|(k, o)| o[0] ^ k.to_bits())
            .fold(0, u64::wrapping_add)
    }
}

impl Container for SlotMap<DefaultKey, Obj> {
    type Key = DefaultKey;
    #[inline(always)]
    fn insert(&mut self, v: Obj) -> DefaultKey {
        SlotMap::insert(self, v)
    }
    #[inline(always)]
    fn remove(&mut self, k: DefaultKey) {
        black_box(SlotMap::remove(self, k));
    }
    #[inline(always)]
    fn sum(&self) -> u64 {
        self.values().map(|o| o[0]).sum()
    }
    #[inline(always)]
    fn sum_with_keys(&self) -> u64 {
        self.iter()
            .map(|(k, o)| o[0] ^ k.data().as_ffi())
            .fold(0, u64::wrapping_add)
    }
}

impl Container for DenseSlotMap<DefaultKey, Obj> {
    type Key = DefaultKey;
    #[inline(always)]
    fn insert(&mut self, v: Obj) -> DefaultKey {
        DenseSlotMap::insert(self, v)
    }
    #[inline(always)]
    fn remove(&mut self, k: DefaultKey) {
        black_box(DenseSlotMap::remove(self, k));
    }
    #[inline(always)]
    fn sum(&self) -> u64 {
        self.values().map(|o| o[0]).sum()
    }
    #[inline(always)]
    fn sum_with_keys(&self) -> u64 {
        self.iter()
            .map(|(k, o)| o[0] ^ k.data().as_ffi())
            .fold(0, u64::wrapping_add)
    }
}

impl Container for slab::Slab<Obj> {
    type Key = usize;
    #[inline(always)]
    fn insert(&mut self, v: Obj) -> usize {
        slab::Slab::insert(self, v)
    }
    #[inline(always)]
    fn remove(&mut self, k: usize) {
        black_box(slab::Slab::try_remove(self, k));
    }
    #[inline(always)]
    fn sum(&self) -> u64 {
        self.iter().map(|(_, o)| o[0]).sum()
    }
    #[inline(always)]
    fn sum_with_keys(&self) -> u64 {
        self.iter()
            .map(|(k, o)| o[0] ^ k as u64)
            .fold(0, u64::wrapping_add)
    }
}

impl Container for thunderdome::Arena<Obj> {
    type Key = thunderdome::Index;
    #[inline(always)]
    fn insert(&mut self, v: Obj) -> thunderdome::Index {
        thunderdome::Arena::insert(self, v)
    }
    #[inline(always)]
    fn remove(&mut self, k: thunderdome::Index) {
        black_box(thunderdome::Arena::remove(self, k));
    }
    #[inline(always)]
    fn sum(&self) -> u64 {
        self.iter().map(|(_, o)| o[0]).sum()
    }
    #[inline(always)]
    fn sum_with_keys(&self) -> u64 {
        self.iter()
            .map(|(k, o)| o[0] ^ k.to_bits())
            .fold(0, u64::wrapping_add)
    }
}

/// Fills every slot, removes random objects down to `LIVE`, then churns, so every
/// container starts the measurement in the same shuffled, partly empty state.
fn prepare<C: Container>(c: &mut C, rng: &mut Rng) -> Vec<C::Key> {
    let mut keys: Vec<C::Key> = (0..CAPACITY as u64).map(|i| c.insert(obj(i))).collect();
    while keys.len() > LIVE {
        let k = keys.swap_remove(rng.below(keys.len()));
        c.remove(k);
    }
    for i in 0..4 * CAPACITY as u64 {
        let at = rng.below(keys.len());
        c.remove(keys[at]);
        keys[at] = c.insert(obj(i));
    }
    keys
}

fn run<C: Container>(c: &mut Criterion, name: &str, mut container: C) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut keys = prepare(&mut container, &mut rng);

    let mut g = c.benchmark_group("dense/churn");
    g.throughput(Throughput::Elements(PAIRS as u64));
    g.bench_function(name, |b| {
        let mut i = 0u64;
        measure(b, || {
            for _ in 0..PAIRS {
                i += 1;
                let at = rng.below(LIVE);
                container.remove(keys[at]);
                keys[at] = container.insert(obj(black_box(i)));
            }
        })
    });
    g.finish();

    let mut g = c.benchmark_group("dense/iterate");
    g.throughput(Throughput::Elements(LIVE as u64));
    g.bench_function(name, |b| {
        measure(b, || {
            black_box(black_box(&container).sum());
        })
    });
    g.finish();

    let mut g = c.benchmark_group("dense/iterate_keys");
    g.throughput(Throughput::Elements(LIVE as u64));
    g.bench_function(name, |b| {
        measure(b, || {
            black_box(black_box(&container).sum_with_keys());
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let bytes = DensePool::<Obj>::memory_needed(CAPACITY).unwrap();
    let mut memory = LinearAllocator::with_capacity(bytes).unwrap();
    memory.scope("bench", |scope| {
        run(c, "DensePool", scope.new_dense_pool::<Obj>(CAPACITY));
    });
    run(c, "SlotMap", SlotMap::with_capacity(CAPACITY));
    run(c, "DenseSlotMap", DenseSlotMap::with_capacity(CAPACITY));
    run(c, "slab", slab::Slab::with_capacity(CAPACITY));
    run(
        c,
        "thunderdome",
        thunderdome::Arena::with_capacity(CAPACITY),
    );
}

criterion_group! {
    name = dense;
    config = config();
    targets = benches
}
criterion_main!(dense);
