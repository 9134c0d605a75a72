//! The integration tests that can share a process, one test binary: one module per
//! former `tests/*.rs` file, so a filter picks one (`cargo test --test suite pool::`).
//!
//! Kept out, each its own binary: tests with a global allocator that counts every
//! thread's calls (`scratch_recycle`, `scratch_oversubscribed`); tests that need the
//! process's thread indices (`thread_index_frames`, `pool_high_water`: other tests'
//! threads holding indices change which shards a pool's threads call home) or its
//! panic hook (`panic_location`) to themselves; the `no_std` test, run with
//! `--no-default-features` (`no_std_core`); and the groups CI runs with settings of
//! their own (`stress`, `models`, `loom`).

/// The counting global allocator, shared by `no_heap`, `concurrent_no_heap` and
/// `pool`. It counts per thread, so tests running beside them do not disturb it.
#[path = "../common/counting_alloc.rs"]
mod counting_alloc;

mod alignment_and_errors;
mod bad_input;
mod builders;
mod collections;
mod concurrent;
mod concurrent_no_heap;
mod dense_pool;
mod drop_order;
mod levels;
mod map_handle;
mod no_heap;
mod observability;
mod panics;
mod par_walks;
mod place_parity;
mod pool;
mod pool_exclusive;
mod pool_len;
mod pool_shards;
mod pool_timeout;
mod regressions;
mod scratch;
mod scratch_exit;
mod seed_examples;
mod slots;
mod slots_async;
mod slots_bad_input;
mod slots_shared_writers;
mod slots_task;
mod store;
mod svg_layout;
mod values;
