//! The per-thread heap counter shared by the tests that prove "no global heap after
//! construction": the `allocation-counter` crate, which installs its own counting
//! global allocator in the test binary that uses it (no `#[global_allocator]` here) and
//! counts per thread, so tests running in parallel do not see each other's calls. A
//! binary includes this file once: `tests/suite/main.rs` does, and its modules use
//! `crate::counting_alloc::heap_calls_during`.
//!
//! The test binaries with one test that count every thread's calls (`scratch_recycle`,
//! `scratch_oversubscribed`) use `stats_alloc` instead, whose counters are global;
//! `scratch_rayon`, which needs both kinds of count at once, keeps its own (its module
//! docs say why).

/// Runs `f` and returns how many global-heap calls it made on this thread: each
/// allocation and each free counts one (a reallocation is both, as the crate does it).
pub fn heap_calls_during(f: impl FnOnce()) -> usize {
    let info = allocation_counter::measure(f);
    // `count_total` counts allocations; `count_current` is allocations less frees, so
    // the frees are the difference.
    let frees = info.count_total as i64 - info.count_current;
    (info.count_total as i64 + frees) as usize
}
