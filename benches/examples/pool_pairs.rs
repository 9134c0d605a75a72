//! Insert + remove pairs on one thread, timed in short interleaved batches: a check of
//! the `insert_remove/1 thread` criterion group (`benches/pool.rs`) that holds up on a
//! loaded machine.
//!
//! Each round times one batch of `PAIRS` pairs of every contender, one after another
//! (starting with a different one each round), so load that comes and goes hits all of
//! them alike. It prints, per contender, the
//! minimum and the median over the rounds of nanoseconds per pair (the minimum is the
//! cost with nothing else on the core), and the ratio of its median to the median of
//! the exclusive pool pair that frees the same way.
//!
//! Each contender frees in one of two ways: it drops the object (`Box`, the shared
//! `Pool`'s box, `remove` with the result dropped), or it reads the object back (the
//! slabs' `remove` as the criterion group uses it). Reading back an object written a
//! moment before costs extra on some cores (see `benches/pool.rs`), so each form is
//! compared with its own kind.
//!
//! ```text
//! cargo run --release -p benches --example pool_pairs [rounds]
//! ```

use std::hint::black_box;
use std::sync::Mutex;
use std::time::Instant;

use scope_stack::LinearAllocator;

/// The criterion group's object: 32 bytes.
type Obj = [u64; 4];
const CAPACITY: usize = 1024;
/// Pairs per timed batch.
const PAIRS: u64 = 2_000;

fn obj(i: u64) -> Obj {
    [i, i + 1, i + 2, i + 3]
}

/// Nanoseconds per pair over one batch. Generic, so that each contender's loop is
/// compiled on its own with the pair inlined (no call per pair).
#[inline(never)]
fn time<F: FnMut(u64)>(f: &mut F) -> f64 {
    let start = Instant::now();
    for i in 0..PAIRS {
        f(i);
    }
    start.elapsed().as_nanos() as f64 / PAIRS as f64
}

/// How a contender frees: the exclusive pool pair it is compared with.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    Dropped,
    Read,
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(2_000, |r| r.parse().expect("rounds"));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("bench", |scope| {
        let shared = &*scope.new_pool::<Obj>(CAPACITY);
        let dropping = scope.new_pool::<Obj>(CAPACITY);
        let reading = scope.new_pool::<Obj>(CAPACITY);
        let mut slab_read = slab::Slab::with_capacity(CAPACITY);
        let mut slab_drop = slab::Slab::with_capacity(CAPACITY);
        let mutex_read = Mutex::new(slab::Slab::with_capacity(CAPACITY));
        let mutex_drop = Mutex::new(slab::Slab::with_capacity(CAPACITY));
        let mut pool_dropped = |i| {
            let h = dropping
                .insert_mut(obj(black_box(i)))
                .unwrap_or_else(|_| unreachable!());
            black_box(dropping.remove(black_box(h)).is_some());
        };
        let mut pool_shared = |i| {
            let b = shared
                .insert(obj(black_box(i)))
                .unwrap_or_else(|_| unreachable!());
            black_box(&*b);
        };
        let mut boxed = |i| {
            let b = Box::new(obj(black_box(i)));
            black_box(&*b);
        };
        let mut slab_dropped = |i| {
            let k = slab_drop.insert(obj(black_box(i)));
            slab_drop.remove(black_box(k));
        };
        let mut mutex_dropped = |i| {
            let k = mutex_drop.lock().unwrap().insert(obj(black_box(i)));
            mutex_drop.lock().unwrap().remove(black_box(k));
        };
        let mut pool_read = |i| {
            let h = reading
                .insert_mut(obj(black_box(i)))
                .unwrap_or_else(|_| unreachable!());
            black_box(reading.remove(black_box(h)));
        };
        let mut slab_read_back = |i| {
            let k = slab_read.insert(obj(black_box(i)));
            black_box(slab_read.remove(black_box(k)));
        };
        let mut mutex_read_back = |i| {
            let k = mutex_read.lock().unwrap().insert(obj(black_box(i)));
            black_box(mutex_read.lock().unwrap().remove(black_box(k)));
        };
        let contenders = [
            ("Pool insert_mut", Form::Dropped),
            ("Pool (shared)", Form::Dropped),
            ("Box", Form::Dropped),
            ("slab", Form::Dropped),
            ("Mutex<slab>", Form::Dropped),
            ("Pool insert_mut", Form::Read),
            ("slab", Form::Read),
            ("Mutex<slab>", Form::Read),
        ];
        let n = contenders.len();
        let mut samples = vec![Vec::with_capacity(rounds); n];
        for round in 0..rounds {
            // Each round starts with another contender, so that none always runs first.
            for k in (0..n).map(|k| (k + round) % n) {
                samples[k].push(match k {
                    0 => time(&mut pool_dropped),
                    1 => time(&mut pool_shared),
                    2 => time(&mut boxed),
                    3 => time(&mut slab_dropped),
                    4 => time(&mut mutex_dropped),
                    5 => time(&mut pool_read),
                    6 => time(&mut slab_read_back),
                    _ => time(&mut mutex_read_back),
                });
            }
        }
        let stats: Vec<(f64, f64)> = samples
            .iter_mut()
            .map(|s| {
                s.sort_by(f64::total_cmp);
                (s[0], s[s.len() / 2])
            })
            .collect();
        let ours = |form: Form| {
            let k = contenders
                .iter()
                .position(|(name, f)| *name == "Pool insert_mut" && *f == form)
                .unwrap();
            stats[k].1
        };
        println!(
            "{:<16} {:<14} {:>8} {:>8} {:>22}",
            "ns per pair", "object", "min", "median", "median / insert_mut's"
        );
        for ((name, form), (min, median)) in contenders.iter().zip(&stats) {
            let how = match form {
                Form::Dropped => "dropped",
                Form::Read => "read back",
            };
            let ratio = median / ours(*form);
            println!("{name:<16} {how:<14} {min:>8.2} {median:>8.2} {ratio:>22.2}");
        }
    });
}
