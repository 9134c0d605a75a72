//! Insert + remove pairs: `Pool` against the containers a user would otherwise pick.
//!
//! - one thread: `Pool` (shared: `insert` + drop of the box), `Pool insert_mut`
//!   (exclusive, through `&mut Pool`: `insert_mut` + `remove`), `Box::new`/drop,
//!   `slab::Slab`, `sharded_slab::Slab`, `Mutex<slab::Slab>`. `Pool`, `Pool insert_mut`
//!   and `Box` drop the object they free; the slabs and `Pool insert_mut, value read`
//!   read it back. In this loop each object is read right after it was written, and
//!   that read costs about 5 ns on the test VM's core (AMD EPYC, family 25): the 32-byte
//!   object is written as four 8-byte stores and read as two 16-byte loads, which most
//!   cores cannot forward from the stores, so the loads wait for the stores to reach
//!   the cache. Compare each form with its own kind. `examples/pool_pairs.rs` times the
//!   same pairs in interleaved batches, for loaded machines.
//!
//! - `fill_new`: one thread builds a pool of 4096 slots and fills it (a loader thread),
//!   against `Box`es and a `Slab`.
//!
//! How the concurrent containers scale with threads is `benches/pool_scaling.rs`.
//!
//! Run with `cargo bench -p benches --bench pool`. The README quotes ratios from one run.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use scope_stack::{LinearAllocator, Pool};

/// A small game object: position, velocity, a couple of ids.
type Obj = [u64; 4];

const CAPACITY: usize = 1024;

fn obj(i: u64) -> Obj {
    [i, i + 1, i + 2, i + 3]
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

fn single_thread(c: &mut Criterion, pool: &mut Pool<'_, Obj>) {
    let mut g = c.benchmark_group("insert_remove/1 thread");

    g.bench_function("Pool", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let bx = pool
                .insert(obj(black_box(i)))
                .unwrap_or_else(|_| unreachable!());
            black_box(&*bx);
        })
    });

    // Frees as `Pool` and `Box` above do: the removed object is dropped, not read.
    g.bench_function("Pool insert_mut", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let h = pool
                .insert_mut(obj(black_box(i)))
                .unwrap_or_else(|_| unreachable!());
            black_box(pool.remove(black_box(h)).is_some());
        })
    });

    // Reads the removed object back, as `slab` and `Mutex<slab>` below do.
    g.bench_function("Pool insert_mut, value read", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let h = pool
                .insert_mut(obj(black_box(i)))
                .unwrap_or_else(|_| unreachable!());
            black_box(pool.remove(black_box(h)));
        })
    });

    g.bench_function("Box", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let bx = Box::new(obj(black_box(i)));
            black_box(&*bx);
        })
    });

    g.bench_function("slab", |b| {
        let mut slab = slab::Slab::with_capacity(CAPACITY);
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let k = slab.insert(obj(black_box(i)));
            black_box(slab.remove(black_box(k)));
        })
    });

    g.bench_function("sharded-slab", |b| {
        let slab = sharded_slab::Slab::new();
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let k = slab.insert(obj(black_box(i))).unwrap();
            black_box(slab.remove(black_box(k)));
        })
    });

    g.bench_function("Mutex<slab>", |b| {
        let slab = Mutex::new(slab::Slab::with_capacity(CAPACITY));
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let k = slab.lock().unwrap().insert(obj(black_box(i)));
            black_box(slab.lock().unwrap().remove(black_box(k)));
        })
    });

    g.finish();
}

/// One thread fills a whole pool and drains it again: a pool built for many threads
/// (32 shards, so the thread steals from 31 of them) against a one-shard pool and a
/// `Vec` of `Box`es.
fn fill_drain(c: &mut Criterion, scope: &scope_stack::ScopeStack<'_>) {
    let mut g = c.benchmark_group("fill_drain_1024/1 thread");
    g.throughput(criterion::Throughput::Elements(CAPACITY as u64));
    let sharded = &*scope.new_pool_with_shards::<Obj>(CAPACITY, 32);
    let single = &*scope.new_pool_with_shards::<Obj>(CAPACITY, 1);
    for (name, pool) in [("Pool 32 shards", sharded), ("Pool 1 shard", single)] {
        g.bench_function(name, |b| {
            let mut all = Vec::with_capacity(CAPACITY);
            b.iter(|| {
                for i in 0..CAPACITY as u64 {
                    all.push(pool.insert(obj(i)).unwrap_or_else(|_| unreachable!()));
                }
                all.clear();
            })
        });
    }
    g.bench_function("Box", |b| {
        let mut all = Vec::with_capacity(CAPACITY);
        b.iter(|| {
            for i in 0..CAPACITY as u64 {
                all.push(Box::new(obj(black_box(i))));
            }
            all.clear();
        })
    });
    g.finish();
}

/// Slots in `fill_new`'s pools.
const FILL: usize = 4096;

/// One thread builds a pool and fills it with never-used slots (a level loading on a
/// loader thread): a pool of the default shard count (32 for 4096 slots), so the
/// thread uses its home's share and then takes the other shards' never-used slots,
/// against a one-shard pool, `Box`es in a `Vec`, and a `slab::Slab`. Each iteration
/// builds its container and drops it: the pools in a child scope, which ends with the
/// iteration, their objects kept in the pool (`into_handle`, as a level keeps them);
/// the `Box`es in a new `Vec`.
fn fill_new(c: &mut Criterion, scope: &mut scope_stack::ScopeStack<'_>) {
    let mut g = c.benchmark_group("fill_new_4096/1 thread");
    g.throughput(criterion::Throughput::Elements(FILL as u64));
    for (name, shards) in [
        ("Pool 32 shards", Pool::<Obj>::default_shards(FILL)),
        ("Pool 1 shard", 1),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                scope.scope("fill", |s| {
                    let pool = &*s.new_pool_with_shards::<Obj>(FILL, shards);
                    for i in 0..FILL as u64 {
                        let b = pool.insert(obj(i)).unwrap_or_else(|_| unreachable!());
                        black_box(b.into_handle());
                    }
                })
            })
        });
    }
    g.bench_function("Box", |b| {
        b.iter(|| {
            let mut all = Vec::with_capacity(FILL);
            for i in 0..FILL as u64 {
                all.push(Box::new(obj(black_box(i))));
            }
            all
        })
    });
    g.bench_function("slab", |b| {
        b.iter(|| {
            let mut slab = slab::Slab::with_capacity(FILL);
            for i in 0..FILL as u64 {
                black_box(slab.insert(obj(i)));
            }
            slab
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("bench", |scope| {
        let pool = scope.new_pool::<Obj>(CAPACITY);
        single_thread(c, pool);
        fill_drain(c, scope);
        fill_new(c, scope);
    });
}

criterion_group! {
    name = pool;
    config = config();
    targets = benches
}
criterion_main!(pool);
