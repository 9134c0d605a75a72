//! loom models of a concurrent scope's lock-free parts: the chunk claim and single
//! claims on the shared region, the overflow chain of slot-less threads, and reports
//! read while threads claim chunks.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom loom_concurrent::`.
//!
//! Every model checks that what each thread placed is intact after the join (claims
//! never overlap) and that every finalizer ran exactly once at the close.
#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::harness::model;
use loom::thread;
use scope_stack::{ConcurrentConfig, ConcurrentScope, LinearAllocator};

/// A 48-byte value that counts its drops (with its record, 72 bytes: six fill a
/// 512-byte chunk).
struct Tracked([u64; 6], &'static AtomicUsize);
impl Drop for Tracked {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs `f` with a fresh concurrent scope of small chunks (lent as `'static`: loom's
/// threads need it; `f` joins every thread it spawns), then checks the drops.
fn with_scope(
    drops: &'static AtomicUsize,
    expect_drops: usize,
    f: impl FnOnce(&'static ConcurrentScope<'static>),
) {
    drops.store(0, Ordering::Relaxed);
    let mut memory = LinearAllocator::with_capacity(64 << 10).unwrap();
    memory.scope("loom", |scope| {
        let config = ConcurrentConfig::new().chunk_size(512).threads(2);
        scope.scope_concurrent_with("jobs", config, |jobs| {
            // SAFETY: `f` joins every thread before returning, inside the closure.
            let jobs: &'static ConcurrentScope<'static> =
                unsafe { &*(jobs as *const ConcurrentScope<'_>).cast() };
            f(jobs);
        });
    });
    assert_eq!(drops.load(Ordering::Relaxed), expect_drops);
}

/// Places `n` tracked values and a slice, and checks that they are intact.
fn place(jobs: &ConcurrentScope<'_>, drops: &'static AtomicUsize, tag: u64, n: u64) {
    let vals: Vec<&mut Tracked> = (0..n)
        .map(|i| jobs.new_object(Tracked([tag * 100 + i; 6], drops)))
        .collect();
    let big = jobs.alloc_slice_copy(&[tag as u8; 200]); // straight from the region
    for (i, v) in vals.iter().enumerate() {
        assert_eq!(v.0, [tag * 100 + i as u64; 6]);
    }
    assert!(big.iter().all(|b| *b == tag as u8));
}

#[test]
fn two_slot_threads_claim_chunks_without_overlap() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    model(|| {
        with_scope(&DROPS, 16, |jobs| {
            let t = thread::spawn(move || {
                scope_stack::loom_hold_thread_index(1);
                place(jobs, &DROPS, 1, 8);
            });
            scope_stack::loom_hold_thread_index(0);
            place(jobs, &DROPS, 2, 8);
            t.join().unwrap();
        });
    });
}

#[test]
fn slotless_threads_share_the_region_and_the_overflow_chain() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    model(|| {
        with_scope(&DROPS, 6, |jobs| {
            let t = thread::spawn(move || place(jobs, &DROPS, 1, 3));
            place(jobs, &DROPS, 2, 3); // neither holds an index: both take the overflow path
            t.join().unwrap();
        });
    });
}

#[test]
fn a_report_reads_chunks_while_a_thread_claims_them() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    model(|| {
        with_scope(&DROPS, 12, |jobs| {
            let t = thread::spawn(move || {
                scope_stack::loom_hold_thread_index(1);
                place(jobs, &DROPS, 1, 12);
            });
            let map = jobs.report();
            let c = map.scopes[1].concurrent.as_ref().unwrap();
            for ch in &c.chunks {
                assert!(ch.used <= ch.bytes && ch.used + ch.tail == ch.bytes);
            }
            t.join().unwrap();
            let map = jobs.report();
            let c = map.scopes[1].concurrent.as_ref().unwrap();
            // Values of one type share a run record: 12 x 48 bytes outgrow a 512-byte chunk.
            assert!(c.chunks.len() >= 2, "twelve values need two chunks");
        });
    });
}
