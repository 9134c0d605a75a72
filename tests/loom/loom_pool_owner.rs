//! loom models of the pool owner's path (`src/pool/free_list/owner.rs`): a thread that
//! holds the dense index equal to a shard's number alone inserts and frees on its
//! private cache with plain loads and stores, and other threads reach that cache only
//! through the gate handshake (`steal.rs`, `waiters.rs`).
//!
//! Under loom both sides of the handshake are `fence(SeqCst)`: the fallback that
//! systems without `membarrier` get (`src/sync/asymmetric.rs`). The `membarrier`
//! pairing itself is outside the C++ memory model and outside what loom can check.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom loom_pool_owner::`.
#![cfg(loom)]

use crate::harness::{model, model_bounded, with_loom_pool};
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use scope_stack::{loom_hold_thread_index, Pool};

/// Runs `f` with a fresh pool of `capacity` slots in `shards` shards; afterwards (every
/// thread joined) each slot must be free exactly once, owners' caches included.
fn with_pool(capacity: usize, shards: usize, f: impl FnOnce(&'static Pool<'static, u32>)) {
    with_loom_pool(capacity, shards, f, |pool| {
        assert_eq!(pool.len(), 0);
        let all: Vec<_> = (0..capacity)
            .map(|i| pool.insert(i as u32).expect("every slot is free again"))
            .collect();
        assert!(pool.insert(99).is_err());
        drop(all);
    });
}

/// The owner frees its slot onto its cache and inserts again, while a thief that
/// finds every stack empty steals from the cache. The two never hold one slot at
/// once (loom's cell checks the slot's storage), and an insert that starts after the
/// owner's free (seen through `freed`) finds the slot: full means full.
#[test]
fn the_owner_path_races_a_thief() {
    model(|| {
        with_pool(1, 1, |pool| {
            let freed = Arc::new(AtomicBool::new(false));
            let owner = {
                let freed = freed.clone();
                thread::spawn(move || {
                    loom_hold_thread_index(0);
                    // The thief may have the slot: then there is nothing to free.
                    if let Ok(b) = pool.insert(1) {
                        drop(b);
                        freed.store(true, Ordering::Release);
                    }
                    // Again: from the cache, unless the thief took the slot.
                    pool.insert(2).ok().map(|b| b.into_inner())
                })
            };
            let thief = thread::spawn(move || {
                let after_free = freed.load(Ordering::Acquire);
                let got = pool.insert(3).ok().map(|mut b| {
                    *b += 1;
                    b.into_inner()
                });
                if after_free {
                    // The slot was free when this insert began; only the owner's
                    // second insert can have taken it since.
                    (got, true)
                } else {
                    (got, false)
                }
            });
            let again = owner.join().unwrap();
            let (got, after_free) = thief.join().unwrap();
            if after_free {
                assert!(got.is_some() || again.is_some(), "a free slot was missed");
            }
            assert!(got.is_none() || got == Some(4));
            assert!(again.is_none() || again == Some(2));
        });
    });
}

/// A waiter sleeps on a full pool while the owner frees its slot with the fast path:
/// the waiter's gate sends that free to the shared stack, whose push wakes it (a lost
/// wake-up leaves every thread blocked, which loom reports).
#[test]
fn a_waiter_is_woken_by_the_owners_free() {
    model(|| {
        with_pool(1, 1, |pool| {
            let (tx, rx) = loom::sync::mpsc::channel();
            let owner = thread::spawn(move || {
                loom_hold_thread_index(0);
                let b = pool.insert(1).unwrap();
                tx.send(()).unwrap();
                drop(b);
            });
            rx.recv().unwrap();
            assert_eq!(pool.insert_wait(2).into_inner(), 2);
            owner.join().unwrap();
        });
    });
}

/// A thread of shard 1 frees the owner's slot onto shard 0's remote stack while the
/// owner, its cache empty, takes that stack into its cache and then frees into the
/// cache; nothing is lost or handed out twice.
#[test]
fn a_remote_free_races_the_owners_refill() {
    model(|| {
        with_pool(2, 2, |pool| {
            // Both of shard 0's slots, taken on the main thread (shared index: under
            // loom every thread's home is shard 0).
            let x = pool.insert_in_shard(0, 1).unwrap();
            let y = pool.insert_in_shard(0, 2).unwrap();
            let remote = thread::spawn(move || {
                loom_hold_thread_index(1);
                drop(x);
            });
            let owner = thread::spawn(move || {
                loom_hold_thread_index(0);
                drop(y);
                let a = pool.insert(3).unwrap();
                let b = pool.insert(4).ok();
                (a.into_inner(), b.map(|b| b.into_inner()))
            });
            remote.join().unwrap();
            let (a, b) = owner.join().unwrap();
            assert_eq!(a, 3);
            assert!(b.is_none_or(|b| b == 4));
        });
    });
}

/// Two threads race an exact full check against the owner's free and reinsert: the
/// check freezes the owner's cache, so it either steals the slot or proves that it was
/// in use at one moment; never both threads with one slot.
#[test]
fn an_exact_full_check_races_the_owner() {
    model_bounded(2, || {
        with_pool(2, 1, |pool| {
            let held = pool.insert(1).unwrap();
            let owner = thread::spawn(move || {
                loom_hold_thread_index(0);
                drop(pool.insert(2).ok());
                let c = pool.insert(3).ok();
                c.map(|c| c.into_inner())
            });
            let checker = thread::spawn(move || pool.insert(4).ok().map(|b| b.into_inner()));
            let c = owner.join().unwrap();
            let d = checker.join().unwrap();
            // Two slots, `held` has one: the other goes to at most one of them, and
            // at least one of them gets it (each time one fails, the other held it).
            assert!(c.is_some() || d.is_some());
            drop(held);
        });
    });
}
