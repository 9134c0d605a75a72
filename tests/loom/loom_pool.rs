//! loom models of the pool's lock-free paths.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom loom_pool::`.
//!
//! The pool lives in a scope, but loom's threads need `'static` data; each model
//! extends the pool reference's lifetime and joins every thread before the scope ends.
//! Slot storage is a loom `UnsafeCell`, so an object written or dropped by two threads
//! without a happens-before edge (a slot handed out twice) fails the model, as does a
//! lost wake-up (every thread blocked: loom reports a deadlock).
#![cfg(loom)]

use crate::harness::{model, model_bounded, share, with_loom_pool, with_loom_pool_mut};
use loom::thread;
use scope_stack::{Handle, Pool, PoolBox};

/// Runs `f` with a fresh pool of `capacity` slots (one shard: loom's pools are small).
fn with_pool(capacity: usize, f: impl FnOnce(&'static Pool<'static, u32>)) {
    with_sharded_pool(capacity, 1, f)
}

/// Runs `f` with a fresh pool of `capacity` slots in `shards` shards, then checks that
/// every slot is free exactly once.
fn with_sharded_pool(capacity: usize, shards: usize, f: impl FnOnce(&'static Pool<'static, u32>)) {
    with_loom_pool(
        capacity,
        shards,
        |pool| {
            assert_eq!(pool.shard_count(), shards);
            f(pool)
        },
        |pool| {
            assert_eq!(pool.len(), 0);
            // Every slot is free exactly once: the pool fills to capacity and no further.
            let all: Vec<_> = (0..capacity)
                .map(|i| pool.insert(i as u32).unwrap())
                .collect();
            assert!(pool.insert(99).is_err());
            assert_eq!(pool.len(), capacity);
            drop(all);
            assert!(pool.is_empty());
        },
    );
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

/// Preemption bound 2: a waiter's round closes the owners' gate (issue 46), and at 3
/// this model ran loom past five minutes.
#[test]
fn two_waiters_one_slot_both_finish() {
    model_bounded(2, || {
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

// ----- shards -----

/// A thread whose home shard is empty steals from shard 1 while another thread frees a
/// slot into shard 1. Shard 1 has a free slot throughout, so the steal must succeed,
/// and the two never share a slot.
#[test]
fn steal_races_a_free_into_the_same_shard() {
    model(|| {
        // Two shards of two slots: box `a` fills shard 0, `b` half of shard 1.
        with_sharded_pool(4, 2, |pool| {
            let a: Vec<_> = (0..2)
                .map(|i| pool.insert_in_shard(0, i).unwrap())
                .collect();
            let b = pool.insert_in_shard(1, 10).unwrap();
            let freer = thread::spawn(move || drop(b));
            let thief = thread::spawn(move || {
                let mut got = pool
                    .insert_in_shard(0, 20)
                    .expect("shard 1 had a free slot");
                *got += 1;
                assert_eq!(*got, 21);
                got.into_inner()
            });
            freer.join().unwrap();
            assert_eq!(thief.join().unwrap(), 21);
            drop(a);
        });
    });
}

/// With no frees going on, `insert` fails only when every slot is taken: three threads
/// starting in different shards race for the two slots of two shards, and exactly two
/// of them get one.
#[test]
fn full_is_detected_across_shards() {
    model(|| {
        with_sharded_pool(2, 2, |pool| {
            let threads: Vec<_> = (0..3u32)
                .map(|t| thread::spawn(move || pool.insert_in_shard(t as usize, t).ok()))
                .collect();
            let boxes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
            assert_eq!(boxes.iter().flatten().count(), 2);
            for (t, b) in boxes.iter().enumerate() {
                if let Some(b) = b {
                    assert_eq!(**b, t as u32);
                }
            }
        });
    });
}

/// The ABA interleaving on one shard of a sharded pool: both threads start in shard 0,
/// and one inserts, erases and inserts again while the other is between reading the
/// shard's head and its compare-exchange.
#[test]
fn insert_erase_insert_aba_in_one_shard() {
    model(|| {
        with_sharded_pool(4, 2, |pool| {
            let a = thread::spawn(move || pool.insert_in_shard(0, 1).ok().map(|b| b.into_inner()));
            let b = thread::spawn(move || {
                let x = pool.insert_in_shard(0, 2).ok();
                let y = pool.insert_in_shard(0, 3).ok();
                drop(x);
                let z = pool.insert_in_shard(0, 4).ok();
                let y = y.map(|b| b.into_inner());
                let z = z.map(|b| b.into_inner());
                assert!(y.is_none_or(|v| v == 3) && z.is_none_or(|v| v == 4));
            });
            // Four slots for at most three objects: nobody finds the pool full.
            assert_eq!(a.join().unwrap(), Some(1));
            b.join().unwrap();
        });
    });
}

/// A waiter whose home is shard 0 is woken by a free into shard 1.
#[test]
fn insert_wait_is_woken_by_a_free_into_another_shard() {
    model(|| {
        with_sharded_pool(2, 2, |pool| {
            let home = pool.insert_in_shard(0, 1).unwrap();
            let other = pool.insert_in_shard(1, 2).unwrap();
            let waiter = thread::spawn(move || pool.insert_wait(3).into_inner());
            drop(other);
            assert_eq!(waiter.join().unwrap(), 3);
            drop(home);
        });
    });
}

// ----- remote frees (under loom every thread's home is shard 0) -----

/// Fills a pool of two shards of two slots: boxes holding shard 0's slots (values 0 and
/// 1) and boxes holding shard 1's (values 10 and 11).
fn fill_two_shards(
    pool: &'static Pool<'static, u32>,
) -> (Vec<PoolBox<'static, u32>>, Vec<PoolBox<'static, u32>>) {
    let home = (0..2)
        .map(|i| pool.insert_in_shard(0, i).unwrap())
        .collect();
    let far = (10..12)
        .map(|i| pool.insert_in_shard(1, i).unwrap())
        .collect();
    (home, far)
}

/// A free of a shard-1 slot by a thread living in shard 0 goes onto shard 1's remote
/// list, while an insert starting in shard 1 finds the local list empty and takes the
/// remote list. The insert may miss the slot (the free came late) but never shares it.
#[test]
fn remote_free_races_an_insert_that_takes_the_remote_list() {
    model(|| {
        with_sharded_pool(2, 2, |pool| {
            let far = pool.insert_in_shard(1, 1).unwrap();
            let near = pool.insert_in_shard(0, 2).unwrap();
            let freer = thread::spawn(move || drop(far));
            let taker = thread::spawn(move || {
                pool.insert_in_shard(1, 3).ok().map(|mut b| {
                    *b += 1;
                    b.into_inner()
                })
            });
            freer.join().unwrap();
            assert!(taker.join().unwrap().is_none_or(|v| v == 4));
            drop(near);
        });
    });
}

/// Two remote frees build a chain on shard 1's remote list while another thread
/// inserts twice from shard 1: the first insert that finds the chain takes it, keeps
/// one slot and moves the rest to the local list, racing the second free.
#[test]
fn remote_chain_moves_to_the_local_list_while_frees_go_on() {
    model(|| {
        with_sharded_pool(4, 2, |pool| {
            let (home, far) = fill_two_shards(pool);
            let freer = thread::spawn(move || drop(far));
            let taker = thread::spawn(move || {
                let a = pool.insert_in_shard(1, 20).ok();
                let b = pool.insert_in_shard(1, 21).ok();
                (a.map(|b| b.into_inner()), b.map(|b| b.into_inner()))
            });
            freer.join().unwrap();
            let (a, b) = taker.join().unwrap();
            assert!(a.is_none_or(|v| v == 20) && b.is_none_or(|v| v == 21));
            drop(home);
        });
    });
}

/// A waiter sleeps on a full pool; another thread frees two shard-1 slots remotely
/// while a third inserts (taking the remote chain, and moving its rest over the
/// waiter's mark). The waiter must still get a slot. Preemption bound 1: since the
/// owner's path (issue 46) a waiter's every round also closes the owners' gate, and
/// three threads at bound 2 ran loom past ten minutes (bound 3 is a
/// `LOOM_MAX_PREEMPTIONS=3` run away).
#[test]
fn insert_wait_survives_a_remote_chain_moving_over_its_mark() {
    model_bounded(1, || {
        with_sharded_pool(4, 2, |pool| {
            let (home, far) = fill_two_shards(pool);
            let waiter = thread::spawn(move || pool.insert_wait(30).into_inner());
            let freer = thread::spawn(move || drop(far));
            let other = pool.insert_in_shard(1, 40).ok().map(|b| b.into_inner());
            assert!(other.is_none_or(|v| v == 40));
            freer.join().unwrap();
            assert_eq!(waiter.join().unwrap(), 30);
            drop(home);
        });
    });
}

/// No frees run, two slots are free (a chain of two on shard 1's remote list) and two
/// threads insert: both must get one. While one of them moves the chain from the remote
/// list to the local list, the chain is on neither; the other must not take that for a
/// full pool.
#[test]
fn a_remote_chain_in_transit_is_not_mistaken_for_a_full_pool() {
    model(|| {
        with_sharded_pool(4, 2, |pool| {
            let (home, far) = fill_two_shards(pool);
            // Freed here, on a shard-0 thread: both go onto shard 1's remote list.
            drop(far);
            let inserters: Vec<_> = (20..22u32)
                .map(|v| thread::spawn(move || pool.insert(v).map(|b| b.into_inner())))
                .collect();
            for (v, t) in (20..22u32).zip(inserters) {
                assert_eq!(t.join().unwrap(), Ok(v), "a free slot was missed");
            }
            drop(home);
        });
    });
}

// ----- never-used slots (a per-shard count, not on the lists) -----

/// A freed slot goes onto the list while two inserts race for it and for the shard's
/// last never-used slot: each slot goes to one of them at most, and the count hands
/// the never-used slot out once.
#[test]
fn a_free_races_two_inserts_for_freed_and_never_used_slots() {
    model(|| {
        with_pool(2, |pool| {
            let held = pool.insert(1).unwrap();
            let freer = thread::spawn(move || drop(held));
            let other = thread::spawn(move || {
                pool.insert(2).ok().map(|mut b| {
                    *b += 10;
                    b.into_inner()
                })
            });
            let mine = pool.insert(3).ok().map(|mut b| {
                *b += 20;
                b.into_inner()
            });
            freer.join().unwrap();
            let other = other.join().unwrap();
            assert!(other.is_none_or(|v| v == 12) && mine.is_none_or(|v| v == 23));
            // One slot was never used before the race: somebody got it.
            assert!(other.is_some() || mine.is_some());
        });
    });
}

/// No frees run and two never-used slots are left, both in shard 1, while the home
/// shard is full: two threads insert at once, and both must get one (the count's
/// compare-exchanges never lose a slot nor hand one out twice, and a scan never takes
/// a contended count for a full pool).
#[test]
fn two_inserts_race_for_another_shards_never_used_slots() {
    model(|| {
        with_sharded_pool(4, 2, |pool| {
            let home: Vec<_> = (0..2)
                .map(|i| pool.insert_in_shard(0, i).unwrap())
                .collect();
            let inserters: Vec<_> = (20..22u32)
                .map(|v| thread::spawn(move || pool.insert_in_shard(0, v).ok()))
                .collect();
            let got: Vec<_> = inserters.into_iter().map(|t| t.join().unwrap()).collect();
            for (v, b) in (20..22u32).zip(&got) {
                assert_eq!(b.as_deref(), Some(&v), "a never-used slot was missed");
            }
            // Both boxes are alive: they hold shard 1's two slots, once each.
            assert_eq!(pool.high_water_len(), 4);
            drop(got);
            drop(home);
        });
    });
}

// ----- the stock bits: which shards may hold freed slots -----

/// A free that puts a slot on an empty stack of shard 1 races an insert that reads
/// the shards' bits and searches. Whatever the order, once the free has returned its
/// shard's bit is set: if the racing insert missed the slot, the next insert takes it,
/// not a never-used one (four shards of one slot each; the home, shard 0, is full).
#[test]
fn a_free_filling_a_shard_races_a_search_and_the_next_insert_finds_it() {
    model(|| {
        with_sharded_pool(4, 4, |pool| {
            // Slot 1 in use, and no slot ever freed: every bit is clear. Slot 0 fills
            // the home.
            let again = pool.insert_in_shard(1, 2).unwrap();
            let home = pool.insert_in_shard(0, 0).unwrap();
            assert_eq!(pool.high_water_len(), 2);
            let freer = thread::spawn(move || drop(again));
            let searcher = thread::spawn(move || pool.insert(3).unwrap());
            freer.join().unwrap();
            let found = searcher.join().unwrap();
            assert_eq!(*found, 3);
            // The searcher took slot 1, or (the free came too late for it) a never-used
            // slot and slot 1 waits: then the next insert takes slot 1.
            let before = pool.high_water_len();
            let next = pool.insert(4).unwrap();
            if before == 3 {
                assert_eq!(
                    pool.high_water_len(),
                    3,
                    "a never-used slot went before slot 1"
                );
            }
            drop((next, found, home));
        });
    });
}

// ----- exclusive paths (`&mut Pool`) handing over to shared ones and back -----

/// Runs `f` with a fresh pool lent mutably, then checks that every slot is free exactly
/// once, as [`with_sharded_pool`] does.
fn with_pool_mut(capacity: usize, shards: usize, f: impl FnOnce(&mut Pool<'static, u32>)) {
    with_loom_pool_mut(capacity, shards, f, |pool| {
        assert_eq!(pool.len(), 0);
        let all: Vec<_> = (0..capacity)
            .map(|i| pool.insert(i as u32).unwrap())
            .collect();
        assert!(pool.insert(99).is_err());
        assert_eq!(pool.len(), capacity);
        drop(all);
        assert!(pool.is_empty());
    });
}

/// Exclusive inserts, then threads that race on the shared path for the rest (and free
/// remotely: their slots' shard is not their home), then exclusive removes and inserts
/// again. The shared threads see what the plain stores wrote (spawn orders it), the
/// exclusive phase sees what their compare-exchanges wrote (join orders it), and with
/// no free running at the end, full means full on both paths.
#[test]
fn exclusive_inserts_hand_over_to_shared_threads_and_back() {
    model(|| {
        with_pool_mut(3, 2, |pool| {
            // Shard 0 holds slots 0 and 1, shard 1 slot 2.
            let mine = pool.insert_mut(1).unwrap();
            // SAFETY: both threads are joined and every box becomes a handle or is
            // dropped inside.
            let theirs: Vec<Handle<u32>> = unsafe {
                share(pool, |shared| {
                    let threads: Vec<_> = (2..=3u32)
                        .map(|v| {
                            thread::spawn(move || {
                                let b = shared.insert_in_shard(1, v).ok()?;
                                assert_eq!(*b, v);
                                // The second thread's slot is freed again: onto the
                                // remote stack of its shard when that is shard 1.
                                if v == 3 {
                                    drop(b);
                                    None
                                } else {
                                    Some(b.into_handle())
                                }
                            })
                        })
                        .collect();
                    threads
                        .into_iter()
                        .filter_map(|t| t.join().unwrap())
                        .collect()
                })
            };
            assert!(theirs.len() <= 1);
            // Exclusive again: the pool holds `1` and maybe `2`; the free slots are
            // exactly the rest.
            let free = 3 - 1 - theirs.len();
            let more: Vec<_> = (0..free as u32)
                .map(|v| pool.insert_mut(10 + v).expect("a free slot was missed"))
                .collect();
            assert_eq!(pool.insert_mut(99), Err(99), "full means full");
            assert_eq!(pool.remove(mine), Some(1));
            for h in theirs {
                assert_eq!(pool.remove(h), Some(2));
            }
            for (v, h) in more.into_iter().enumerate() {
                assert_eq!(pool.remove(h), Some(10 + v as u32));
            }
        });
    });
}

/// A waiter on the shared path leaves its mark on the shard it was not woken through;
/// an exclusive phase then frees and fills over the marks (waking nobody, since nobody
/// can be waiting); a second waiter on the shared path must still be woken by the next
/// shared free (a lost wake-up is a deadlock that loom reports).
#[test]
fn a_waiter_after_an_exclusive_phase_is_still_woken() {
    model(|| {
        with_pool_mut(2, 2, |pool| {
            // SAFETY: the waiter is joined, and both boxes are dropped or handed to the
            // pool before the closure returns.
            let (a, b) = unsafe {
                share(pool, |shared| {
                    let held = shared.insert_in_shard(0, 1).unwrap();
                    let other = shared.insert_in_shard(1, 2).unwrap();
                    let waiter = thread::spawn(move || shared.insert_wait(3).into_handle());
                    drop(other);
                    (held.into_handle(), waiter.join().unwrap())
                })
            };
            // Exclusive: over whatever marks the waiter left.
            assert_eq!(pool.remove(b), Some(3));
            assert_eq!(pool.remove(a), Some(1));
            let kept = pool.insert_mut(4).unwrap();
            // SAFETY: as above.
            unsafe {
                share(pool, |shared| {
                    let last = shared.insert(5).expect("one slot was free");
                    let waiter = thread::spawn(move || shared.insert_wait(6).into_inner());
                    drop(last);
                    assert_eq!(waiter.join().unwrap(), 6);
                })
            };
            assert_eq!(pool.remove(kept), Some(4));
        });
    });
}

/// Two slots are freed remotely while another thread's insert takes the remote chain
/// (moving its rest to the local stack, racing the second free). Once both are joined,
/// an exclusive phase finds every free slot, wherever the chain ended up, and none twice.
#[test]
fn an_exclusive_phase_finds_slots_a_remote_chain_left_anywhere() {
    model(|| {
        with_pool_mut(4, 2, |pool| {
            // SAFETY: both threads are joined; every box is dropped or handed over.
            let held: Vec<Handle<u32>> = unsafe {
                share(pool, |shared| {
                    let (home, far) = fill_two_shards(shared);
                    let freer = thread::spawn(move || drop(far));
                    let taker = thread::spawn(move || {
                        shared.insert_in_shard(1, 20).ok().map(|b| b.into_handle())
                    });
                    freer.join().unwrap();
                    let mut held: Vec<_> = home.into_iter().map(|b| b.into_handle()).collect();
                    held.extend(taker.join().unwrap());
                    held
                })
            };
            let free = 4 - held.len();
            let mine: Vec<_> = (0..free as u32)
                .map(|v| pool.insert_mut(30 + v).expect("a free slot was missed"))
                .collect();
            assert_eq!(pool.insert_mut(99), Err(99), "full means full");
            let mut slots: Vec<usize> = held.iter().chain(&mine).map(|h| h.index()).collect();
            slots.sort_unstable();
            assert_eq!(slots, [0, 1, 2, 3], "a slot handed out twice");
            for h in held.into_iter().chain(mine) {
                assert!(pool.remove(h).is_some());
            }
        });
    });
}

// ----- the live count behind `len` -----
//
// Each shard's local line counts slots handed out and given back: on its `own` counter
// (a load and a store) by the thread that holds the shard's number as its dense index
// alone, on its `shared` counter (a read-modify-write) by every other thread. Under
// loom every thread shares index 0 unless it says otherwise, so these models hand
// threads their indices with `loom_hold_thread_index`; the main thread keeps sharing.

/// Two threads that count alone (indices 0 and 1, two shards) and the main thread,
/// which shares, insert and free at once; one box crosses threads and is freed on a
/// thread that did not count it out. A `len` taken meanwhile counts at least the
/// caller's own live box (every other slot here is counted back on the counter that
/// counted it out, so no free can be seen without its insert) and at most the
/// capacity; once the threads are joined it is exact, on every interleaving (a lost
/// count, a plain store racing another writer, would show here).
#[test]
fn len_is_exact_once_threads_that_count_alone_and_shared_are_joined() {
    model(|| {
        with_sharded_pool(4, 2, |pool| {
            let a = thread::spawn(move || {
                scope_stack::loom_hold_thread_index(0);
                pool.insert(1).unwrap()
            });
            let b = thread::spawn(move || {
                scope_stack::loom_hold_thread_index(1);
                let mine = pool.insert(3).unwrap();
                assert!((1..=3).contains(&pool.len()));
                drop(mine);
            });
            let main = pool.insert(4).unwrap();
            let seen = pool.len();
            assert!((1..=3).contains(&seen), "len {seen} mid-run");
            let kept = a.join().unwrap();
            b.join().unwrap();
            assert_eq!(pool.len(), 2);
            // Freed on a thread that shares its index: counted back on `shared`.
            drop(kept);
            assert_eq!(pool.len(), 1);
            drop(main);
            assert_eq!(pool.len(), 0);
            assert!(pool.is_empty());
        });
    });
}

/// Exclusive inserts count on `own` counters with plain stores, threads that hold those
/// very indices then count on them too, and an exclusive phase removes again: each side
/// sees the other's counts (the hand-over orders them), so `len` is exact in every
/// phase.
#[test]
fn len_is_exact_across_exclusive_and_shared_phases() {
    model(|| {
        with_pool_mut(3, 2, |pool| {
            let first = pool.insert_mut(1).unwrap();
            let second = pool.insert_mut(2).unwrap();
            assert_eq!(pool.len(), 2);
            // SAFETY: both threads are joined and every box is dropped or turned into a
            // handle inside.
            let theirs: Vec<Handle<u32>> = unsafe {
                share(pool, |shared| {
                    let threads: Vec<_> = (0..2u32)
                        .map(|t| {
                            thread::spawn(move || {
                                scope_stack::loom_hold_thread_index(t);
                                let b = shared.insert(10 + t).ok()?;
                                (t == 0).then(|| b.into_handle())
                            })
                        })
                        .collect();
                    let theirs: Vec<_> = threads
                        .into_iter()
                        .filter_map(|t| t.join().unwrap())
                        .collect();
                    assert_eq!(shared.len(), 2 + theirs.len());
                    theirs
                })
            };
            // Thread 0 may have found the one free slot taken by thread 1's box.
            assert!(theirs.len() <= 1);
            assert_eq!(pool.len(), 2 + theirs.len());
            assert_eq!(pool.remove(first), Some(1));
            assert_eq!(pool.remove(second), Some(2));
            assert_eq!(pool.len(), theirs.len());
            for h in theirs {
                assert_eq!(pool.remove(h), Some(10));
            }
            assert!(pool.is_empty());
        });
    });
}
