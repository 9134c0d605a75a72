//! Insert + remove pairs: `Pool` against the containers a user would otherwise pick.
//!
//! - one thread: `Pool`, `Box::new`/drop, `slab::Slab`, `sharded_slab::Slab`,
//!   `Mutex<slab::Slab>`.
//!
//! How the concurrent containers scale with threads is `benches/pool_scaling.rs`.
//!
//! Run with `cargo bench --bench pool`. The README quotes ratios from one run.

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

fn single_thread(c: &mut Criterion, pool: &Pool<'_, Obj>) {
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

fn benches(c: &mut Criterion) {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("bench", |scope| {
        let pool = &*scope.new_pool::<Obj>(CAPACITY);
        single_thread(c, pool);
    });
}

criterion_group! {
    name = pool;
    config = config();
    targets = benches
}
criterion_main!(pool);
