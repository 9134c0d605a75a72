//! `Pool::len` and `Pool::is_empty` on a 4,096-slot pool with 32 shards, for callgrind:
//! each call is its own `#[inline(never)]` function, so `callgrind_annotate` gives the
//! instructions per call (issue 38: `len` walked every slot ever used).
//!
//! ```text
//! cargo build --release -p benches --example pool_len
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/len.out target/release/examples/pool_len
//! callgrind_annotate --inclusive=yes /tmp/len.out | grep -E 'pool_len|pool_is_empty'
//! ```
//!
//! The pool has had every slot used once and holds half of them (every other slot);
//! `pool_has_objects` asks a second pool whose slots were all used and all freed.
use std::hint::black_box;

use scope_stack::{LinearAllocator, Pool};

/// Calls of each measured function.
const CALLS: usize = 1000;

#[inline(never)]
fn pool_len(p: &Pool<'_, u64>) -> usize {
    p.len()
}

#[inline(never)]
fn pool_is_empty(p: &Pool<'_, u64>) -> bool {
    p.is_empty()
}

/// `!is_empty` on a pool whose slots were all used and are all free again (a walk
/// over the slots must look at every one). Negated so that it is not merged with
/// `pool_is_empty`.
#[inline(never)]
fn pool_has_objects(p: &Pool<'_, u64>) -> bool {
    !p.is_empty()
}

fn main() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).expect("block");
    memory.scope("level", |level| {
        let pool = level.new_pool::<u64>(4096);
        assert_eq!(pool.shard_count(), 32);
        let handles: Vec<_> = (0..4096).map(|i| pool.insert_mut(i).unwrap()).collect();
        for h in handles.iter().step_by(2) {
            pool.remove(*h);
        }
        let drained = level.new_pool::<u64>(4096);
        let all: Vec<_> = (0..4096).map(|i| drained.insert_mut(i).unwrap()).collect();
        for h in all {
            drained.remove(h);
        }
        let (pool, drained) = (&*pool, &*drained);
        let mut sum = 0;
        for _ in 0..CALLS {
            sum += black_box(pool_len(black_box(pool)));
            sum += usize::from(black_box(pool_is_empty(black_box(pool))));
            sum += usize::from(black_box(pool_has_objects(black_box(drained))));
        }
        assert_eq!(sum, CALLS * 2048);
        println!("calls per function: {CALLS}");
    });
}
