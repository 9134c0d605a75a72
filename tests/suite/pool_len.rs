//! `Pool::len` and `is_empty` read counts that the inserts and frees keep on each
//! shard's line: exact once every insert and free it must count has happened before it,
//! on every path (boxes, handles, exclusive inserts and removes, retain, a panicking
//! `insert_with`, boxes freed on another thread, forgotten boxes), and a snapshot within
//! the capacity while threads run. Reports give the same count.

use std::sync::mpsc;
use std::sync::{Arc, Barrier};

use scope_stack::{LinearAllocator, Pool, PoolBox};

/// Threads and objects per thread, scaled down under Miri.
fn scale(native: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        native
    }
}

#[test]
fn len_follows_every_insert_and_free_on_every_path() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<String>(64, 4);
        assert!(pool.is_empty());
        // Exclusive inserts and removes.
        let a = pool.insert_mut("a".into()).unwrap();
        let b = pool.insert_with_mut(|| "b".into()).ok().unwrap();
        assert_eq!(pool.len(), 2);
        assert_eq!(pool.remove(a).as_deref(), Some("a"));
        assert_eq!(pool.len(), 1);
        {
            let shared: &Pool<'_, String> = pool;
            // Boxes count while they live, handles while they are pooled.
            let boxed = shared.insert("c".into()).unwrap();
            let elsewhere = shared.insert_in_shard(3, "d".into()).unwrap();
            let pooled = shared
                .insert_with(|| "e".into())
                .ok()
                .unwrap()
                .into_handle();
            assert_eq!(shared.len(), 4);
            assert_eq!(PoolBox::into_inner(elsewhere), "d");
            assert_eq!(shared.len(), 3);
            drop(boxed);
            assert_eq!(shared.len(), 2);
            // A panicking `insert_with` gives its slot back: nothing is counted.
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = shared.insert_with(|| panic!("no object"));
            }));
            assert!(caught.is_err());
            assert_eq!(shared.len(), 2);
            // A forgotten box keeps its slot: it counts for good.
            std::mem::forget(shared.insert("leaked".into()).unwrap());
            assert_eq!(shared.len(), 3);
            let _ = pooled;
        }
        // `retain` removes exclusively.
        pool.retain(|_, s| s != "e");
        assert_eq!(pool.len(), 2);
        assert_eq!(pool.remove(b).as_deref(), Some("b"));
        assert_eq!(pool.len(), 1, "the forgotten box");
        assert!(!pool.is_empty());
    });
}

#[test]
fn len_is_exact_once_threads_that_free_each_others_objects_are_joined() {
    let threads = scale(8, 3);
    let per_thread = scale(500, 12);
    let mut memory = LinearAllocator::with_capacity(1 << 22).unwrap();
    memory.scope("level", |level| {
        // Fewer shards than threads: some threads share a home and count on its shared
        // counter, the others alone on their own.
        let pool: &Pool<'_, u64> = level.new_pool_with_shards::<u64>(threads * per_thread, 4);
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..threads)
            .map(|_| mpsc::channel::<PoolBox<'_, u64>>())
            .unzip();
        let start = Barrier::new(threads);
        std::thread::scope(|s| {
            for (t, inbox) in receivers.into_iter().enumerate() {
                let next = senders[(t + 1) % threads].clone();
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    for i in 0..per_thread {
                        let b = pool.insert((t * per_thread + i) as u64).unwrap();
                        match i % 3 {
                            // Kept in the pool.
                            0 => drop(b.into_handle()),
                            // Freed here.
                            1 => drop(b),
                            // Freed by the next thread.
                            _ => next.send(b).unwrap(),
                        }
                        for theirs in inbox.try_iter() {
                            drop(theirs);
                        }
                    }
                    drop(next);
                    // The rest of what the previous thread sends.
                    for theirs in inbox {
                        drop(theirs);
                    }
                });
            }
            drop(senders);
        });
        let kept = threads * per_thread.div_ceil(3);
        assert_eq!(pool.len(), kept);
        assert_eq!(pool.values().count(), kept);
        let map = level.report();
        assert_eq!(
            map.scopes[0].pools[0].len, kept,
            "the report reads the same count"
        );
    });
}

#[test]
fn len_while_threads_insert_and_free_stays_between_what_stays_and_what_they_can_hold() {
    let threads = scale(6, 2);
    let rounds = scale(20_000, 50);
    let holds = 4;
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u32>(256, 4);
        let staying: Vec<_> = (0..10).map(|i| pool.insert_mut(i).unwrap()).collect();
        let pool: &Pool<'_, u32> = pool;
        let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        std::thread::scope(|s| {
            for t in 0..threads {
                let done = Arc::clone(&done);
                s.spawn(move || {
                    let mut held = Vec::with_capacity(holds);
                    for r in 0..rounds {
                        if held.len() == holds {
                            held.clear();
                        }
                        held.push(pool.insert((t * rounds + r) as u32).unwrap());
                    }
                    drop(held);
                    done.fetch_add(1, std::sync::atomic::Ordering::Release);
                });
            }
            // Each thread frees what it inserted, on the counter that counted it out,
            // so a snapshot never counts a free without its insert, nor the reverse
            // beyond what a thread holds.
            let most = staying.len() + threads * holds;
            let mut reads = 0;
            while done.load(std::sync::atomic::Ordering::Acquire) < threads || reads < 10 {
                let len = pool.len();
                assert!(
                    (staying.len()..=most).contains(&len),
                    "len {len} outside {}..={most}",
                    staying.len()
                );
                assert!(!pool.is_empty());
                reads += 1;
            }
        });
        assert_eq!(pool.len(), staying.len());
    });
}

#[test]
fn high_water_len_and_the_report_count_the_slots_ever_used_in_every_shard() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u32>(64, 4);
        let first: Vec<_> = (0..20).map(|i| pool.insert_mut(i).unwrap()).collect();
        for h in first {
            pool.remove(h);
        }
        assert_eq!((pool.len(), pool.high_water_len()), (0, 20));
        // Freed slots are reused before never-used ones: the mark stays.
        let again: Vec<_> = (0..20).map(|i| pool.insert_mut(i).unwrap()).collect();
        assert_eq!((pool.len(), pool.high_water_len()), (20, 20));
        let map = level.report();
        let row = &map.scopes[0].pools[0];
        assert_eq!((row.len, row.high_water_len, row.capacity), (20, 20, 64));
        for h in again {
            pool.remove(h);
        }
        assert!(pool.is_empty());
        assert_eq!(level.report().scopes[0].pools[0].len, 0);
    });
}
