//! Behaviour of `Pool<T>`: slots, boxes, handles, teardown, errors, threads.
//!
//! Runs under Miri too (`cargo +nightly miri test --test suite pool::`); the thread
//! tests scale their loops down there.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use scope_stack::{AllocErrorKind, Handle, LinearAllocator, Pool, MAX_POOL_CAPACITY};

use crate::counting_alloc::heap_calls_during;

/// Scales loop counts down under Miri.
fn scaled(n: usize) -> usize {
    if cfg!(miri) {
        (n / 100).max(4)
    } else {
        n
    }
}

/// Records its id in a shared log when dropped.
struct Noisy {
    id: u32,
    log: Arc<Mutex<Vec<u32>>>,
}

impl Drop for Noisy {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(self.id);
    }
}

fn memory() -> LinearAllocator {
    LinearAllocator::with_capacity(1 << 16).unwrap()
}

// ----- slots and boxes -----

#[test]
fn insert_until_full_then_the_value_comes_back() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<String>(3);
        let boxes: Vec<_> = (0..3)
            .map(|i| pool.insert(i.to_string()).unwrap())
            .collect();
        assert!(pool.is_full());
        assert_eq!(pool.len(), 3);
        let back = pool.insert("late".to_string()).unwrap_err();
        assert_eq!(back, "late");
        assert_eq!(
            boxes.iter().map(|b| b.as_str()).collect::<Vec<_>>(),
            ["0", "1", "2"]
        );
        drop(boxes);
        assert!(!pool.is_full());
        assert!(pool.is_empty());
        assert_eq!(pool.high_water_len(), 3);
    });
}

#[test]
fn dropping_a_box_drops_the_object_and_frees_the_slot() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<Noisy>(1);
        let b = pool
            .insert(Noisy {
                id: 1,
                log: log.clone(),
            })
            .ok()
            .unwrap();
        assert!(pool
            .insert(Noisy {
                id: 2,
                log: log.clone()
            })
            .is_err());
        // The rejected value was handed back and then dropped by us.
        assert_eq!(*log.lock().unwrap(), [2]);
        drop(b);
        assert_eq!(*log.lock().unwrap(), [2, 1]);
        assert!(pool
            .insert(Noisy {
                id: 3,
                log: log.clone()
            })
            .is_ok());
        assert_eq!(*log.lock().unwrap(), [2, 1, 3]);
    });
}

#[test]
fn boxes_deref_mutably_and_objects_do_not_move() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<[u64; 4]>(8);
        let mut boxes: Vec<_> = (0..8).map(|i| pool.insert([i; 4]).unwrap()).collect();
        let addrs: Vec<*const [u64; 4]> = boxes.iter().map(|b| &**b as *const _).collect();
        for b in boxes.iter_mut() {
            b[1] += 100;
        }
        // Freeing some slots does not move the others.
        boxes.retain(|b| b[0] % 2 == 0);
        for b in &boxes {
            assert_eq!(**b, [b[0], b[0] + 100, b[0], b[0]]);
            assert!(addrs.contains(&(&**b as *const _)));
        }
    });
}

#[test]
fn len_and_high_water_follow_holes_and_reuse() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<u32>(16);
        let mut boxes: Vec<_> = (0..5).map(|i| Some(pool.insert(i).unwrap())).collect();
        boxes[1] = None;
        boxes[3] = None;
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.high_water_len(), 5);
        let h = pool.insert(9).unwrap().into_handle(); // reuses a hole
        assert_eq!((pool.len(), pool.high_water_len()), (4, 5));
        let more: Vec<_> = (0..3).map(|i| pool.insert(i).unwrap()).collect();
        assert_eq!((pool.len(), pool.high_water_len()), (7, 7));
        drop((boxes, more));
        assert_eq!((pool.len(), pool.high_water_len()), (1, 7));
        assert!(!pool.is_empty());
        pool.remove(h);
        assert!(pool.is_empty());
        assert_eq!(pool.high_water_len(), 7);
    });
}

#[test]
fn into_inner_moves_the_object_out() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<Vec<u8>>(1);
        let v = pool.insert(vec![1, 2, 3]).unwrap().into_inner();
        assert_eq!(v, [1, 2, 3]);
        assert!(pool.is_empty() && !pool.is_full());
    });
}

#[test]
fn zero_sized_objects() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<()>(2);
        let a = pool.insert(()).unwrap();
        let h = pool.insert(()).unwrap().into_handle();
        assert!(pool.insert(()).is_err());
        drop(a);
        assert_eq!(pool.get(h), Some(&()));
        assert_eq!(pool.remove(h), Some(()));
        assert!(pool.is_empty());
    });
}

#[test]
fn slots_are_reused_last_in_first_out() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<u32>(4);
        let a = pool.insert(1).unwrap();
        let addr = &*a as *const u32;
        drop(a);
        let b = pool.insert(2).unwrap();
        assert_eq!(&*b as *const u32, addr);
    });
}

// ----- handles -----

#[test]
fn handles_get_get_mut_remove() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<String>(4);
        let h = pool.insert("door".into()).unwrap().into_handle();
        assert_eq!(pool.get(h).unwrap(), "door");
        pool.get_mut(h).unwrap().push_str("way");
        assert_eq!(pool.get(h).unwrap(), "doorway");
        assert_eq!(pool.len(), 1);
        assert_eq!(pool.remove(h).unwrap(), "doorway");
        assert_eq!(pool.len(), 0);
        assert!(pool.get(h).is_none());
        assert!(pool.get_mut(h).is_none());
        assert!(pool.remove(h).is_none());
    });
}

#[test]
fn a_handle_goes_stale_when_its_slot_is_reused() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<u32>(1);
        let old = pool.insert(1).unwrap().into_handle();
        assert_eq!(pool.remove(old), Some(1));
        let new = pool.insert(2).unwrap().into_handle();
        assert_eq!(old.index(), new.index());
        assert_ne!(old, new);
        assert_eq!(pool.get(old), None);
        assert_eq!(pool.get(new), Some(&2));
        assert_eq!(pool.remove(old), None);
        assert_eq!(pool.len(), 1);
    });
}

#[test]
fn handles_never_reach_an_object_owned_by_a_box() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<u32>(1);
        let old = pool.insert(1).unwrap().into_handle();
        pool.remove(old);
        let boxed = pool.insert(2).unwrap();
        // Stale handle, and every forged bit pattern for slot 0: none may alias the box.
        assert_eq!(pool.get(old), None);
        let hits = (0..4u64)
            .flat_map(|state| {
                (0..64u64).map(move |g| (g << 2 | state) << 32 | old.to_bits() & 0xFFFF_FFFF)
            })
            .filter(|&bits| pool.get(Handle::from_bits(bits)).is_some())
            .count();
        assert_eq!(hits, 0);
        assert_eq!(*boxed, 2);
    });
}

#[test]
fn a_handle_from_another_pool_finds_nothing() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let a = level.new_pool::<u32>(4);
        let b = level.new_pool::<u32>(4);
        let ha = a.insert(1).unwrap().into_handle();
        let hb = b.insert(2).unwrap().into_handle();
        assert_eq!(ha.index(), hb.index());
        assert_eq!(a.get(hb), None);
        assert_eq!(b.get(ha), None);
        assert_eq!(b.remove(ha), None);
        assert_eq!(a.get(ha), Some(&1));
        assert_eq!(b.get(hb), Some(&2));
    });
}

#[test]
fn handle_is_eight_bytes_copy_eq_hash_debug() {
    assert_eq!(std::mem::size_of::<Handle<[u8; 100]>>(), 8);
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<u8>(8);
        let hs: Vec<Handle<u8>> = (0..8)
            .map(|i| pool.insert(i).unwrap().into_handle())
            .collect();
        let set: HashSet<Handle<u8>> = hs.iter().copied().collect();
        assert_eq!(set.len(), 8);
        let dbg = format!("{:?}", hs[3]);
        assert!(dbg.contains("index: 3"), "{dbg}");
        assert_eq!(Handle::<u8>::from_bits(hs[3].to_bits()), hs[3]);
    });
}

#[test]
fn iter_visits_pooled_objects_only() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<u32>(8);
        let hs: Vec<_> = (0..4)
            .map(|i| pool.insert(i).unwrap().into_handle())
            .collect();
        let boxed = pool.insert(99).unwrap();
        let seen: Vec<_> = pool.iter().map(|(h, v)| (h, *v)).collect();
        assert_eq!(seen, hs.iter().copied().zip(0..4).collect::<Vec<_>>());
        drop(boxed);
        for (h, v) in pool.iter_mut() {
            assert!(hs.contains(&h));
            *v += 10;
        }
        assert_eq!(pool.iter().map(|(_, v)| *v).sum::<u32>(), 10 + 11 + 12 + 13);
        pool.retain(|_, v| *v >= 12);
        assert_eq!(pool.len(), 2);
        assert_eq!(pool.get(hs[0]), None);
        assert_eq!(pool.get(hs[3]), Some(&13));
    });
}

/// A pool with holes, reused slots, a boxed object and several shards: what the
/// iteration tests below walk.
fn holey_pool<'s>(
    level: &scope_stack::ScopeStack<'s>,
) -> (&'s mut Pool<'s, u32>, Vec<Handle<u32>>) {
    let pool = level.new_pool_with_shards::<u32>(64, 4);
    let mut hs: Vec<_> = (0..40)
        .map(|i| pool.insert(i).unwrap().into_handle())
        .collect();
    for h in hs.iter().step_by(3) {
        pool.remove(*h).unwrap();
    }
    hs.retain(|h| pool.get(*h).is_some());
    hs.extend((100..105).map(|i| pool.insert(i).unwrap().into_handle()));
    (pool, hs)
}

#[test]
fn handles_from_iter_work_with_get_get_mut_and_remove() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let (pool, hs) = holey_pool(level);
        let boxed = pool.insert(999).unwrap();
        let seen: Vec<_> = pool.iter().collect();
        assert_eq!(seen.len(), hs.len(), "the boxed object is not visited");
        let set: HashSet<_> = seen.iter().map(|&(h, _)| h).collect();
        assert_eq!(set, hs.iter().copied().collect::<HashSet<_>>());
        for &(h, v) in &seen {
            assert!(
                std::ptr::eq(pool.get(h).unwrap(), v),
                "get finds the same object"
            );
        }
        drop(boxed);
        let handles: Vec<_> = pool.iter().map(|(h, _)| h).collect();
        for h in &handles {
            *pool.get_mut(*h).unwrap() += 1;
        }
        for h in handles {
            let v = *pool.get(h).unwrap();
            assert_eq!(pool.remove(h), Some(v));
            assert_eq!(pool.get(h), None, "removed through a handle from iter");
        }
        assert_eq!(pool.iter().count(), 0);
        assert!(pool.is_empty());
    });
}

#[test]
fn values_visits_what_iter_visits_in_slot_order() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let (pool, hs) = holey_pool(level);
        let boxed = pool.insert(999).unwrap();
        // The documented order: ascending slot index, whatever the shard.
        let indices: Vec<_> = pool.iter().map(|(h, _)| h.index()).collect();
        assert!(indices.windows(2).all(|w| w[0] < w[1]), "{indices:?}");
        assert_eq!(indices.len(), hs.len());
        // `values` is `iter` without the handles: the same objects, in the same order.
        let from_iter: Vec<*const u32> = pool.iter().map(|(_, v)| v as *const u32).collect();
        let from_values: Vec<*const u32> = pool.values().map(|v| v as *const u32).collect();
        assert_eq!(from_values, from_iter);
        assert!(
            !pool.values().any(|v| *v == 999),
            "boxed objects are not visited"
        );
        let sum: u32 = hs.iter().map(|h| pool.get(*h).unwrap()).sum();
        assert_eq!(pool.values().sum::<u32>(), sum);
        drop(boxed);
        // The mutable forms walk the same order too.
        let mut_order: Vec<_> = pool.iter_mut().map(|(h, _)| h.index()).collect();
        assert_eq!(mut_order, indices);
        assert_eq!(pool.values_mut().count(), hs.len());
    });
}

#[test]
fn changes_through_iter_mut_and_values_mut_stick() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let (pool, hs) = holey_pool(level);
        let before: Vec<u32> = hs.iter().map(|h| *pool.get(*h).unwrap()).collect();
        for (h, v) in pool.iter_mut() {
            *v += h.index() as u32 * 1000;
        }
        for (h, b) in hs.iter().zip(&before) {
            assert_eq!(*pool.get(*h).unwrap(), b + h.index() as u32 * 1000);
        }
        for v in pool.values_mut() {
            *v = v.wrapping_mul(3);
        }
        for (h, b) in hs.iter().zip(&before) {
            assert_eq!(
                *pool.get(*h).unwrap(),
                (b + h.index() as u32 * 1000).wrapping_mul(3)
            );
        }
    });
}

// ----- teardown -----

#[test]
fn unwinding_the_scope_drops_objects_left_in_the_pool() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<Noisy>(8);
        for id in 0..3 {
            pool.insert(Noisy {
                id,
                log: log.clone(),
            })
            .ok()
            .unwrap()
            .into_handle();
        }
        let kept = pool
            .insert(Noisy {
                id: 10,
                log: log.clone(),
            })
            .ok()
            .unwrap();
        std::mem::forget(kept); // a leaked box: its object still belongs to the slot
        let gone = pool
            .insert(Noisy {
                id: 20,
                log: log.clone(),
            })
            .ok()
            .unwrap();
        drop(gone);
        assert_eq!(*log.lock().unwrap(), [20]);
    });
    let mut dropped = log.lock().unwrap().clone();
    dropped.sort();
    assert_eq!(dropped, [0, 1, 2, 10, 20]);
    assert_eq!(mem.used(), 0);
}

#[test]
fn pool_is_dropped_in_reverse_order_with_other_scope_values() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut mem = memory();
    mem.scope("level", |level| {
        level.new_object(Noisy {
            id: 1,
            log: log.clone(),
        });
        let pool = level.new_pool::<Noisy>(2);
        pool.insert(Noisy {
            id: 2,
            log: log.clone(),
        })
        .ok()
        .unwrap()
        .into_handle();
        level.new_object(Noisy {
            id: 3,
            log: log.clone(),
        });
    });
    assert_eq!(*log.lock().unwrap(), [3, 2, 1]);
}

#[test]
fn a_panicking_destructor_does_not_skip_the_other_objects() {
    struct Bomb(u32, Arc<AtomicUsize>);
    impl Drop for Bomb {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::Relaxed);
            if self.0 == 1 {
                panic!("boom");
            }
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let mut mem = memory();
    let r = catch_unwind(AssertUnwindSafe(|| {
        mem.scope("level", |level| {
            let pool = level.new_pool::<Bomb>(4);
            for i in 0..4 {
                pool.insert(Bomb(i, drops.clone()))
                    .ok()
                    .unwrap()
                    .into_handle();
            }
        })
    }));
    assert!(r.is_err());
    assert_eq!(drops.load(Ordering::Relaxed), 4);
    assert_eq!(mem.used(), 0);
}

#[test]
fn a_panicking_destructor_in_a_box_still_frees_the_slot() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("boom");
        }
    }
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<Bomb>(1);
        let b = pool.insert(Bomb).ok().unwrap();
        assert!(catch_unwind(AssertUnwindSafe(|| drop(b))).is_err());
        assert!(pool.is_empty() && !pool.is_full());
        // Leave nothing behind that would panic again at unwind.
        std::mem::forget(pool.insert(Bomb).ok().unwrap().into_inner());
    });
}

// ----- errors and memory -----

#[test]
fn capacity_errors_are_clear() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let e = level.try_new_pool::<u32>(0).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
        assert_eq!(e.scope_name(), "level");
        let e = level
            .try_new_pool::<u32>(MAX_POOL_CAPACITY + 1)
            .unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::TooManySlots);
        assert!(e.to_string().contains("24-bit slot index"), "{e}");
        let e = level.try_new_pool::<[u8; 1 << 20]>(1 << 12).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
        let e = level.try_new_pool::<[u8; 1 << 40]>(1 << 24).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::CapacityOverflow);
        let used = level.used();
        assert!(level.try_new_pool::<u32>(MAX_POOL_CAPACITY).is_err()); // out of memory
        assert!(level.used() >= used);
    });
}

#[test]
#[should_panic(expected = "invalid capacity")]
fn new_pool_panics_with_the_error_message() {
    let mut mem = memory();
    mem.scope("level", |level| {
        level.new_pool::<u32>(0);
    });
}

#[test]
fn memory_needed_is_an_upper_bound_and_rewinds() {
    type Enemy = ([f32; 3], u16);
    for cap in [1, 7, 100] {
        let need = Pool::<Enemy>::memory_needed(cap).unwrap();
        let mut mem = LinearAllocator::with_capacity(need).unwrap();
        mem.scope("level", |level| {
            let pool = level.new_pool::<Enemy>(cap);
            assert!(level.used() <= need);
            assert!(level.used() >= cap * (std::mem::size_of::<Enemy>() + 8));
            pool.insert(([0.0; 3], 1)).unwrap().into_handle();
        });
        assert_eq!(mem.used(), 0);
    }
}

#[test]
fn the_pool_never_touches_the_global_heap() {
    let mut mem = memory();
    let calls = heap_calls_during(|| {
        mem.scope("level", |level| {
            let pool = level.new_pool::<[u32; 8]>(64);
            let mut handles = [None; 32];
            for (i, h) in handles.iter_mut().enumerate() {
                let mut b = pool.insert([i as u32; 8]).unwrap();
                b[0] += 1;
                *h = Some(b.into_handle());
            }
            {
                let shared = &*pool;
                let boxes = [(); 16].map(|_| shared.insert([0; 8]).unwrap());
                assert_eq!(shared.len(), 48);
                drop(boxes);
            }
            for h in handles.iter().flatten() {
                assert!(pool.remove(*h).is_some());
            }
            assert!(pool.is_empty());
        });
    });
    assert_eq!(calls, 0);
}

// ----- threads (small, so they also run under Miri) -----

#[test]
fn threads_insert_and_erase_concurrently() {
    let rounds = scaled(2_000);
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = &*level.new_pool::<(usize, usize)>(4);
        std::thread::scope(|s| {
            for t in 0..3 {
                s.spawn(move || {
                    for i in 0..rounds {
                        if let Ok(mut b) = pool.insert((t, i)) {
                            b.1 += 1;
                            assert_eq!(*b, (t, i + 1));
                        }
                    }
                });
            }
        });
        assert!(pool.is_empty());
        assert!(pool.high_water_len() <= 4);
    });
}

#[test]
fn get_runs_while_other_threads_insert_and_erase() {
    let rounds = scaled(2_000);
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = level.new_pool::<u64>(8);
        let handles: Vec<_> = (0..4)
            .map(|i| pool.insert(i * 7).unwrap().into_handle())
            .collect();
        let pool = &*pool;
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..rounds {
                    drop(pool.insert(i as u64));
                }
            });
            s.spawn(|| {
                for _ in 0..rounds {
                    for (i, h) in handles.iter().enumerate() {
                        assert_eq!(pool.get(*h), Some(&(i as u64 * 7)));
                    }
                    assert_eq!(pool.iter().count(), 4);
                }
            });
        });
    });
}

#[test]
fn insert_wait_is_woken_by_an_erase() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = &*level.new_pool::<u32>(1);
        let held = pool.insert(1).unwrap();
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2)
                .map(|i| s.spawn(move || pool.insert_wait(10 + i).into_inner()))
                .collect();
            std::thread::sleep(std::time::Duration::from_millis(if cfg!(miri) {
                1
            } else {
                20
            }));
            assert_eq!(*held, 1);
            drop(held);
            let mut got: Vec<u32> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
            got.sort();
            assert_eq!(got, [10, 11]);
        });
        assert!(pool.is_empty());
    });
}

#[test]
fn insert_wait_many_waiters_many_erasers() {
    let rounds = scaled(500);
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = &*level.new_pool::<usize>(2);
        let done = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..3 {
                let done = &done;
                s.spawn(move || {
                    for i in 0..rounds {
                        let b = pool.insert_wait(t * rounds + i);
                        assert_eq!(*b, t * rounds + i);
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(done.load(Ordering::Relaxed), 3 * rounds);
        assert!(pool.is_empty());
    });
}

#[test]
fn boxes_can_be_dropped_on_another_thread() {
    let mut mem = memory();
    mem.scope("level", |level| {
        let pool = &*level.new_pool::<String>(4);
        let boxes: Vec<_> = (0..4)
            .map(|i| pool.insert(i.to_string()).unwrap())
            .collect();
        std::thread::scope(|s| {
            s.spawn(move || drop(boxes));
        });
        assert!(pool.is_empty());
    });
}
