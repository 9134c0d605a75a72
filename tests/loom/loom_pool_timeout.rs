//! loom models of `Pool::insert_wait_timeout`.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom loom_pool_timeout::`.
//!
//! Under loom time does not pass: a zero timeout has run out from the start, and any
//! other never runs out (loom's `Condvar::wait_timeout` never times out), so a timed
//! waiter whose wake-up is lost blocks for ever and loom reports the deadlock. These
//! models therefore check that the timed path loses no wake-up, and that a zero timeout
//! never sleeps.
#![cfg(loom)]

use std::time::Duration;

use crate::harness::{model, model_bounded, with_loom_pool};
use loom::thread;
use scope_stack::Pool;

/// Runs `f` with a fresh pool of `capacity` slots in `shards` shards (under loom every
/// thread's home shard is 0).
fn with_pool(capacity: usize, shards: usize, f: impl FnOnce(&'static Pool<'static, u32>)) {
    with_loom_pool(capacity, shards, f, |pool| assert_eq!(pool.len(), 0));
}

/// A timed waiter on a full one-shard pool gets the slot that another thread frees.
#[test]
fn insert_wait_timeout_is_woken_by_an_erase() {
    model(|| {
        with_pool(1, 1, |pool| {
            let held = pool.insert(1).unwrap();
            let waiter = thread::spawn(move || {
                pool.insert_wait_timeout(2, Duration::from_secs(1))
                    .map(|b| b.into_inner())
            });
            drop(held);
            assert_eq!(waiter.join().unwrap(), Ok(2));
        });
    });
}

/// A timed waiter whose home is shard 0 is woken by a free into shard 1.
#[test]
fn insert_wait_timeout_is_woken_by_a_free_into_another_shard() {
    model(|| {
        with_pool(2, 2, |pool| {
            let home = pool.insert_in_shard(0, 1).unwrap();
            let other = pool.insert_in_shard(1, 2).unwrap();
            let waiter = thread::spawn(move || {
                pool.insert_wait_timeout(3, Duration::from_secs(1))
                    .map(|b| b.into_inner())
            });
            drop(other);
            assert_eq!(waiter.join().unwrap(), Ok(3));
            drop(home);
        });
    });
}

/// A timed waiter and an untimed one share the wake of two frees. Four threads' worth
/// of atomics over two shards: checked with a preemption bound of 1 (at 2, since each
/// waiter's round also closes the owners' gate (issue 46), loom ran past ten minutes;
/// at 3 it took well over ten minutes before that, since an insert looks for a freed
/// slot on every shard before it takes a never-used one).
#[test]
fn timed_and_untimed_waiters_both_get_a_slot() {
    model_bounded(1, || {
        with_pool(2, 2, |pool| {
            let a = pool.insert_in_shard(0, 1).unwrap();
            let b = pool.insert_in_shard(1, 2).unwrap();
            let timed = thread::spawn(move || {
                pool.insert_wait_timeout(3, Duration::from_secs(1))
                    .map(|b| b.into_inner())
            });
            let untimed = thread::spawn(move || pool.insert_wait(4).into_inner());
            drop(a);
            drop(b);
            assert_eq!(timed.join().unwrap(), Ok(3));
            assert_eq!(untimed.join().unwrap(), 4);
        });
    });
}

/// A zero timeout on a full pool never sleeps: it gives the value back, or gets the
/// slot a racing free returns.
#[test]
fn a_zero_timeout_never_sleeps() {
    model(|| {
        with_pool(1, 1, |pool| {
            let held = pool.insert(1).unwrap();
            let waiter = thread::spawn(move || {
                pool.insert_wait_timeout(2, Duration::ZERO)
                    .map(|b| b.into_inner())
            });
            drop(held);
            assert!(matches!(waiter.join().unwrap(), Ok(2) | Err(2)));
        });
    });
}
