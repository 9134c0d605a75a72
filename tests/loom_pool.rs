//! loom models of the pool's lock-free paths.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom_pool`.
//!
//! The pool lives in a scope, but loom's threads need `'static` data; each model
//! extends the pool reference's lifetime and joins every thread before the scope ends.
//! Slot storage is a loom `UnsafeCell`, so an object written or dropped by two threads
//! without a happens-before edge (a slot handed out twice) fails the model, as does a
//! lost wake-up (every thread blocked: loom reports a deadlock).
#![cfg(loom)]

use loom::thread;
use scope_stack::{LinearAllocator, Pool};

/// Runs `f` with a fresh pool of `capacity` slots.
fn with_pool(capacity: usize, f: impl FnOnce(&'static Pool<'static, u32>)) {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("loom", |scope| {
        let pool: &Pool<'_, u32> = scope.new_pool::<u32>(capacity);
        // SAFETY: `f` joins every thread it spawns before returning, and the pool
        // outlives this closure; the `'static` is never observed past it.
        let pool: &'static Pool<'static, u32> =
            unsafe { &*(pool as *const Pool<'_, u32>).cast::<Pool<'static, u32>>() };
        f(pool);
        assert_eq!(pool.len(), 0);
        // Every slot is free exactly once: the pool fills to capacity and no further.
        let all: Vec<_> = (0..capacity)
            .map(|i| pool.insert(i as u32).unwrap())
            .collect();
        assert!(pool.insert(99).is_err());
        drop(all);
    });
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

#[test]
fn two_threads_one_slot_never_share_it() {
    model(|| {
        with_pool(1, |pool| {
            let others: Vec<_> = (1..=2u32)
                .map(|t| {
                    thread::spawn(move || match pool.insert(t) {
                        Ok(mut b) => {
                            *b += 10;
                            assert_eq!(*b, t + 10);
                            true
                        }
                        Err(v) => {
                            assert_eq!(v, t);
                            false
                        }
                    })
                })
                .collect();
            let wins = others.into_iter().map(|h| h.join().unwrap());
            assert!(wins.filter(|w| *w).count() >= 1);
        });
    });
}

#[test]
fn three_threads_two_slots_no_slot_handed_out_twice() {
    model(|| {
        with_pool(2, |pool| {
            let handles: Vec<_> = (1..=3u32)
                .map(|t| {
                    thread::spawn(move || {
                        if let Ok(mut b) = pool.insert(t) {
                            *b *= 100;
                            assert_eq!(*b, t * 100);
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        });
    });
}

/// The ABA interleaving: while one thread is between reading the free-list head and
/// its compare-exchange, another inserts, erases and inserts again, bringing the
/// same slot back to the top with a different link.
#[test]
fn insert_erase_insert_aba() {
    model(|| {
        with_pool(2, |pool| {
            // A may find the pool full (B can hold both slots at times); what it must
            // never do is get a slot B holds.
            let a = thread::spawn(move || pool.insert(1).ok().map(|b| b.into_inner()));
            let b = thread::spawn(move || {
                let x = pool.insert(2).ok();
                let y = pool.insert(3).ok();
                drop(x);
                let z = pool.insert(4).ok();
                let y = y.map(|b| b.into_inner());
                let z = z.map(|b| b.into_inner());
                assert!(y.is_none_or(|v| v == 3) && z.is_none_or(|v| v == 4));
            });
            assert!(a.join().unwrap().is_none_or(|v| v == 1));
            b.join().unwrap();
        });
    });
}

#[test]
fn insert_wait_is_woken_by_an_erase() {
    model(|| {
        with_pool(1, |pool| {
            let held = pool.insert(1).unwrap();
            let waiter = thread::spawn(move || pool.insert_wait(2).into_inner());
            drop(held);
            assert_eq!(waiter.join().unwrap(), 2);
        });
    });
}

#[test]
fn two_waiters_one_slot_both_finish() {
    model(|| {
        with_pool(1, |pool| {
            let held = pool.insert(1).unwrap();
            let waiters: Vec<_> = (2..=3u32)
                .map(|v| thread::spawn(move || pool.insert_wait(v).into_inner()))
                .collect();
            drop(held);
            let mut got: Vec<u32> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
            got.sort();
            assert_eq!(got, [2, 3]);
        });
    });
}
