//! The exclusive paths (`insert_mut`, `insert_with_mut`, and `remove`/`retain`, which
//! free without atomic read-modify-writes) keep every promise of the shared ones, alone
//! and interleaved with shared use on other threads: full means full, the high-water
//! mark, generations, `len`, reports, and waiters that come after an exclusive phase.

use std::cell::Cell;
use std::sync::Barrier;
use std::time::Duration;

use scope_stack::{slot_root, Handle, LinearAllocator, Pool};

thread_local! {
    /// `Tracked` values alive on this thread.
    static ALIVE: Cell<isize> = const { Cell::new(0) };
}

/// Counts how many of its kind are alive on this thread, to catch leaks and double drops.
#[derive(Debug)]
struct Tracked(u32);

impl Tracked {
    fn new(v: u32) -> Tracked {
        ALIVE.with(|a| a.set(a.get() + 1));
        Tracked(v)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        ALIVE.with(|a| a.set(a.get() - 1));
    }
}

fn alive() -> isize {
    ALIVE.with(Cell::get)
}

#[test]
fn insert_mut_fills_every_slot_of_every_shard_and_then_gives_the_value_back() {
    for shards in [1, 3, 8] {
        let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
        memory.scope("level", |level| {
            let pool = level.new_pool_with_shards::<Tracked>(20, shards);
            let handles: Vec<Handle<Tracked>> = (0..20)
                .map(|i| pool.insert_mut(Tracked::new(i)).unwrap())
                .collect();
            let back = pool.insert_mut(Tracked::new(99)).unwrap_err();
            assert_eq!(back.0, 99, "{shards} shards");
            drop(back);
            assert!(pool.is_full());
            assert_eq!(pool.len(), 20);
            assert_eq!(pool.high_water_len(), 20);
            // Every slot once.
            let mut slots: Vec<usize> = handles.iter().map(|h| h.index()).collect();
            slots.sort_unstable();
            assert_eq!(slots, (0..20).collect::<Vec<_>>());
            for (i, h) in handles.iter().enumerate() {
                assert_eq!(pool.get(*h).map(|t| t.0), Some(i as u32));
            }
            for (i, h) in handles.into_iter().enumerate() {
                assert_eq!(pool.remove(h).map(|t| t.0), Some(i as u32));
            }
            assert!(pool.is_empty());
            assert_eq!(alive(), 0);
            // The shared path finds every slot the exclusive one freed, and vice versa.
            let boxes: Vec<_> = (0..20)
                .map(|i| pool.insert(Tracked::new(i)).unwrap())
                .collect();
            assert!(pool.insert(Tracked::new(99)).is_err());
            drop(boxes);
            let handles: Vec<_> = (0..20)
                .map(|i| pool.insert_mut(Tracked::new(i)).unwrap())
                .collect();
            assert!(pool.insert_mut(Tracked::new(99)).is_err());
            assert_eq!(pool.high_water_len(), 20);
            drop(handles);
        });
        assert_eq!(alive(), 0, "the scope dropped what the pool still held");
    }
}

#[test]
fn a_removed_slot_gets_a_new_generation_and_old_handles_find_nothing() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool::<&str>(1);
        let a = pool.insert_mut("a").unwrap();
        assert_eq!(pool.remove(a), Some("a"));
        let b = pool.insert_mut("b").unwrap();
        assert_eq!(a.index(), b.index());
        assert_ne!(a.generation(), b.generation());
        assert_eq!(pool.get(a), None);
        assert_eq!(pool.get_mut(a), None);
        assert_eq!(pool.remove(a), None);
        assert_eq!(pool.get(b), Some(&"b"));
        // A slot filled through a box and freed exclusively moves on too.
        pool.remove(b);
        let c = pool.insert("c").unwrap().into_handle();
        assert_ne!(b.generation(), c.generation());
        assert_eq!(pool.remove(b), None);
        assert_eq!(pool.remove(c), Some("c"));
        let d = pool.insert_mut("d").unwrap();
        assert_ne!(c.generation(), d.generation());
        assert_eq!(pool.get(c), None);
    });
}

#[test]
fn an_exclusive_free_is_the_next_exclusive_insert_s_slot() {
    // Last in, first out: a slot freed through `&mut Pool` goes back onto its own
    // shard's local stack, where the next exclusive insert looks first.
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u32>(16, 4);
        let handles: Vec<_> = (0..10).map(|i| pool.insert_mut(i).unwrap()).collect();
        for &h in &handles[2..5] {
            pool.remove(h);
        }
        pool.remove(handles[8]);
        let again: Vec<usize> = (0..4)
            .map(|i| pool.insert_mut(i).unwrap().index())
            .collect();
        let freed = |k: usize| handles[k].index();
        assert_eq!(again[0], freed(8));
        let mut rest = again[1..].to_vec();
        rest.sort_unstable();
        let mut want = vec![freed(2), freed(3), freed(4)];
        want.sort_unstable();
        assert_eq!(rest, want, "freed slots before never-used ones");
        assert_eq!(pool.high_water_len(), 10);
    });
}

#[test]
fn a_handle_from_another_pool_finds_nothing_on_the_exclusive_path() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let one = level.new_pool::<u32>(4);
        let two = level.new_pool::<u32>(4);
        let h = one.insert_mut(1).unwrap();
        assert_eq!(two.remove(h), None);
        assert_eq!(one.remove(h), Some(1));
    });
}

#[test]
fn insert_with_mut_builds_in_place_and_hands_the_closure_back_when_full() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool::<Tracked>(1);
        let h = pool
            .insert_with_mut(|| Tracked::new(1))
            .unwrap_or_else(|_| unreachable!());
        let called = Cell::new(false);
        let back = pool
            .insert_with_mut(|| {
                called.set(true);
                Tracked::new(2)
            })
            .expect_err("full");
        assert!(!called.get(), "un-called when full");
        assert_eq!(pool.remove(h).map(|t| t.0), Some(1));
        let h = pool.insert_with_mut(back).ok().unwrap();
        assert!(called.get());
        assert_eq!(pool.get(h).map(|t| t.0), Some(2));
    });
    assert_eq!(alive(), 0);
}

#[test]
fn a_panic_in_insert_with_mut_gives_the_slot_back() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool::<Tracked>(1);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = pool.insert_with_mut(|| -> Tracked { panic!("boom") });
        }));
        assert!(caught.is_err());
        assert_eq!(pool.len(), 0);
        assert!(!pool.is_full());
        let h = pool.insert_mut(Tracked::new(3)).unwrap();
        assert_eq!(pool.get(h).map(|t| t.0), Some(3));
        // The slot that was claimed and given back counts as used (as on the shared path).
        assert_eq!(pool.high_water_len(), 1);
    });
    assert_eq!(alive(), 0);
}

#[test]
fn retain_frees_on_the_exclusive_path_and_a_panicking_drop_still_frees_the_slot() {
    struct Bomb(bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            if self.0 {
                panic!("bomb");
            }
        }
    }
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<Bomb>(4, 2);
        let _quiet = pool.insert_mut(Bomb(false)).ok().unwrap();
        let _loud = pool.insert_mut(Bomb(true)).ok().unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.retain(|_, b| !b.0);
        }));
        assert!(caught.is_err());
        assert_eq!(pool.len(), 1);
        // All three free slots are there: the bomb's, and two never used.
        let more: Vec<_> = (0..3)
            .map(|_| pool.insert_mut(Bomb(false)).ok().unwrap())
            .collect();
        assert!(pool.is_full());
        assert_eq!(more.len(), 3);
    });
}

#[test]
fn one_shard_high_water_is_exact_across_both_paths() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u32>(64, 1);
        let mut held: Vec<Handle<u32>> = (0..10).map(|i| pool.insert_mut(i).unwrap()).collect();
        for h in held.drain(..5) {
            pool.remove(h);
        }
        // Five freed, five live: inserts on either path reuse the freed slots first.
        let shared: Vec<_> = (0..3)
            .map(|i| pool.insert(i).unwrap().into_handle())
            .collect();
        held.extend((0..2).map(|i| pool.insert_mut(i).unwrap()));
        assert_eq!(pool.len(), 10);
        assert_eq!(pool.high_water_len(), 10);
        held.push(pool.insert_mut(10).unwrap());
        assert_eq!(pool.high_water_len(), 11);
        for h in held.into_iter().chain(shared) {
            assert!(pool.remove(h).is_some());
        }
        assert_eq!(pool.high_water_len(), 11);
        assert!(pool.is_empty());
    });
}

#[test]
fn insert_mut_takes_slots_freed_on_other_threads_before_never_used_ones() {
    // Slots freed on threads with other homes wait on remote stacks; an exclusive insert
    // must find them there (and on every other shard) before it touches a fresh slot.
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u64>(256, 16);
        let boxes: Vec<_> = (0..40).map(|i| pool.insert(i).unwrap()).collect();
        let mid = Barrier::new(2);
        std::thread::scope(|t| {
            t.spawn(|| {
                drop(boxes); // freed here: onto the owning shards' remote stacks
                mid.wait();
            });
            t.spawn(|| {
                // Another thread inserts and frees in its own home too.
                let mine: Vec<_> = (0..10).map(|i| pool.insert(i).unwrap()).collect();
                drop(mine);
                mid.wait();
            });
        });
        let peak = pool.high_water_len();
        assert!((40..=50).contains(&peak), "{peak}");
        let handles: Vec<_> = (0..peak as u64)
            .map(|i| pool.insert_mut(i).unwrap())
            .collect();
        assert_eq!(
            pool.high_water_len(),
            peak,
            "a fresh slot while freed ones waited"
        );
        assert_eq!(pool.len(), peak);
        for h in handles {
            pool.remove(h);
        }
    });
}

#[test]
fn exclusive_and_shared_phases_alternate_across_threads() {
    const THREADS: usize = 4;
    let rounds = if cfg!(miri) { 3 } else { 200 };
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<(usize, u32)>(64, 4);
        let mut mine: Vec<Handle<(usize, u32)>> = Vec::new();
        for round in 0..rounds {
            // Exclusive: top up to 16 of ours.
            while mine.len() < 16 {
                mine.push(pool.insert_mut((usize::MAX, round)).unwrap());
            }
            // Shared: workers insert and free for a while, then (once every worker is
            // done freeing) fill the rest of the pool and keep what they got. With no
            // free running, full must mean full.
            let start_filling = Barrier::new(THREADS);
            let kept: Vec<Vec<Handle<(usize, u32)>>> = std::thread::scope(|t| {
                let (pool, start_filling) = (&*pool, &start_filling);
                let workers: Vec<_> = (0..THREADS)
                    .map(|w| {
                        t.spawn(move || {
                            let mut churn = Vec::new();
                            for i in 0..8 {
                                if let Ok(b) = pool.insert((w, i)) {
                                    churn.push(b);
                                }
                                if i % 3 == 2 {
                                    churn.clear();
                                }
                            }
                            drop(churn);
                            start_filling.wait();
                            let mut kept = Vec::new();
                            let mut i = 0u32;
                            while let Ok(b) = pool.insert((w, i)) {
                                assert_eq!(*b, (w, i));
                                kept.push(b.into_handle());
                                i += 1;
                            }
                            kept
                        })
                    })
                    .collect();
                workers.into_iter().map(|w| w.join().unwrap()).collect()
            });
            let kept: Vec<_> = kept.into_iter().flatten().collect();
            assert_eq!(mine.len() + kept.len(), 64, "round {round}: not full");
            assert!(pool.is_full());
            assert!(pool.insert_mut((0, 0)).is_err());
            assert_eq!(pool.high_water_len(), 64);
            // Exclusive: remove every worker's object and half of ours.
            for h in kept {
                let (w, _) = pool.remove(h).expect("a live handle");
                assert!(w < THREADS);
            }
            for h in mine.drain(..8) {
                assert_eq!(pool.remove(h).unwrap().0, usize::MAX);
            }
            assert_eq!(pool.len(), 8);
        }
    });
}

#[test]
fn a_waiter_after_an_exclusive_phase_is_woken_by_a_shared_free() {
    // Phase 1 leaves waiters' marks behind (a waiter marks every shard, is woken through
    // one); phase 2 inserts and removes exclusively over them; phase 3 must still wake
    // a new waiter.
    let rounds = if cfg!(miri) { 2 } else { 50 };
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u32>(4, 4);
        for _ in 0..rounds {
            // Phase 1, shared: full, a waiter, a free.
            let mut handles = std::thread::scope(|t| {
                let pool = &*pool;
                let mut boxes: Vec<_> = (0..4).map(|i| pool.insert(i).unwrap()).collect();
                let waiter = t.spawn(move || pool.insert_wait(10).into_handle());
                std::thread::sleep(Duration::from_millis(1));
                boxes.pop();
                let mut handles = vec![waiter.join().unwrap()];
                handles.extend(boxes.into_iter().map(|b| b.into_handle()));
                handles
            });
            assert!(pool.is_full());
            // Phase 2, exclusive.
            assert_eq!(pool.remove(handles[0]), Some(10));
            handles[0] = pool.insert_mut(11).unwrap();
            assert!(pool.insert_mut(12).is_err());
            for &h in &handles {
                assert!(pool.remove(h).is_some());
            }
            assert_eq!(pool.get(handles[0]), None);
            let kept: Vec<_> = (0..3).map(|i| pool.insert_mut(i).unwrap()).collect();
            // Phase 3, shared: fill the last slot, wait for one, free one.
            std::thread::scope(|t| {
                let pool = &*pool;
                let last = pool.insert(3).unwrap();
                let waiter = t.spawn(move || {
                    pool.insert_wait_timeout(20, Duration::from_secs(30))
                        .map(|b| b.into_inner())
                });
                std::thread::sleep(Duration::from_millis(1));
                drop(last);
                assert_eq!(waiter.join().unwrap(), Ok(20), "a lost wake-up");
            });
            for h in kept {
                pool.remove(h);
            }
            assert!(pool.is_empty());
        }
    });
}

#[test]
fn reports_count_exclusive_inserts_and_removes() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool_with_shards::<u64>(32, 1);
        let handles: Vec<_> = (0..5).map(|i| pool.insert_mut(i).unwrap()).collect();
        pool.remove(handles[0]);
        let map = level.report();
        let row = &map.scopes[0].pools[0];
        assert_eq!((row.len, row.capacity, row.high_water_len), (4, 32, 5));
        assert!(row.high_water_exact);
        assert!(map.to_string().contains("len 4/32 (high-water 5)"));
    });
}

struct Level<'s> {
    enemies: &'s mut Pool<'s, String>,
    boss: Handle<String>,
}
slot_root!(struct LevelRoot => Level);

#[test]
fn a_level_built_on_a_loader_thread_plays_through_with_mut() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 64 << 10);
        std::thread::scope(|t| {
            let mut level = t
                .spawn(|| {
                    levels
                        .load_concurrent::<LevelRoot>("forest", |s| {
                            let enemies = s.new_pool::<String>(16);
                            let boss = enemies.insert_mut("boss".to_string()).unwrap();
                            for i in 0..4 {
                                enemies.insert_mut(format!("minion {i}")).unwrap();
                            }
                            Level { enemies, boss }
                        })
                        .unwrap()
                })
                .join()
                .unwrap();
            // Played here, on another thread: exclusive frames, then a shared phase.
            for frame in 0..20 {
                level.with_mut(|l, _| {
                    let h = l.enemies.insert_mut(format!("shot {frame}")).unwrap();
                    l.enemies.get_mut(l.boss).unwrap().push('!');
                    assert_eq!(l.enemies.remove(h).unwrap(), format!("shot {frame}"));
                });
            }
            level.with(|l| {
                let pool = &*l.enemies;
                std::thread::scope(|w| {
                    for _ in 0..2 {
                        w.spawn(move || drop(pool.insert("spark".to_string()).unwrap()));
                    }
                });
                assert_eq!(pool.len(), 5);
                assert_eq!(pool.get(l.boss).unwrap().len(), "boss".len() + 20);
                assert!(pool.high_water_len() <= 7);
            });
        });
    });
}
