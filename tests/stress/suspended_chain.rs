//! Stress: a report reads the finalizer chain of a scratch scope that an inner scratch
//! scope has suspended, while the suspended scope's builders freeze and link their
//! records (issue 45). A suspended scope is not frozen (rule 2): a `ScopeVec` made
//! before the inner scope opened has already claimed its room, so `into_slice` links a
//! record without a bump. The chain's head is published with a release store and read
//! with an acquire load, so the reporter sees a consistent prefix of the chain: each
//! report's records are records it saw before plus newer ones, all inside the outer
//! scope's bytes.
//!
//! Two routes to the outer chain:
//! 1. a [`MapHandle`](scope_stack::MapHandle) taken inside the inner scratch scope,
//!    used from a reporter thread;
//! 2. [`ConcurrentScope::report`](scope_stack::ConcurrentScope::report) from a worker
//!    of a concurrent scope opened inside the inner scratch scope.
//!
//! Before the fix, Miri flagged both as a data race (a non-atomic write of the chain's
//! head in `Chain::link` against a non-atomic read in `Chain::for_each_record`); CI
//! runs this module under Miri with several seeds. Natively, on x86, the old code's race
//! did not crash; the release run checks the chain's consistency over many rounds.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use scope_stack::{MemoryMap, Place};

/// Rounds (each: builders made, an inner scope opened, builders frozen under reports).
fn rounds() -> usize {
    if cfg!(miri) {
        3
    } else if cfg!(debug_assertions) {
        200
    } else {
        40_000
    }
}

/// Builders per round, each frozen while the inner scope is open.
const BUILDERS: usize = if cfg!(miri) { 4 } else { 16 };

/// What one report says of the outermost scratch scope's chain: its record offsets,
/// oldest first, checked against the previous report's and the scope's bytes.
fn check_outer(map: &MemoryMap, previous: &mut Vec<usize>) -> usize {
    let outer = &map.scopes[0];
    assert_eq!(outer.name, "scratch");
    assert_eq!(outer.finalizers, outer.finalizer_offsets.len());
    assert!(outer.finalizers <= BUILDERS, "{} records", outer.finalizers);
    for &at in &outer.finalizer_offsets {
        assert!(
            at >= outer.start && at < outer.start + outer.own_bytes,
            "a record at {at} outside the outer scope ({} + {})",
            outer.start,
            outer.own_bytes
        );
    }
    // Records are only added while the inner scope is open: the older ones stay, in
    // order, and newer ones follow.
    assert!(
        outer.finalizer_offsets.starts_with(previous),
        "the chain lost records: {previous:?} then {:?}",
        outer.finalizer_offsets
    );
    previous.clone_from(&outer.finalizer_offsets);
    outer.finalizers
}

/// Under Miri, waits until the reporter has begun another report, so the freeze that
/// follows races a report in flight (the seed picks where the switches fall).
fn let_the_reporter_run(started: &AtomicUsize) {
    if cfg!(miri) {
        let seen = started.load(Ordering::Relaxed);
        while started.load(Ordering::Relaxed) == seen {
            std::thread::yield_now();
        }
    }
}

#[test]
fn map_handle_reads_a_suspended_scratch_scope_while_its_builders_freeze() {
    let (mut reports, mut grew) = (0usize, 0usize);
    for _ in 0..rounds() {
        scope_stack::scratch(|a| {
            let outer = &**a;
            // Builders made before the inner scope opens, each holding a `String`, so
            // that freezing it links a finalizer record.
            let vs: Vec<_> = (0..BUILDERS)
                .map(|i| {
                    let mut v = Place::new_vec(&outer);
                    v.push(format!("builder {i}"));
                    v
                })
                .collect();
            scope_stack::scratch(|b| {
                let map = b.map_handle();
                let done = AtomicBool::new(false);
                let started = AtomicUsize::new(0);
                std::thread::scope(|t| {
                    let reporter = t.spawn(|| {
                        let (mut seen, mut n, mut changes, mut last) = (Vec::new(), 0, 0, 0);
                        while n == 0 || !done.load(Ordering::Relaxed) {
                            started.fetch_add(1, Ordering::Relaxed);
                            let count = check_outer(&map.report(), &mut seen);
                            changes += usize::from(count != last);
                            (last, n) = (count, n + 1);
                        }
                        (n, changes)
                    });
                    for v in vs {
                        let_the_reporter_run(&started);
                        assert_eq!(v.into_slice().len(), 1);
                    }
                    done.store(true, Ordering::Relaxed);
                    let (n, changes) = reporter.join().unwrap();
                    reports += n;
                    grew += changes;
                });
                // The owner's own report, once every builder has frozen, shows them all.
                assert_eq!(b.report().scopes[0].finalizers, BUILDERS);
            });
        });
    }
    eprintln!("suspended_chain (map handle): {reports} reports, the outer chain grew under {grew}");
}

#[test]
fn concurrent_report_reads_a_suspended_scratch_scope_while_its_builders_freeze() {
    let (mut reports, mut grew) = (0usize, 0usize);
    for _ in 0..rounds() {
        scope_stack::scratch(|a| {
            let outer = &**a;
            // Builders made before the inner scope opens, each holding a `String`, so
            // that freezing it links a finalizer record.
            let vs: Vec<_> = (0..BUILDERS)
                .map(|i| {
                    let mut v = Place::new_vec(&outer);
                    v.push(format!("builder {i}"));
                    v
                })
                .collect();
            scope_stack::scratch(|b| {
                b.scope_concurrent("jobs", |jobs| {
                    let done = AtomicBool::new(false);
                    let started = AtomicUsize::new(0);
                    std::thread::scope(|t| {
                        let worker = t.spawn(|| {
                            let (mut seen, mut n, mut changes, mut last) = (Vec::new(), 0, 0, 0);
                            while n == 0 || !done.load(Ordering::Relaxed) {
                                started.fetch_add(1, Ordering::Relaxed);
                                let map = jobs.report();
                                assert_eq!(map.scopes.last().unwrap().name, "jobs");
                                let count = check_outer(&map, &mut seen);
                                changes += usize::from(count != last);
                                (last, n) = (count, n + 1);
                            }
                            (n, changes)
                        });
                        for v in vs {
                            let_the_reporter_run(&started);
                            assert_eq!(v.into_slice().len(), 1);
                        }
                        done.store(true, Ordering::Relaxed);
                        let (n, changes) = worker.join().unwrap();
                        reports += n;
                        grew += changes;
                    });
                });
            });
        });
    }
    eprintln!(
        "suspended_chain (concurrent report): {reports} reports, the outer chain grew under {grew}"
    );
}
