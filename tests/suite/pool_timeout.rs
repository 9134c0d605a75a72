//! `Pool::insert_wait_timeout`: gives up after about the timeout on a full pool, returns
//! early when a slot frees, and is woken by a free into any shard.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use scope_stack::LinearAllocator;

/// Long enough that a test finishing before it proves an early return.
const LONG: Duration = Duration::from_secs(if cfg!(miri) { 5 } else { 30 });

fn pause() {
    std::thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 20 }));
}

#[test]
fn times_out_on_a_full_pool_with_no_frees_and_hands_the_value_back() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool::<String>(2);
        let _a = pool.insert(String::from("a")).unwrap();
        let _b = pool.insert(String::from("b")).unwrap();
        let timeout = Duration::from_millis(if cfg!(miri) { 5 } else { 50 });
        let started = Instant::now();
        let back = pool
            .insert_wait_timeout(String::from("c"), timeout)
            .expect_err("nobody frees");
        let took = started.elapsed();
        assert_eq!(back, "c");
        assert!(
            took >= timeout,
            "returned after {took:?}, before the timeout"
        );
        if !cfg!(miri) {
            assert!(took < Duration::from_secs(5), "slept {took:?}");
        }
        // A zero timeout is one try.
        let started = Instant::now();
        assert_eq!(
            pool.insert_wait_timeout(String::from("d"), Duration::ZERO)
                .expect_err("full"),
            "d"
        );
        if !cfg!(miri) {
            assert!(started.elapsed() < Duration::from_secs(1));
        }
        assert_eq!(pool.len(), 2);
    });
}

#[test]
fn a_pool_with_room_inserts_at_once_whatever_the_timeout() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool::<u32>(2);
        assert_eq!(*pool.insert_wait_timeout(1, Duration::ZERO).unwrap(), 1);
        assert_eq!(*pool.insert_wait_timeout(2, Duration::MAX).unwrap(), 2);
    });
}

#[test]
fn returns_early_when_a_slot_frees() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = &*level.new_pool::<u32>(1);
        let held = pool.insert(1).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let started = Instant::now();
                let got = pool.insert_wait_timeout(2, LONG).map(|b| b.into_inner());
                (got, started.elapsed())
            });
            pause();
            drop(held);
            let (got, took) = waiter.join().unwrap();
            assert_eq!(got, Ok(2));
            assert!(took < LONG, "took {took:?}");
        });
        // Many waiters, a few frees: each free lets one in, the rest time out.
        let held = pool.insert(10).unwrap();
        std::thread::scope(|s| {
            let short = Duration::from_millis(if cfg!(miri) { 20 } else { 300 });
            let waiters: Vec<_> = (0..3)
                .map(|i| {
                    s.spawn(move || {
                        pool.insert_wait_timeout(20 + i, short)
                            .map(|b| b.into_inner())
                    })
                })
                .collect();
            pause();
            drop(held);
            let results: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
            assert!(
                results.iter().filter(|r| r.is_ok()).count() >= 1,
                "{results:?}"
            );
            for (i, r) in results.iter().enumerate() {
                if let Err(v) = r {
                    assert_eq!(*v, 20 + i as u32, "the value comes back");
                }
            }
        });
    });
}

#[test]
fn woken_by_a_free_into_a_shard_other_than_the_waiters_home() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = &*level.new_pool_with_shards::<u32>(4, 4);
        assert_eq!(pool.shard_count(), 4);
        // One slot per shard: slot `k` belongs to shard `k`.
        let mut held: Vec<_> = (0..4)
            .map(|k| Some(pool.insert_in_shard(k, k as u32).unwrap()))
            .collect();
        assert!(pool.is_full());
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            let waiter = s.spawn(move || {
                tx.send(pool.home_shard()).unwrap();
                let started = Instant::now();
                let got = pool.insert_wait_timeout(10, LONG).map(|b| b.into_inner());
                (got, started.elapsed())
            });
            let home = rx.recv().unwrap();
            pause();
            drop(held[(home + 1) % 4].take());
            let (got, took) = waiter.join().unwrap();
            assert_eq!(got, Ok(10));
            assert!(took < LONG, "took {took:?}");
        });
        assert_eq!(
            pool.len(),
            3,
            "the three still held (the waiter took its value out)"
        );
    });
}
