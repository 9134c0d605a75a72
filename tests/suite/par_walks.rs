//! Splitting pools among jobs: a dense pool's live objects as one slice
//! (`as_slice`, `as_mut_slice`), and, with the `rayon` feature, the parallel walks of
//! both pool kinds (`par_iter`, `par_iter_mut`, `par_values`, `par_values_mut`): rayon
//! jobs that change every object see each exactly once, and the shared walks visit what
//! the sequential ones visit.

use scope_stack::LinearAllocator;

#[test]
fn a_dense_pools_slice_is_its_live_objects_in_roster_order() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<u32>(8);
        assert!(pool.as_slice().is_empty());
        let hs: Vec<_> = (1..=5).map(|i| pool.insert(i).unwrap()).collect();
        pool.remove(hs[1]);
        assert_eq!(pool.as_slice(), &[1, 5, 3, 4]);
        assert_eq!(pool.as_slice().len(), pool.len());
        // Position k holds the object of the k-th handle.
        for (k, h) in pool.handles().enumerate() {
            assert_eq!(pool[h], pool.as_slice()[k]);
        }
        // Changed through the slice, read through the handles.
        let (left, right) = pool.as_mut_slice().split_at_mut(2);
        left.iter_mut().for_each(|v| *v += 10);
        right.iter_mut().for_each(|v| *v += 100);
        assert_eq!(
            [hs[0], hs[2], hs[3], hs[4]].map(|h| pool[h]),
            [11, 103, 104, 15]
        );
    });
}

#[test]
fn a_dense_pools_mutable_slice_split_among_threads_touches_each_object_once() {
    let n = if cfg!(miri) { 40 } else { 4000 };
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<(u32, u32)>(n);
        let hs: Vec<_> = (0..n as u32)
            .map(|i| pool.insert((i, 0)).unwrap())
            .collect();
        for h in hs.iter().step_by(3) {
            pool.remove(*h);
        }
        let values = pool.as_mut_slice();
        std::thread::scope(|s| {
            for chunk in values.chunks_mut(n / 7 + 1) {
                s.spawn(move || chunk.iter_mut().for_each(|(_, touched)| *touched += 1));
            }
        });
        assert!(pool.values().all(|&(_, touched)| touched == 1));
        assert_eq!(pool.len(), n - n.div_ceil(3));
    });
}

#[cfg(all(feature = "rayon", not(miri)))] // rayon's epoch collector is not strict-provenance clean.
mod rayon_walks {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use rayon::prelude::*;
    use scope_stack::{DenseHandle, Handle, LinearAllocator, Pool};

    /// A game object that counts how often a job touched it.
    #[derive(Debug)]
    struct Enemy {
        id: u32,
        touched: u32,
    }

    fn enemy(id: u32) -> Enemy {
        Enemy { id, touched: 0 }
    }

    /// A pool of four workers, so the walks really split.
    fn jobs() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap()
    }

    /// Fills `pool` with 9,000 enemies, removes every fifth and forgets one box (a slot
    /// in the boxed state for good): the handles of the pooled ones, and the id of the
    /// enemy in each slot (by slot index; `u32::MAX` where none is pooled).
    fn populate(pool: &mut Pool<'_, Enemy>) -> (Vec<Handle<Enemy>>, Vec<u32>) {
        let handles: Vec<_> = (0..9_000)
            .map(|id| pool.insert_mut(enemy(id)).unwrap())
            .collect();
        for h in handles.iter().step_by(5) {
            pool.remove(*h);
        }
        std::mem::forget(pool.insert(enemy(99_999)).unwrap());
        let handles: Vec<_> = handles
            .into_iter()
            .filter(|h| pool.get(*h).is_some())
            .collect();
        let mut ids = vec![u32::MAX; pool.capacity()];
        for h in &handles {
            ids[h.index()] = pool.get(*h).unwrap().id;
        }
        (handles, ids)
    }

    /// Sets the flag when dropped, so that helper threads stop even if an assertion
    /// fails first.
    struct StopOnDrop<'a>(&'a AtomicBool);

    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    #[test]
    fn pool_par_iter_mut_touches_every_pooled_object_once_and_no_box() {
        let mut memory = LinearAllocator::with_capacity(1 << 22).unwrap();
        memory.scope("level", |level| {
            let pool = level.new_pool::<Enemy>(10_000);
            let (handles, ids) = populate(pool);
            let visits = AtomicUsize::new(0);
            jobs().install(|| {
                pool.par_iter_mut().for_each(|(h, e)| {
                    assert_ne!(e.id, 99_999, "a box's object was visited");
                    assert_eq!(ids[h.index()], e.id, "the handle names this object");
                    e.touched += 1;
                    visits.fetch_add(1, Ordering::Relaxed);
                })
            });
            assert_eq!(visits.into_inner(), handles.len());
            assert!(handles.iter().all(|h| pool.get(*h).unwrap().touched == 1));
            // And once more through the values alone.
            jobs().install(|| pool.par_values_mut().for_each(|e| e.touched += 1));
            assert!(handles.iter().all(|h| pool.get(*h).unwrap().touched == 2));
            assert_eq!(pool.values().count(), handles.len());
        });
    }

    #[test]
    fn pool_par_iter_visits_what_iter_visits_while_other_threads_insert_and_free_boxes() {
        let mut memory = LinearAllocator::with_capacity(1 << 22).unwrap();
        memory.scope("level", |level| {
            let pool = level.new_pool::<Enemy>(10_000);
            let (mut handles, ids) = populate(pool);
            handles.sort_by_key(|h| h.index());
            let pool: &Pool<'_, Enemy> = pool;
            let stop = AtomicBool::new(false);
            std::thread::scope(|s| {
                let _stop = StopOnDrop(&stop);
                // Boxes come and go beside the walks; they are never pooled, so the
                // walks must see exactly the pooled objects.
                for t in 0..2 {
                    let stop = &stop;
                    s.spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            let b = pool.insert(enemy(50_000 + t)).unwrap();
                            assert_eq!(b.id, 50_000 + t);
                        }
                    });
                }
                let jobs = jobs();
                for _ in 0..20 {
                    let mut seen: Vec<_> = jobs.install(|| {
                        pool.par_iter()
                            .map(|(h, e)| {
                                assert_eq!(ids[h.index()], e.id, "the handle names this object");
                                assert!(std::ptr::eq(pool.get(h).unwrap(), e));
                                h
                            })
                            .collect()
                    });
                    seen.sort_by_key(|h| h.index());
                    assert_eq!(seen, handles);
                    let sum: u64 =
                        jobs.install(|| pool.par_values().map(|e| u64::from(e.id)).sum());
                    assert_eq!(sum, pool.values().map(|e| u64::from(e.id)).sum::<u64>());
                }
            });
        });
    }

    #[test]
    fn dense_par_iter_mut_touches_every_live_object_once() {
        let mut memory = LinearAllocator::with_capacity(1 << 22).unwrap();
        memory.scope("level", |level| {
            let pool = level.new_dense_pool::<Enemy>(10_000);
            let mut handles: Vec<DenseHandle<Enemy>> = (0..9_000)
                .map(|id| pool.insert(enemy(id)).unwrap())
                .collect();
            // Removals move the last objects into the gaps: roster order is shuffled.
            for h in handles.iter().step_by(5) {
                pool.remove(*h);
            }
            handles.retain(|h| pool.contains(*h));
            let ids: Vec<u32> = handles.iter().map(|h| pool[*h].id).collect();
            let visits = AtomicUsize::new(0);
            jobs().install(|| {
                pool.par_iter_mut().for_each(|(_, e)| {
                    e.touched += 1;
                    visits.fetch_add(1, Ordering::Relaxed);
                })
            });
            assert_eq!(visits.into_inner(), handles.len());
            for (h, id) in handles.iter().zip(&ids) {
                assert_eq!((pool[*h].id, pool[*h].touched), (*id, 1), "handle {h:?}");
            }
            jobs().install(|| pool.par_values_mut().for_each(|e| e.touched += 1));
            assert!(pool.values().all(|e| e.touched == 2));
        });
    }

    #[test]
    fn dense_par_iter_pairs_each_object_with_its_handle_in_roster_order() {
        let mut memory = LinearAllocator::with_capacity(1 << 22).unwrap();
        memory.scope("level", |level| {
            let pool = level.new_dense_pool::<Enemy>(4_096);
            let handles: Vec<_> = (0..4_000)
                .map(|id| pool.insert(enemy(id)).unwrap())
                .collect();
            for h in handles.iter().step_by(7) {
                pool.remove(*h);
            }
            let pool = &*pool;
            let (walked, ids): (Vec<_>, Vec<_>) = jobs().install(|| {
                pool.par_iter()
                    .map(|(h, e)| (h, e.id))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .unzip()
            });
            let expected: Vec<_> = pool
                .iter()
                .map(|(h, e)| (h, e.id))
                .unzip::<_, _, Vec<_>, Vec<_>>()
                .0;
            assert_eq!(walked, expected, "collect keeps the roster order");
            for (h, id) in walked.iter().zip(ids) {
                assert_eq!(pool[*h].id, id);
            }
            assert_eq!(pool.par_values().len(), pool.len());
            let sum: u64 = jobs().install(|| pool.par_values().map(|e| u64::from(e.id)).sum());
            assert_eq!(
                sum,
                pool.as_slice().iter().map(|e| u64::from(e.id)).sum::<u64>()
            );
        });
    }
}
