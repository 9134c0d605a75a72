//! A pool's shards: what "full" means across them, stealing, the shard count and its
//! errors, the memory they take, and waiters woken from any shard.

use std::sync::Barrier;
use std::time::Duration;

use scope_stack::{AllocErrorKind, LinearAllocator, Pool, PoolBox, MAX_POOL_SHARDS};

/// From several threads at once, fill the pool to exactly its capacity (each thread
/// taking more than its home shard holds, so they must steal), check that it is full
/// for everyone, free the boxes on other threads than made them, and fill it again.
#[test]
fn threads_fill_to_exactly_capacity_free_elsewhere_and_fill_again() {
    const THREADS: usize = 4;
    const CAPACITY: usize = 64;
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = &*level.new_pool_with_shards::<(usize, usize)>(CAPACITY, 8);
        assert_eq!(pool.shard_count(), 8);
        // Uneven shares: thread 0 takes 34 slots (four shards' worth), the others 10.
        let share = |t: usize| if t == 0 { 34 } else { 10 };
        assert_eq!((0..THREADS).map(share).sum::<usize>(), CAPACITY);

        for round in 0..3 {
            let barrier = Barrier::new(THREADS);
            let boxes: Vec<Vec<PoolBox<'_, (usize, usize)>>> = std::thread::scope(|s| {
                let workers: Vec<_> = (0..THREADS)
                    .map(|t| {
                        let barrier = &barrier;
                        s.spawn(move || {
                            barrier.wait();
                            let mine: Vec<_> = (0..share(t))
                                .map(|i| pool.insert((t, i)).expect("a free slot was missed"))
                                .collect();
                            // Every thread is done inserting: the pool is full for all.
                            barrier.wait();
                            assert!(pool.insert((t, usize::MAX)).is_err());
                            assert!(pool.is_full());
                            mine
                        })
                    })
                    .collect();
                workers.into_iter().map(|w| w.join().unwrap()).collect()
            });
            assert_eq!(pool.len(), CAPACITY);
            for (t, mine) in boxes.iter().enumerate() {
                for (i, b) in mine.iter().enumerate() {
                    assert_eq!(**b, (t, i));
                }
            }
            // Free in another thread order: thread t frees what thread t + 1 + round made.
            let mut boxes: Vec<Option<Vec<_>>> = boxes.into_iter().map(Some).collect();
            std::thread::scope(|s| {
                for t in 0..THREADS {
                    let theirs = boxes[(t + 1 + round) % THREADS].take().unwrap();
                    s.spawn(move || drop(theirs));
                }
            });
            assert_eq!(pool.len(), 0);
            assert!(!pool.is_full());
        }
    });
}

#[test]
fn one_thread_fills_and_drains_a_pool_built_for_many() {
    let capacity = if cfg!(miri) { 256 } else { 100_000 };
    let mut memory = LinearAllocator::with_capacity(64 << 20).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u64>(capacity, 32);
        assert_eq!(pool.shard_count(), 32);
        for _ in 0..2 {
            let all: Vec<_> = (0..capacity as u64)
                .map(|i| pool.insert(i).expect("the pool has room"))
                .collect();
            assert!(pool.is_full());
            assert_eq!(pool.insert(7).unwrap_err(), 7);
            assert_eq!(pool.len(), capacity);
            assert_eq!(pool.high_water_len(), capacity);
            // Every box has its own slot.
            let mut addrs: Vec<usize> = all.iter().map(|b| &**b as *const u64 as usize).collect();
            addrs.sort_unstable();
            addrs.dedup();
            assert_eq!(addrs.len(), capacity);
            assert!(all.iter().enumerate().all(|(i, b)| **b == i as u64));
            drop(all);
            assert!(pool.is_empty());
        }
    });
}

#[test]
fn shard_counts_are_checked_and_split_evenly() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let e = level.try_new_pool_with_shards::<u32>(64, 0).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::InvalidShardCount);
        assert!(e.to_string().contains("shard count"), "{e}");
        let e = level
            .try_new_pool_with_shards::<u32>(64, MAX_POOL_SHARDS + 1)
            .unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::InvalidShardCount);
        // Nothing was taken by the refusals.
        let used = level.used();
        assert!(level.try_new_pool_with_shards::<u32>(0, 4).is_err());
        assert_eq!(level.used(), used);

        assert_eq!(level.new_pool_with_shards::<u32>(10, 6).shard_count(), 5);
        assert_eq!(level.new_pool_with_shards::<u32>(3, 8).shard_count(), 3);
        assert_eq!(
            level.new_pool_with_shards::<u32>(1000, 16).shard_count(),
            16
        );
        assert_eq!(
            level
                .new_pool_with_shards::<u32>(4096, MAX_POOL_SHARDS)
                .shard_count(),
            MAX_POOL_SHARDS
        );
        assert_eq!(level.new_pool::<u32>(1024).shard_count(), 32);
        assert_eq!(level.new_pool::<u32>(100).shard_count(), 3);
    });
}

#[test]
fn memory_needed_with_shards_is_an_upper_bound_and_the_same_every_time() {
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    for (capacity, shards) in [(1, 1), (7, 3), (100, 8), (1000, 32), (4096, 256)] {
        let need = Pool::<[u8; 24]>::memory_needed_with_shards(capacity, shards).unwrap();
        let mut taken = Vec::new();
        for pad in [0usize, 1, 8, 100] {
            memory.scope("level", |level| {
                level.alloc_raw(pad, 1);
                let before = level.used();
                level.new_pool_with_shards::<[u8; 24]>(capacity, shards);
                let used = level.used() - before;
                assert!(used <= need, "{capacity}/{shards}: {used} > {need}");
                taken.push(used);
            });
        }
        // The pool's own footprint depends on nothing but its parameters (and the
        // alignment of where it starts, which the pads vary).
        assert!(taken.iter().max().unwrap() - taken.iter().min().unwrap() < 256);
    }
    assert_eq!(Pool::<u64>::memory_needed_with_shards(10, 0), None);
    assert_eq!(Pool::<u64>::memory_needed_with_shards(usize::MAX, 1), None);
}

#[test]
fn insert_in_shard_takes_any_shard_number_and_still_finds_every_slot() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<usize>(16, 4);
        // Shard numbers wrap around; a full home shard sends the insert elsewhere.
        let all: Vec<_> = (0..16)
            .map(|i| pool.insert_in_shard(i * 7, i).unwrap())
            .collect();
        assert!(pool.insert_in_shard(2, 99).is_err());
        drop(all);
        // All sixteen from one starting shard: four from it, twelve stolen.
        let all: Vec<_> = (0..16)
            .map(|i| pool.insert_in_shard(3, i).unwrap())
            .collect();
        assert!(pool.is_full());
        drop(all);
    });
}

#[test]
fn high_water_counts_the_slots_ever_used_in_each_shard() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u32>(64, 4);
        // This thread's home shard, and another one.
        let home = pool.home_shard();
        let other = (home + 1) % 4;
        let a: Vec<_> = (0..10)
            .map(|i| pool.insert_in_shard(home, i).unwrap())
            .collect();
        drop(a);
        let b: Vec<_> = (0..6)
            .map(|i| pool.insert_in_shard(other, i).unwrap())
            .collect();
        drop(b);
        // Never more than 10 at once: the six inserts that started in another shard
        // took slots the home shard had freed before any never-used one, so only 10
        // slots were ever used and the mark is the true peak.
        assert_eq!(pool.high_water_len(), 10);
        assert_eq!(pool.len(), 0);
        // The home shard reuses the slots this thread freed into it.
        let again: Vec<_> = (0..10)
            .map(|i| pool.insert_in_shard(home, i).unwrap())
            .collect();
        assert_eq!(pool.high_water_len(), 10);
        assert_eq!(pool.len(), 10);
        drop(again);
    });
}

#[test]
fn a_waiter_is_woken_by_a_free_in_a_shard_other_than_its_home() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        // Four shards of one slot each: box `i` holds shard `i`'s only slot.
        let pool = &*level.new_pool_with_shards::<u32>(4, 4);
        let mut held: Vec<Option<_>> = (0..4)
            .map(|i| Some(pool.insert_in_shard(i, i as u32).unwrap()))
            .collect();
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::channel();
            let waiter = s.spawn(move || {
                tx.send(pool.home_shard()).unwrap();
                *pool.insert_wait(10)
            });
            let home = rx.recv().unwrap();
            std::thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 20 }));
            drop(held[(home + 1) % 4].take());
            assert_eq!(waiter.join().unwrap(), 10);
        });
        assert_eq!(pool.len(), 3);
    });
}

#[test]
#[cfg(target_arch = "x86_64")]
fn the_pool_object_is_three_cache_lines() {
    // Read-only fields, the steal hint, and the futex word with the stock bits, each on
    // a 128-byte line.
    assert_eq!(std::mem::size_of::<Pool<'static, u64>>(), 384);
}

/// Slots that another thread freed (here: freed from a thread whose home is another
/// shard) come back in the order they were freed, oldest first, so a producer does not
/// at once reuse the slot whose lines the freeing thread just wrote.
#[test]
fn slots_freed_from_another_shard_come_back_oldest_first() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u32>(8, 2);
        let other = 1 - pool.home_shard();
        let made: Vec<_> = (0..4)
            .map(|i| pool.insert_in_shard(other, i).unwrap())
            .collect();
        // Slots by address (a box has no index); shard `other` holds slots 4k..4k+4.
        let order: Vec<*const u32> = made.iter().map(|b| &**b as *const u32).collect();
        // Freed here on the shared path (dropping the boxes; `remove` through `&mut Pool`
        // would take the exclusive path, which frees onto the local stack), from a
        // thread whose home is not `other`: they wait on `other`'s remote stack.
        for b in made {
            drop(b);
        }
        let again: Vec<_> = (10..14)
            .map(|i| pool.insert_in_shard(other, i).unwrap())
            .collect();
        let again_order: Vec<*const u32> = again.iter().map(|b| &**b as *const u32).collect();
        assert_eq!(again_order, order, "reused in the order they were freed");
        let handles: Vec<_> = again.into_iter().map(|b| b.into_handle()).collect();
        assert!(
            handles.iter().all(|h| h.index() / 4 == other),
            "{handles:?}"
        );
        assert_eq!(pool.high_water_len(), 4);
    });
}

/// A thread whose home shard is full takes never-used slots from the highest shard down
/// (threads hold the lowest indices, so those shards are nobody's home), and stays with
/// a shard until it is empty.
#[test]
fn a_thread_whose_home_is_full_steals_from_the_highest_shard_down() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u32>(8, 4);
        let home = pool.home_shard();
        let boxes: Vec<_> = (0..8).map(|i| pool.insert(i).unwrap()).collect();
        let shards: Vec<usize> = boxes
            .into_iter()
            .map(|b| b.into_handle().index() / 2)
            .collect();
        let mut expected = vec![home, home];
        for shard in (0..4).rev().filter(|&s| s != home) {
            expected.extend([shard, shard]);
        }
        assert_eq!(shards, expected);
    });
}

/// A search for a freed slot skips the shards whose lists never held one, and the
/// first free into such a shard makes it known: with the home full and no slot ever
/// freed, a slot freed into the lowest other shard (the last one a search reaches) is
/// the next insert's, before the never-used slots of the shards searched first.
#[test]
fn a_slot_freed_into_a_shard_that_never_held_one_is_taken_before_a_never_used_one() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = &*level.new_pool_with_shards::<u32>(16, 4);
        let home = pool.home_shard();
        let far = if home == 0 { 1 } else { 0 };
        let full: Vec<_> = (0..4)
            .map(|_| pool.insert_in_shard(home, 0).unwrap())
            .collect();
        let lone = pool.insert_in_shard(far, 1).unwrap();
        assert_eq!(pool.high_water_len(), 5);
        // The shared free path: the box is dropped.
        drop(lone);
        let next = pool.insert(2).unwrap();
        assert_eq!(
            pool.high_water_len(),
            5,
            "a never-used slot went before the freed one"
        );
        drop((full, next));
    });
}

/// As above, with the slot freed through `&mut Pool` (`remove`, the exclusive path).
#[test]
fn a_slot_removed_through_mut_into_a_shard_that_never_held_one_is_taken_next() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool: &mut Pool<'_, u32> = level.new_pool_with_shards(16, 4);
        let home = pool.home_shard();
        let far = if home == 0 { 1 } else { 0 };
        for _ in 0..4 {
            let _ = pool.insert_in_shard(home, 0).unwrap().into_handle();
        }
        let lone = pool.insert_in_shard(far, 1).unwrap().into_handle();
        assert_eq!(pool.remove(lone), Some(1));
        let next = pool.insert(2).unwrap().into_handle();
        assert_eq!(
            next.index(),
            lone.index(),
            "the removed slot, not a never-used one"
        );
        assert_eq!(pool.high_water_len(), 5);
    });
}
