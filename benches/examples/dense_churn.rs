//! The `dense` benchmark's churn and walks, isolated for callgrind: each contender's
//! remove + insert pair, and its `values()` and `iter()` walks, in `#[inline(never)]`
//! functions, on the benchmark's shapes (16384 slots, 10 000 live, `[u64; 4]` objects,
//! shuffled by the same preparation).
//!
//! Instruction counts do not depend on how busy the machine is, so this is the check
//! for the churn path on a shared machine; `--cache-sim=yes` adds simulated misses.
//!
//! ```text
//! cargo build --release -p benches --example dense_churn
//! valgrind --tool=callgrind --cache-sim=yes target/release/examples/dense_churn
//! callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep dense_churn::
//! ```
//! Divide a `churn_*` function's inclusive count by `PAIRS * ROUNDS` for one pair, a
//! `values_*` or `iter_*` function's by `LIVE * ROUNDS` for one object.

use std::hint::black_box;

use scope_stack::{DenseHandle, DensePool, LinearAllocator};
use slotmap::{DefaultKey, DenseSlotMap, Key, SlotMap};

type Obj = [u64; 4];

const CAPACITY: usize = 16384;
const LIVE: usize = 10_000;
const PAIRS: usize = 1000;
const ROUNDS: usize = 100;

struct Rng(u64);

impl Rng {
    #[inline(always)]
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 as u32 as u64 * n as u64) >> 32) as usize
    }
}

fn obj(i: u64) -> Obj {
    [i, i + 1, i + 2, i + 3]
}

/// Fills, thins to `LIVE`, and churns, as the benchmark's `prepare` does.
fn prepare<K: Copy>(
    rng: &mut Rng,
    mut insert: impl FnMut(Obj) -> K,
    mut remove: impl FnMut(K),
) -> Vec<K> {
    let mut keys: Vec<K> = (0..CAPACITY as u64).map(|i| insert(obj(i))).collect();
    while keys.len() > LIVE {
        remove(keys.swap_remove(rng.below(keys.len())));
    }
    for i in 0..4 * CAPACITY as u64 {
        let at = rng.below(keys.len());
        remove(keys[at]);
        keys[at] = insert(obj(i));
    }
    keys
}

#[inline(never)]
fn churn_dense_pool(pool: &mut DensePool<'_, Obj>, keys: &mut [DenseHandle<Obj>], rng: &mut Rng) {
    for i in 0..PAIRS as u64 {
        let at = rng.below(LIVE);
        black_box(pool.remove(keys[at]));
        keys[at] = match pool.insert(obj(black_box(i))) {
            Ok(h) => h,
            Err(_) => unreachable!(),
        };
    }
}

#[inline(never)]
fn churn_slot_map(map: &mut SlotMap<DefaultKey, Obj>, keys: &mut [DefaultKey], rng: &mut Rng) {
    for i in 0..PAIRS as u64 {
        let at = rng.below(LIVE);
        black_box(map.remove(keys[at]));
        keys[at] = map.insert(obj(black_box(i)));
    }
}

#[inline(never)]
fn churn_dense_slot_map(
    map: &mut DenseSlotMap<DefaultKey, Obj>,
    keys: &mut [DefaultKey],
    rng: &mut Rng,
) {
    for i in 0..PAIRS as u64 {
        let at = rng.below(LIVE);
        black_box(map.remove(keys[at]));
        keys[at] = map.insert(obj(black_box(i)));
    }
}

#[inline(never)]
fn churn_slab(slab: &mut slab::Slab<Obj>, keys: &mut [usize], rng: &mut Rng) {
    for i in 0..PAIRS as u64 {
        let at = rng.below(LIVE);
        black_box(slab.try_remove(keys[at]));
        keys[at] = slab.insert(obj(black_box(i)));
    }
}

#[inline(never)]
fn values_dense_pool(pool: &DensePool<'_, Obj>) -> u64 {
    pool.values().map(|o| o[0]).sum()
}

#[inline(never)]
fn values_dense_slot_map(map: &DenseSlotMap<DefaultKey, Obj>) -> u64 {
    map.values().map(|o| o[0]).sum()
}

#[inline(never)]
fn iter_dense_pool(pool: &DensePool<'_, Obj>) -> u64 {
    pool.iter()
        .map(|(k, o)| o[0] ^ k.to_bits())
        .fold(0, u64::wrapping_add)
}

#[inline(never)]
fn iter_dense_slot_map(map: &DenseSlotMap<DefaultKey, Obj>) -> u64 {
    map.iter()
        .map(|(k, o)| o[0] ^ k.data().as_ffi())
        .fold(0, u64::wrapping_add)
}

/// Nanoseconds per pair of the fastest of `batches` timed churn batches, after two
/// untimed ones that warm the caches.
fn time_churn(batches: usize, mut churn: impl FnMut()) -> f64 {
    churn();
    churn();
    (0..batches)
        .map(|_| {
            let t = std::time::Instant::now();
            churn();
            t.elapsed().as_nanos() as f64 / PAIRS as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    // `dense_churn time`: wall-clock mode, for a busy machine: the contenders take
    // turns, each turn's fastest batch counts, and the median over turns is printed.
    let timing = std::env::args().nth(1).as_deref() == Some("time");
    let rounds = if timing { 0 } else { ROUNDS };
    let mut times: [Vec<f64>; 4] = Default::default();

    let bytes = DensePool::<Obj>::memory_needed(CAPACITY).unwrap();
    let mut memory = LinearAllocator::with_capacity(bytes).unwrap();
    memory.scope("churn", |scope| {
        let pool = scope.new_dense_pool::<Obj>(CAPACITY);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut pool_keys = {
            let cell = std::cell::RefCell::new(&mut *pool);
            prepare(
                &mut rng,
                |v| cell.borrow_mut().insert(v).ok().unwrap(),
                |k| {
                    black_box(cell.borrow_mut().remove(k));
                },
            )
        };
        for _ in 0..rounds {
            churn_dense_pool(pool, &mut pool_keys, &mut rng);
            black_box(values_dense_pool(pool));
            black_box(iter_dense_pool(pool));
        }

        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let map = std::cell::RefCell::new(SlotMap::with_capacity(CAPACITY));
        let mut map_keys = prepare(
            &mut rng,
            |v| map.borrow_mut().insert(v),
            |k| {
                black_box(map.borrow_mut().remove(k));
            },
        );
        let mut map = map.into_inner();
        for _ in 0..rounds {
            churn_slot_map(&mut map, &mut map_keys, &mut rng);
        }

        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let dense = std::cell::RefCell::new(DenseSlotMap::with_capacity(CAPACITY));
        let mut dense_keys = prepare(
            &mut rng,
            |v| dense.borrow_mut().insert(v),
            |k| {
                black_box(dense.borrow_mut().remove(k));
            },
        );
        let mut dense = dense.into_inner();
        for _ in 0..rounds {
            churn_dense_slot_map(&mut dense, &mut dense_keys, &mut rng);
            black_box(values_dense_slot_map(&dense));
            black_box(iter_dense_slot_map(&dense));
        }

        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let slab = std::cell::RefCell::new(slab::Slab::with_capacity(CAPACITY));
        let mut slab_keys = prepare(
            &mut rng,
            |v| slab.borrow_mut().insert(v),
            |k| {
                black_box(slab.borrow_mut().try_remove(k));
            },
        );
        let mut slab = slab.into_inner();
        for _ in 0..rounds {
            churn_slab(&mut slab, &mut slab_keys, &mut rng);
        }

        if !timing {
            return;
        }
        for _ in 0..200 {
            times[0].push(time_churn(5, || {
                churn_dense_pool(pool, &mut pool_keys, &mut rng)
            }));
            times[1].push(time_churn(5, || {
                churn_slot_map(&mut map, &mut map_keys, &mut rng)
            }));
            times[2].push(time_churn(5, || {
                churn_dense_slot_map(&mut dense, &mut dense_keys, &mut rng)
            }));
            times[3].push(time_churn(5, || {
                churn_slab(&mut slab, &mut slab_keys, &mut rng)
            }));
        }
    });
    if timing {
        for (name, t) in ["DensePool", "SlotMap", "DenseSlotMap", "slab"]
            .iter()
            .zip(&mut times)
        {
            t.sort_by(f64::total_cmp);
            println!(
                "{name:<14} ns per pair: median {:.2}, fastest {:.2}",
                t[t.len() / 2],
                t[0]
            );
        }
    }
}
