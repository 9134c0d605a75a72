//! The allocation hot path, isolated for instruction counting.
//!
//! Each `#[inline(never)]` function below does exactly one small allocation through one
//! allocator, so its body is that allocator's fast path and nothing else (`ours_scope`
//! and `bump_scope_scoped` open and close one empty scope instead, `ours_child` and
//! `ours_scratch` a child and a nested scratch scope that read their usage,
//! `ours_slot` loads an empty slot and drops it (`ours_task_slot` the same through
//! `Slots::load_task`),
//! `ours_string` and `bump_scope_string` place one `String` that needs drop; `ours_vec_push`
//! pushes one `u64` onto a `ScopeVec` (growing in place); `pool_pair`,
//! `pool_mut_pair` and `box_pair` make and free one small object through a `Pool` (shared,
//! then exclusive: `insert_mut` + `remove`) and the global heap; `ours_heap_alloc_free`
//! and `rlsf_alloc_free` allocate and free one 32-byte block through `&Heap`'s
//! allocator-api2 `Allocator` and through rlsf directly). `main` calls each of
//! them `BATCHES * PER_BATCH` times, rewinding the arena between batches outside the
//! measured functions, so no call takes a slow path (no chunk growth, no out-of-memory).
//!
//! Run it under callgrind with `scripts/hot_path.sh`; dividing a function's inclusive
//! instruction count by the number of calls gives instructions per call, including the
//! function's `ret`.
//!
//! ```text
//! cargo build --release -p benches --example hot_path
//! valgrind --tool=callgrind --branch-sim=yes target/release/examples/hot_path
//! ```

use std::alloc::Layout;
use std::hint::black_box;

use allocator_api2::alloc::Allocator;
use scope_stack::{
    ConcurrentScope, Heap, LinearAllocator, LocalScope, Place, Pool, ScopeStack, ScopeVec, Slots,
};

/// Number of times the arena is rewound.
const BATCHES: u32 = 1_000;
/// Allocations of each kind per batch.
const PER_BATCH: u32 = 1_000;
/// Rounds and collections per round of the `alloc_iter` functions (a round is one
/// scope: 200 slices of 1 KiB fit the arena).
const ITER_ROUNDS: u32 = 50;
const ITER_PER_ROUND: u32 = 200;
/// Room for one batch of every kind with alignment padding, with a wide margin.
const ARENA_BYTES: usize = 1 << 20;

// ----- scope-stack -----

#[inline(never)]
fn ours_u8<'s>(s: &ScopeStack<'s>, v: u8) -> &'s mut u8 {
    s.new_pod(v)
}

#[inline(never)]
fn ours_u32<'s>(s: &ScopeStack<'s>, v: u32) -> &'s mut u32 {
    s.new_pod(v)
}

#[inline(never)]
fn ours_u64<'s>(s: &ScopeStack<'s>, v: u64) -> &'s mut u64 {
    s.new_pod(v)
}

#[inline(never)]
fn ours_scope(s: &mut ScopeStack<'_>) {
    s.scope("empty", |empty| {
        black_box(empty);
    });
}

/// Loads an empty slot and drops it: claim, open the slot's scope, place the (empty)
/// root, then drop the root, run the (empty) chain, rewind, free the slot and check for
/// waiters. Compare with `ours_scope`. The `Loaded` is taken out of the `Result` before
/// `black_box` (as `pool_pair` does): the `Result` holds a `SlotError` inline, and
/// passing all of it to `black_box` would count a copy of it that no caller makes.
#[inline(never)]
fn ours_slot(slots: &Slots) {
    let loaded = slots
        .load::<Unit>("empty", |s| {
            black_box(s);
        })
        .unwrap_or_else(|_| unreachable!());
    drop(black_box(loaded));
}

/// `ours_slot` for a task slot (`Slots::load_task`, kind `Task`, `Send`): the same
/// plain scope behind a `TaskScope`, so the same work.
#[inline(never)]
fn ours_task_slot(slots: &Slots) {
    let loaded = slots
        .load_task::<Unit>("empty", |s| {
            black_box(s);
        })
        .unwrap_or_else(|_| unreachable!());
    drop(black_box(loaded));
}

scope_stack::slot_root!(struct Unit = for<'s> ());

/// A borrow-checked child scope that reads its usage (the scratch benchmark's baseline).
#[inline(never)]
fn ours_child(s: &mut ScopeStack<'_>) {
    s.scope("child", |child| black_box(child.used()));
}

/// A scratch scope nested in another one: thread-local lookup, a fresh cursor, the outer
/// cursor suspended and resumed (the run-time innermost check).
#[inline(never)]
fn ours_scratch() {
    scope_stack::scratch(|inner| black_box(inner.used()));
}

/// One finalized `String` (it joins the run of the ones before it).
#[inline(never)]
fn ours_string<'s>(s: &ScopeStack<'s>) -> &'s mut String {
    s.new_object(black_box(String::new()))
}

/// One thread's handle to a concurrent scope: a bump in this thread's chunk.
#[inline(never)]
fn ours_local_u64<'s>(s: &LocalScope<'s>, v: u64) -> &'s mut u64 {
    s.new_pod(v)
}

/// The shared handle: the thread look-up, then the same bump.
#[inline(never)]
fn ours_shared_u64<'s>(s: &'s ConcurrentScope<'_>, v: u64) -> &'s mut u64 {
    s.new_pod(v)
}

/// Through the `Place` trait, on a plain scope (a generic helper after monomorphizing).
#[inline(never)]
fn ours_place_u64<'s>(s: impl Place<'s>, v: u64) -> &'s mut u64 {
    s.new_pod(v)
}

/// One push onto a `ScopeVec` growing at the top of a plain scope (a compare, a store and
/// an add; the few growths of a 1,000-element vector, in place, are counted in too).
#[inline(never)]
fn ours_vec_push(v: &mut ScopeVec<'_, '_, u64>, x: u64) {
    v.push(x);
}

/// Items collected by the `alloc_iter` hot-path functions (a filtered iterator).
const ITER_ITEMS: u32 = 256;

fn iter_source() -> impl Iterator<Item = u32> {
    (0..ITER_ITEMS * 3)
        .map(black_box)
        .filter_map(|n| (n % 3 == 0).then_some(n / 3))
}

/// `alloc_iter` of a filtered iterator of 256 items on a plain scope.
#[inline(never)]
fn ours_iter256<'s>(s: &ScopeStack<'s>) -> usize {
    s.alloc_iter(iter_source()).len()
}

/// The same on one thread's handle to a concurrent scope.
#[inline(never)]
fn ours_local_iter256(s: &LocalScope<'_>) -> usize {
    s.alloc_iter(iter_source()).len()
}

/// The same into a `bumpalo::collections::Vec`, frozen.
#[inline(never)]
fn bumpalo_iter256(b: &bumpalo::Bump) -> usize {
    bumpalo::collections::Vec::from_iter_in(iter_source(), b)
        .into_bump_slice()
        .len()
}

// ----- bumpalo -----

#[inline(never)]
fn bumpalo_u8(b: &bumpalo::Bump, v: u8) -> &mut u8 {
    b.alloc(v)
}

#[inline(never)]
fn bumpalo_u32(b: &bumpalo::Bump, v: u32) -> &mut u32 {
    b.alloc(v)
}

#[inline(never)]
fn bumpalo_u64(b: &bumpalo::Bump, v: u64) -> &mut u64 {
    b.alloc(v)
}

// ----- bump-scope (default settings: bumps upwards, minimum alignment 1) -----

#[inline(never)]
fn bump_scope_u8(b: &bump_scope::Bump, v: u8) -> &mut u8 {
    b.alloc(v).into_mut()
}

#[inline(never)]
fn bump_scope_u32(b: &bump_scope::Bump, v: u32) -> &mut u32 {
    b.alloc(v).into_mut()
}

#[inline(never)]
fn bump_scope_u64(b: &bump_scope::Bump, v: u64) -> &mut u64 {
    b.alloc(v).into_mut()
}

/// One `String` in a box that drops it at once.
#[inline(never)]
fn bump_scope_string(b: &bump_scope::BumpScope<'_>) {
    black_box(b.alloc(black_box(String::new())));
}

#[inline(never)]
fn bump_scope_scoped(b: &mut bump_scope::Bump) {
    b.scoped(|empty| {
        black_box(empty);
    });
}

// ----- pools: one insert + free pair -----

/// A small game object, as in the pool benchmarks.
type Obj = [u64; 4];

#[inline(never)]
fn pool_pair(p: &Pool<'_, Obj>, v: u64) {
    let b = p.insert([v; 4]).unwrap_or_else(|_| unreachable!());
    black_box(&*b);
}

/// The exclusive pair: `insert_mut` + `remove` through `&mut Pool` (no atomic
/// read-modify-write).
#[inline(never)]
fn pool_mut_pair(p: &mut Pool<'_, Obj>, v: u64) {
    let h = p.insert_mut([v; 4]).unwrap_or_else(|_| unreachable!());
    black_box(p.remove(black_box(h)).is_some());
}

// ----- heaps: one alloc + free pair -----

/// The TLSF the heap runs, with the heap's parameters, for `rlsf_alloc_free`.
type Tlsf = rlsf::Tlsf<'static, u32, u16, 28, 16>;

/// One 32-byte block allocated and freed through `&Heap`'s allocator-api2 `Allocator`
/// (the lock, the counters and the TLSF call).
#[inline(never)]
fn ours_heap_alloc_free(heap: &Heap) {
    let layout = Layout::new::<Obj>();
    let p = Allocator::allocate(&heap, layout).unwrap_or_else(|_| unreachable!());
    black_box(p);
    // SAFETY: `p` was just allocated by this heap with `layout`.
    unsafe { Allocator::deallocate(&heap, p.cast(), layout) };
}

/// The same pair through rlsf directly (no lock, no counters).
#[inline(never)]
fn rlsf_alloc_free(tlsf: &mut Tlsf) {
    let layout = Layout::new::<Obj>();
    let p = tlsf.allocate(layout).unwrap_or_else(|| unreachable!());
    black_box(p);
    // SAFETY: `p` was just allocated by this TLSF with `layout.align()`.
    unsafe { tlsf.deallocate(p, layout.align()) };
}

#[inline(never)]
fn box_pair(v: u64) {
    let b = Box::new([v; 4]);
    black_box(&*b);
}

/// Interleaves the three sizes, so the bump pointer is usually misaligned when a call
/// starts. The fast paths are branch-free in the alignment, so this changes no counts; it
/// only keeps the measurement honest.
fn main() {
    let mut ours = LinearAllocator::with_capacity(ARENA_BYTES).expect("arena");
    ours.scope("hot path", |root| {
        for _ in 0..BATCHES {
            root.scope("batch", |batch| {
                let s: &ScopeStack<'_> = batch;
                for i in 0..PER_BATCH {
                    black_box(ours_u8(black_box(s), black_box(i as u8)));
                    black_box(ours_u32(black_box(s), black_box(i)));
                    black_box(ours_u64(black_box(s), black_box(u64::from(i))));
                }
            });
        }
        for _ in 0..BATCHES {
            root.scope("batch", |batch| {
                let s: &ScopeStack<'_> = batch;
                for i in 0..PER_BATCH {
                    black_box(ours_place_u64(black_box(s), black_box(u64::from(i))));
                }
            });
        }
        for _ in 0..BATCHES {
            root.scope_concurrent("batch", |jobs| {
                let here = jobs.local();
                for i in 0..PER_BATCH {
                    black_box(ours_local_u64(black_box(&here), black_box(u64::from(i))));
                    black_box(ours_shared_u64(black_box(jobs), black_box(u64::from(i))));
                }
            });
        }
        for _ in 0..ITER_ROUNDS {
            root.scope("iter", |batch| {
                for _ in 0..ITER_PER_ROUND {
                    black_box(ours_iter256(black_box(batch)));
                }
            });
            root.scope_concurrent("iter", |jobs| {
                let here = jobs.local();
                for _ in 0..ITER_PER_ROUND {
                    black_box(ours_local_iter256(black_box(&here)));
                }
            });
        }
        for _ in 0..BATCHES {
            root.scope("vec", |batch| {
                let mut v = batch.new_vec::<u64>();
                for i in 0..PER_BATCH {
                    ours_vec_push(black_box(&mut v), black_box(u64::from(i)));
                }
                black_box(v.into_slice());
            });
        }
        for _ in 0..BATCHES * PER_BATCH {
            ours_scope(black_box(root));
        }
        for _ in 0..BATCHES * PER_BATCH {
            ours_child(black_box(root));
        }
        let slots = root.new_slots("slots", 3, 4096);
        for _ in 0..BATCHES * PER_BATCH {
            ours_slot(black_box(slots));
        }
        for _ in 0..BATCHES * PER_BATCH {
            ours_task_slot(black_box(slots));
        }
        for _ in 0..BATCHES {
            root.scope("strings", |strings| {
                for _ in 0..PER_BATCH {
                    black_box(ours_string(black_box(strings)));
                }
            });
        }
        // A pool built for many threads (32 shards), used from this one.
        let pool = root.new_pool::<Obj>(1024);
        for i in 0..BATCHES * PER_BATCH {
            pool_pair(black_box(pool), u64::from(i));
        }
        for i in 0..BATCHES * PER_BATCH {
            pool_mut_pair(black_box(&mut *pool), u64::from(i));
        }
        let heap = root.new_heap(64 << 10);
        for _ in 0..BATCHES * PER_BATCH {
            ours_heap_alloc_free(black_box(heap));
        }
    });
    let mut tlsf = Tlsf::new();
    tlsf.insert_free_block(Box::leak(Box::new_uninit_slice(64 << 10)));
    for _ in 0..BATCHES * PER_BATCH {
        rlsf_alloc_free(black_box(&mut tlsf));
    }
    for i in 0..BATCHES * PER_BATCH {
        box_pair(black_box(u64::from(i)));
    }
    scope_stack::scratch(|_outer| {
        for _ in 0..BATCHES * PER_BATCH {
            ours_scratch();
        }
    });

    let mut bumpalo = bumpalo::Bump::with_capacity(ARENA_BYTES);
    for _ in 0..BATCHES {
        for i in 0..PER_BATCH {
            black_box(bumpalo_u8(black_box(&bumpalo), black_box(i as u8)));
            black_box(bumpalo_u32(black_box(&bumpalo), black_box(i)));
            black_box(bumpalo_u64(black_box(&bumpalo), black_box(u64::from(i))));
        }
        bumpalo.reset();
    }

    for _ in 0..ITER_ROUNDS {
        for _ in 0..ITER_PER_ROUND {
            black_box(bumpalo_iter256(black_box(&bumpalo)));
        }
        bumpalo.reset();
    }

    let mut bump_scope: bump_scope::Bump = bump_scope::Bump::with_size(ARENA_BYTES);
    for _ in 0..BATCHES {
        for i in 0..PER_BATCH {
            black_box(bump_scope_u8(black_box(&bump_scope), black_box(i as u8)));
            black_box(bump_scope_u32(black_box(&bump_scope), black_box(i)));
            black_box(bump_scope_u64(
                black_box(&bump_scope),
                black_box(u64::from(i)),
            ));
        }
        bump_scope.reset();
    }
    for _ in 0..BATCHES * PER_BATCH {
        bump_scope_scoped(black_box(&mut bump_scope));
    }
    for _ in 0..BATCHES {
        bump_scope.scoped(|strings| {
            for _ in 0..PER_BATCH {
                bump_scope_string(black_box(&*strings));
            }
        });
    }

    println!(
        "calls per function: {}",
        u64::from(BATCHES) * u64::from(PER_BATCH)
    );
    println!(
        "calls per iter function: {}",
        u64::from(ITER_ROUNDS) * u64::from(ITER_PER_ROUND)
    );
}
