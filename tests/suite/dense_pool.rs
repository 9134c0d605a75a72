//! Behaviour of `DensePool`: O(1) insert/remove with the live objects packed, dense iteration,
//! generational handles, the full-pool strategies, drop counts and panic safety.

use std::cell::Cell;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use scope_stack::{AllocErrorKind, DenseHandle, DensePool, LinearAllocator};

/// Loop sizes, scaled down under Miri.
const N: usize = if cfg!(miri) { 24 } else { 1000 };

fn memory() -> LinearAllocator {
    LinearAllocator::with_capacity(1 << 20).unwrap()
}

/// Counts its drops in a shared counter.
struct Tracked {
    id: u32,
    drops: Rc<Cell<usize>>,
}

impl Tracked {
    fn new(id: u32, drops: &Rc<Cell<usize>>) -> Tracked {
        Tracked {
            id,
            drops: Rc::clone(drops),
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
    }
}

/// Counts its drops, and panics in `drop` when told to.
struct Bomb {
    explode: bool,
    drops: Rc<Cell<usize>>,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
        if self.explode {
            panic!("bomb");
        }
    }
}

/// A tiny deterministic generator (xorshift), so tests need no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn insert_get_remove_and_counts() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<u64>(3);
        assert_eq!((pool.len(), pool.capacity()), (0, 3));
        assert!(pool.is_empty() && !pool.is_full());
        let a = pool.insert(10).unwrap();
        let b = pool.insert(20).unwrap();
        let c = pool.insert(30).unwrap();
        assert!(pool.is_full());
        assert_eq!(pool.insert(40), Err(40), "a full pool gives the value back");
        assert_eq!(
            (pool.get(a), pool.get(b), pool.get(c)),
            (Some(&10), Some(&20), Some(&30))
        );
        *pool.get_mut(b).unwrap() += 1;
        pool[c] += 2;
        assert_eq!(pool.remove(b), Some(21));
        assert_eq!(pool.len(), 2);
        assert!(!pool.is_full());
        assert_eq!(pool.get(b), None);
        assert_eq!(pool.get_mut(b), None);
        assert_eq!(pool.remove(b), None);
        assert_eq!(pool[c], 32);
        let d = pool.insert(50).unwrap();
        assert_eq!(d.index(), b.index(), "the freed slot is reused");
        assert_ne!(d, b);
        assert_eq!(
            pool.get(b),
            None,
            "a stale handle does not see the new object"
        );
        assert_eq!(pool.get(d), Some(&50));
    });
}

#[test]
fn live_objects_stay_packed_and_handles_follow_them() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<[u32; 3]>(N);
        let mut live: Vec<(DenseHandle<[u32; 3]>, u32)> = Vec::new();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut base: Option<usize> = None;
        for step in 0..4 * N {
            if live.is_empty() || (rng.below(3) != 0 && !pool.is_full()) {
                let h = pool.insert([step as u32; 3]).unwrap();
                live.push((h, step as u32));
            } else {
                let (h, v) = live.swap_remove(rng.below(live.len()));
                assert_eq!(pool.remove(h), Some([v; 3]));
            }
            if step % 64 == 0 || cfg!(miri) {
                // The live objects are one gapless run of cells, always from the same
                // first cell, whatever was removed...
                let cells: Vec<usize> = pool.values().map(|v| v as *const _ as usize).collect();
                assert_eq!(cells.len(), live.len());
                let Some(&start) = cells.first() else {
                    continue;
                };
                let first = *base.get_or_insert(start);
                for (k, &at) in cells.iter().enumerate() {
                    assert_eq!(at, first + k * std::mem::size_of::<[u32; 3]>());
                }
                // ...and every handle still finds its own object, somewhere in that run.
                for &(h, v) in &live {
                    let r = pool.get(h).unwrap();
                    assert_eq!(*r, [v; 3]);
                    assert!(cells.contains(&(r as *const _ as usize)));
                }
            }
        }
    });
}

#[test]
fn iteration_visits_exactly_the_live_objects() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<u32>(N);
        let mut live: Vec<(DenseHandle<u32>, u32)> = Vec::new();
        let mut rng = Rng(7);
        for step in 0..3 * N as u32 {
            if live.is_empty() || (rng.below(2) == 0 && !pool.is_full()) {
                live.push((pool.insert(step).unwrap(), step));
            } else {
                let (h, v) = live.swap_remove(rng.below(live.len()));
                assert_eq!(pool.remove(h), Some(v));
            }
        }
        let mut expected: Vec<u32> = live.iter().map(|&(_, v)| v).collect();
        expected.sort_unstable();
        let mut seen: Vec<u32> = pool.values().copied().collect();
        assert_eq!(pool.values().len(), live.len());
        assert_eq!(pool.iter().len(), live.len());
        seen.sort_unstable();
        assert_eq!(seen, expected);
        // Backwards too, and through `&pool` (which walks like `iter`).
        let mut back: Vec<u32> = pool.values().rev().copied().collect();
        back.sort_unstable();
        assert_eq!(back, expected);
        assert_eq!((&*pool).into_iter().count(), live.len());
        assert!((&*pool).into_iter().eq(pool.iter()));

        // handles() lists exactly the live handles, in iteration order.
        let handles: HashSet<_> = pool.handles().collect();
        let model: HashSet<_> = live.iter().map(|&(h, _)| h).collect();
        assert_eq!(handles, model);
        for (h, v) in pool.handles().zip(pool.values()) {
            assert_eq!(pool.get(h), Some(v));
        }
        assert!(pool.iter().map(|(h, _)| h).eq(pool.handles()));

        // values_mut reaches each live object once.
        for v in pool.values_mut() {
            *v = v.wrapping_mul(2);
        }
        for &(h, v) in &live {
            assert_eq!(pool[h], v.wrapping_mul(2));
        }
        for (_, v) in &mut *pool {
            *v += 1;
        }
        assert!(live.iter().all(|&(h, v)| pool[h] == v.wrapping_mul(2) + 1));
    });
}

#[test]
fn handles_from_iter_work_with_get_get_mut_and_remove() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<u32>(64);
        let hs: Vec<_> = (0..40).map(|i| pool.insert(i).unwrap()).collect();
        for h in hs.iter().step_by(3) {
            pool.remove(*h).unwrap();
        }
        let seen: Vec<_> = pool.iter().collect();
        assert_eq!(seen.len(), pool.len());
        for &(h, v) in &seen {
            assert!(
                std::ptr::eq(pool.get(h).unwrap(), v),
                "get finds the same object"
            );
        }
        let handles: Vec<DenseHandle<u32>> = pool.iter().map(|(h, _)| h).collect();
        for h in &handles {
            *pool.get_mut(*h).unwrap() += 1;
        }
        for h in handles {
            let v = pool[h];
            assert_eq!(pool.remove(h), Some(v));
            assert_eq!(pool.get(h), None, "removed through a handle from iter");
        }
        assert!(pool.is_empty());
        assert_eq!(pool.iter().len(), 0);
    });
}

#[test]
fn values_visits_what_iter_visits_in_roster_order() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<char>(8);
        let hs: Vec<_> = "abcdef".chars().map(|c| pool.insert(c).unwrap()).collect();
        // The documented order: insertion order ...
        assert_eq!(pool.values().collect::<String>(), "abcdef");
        // ... a removal moves the last live object into the gap ...
        pool.remove(hs[1]);
        assert_eq!(pool.values().collect::<String>(), "afcde");
        pool.remove(hs[4]);
        assert_eq!(pool.values().collect::<String>(), "afcd");
        // ... removing the last one moves nothing, and an insert goes to the end.
        pool.remove(hs[3]);
        let g = pool.insert('g').unwrap();
        assert_eq!(pool.values().collect::<String>(), "afcg");
        assert_eq!(pool.values().rev().collect::<String>(), "gcfa");
        // `iter`, `iter_mut`, `values_mut`, `handles` and `&pool` walk the same order.
        let from_iter: Vec<*const char> = pool.iter().map(|(_, c)| c as *const char).collect();
        let from_values: Vec<*const char> = pool.values().map(|c| c as *const char).collect();
        assert_eq!(from_values, from_iter);
        let handles: Vec<_> = pool.iter().map(|(h, _)| h).collect();
        assert_eq!(handles, [hs[0], hs[5], hs[2], g]);
        assert_eq!(pool.handles().collect::<Vec<_>>(), handles);
        assert!((&*pool).into_iter().eq(pool.iter()));
        let mut_order: Vec<_> = pool.iter_mut().map(|(h, _)| h).collect();
        assert_eq!(mut_order, handles);
        let mut_values: Vec<char> = pool.values_mut().map(|c| *c).collect();
        assert_eq!(mut_values, ['a', 'f', 'c', 'g']);
        // Both ends, and exact lengths.
        let mut it = pool.iter();
        assert_eq!(it.len(), 4);
        assert_eq!(it.next_back(), Some((g, &'g')));
        assert_eq!(it.next(), Some((hs[0], &'a')));
        assert_eq!(it.len(), 2);
    });
}

#[test]
fn changes_through_iter_mut_and_values_mut_stick() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<u64>(32);
        let hs: Vec<_> = (0..20).map(|i| pool.insert(i).unwrap()).collect();
        for h in hs.iter().step_by(4) {
            pool.remove(*h);
        }
        for (h, v) in pool.iter_mut() {
            *v += h.index() as u64 * 1000;
        }
        for (h, v) in hs.iter().zip(0u64..) {
            if pool.contains(*h) {
                assert_eq!(pool[*h], v + h.index() as u64 * 1000);
            }
        }
        for v in pool.values_mut() {
            *v *= 3;
        }
        for (h, v) in hs.iter().zip(0u64..) {
            if pool.contains(*h) {
                assert_eq!(pool[*h], (v + h.index() as u64 * 1000) * 3);
            }
        }
        for (_, v) in &mut *pool {
            *v += 1;
        }
        assert_eq!(pool.values().filter(|v| *v % 3 == 1).count(), pool.len());
    });
}

#[test]
fn foreign_and_forged_handles_find_nothing() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let a = level.new_dense_pool::<u32>(8);
        let b = level.new_dense_pool::<u32>(8);
        let ha = a.insert(1).unwrap();
        let hb = b.insert(2).unwrap();
        // Same slot index, same fill count, different pools.
        assert_eq!(ha.index(), hb.index());
        assert_eq!(a.get(hb), None);
        assert_eq!(b.get(ha), None);
        assert_eq!(b.remove(ha), None);
        assert!(!a.contains(hb));
        assert_eq!(b.len(), 1);
        // Forged bits: out-of-range index, free slot, even generation.
        assert_eq!(a.get(DenseHandle::from_bits(u64::MAX)), None);
        let bits = ha.to_bits();
        assert_eq!(
            a.get(DenseHandle::from_bits(bits + 1)),
            None,
            "another slot"
        );
        assert_eq!(
            a.get(DenseHandle::from_bits(bits ^ (1 << 32))),
            None,
            "even generation"
        );
        assert_eq!(a.get(DenseHandle::from_bits(bits)), Some(&1));
    });
}

#[test]
fn many_pools_reject_each_others_handles() {
    // Any 256 pools made one after another have different tags.
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let count = if cfg!(miri) { 8 } else { 256 };
        let mut handles = Vec::new();
        let mut pools = Vec::new();
        for i in 0..count {
            let pool = level.new_dense_pool::<u32>(1);
            handles.push(pool.insert(i).unwrap());
            pools.push(pool);
        }
        for (i, pool) in pools.iter().enumerate() {
            for (j, &h) in handles.iter().enumerate() {
                assert_eq!(pool.get(h).is_some(), i == j);
            }
        }
    });
}

#[test]
fn handle_traits() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<String>(4);
        let h = pool.insert("x".into()).unwrap();
        let copy = h;
        assert_eq!(h, copy);
        let set: HashSet<_> = [h, copy].into_iter().collect();
        assert_eq!(set.len(), 1);
        let text = format!("{h:?}");
        assert!(
            text.contains("DenseHandle") && text.contains("generation"),
            "{text}"
        );
        assert_eq!(std::mem::size_of::<DenseHandle<String>>(), 8);
        assert!(format!("{pool:?}").contains("len: 1"));
    });
}

#[test]
fn stale_index_panics() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<u32>(2);
        let h = pool.insert(1).unwrap();
        pool.remove(h);
        let err = catch_unwind(AssertUnwindSafe(|| pool[h])).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(msg.contains("stale or foreign handle"), "{msg}");
    });
}

#[test]
fn scope_unwind_drops_live_objects_once() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<Tracked>(N);
        let handles: Vec<_> = (0..N as u32)
            .map(|i| pool.insert(Tracked::new(i, &drops)).ok().unwrap())
            .collect();
        // Remove every third: the caller gets (and drops) those.
        for h in handles.iter().step_by(3) {
            let t = pool.remove(*h).unwrap();
            assert_eq!(t.id as usize % 3, 0);
        }
        assert_eq!(drops.get(), N.div_ceil(3));
        assert_eq!(pool.len(), N - N.div_ceil(3));
    });
    assert_eq!(drops.get(), N, "every object dropped exactly once");
    assert_eq!(memory.used(), 0);
}

#[test]
fn clear_drops_everything_and_stales_handles() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<Tracked>(8);
        let hs: Vec<_> = (0..5)
            .map(|i| pool.insert(Tracked::new(i, &drops)).ok().unwrap())
            .collect();
        pool.clear();
        assert_eq!(drops.get(), 5);
        assert!(pool.is_empty());
        assert!(hs.iter().all(|&h| pool.get(h).is_none()));
        assert_eq!(pool.iter().count(), 0);
        let h = pool.insert(Tracked::new(9, &drops)).ok().unwrap();
        assert_eq!(pool[h].id, 9);
        assert!(hs.iter().all(|&h| pool.get(h).is_none()));
    });
    assert_eq!(drops.get(), 6);
}

#[test]
fn clear_with_a_panicking_destructor_drops_the_rest() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<Bomb>(6);
        for i in 0..6 {
            let bomb = Bomb {
                explode: i == 2,
                drops: Rc::clone(&drops),
            };
            assert!(pool.insert(bomb).is_ok());
        }
        let result = catch_unwind(AssertUnwindSafe(|| pool.clear()));
        assert!(result.is_err(), "the panic goes on");
        assert_eq!(drops.get(), 6, "each bomb dropped exactly once");
        assert!(pool.is_empty());
        assert!(pool
            .insert(Bomb {
                explode: false,
                drops: Rc::clone(&drops)
            })
            .is_ok());
    });
    assert_eq!(drops.get(), 7);
}

#[test]
fn a_panicking_destructor_during_unwind_skips_nothing() {
    let drops = Rc::new(Cell::new(0));
    let outside = Rc::new(Cell::new(0));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut memory = memory();
        memory.scope("level", |level| {
            level.new_object(Tracked::new(0, &outside)); // finalized before the pool
            let pool = level.new_dense_pool::<Bomb>(4);
            for i in 0..4 {
                let bomb = Bomb {
                    explode: i == 1,
                    drops: Rc::clone(&drops),
                };
                assert!(pool.insert(bomb).is_ok());
            }
        });
    }));
    assert!(result.is_err());
    assert_eq!(drops.get(), 4);
    assert_eq!(
        outside.get(),
        1,
        "the rest of the finalizer chain still ran"
    );
}

#[test]
fn insert_evicting_replaces_the_smallest_key() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = memory();
    memory.scope("audio", |audio| {
        let pool = audio.new_dense_pool::<Tracked>(3);
        let key = |t: &Tracked| [5u32, 1, 9, 4, 7][t.id as usize % 5];
        // Not full: plain inserts, nothing evicted.
        let h0 = pool.insert_evicting(Tracked::new(0, &drops), key);
        let h1 = pool.insert_evicting(Tracked::new(1, &drops), key);
        let h2 = pool.insert_evicting(Tracked::new(2, &drops), key);
        assert_eq!((pool.len(), drops.get()), (3, 0));
        // Full: id 1 (key 1) is the quietest.
        let h3 = pool.insert_evicting(Tracked::new(3, &drops), key);
        assert_eq!(drops.get(), 1);
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.get(h1).map(|t| t.id), None);
        assert_eq!(
            h3.index(),
            h1.index(),
            "the new object takes the victim's slot"
        );
        assert_eq!(pool[h3].id, 3);
        // Next quietest: id 3 (key 4).
        let h4 = pool.insert_evicting(Tracked::new(4, &drops), key);
        assert!(pool.get(h3).is_none());
        let mut ids: Vec<_> = pool.values().map(|t| t.id).collect();
        ids.sort_unstable();
        assert_eq!(ids, [0, 2, 4]);
        assert!(pool.contains(h0) && pool.contains(h2) && pool.contains(h4));
    });
    assert_eq!(drops.get(), 5);
}

#[test]
fn insert_evicting_ties_and_a_full_pool_of_one() {
    let mut memory = memory();
    memory.scope("audio", |audio| {
        let pool = audio.new_dense_pool::<u32>(1);
        let a = pool.insert(1).unwrap();
        let b = pool.insert_evicting(2, |_| 0);
        assert_eq!(pool.get(a), None);
        assert_eq!(pool[b], 2);
        assert_eq!(pool.len(), 1);
    });
}

#[test]
fn insert_evicting_with_a_panicking_key_changes_nothing() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = memory();
    memory.scope("audio", |audio| {
        let pool = audio.new_dense_pool::<Tracked>(2);
        let a = pool.insert(Tracked::new(0, &drops)).ok().unwrap();
        let b = pool.insert(Tracked::new(1, &drops)).ok().unwrap();
        let result = catch_unwind(AssertUnwindSafe(|| {
            pool.insert_evicting(Tracked::new(2, &drops), |_| -> u32 { panic!("key") })
        }));
        assert!(result.is_err());
        assert_eq!(drops.get(), 1, "only the new value was dropped");
        assert_eq!((pool[a].id, pool[b].id, pool.len()), (0, 1, 2));
    });
    assert_eq!(drops.get(), 3);
}

#[test]
fn insert_evicting_with_a_panicking_victim_keeps_the_new_object() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = memory();
    memory.scope("audio", |audio| {
        let pool = audio.new_dense_pool::<Bomb>(2);
        let bomb = |explode| Bomb {
            explode,
            drops: Rc::clone(&drops),
        };
        assert!(pool.insert(bomb(true)).is_ok());
        assert!(pool.insert(bomb(false)).is_ok());
        let result = catch_unwind(AssertUnwindSafe(|| {
            pool.insert_evicting(bomb(false), |b| !b.explode)
        }));
        assert!(result.is_err());
        assert_eq!(drops.get(), 1, "the victim was dropped once");
        assert_eq!(pool.len(), 2);
        assert!(pool.values().all(|b| !b.explode));
    });
    assert_eq!(drops.get(), 3);
}

#[test]
fn retain_visits_each_once_and_drops_the_rejected() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<Tracked>(N);
        let hs: Vec<_> = (0..N as u32)
            .map(|i| pool.insert(Tracked::new(i, &drops)).ok().unwrap())
            .collect();
        let mut visited = HashSet::new();
        pool.retain(|h, t| {
            assert!(visited.insert(t.id), "visited twice");
            assert_eq!(hs[t.id as usize], h);
            t.id % 4 != 0
        });
        assert_eq!(visited.len(), N);
        assert_eq!(drops.get(), N.div_ceil(4));
        assert_eq!(pool.len(), N - N.div_ceil(4));
        for (i, &h) in hs.iter().enumerate() {
            assert_eq!(pool.contains(h), i % 4 != 0);
        }
    });
    assert_eq!(drops.get(), N);
}

#[test]
fn zero_sized_objects() {
    #[derive(Debug, PartialEq)]
    struct Marker;
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<Marker>(3);
        let a = pool.insert(Marker).unwrap();
        let _b = pool.insert(Marker).unwrap();
        assert_eq!(pool.remove(a), Some(Marker));
        assert_eq!(pool.get(a), None);
        assert_eq!(pool.iter().count(), 1);
    });
}

#[test]
fn errors_name_the_problem() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("tiny", |tiny| {
        let e = tiny.try_new_dense_pool::<u32>(0).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
        let e = tiny.try_new_dense_pool::<()>((1 << 24) + 1).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::TooManySlots);
        let e = tiny.try_new_dense_pool::<[u8; 64]>(1000).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(e.scope_name(), "tiny");
        let panic = catch_unwind(AssertUnwindSafe(|| {
            tiny.new_dense_pool::<[u8; 64]>(1000);
        }))
        .unwrap_err();
        assert!(panic
            .downcast_ref::<String>()
            .unwrap()
            .contains("out of memory"));
    });
}

#[test]
fn memory_needed_is_an_upper_bound() {
    for capacity in [1, 7, 100] {
        let need = DensePool::<(u8, u64)>::memory_needed(capacity).unwrap();
        let mut memory = LinearAllocator::with_capacity(need).unwrap();
        memory.scope("exact", |s| {
            let pool = s.new_dense_pool::<(u8, u64)>(capacity);
            assert!(s.used() <= need);
            assert!(s.used() >= capacity * (16 + 12));
            assert_eq!(pool.capacity(), capacity);
        });
    }
    assert_eq!(DensePool::<u64>::memory_needed(usize::MAX), None);
}

#[test]
fn pools_are_send_for_send_objects() {
    let mut memory = memory();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<u64>(16);
        for i in 0..16 {
            pool.insert(i).unwrap();
        }
        std::thread::scope(|t| {
            t.spawn(|| pool.values_mut().for_each(|v| *v *= 2));
        });
        assert_eq!(pool.values().sum::<u64>(), 2 * (0..16).sum::<u64>());
    });
}

#[cfg(feature = "debug-fill")]
mod debug_fill {
    use super::*;
    use scope_stack::debug_fill::FREED_SLOT;

    fn painted(bytes: &[u8]) -> bool {
        let word = FREED_SLOT.to_ne_bytes();
        bytes.iter().enumerate().all(|(i, &b)| b == word[i % 4])
    }

    #[test]
    fn free_slots_hold_the_pattern() {
        let mut memory = memory();
        memory.scope("level", |level| {
            let pool = level.new_dense_pool::<[u16; 5]>(4);
            for i in 0..4 {
                assert!(painted(pool.freed_slot_bytes(i).unwrap()), "fresh slot {i}");
            }
            let a = pool.insert([7; 5]).unwrap();
            let b = pool.insert([8; 5]).unwrap();
            assert!(pool.freed_slot_bytes(a.index()).is_none(), "live");
            assert_eq!(pool.remove(a), Some([7; 5]));
            let bytes = pool.freed_slot_bytes(a.index()).unwrap();
            assert_eq!(bytes.len(), 10);
            assert!(painted(bytes), "removed slot: {bytes:x?}");
            pool.retain(|_, _| false);
            assert!(painted(pool.freed_slot_bytes(b.index()).unwrap()), "retain");
            let c = pool.insert([9; 5]).unwrap();
            pool.clear();
            assert!(painted(pool.freed_slot_bytes(c.index()).unwrap()), "clear");
            pool.insert([1; 5]).unwrap();
            assert!(pool.freed_slot_bytes(99).is_none());
        });
    }

    #[test]
    fn every_free_cell_stays_painted_through_churn() {
        let mut memory = memory();
        memory.scope("level", |level| {
            let pool = level.new_dense_pool::<[u8; 7]>(16);
            let mut live = Vec::new();
            let mut rng = Rng(7);
            for step in 0..400u32 {
                if live.is_empty() || (rng.below(2) == 0 && !pool.is_full()) {
                    live.push(pool.insert([step as u8; 7]).unwrap());
                } else {
                    let h = live.swap_remove(rng.below(live.len()));
                    assert!(pool.remove(h).is_some());
                }
                // Each free slot owns one painted cell; each live one owns its object.
                let free: Vec<usize> = (0..16)
                    .filter(|&i| pool.freed_slot_bytes(i).is_some())
                    .collect();
                assert_eq!(free.len(), 16 - live.len());
                for i in free {
                    assert!(painted(pool.freed_slot_bytes(i).unwrap()), "step {step}");
                }
                for &h in &live {
                    assert!(pool.freed_slot_bytes(h.index()).is_none());
                }
            }
        });
    }

    #[test]
    fn a_slot_is_painted_even_when_its_destructor_panics() {
        let drops = Rc::new(Cell::new(0));
        let mut memory = memory();
        memory.scope("level", |level| {
            let pool = level.new_dense_pool::<Bomb>(2);
            let h = pool
                .insert(Bomb {
                    explode: true,
                    drops: Rc::clone(&drops),
                })
                .ok()
                .unwrap();
            assert!(catch_unwind(AssertUnwindSafe(|| pool.clear())).is_err());
            assert!(painted(pool.freed_slot_bytes(h.index()).unwrap()));
        });
        assert_eq!(drops.get(), 1);
    }
}
