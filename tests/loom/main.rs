//! The loom models of the lock-free code, one test binary, built only with
//! `--cfg loom`: `RUSTFLAGS="--cfg loom" cargo test --release --test loom` runs them all,
//! and a filter picks one file's models (`... --test loom loom_pool::`). Without
//! `--cfg loom` the binary is empty.
#![cfg(loom)]

/// A pool in a scope lent to a model as `'static`, and the model checker's settings;
/// shared by the pool and concurrent-scope models.
#[path = "../common/loom_pool.rs"]
mod harness;

mod loom_concurrent;
mod loom_heap;
mod loom_pool;
mod loom_pool_owner;
mod loom_pool_timeout;
mod loom_slots;
mod loom_store;
