//! Shared by the loom models of the pool: a pool in a scope, lent to a model as
//! `'static` (loom's threads need `'static` data), and the model checker's settings.

use loom::model::Builder;
use scope_stack::{LinearAllocator, Pool};

/// Runs `f` with a fresh pool of `capacity` slots in `shards` shards, then `after`
/// (still inside the pool's scope). Under loom every thread's home shard is 0;
/// `insert_in_shard` starts elsewhere.
pub fn with_loom_pool(
    capacity: usize,
    shards: usize,
    f: impl FnOnce(&'static Pool<'static, u32>),
    after: impl FnOnce(&'static Pool<'static, u32>),
) {
    let mut memory = LinearAllocator::with_capacity(8192).unwrap();
    memory.scope("loom", |scope| {
        let pool: &Pool<'_, u32> = scope.new_pool_with_shards::<u32>(capacity, shards);
        // SAFETY: `f` joins every thread it spawns before returning, and the pool
        // outlives this closure; the `'static` is never observed past it.
        let pool: &'static Pool<'static, u32> =
            unsafe { &*(pool as *const Pool<'_, u32>).cast::<Pool<'static, u32>>() };
        f(pool);
        after(pool);
    });
}

/// Runs `f` with a fresh pool of `capacity` slots in `shards` shards, lent mutably (for
/// the exclusive paths; see [`share`] for lending it to loom's threads in between), then
/// `after` (still inside the pool's scope).
#[allow(dead_code)] // not every model file uses it
pub fn with_loom_pool_mut(
    capacity: usize,
    shards: usize,
    f: impl FnOnce(&mut Pool<'static, u32>),
    after: impl FnOnce(&Pool<'static, u32>),
) {
    let mut memory = LinearAllocator::with_capacity(8192).unwrap();
    memory.scope("loom", |scope| {
        let pool: &mut Pool<'_, u32> = scope.new_pool_with_shards::<u32>(capacity, shards);
        // SAFETY: `Pool<'s, _>` carries its scope's lifetime only as a marker; the pool
        // outlives this closure, and the `'static` is never observed past it.
        let pool: &mut Pool<'static, u32> =
            unsafe { &mut *(pool as *mut Pool<'_, u32>).cast::<Pool<'static, u32>>() };
        f(pool);
        after(pool);
    });
}

/// Lends `pool` as `&'static` for a shared phase: `f` may hand it to loom's threads.
///
/// # Safety
/// Before `f` returns, every thread it spawned has been joined, and every `PoolBox`
/// made from the lent reference has been dropped or turned into a handle (nothing
/// borrowed from it outlives `f`, though the types cannot say so).
#[allow(dead_code)] // not every model file uses it
pub unsafe fn share<R>(
    pool: &mut Pool<'static, u32>,
    f: impl FnOnce(&'static Pool<'static, u32>) -> R,
) -> R {
    // SAFETY: per the caller, the shared borrow ends when `f` returns, before `pool` is
    // used mutably again.
    f(unsafe { &*(pool as *const Pool<'static, u32>) })
}

/// Checks `f` under loom, with a preemption bound of 3 unless `LOOM_MAX_PREEMPTIONS`
/// sets one.
pub fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(3, f);
}

/// As [`model`], with a preemption bound of `bound` unless `LOOM_MAX_PREEMPTIONS` sets
/// one: for the models with the most threads and atomics, whose state space at bound 3
/// takes loom far longer than the rest of the suite.
#[allow(dead_code)] // not every model file uses it
pub fn model_bounded(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    builder.check(f);
}
