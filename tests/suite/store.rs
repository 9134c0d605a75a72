//! Behaviour of the versioned store (`Store`): ids, versions, commits, garbage at the
//! frame boundary, pins, drops and small multi-thread races. Small enough for Miri.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use scope_stack::store::Id;
use scope_stack::{AllocErrorKind, LinearAllocator, Store};

/// Counts live values: +1 on construction and clone, -1 on drop.
#[derive(Debug)]
struct Counted {
    value: u64,
    live: Arc<AtomicUsize>,
}

impl Counted {
    fn new(value: u64, live: &Arc<AtomicUsize>) -> Counted {
        live.fetch_add(1, Ordering::Relaxed);
        Counted {
            value,
            live: live.clone(),
        }
    }
}

impl Clone for Counted {
    fn clone(&self) -> Counted {
        Counted::new(self.value, &self.live)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::Relaxed);
    }
}

fn with_store<T: Clone + 'static>(
    objects: usize,
    versions: usize,
    f: impl FnOnce(&mut Store<'_, T>),
) {
    let need = Store::<T>::memory_needed(objects, versions).unwrap();
    let mut memory = LinearAllocator::with_capacity(need).unwrap();
    memory.scope("store", |s| f(s.new_store::<T>(objects, versions)));
}

#[test]
fn create_read_destroy() {
    with_store::<String>(8, 16, |store| {
        let a = store.create("a".into()).unwrap();
        let b = store.create("b".into()).unwrap();
        assert_ne!(a, b);
        assert_eq!(store.read(a).map(String::as_str), Some("a"));
        assert_eq!(store.read(b).map(String::as_str), Some("b"));
        assert!(store.destroy(a));
        assert_eq!(store.read(a), None);
        assert!(!store.destroy(a));
        assert!(store.write(a).is_none());
        assert!(store.pin(a).is_none());
        assert_eq!(store.read(b).map(String::as_str), Some("b"));
    });
}

#[test]
fn unknown_ids_find_nothing() {
    with_store::<u32>(2000, 16, |store| {
        let id = store.create(1).unwrap();
        for raw in [
            0u64,
            1,
            5,
            1500, // in a block that was never filled
            1999,
            2000, // past the end
            u64::MAX,
            id.to_u64() + (1 << 32), // right index, wrong generation
        ] {
            if raw != id.to_u64() {
                assert_eq!(store.read(Id::from_u64(raw)), None, "{raw:#x}");
                assert!(!store.destroy(Id::from_u64(raw)));
            }
        }
        assert_eq!(store.read(id), Some(&1));
    });
}

#[test]
fn stale_id_never_sees_the_reused_slot() {
    with_store::<u32>(1, 8, |store| {
        let mut ids = Vec::new();
        for round in 0..10 {
            let id = store.create(round).unwrap();
            for old in &ids {
                assert_eq!(store.read(*old), None);
                assert!(!store.destroy(*old));
                assert!(store.write(*old).is_none());
            }
            assert_eq!(store.read(id), Some(&round));
            assert!(store.destroy(id));
            // The index is reused only after the frame ends.
            assert_eq!(store.create(99), Err(99));
            store.end_frame();
            ids.push(id);
        }
        assert!(ids.iter().all(|id| id.index() == 0));
        let generations: std::collections::HashSet<_> =
            ids.iter().map(|i| i.generation()).collect();
        assert_eq!(generations.len(), ids.len());
    });
}

#[test]
fn old_references_keep_their_version_until_end_frame() {
    with_store::<Vec<u32>>(4, 8, |store| {
        let id = store.create(vec![1]).unwrap();
        {
            let first = store.read(id).unwrap();
            let mut d = store.write(id).unwrap();
            d.push(2);
            store.commit(d).unwrap();
            let second = store.read(id).unwrap();
            assert!(store.destroy(id));
            assert_eq!(
                (first.as_slice(), second.as_slice()),
                (&[1][..], &[1, 2][..])
            );
        }
        assert_eq!(store.versions_in_use(), 2);
        assert_eq!(store.end_frame(), 2);
        assert_eq!(store.versions_in_use(), 0);
    });
}

#[test]
fn commit_last_writer_wins_and_try_commit_detects_conflicts() {
    with_store::<u32>(4, 8, |store| {
        let id = store.create(0).unwrap();
        let mut a = store.write(id).unwrap();
        let mut b = store.write(id).unwrap();
        let mut c = store.write(id).unwrap();
        (*a, *b, *c) = (1, 2, 3);
        assert!(store.try_commit(a).is_ok());
        let b = store.try_commit(b).unwrap_err();
        assert_eq!(*b, 2);
        store.commit(c).unwrap(); // based on 0, but commit does not care
        assert_eq!(store.read(id), Some(&3));
        drop(b);
        // A fresh draft is based on the latest version and succeeds.
        let mut d = store.write(id).unwrap();
        *d += 1;
        assert!(store.try_commit(d).is_ok());
        assert_eq!(store.read(id), Some(&4));
        assert_eq!(store.end_frame(), 3);
        c = store.write(id).unwrap();
        *c = 10;
        assert!(store.try_commit(c).is_ok());
    });
}

#[test]
fn commit_to_a_destroyed_object_gives_the_draft_back() {
    with_store::<u32>(1, 8, |store| {
        let id = store.create(0).unwrap();
        let a = store.write(id).unwrap();
        let b = store.write(id).unwrap();
        store.destroy(id);
        assert!(store.commit(a).is_err());
        assert!(store.try_commit(b).is_err());
        store.end_frame();
        // The same index with a new object: the old draft could not reach it anyway.
        let new = store.create(5).unwrap();
        assert_eq!(new.index(), id.index());
        assert_eq!(store.read(new), Some(&5));
        assert_eq!(store.versions_in_use(), 1);
    });
}

#[test]
#[should_panic(expected = "does not come from")]
fn drafts_of_another_store_are_rejected() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("s", |s| {
        let one = &*s.new_store::<u32>(4, 8);
        let two = &*s.new_store::<u32>(4, 8);
        let id = one.create(1).unwrap();
        let _ = two.create(2).unwrap();
        let draft = one.write(id).unwrap();
        let _ = two.commit(draft);
    });
}

#[test]
fn full_store_hands_values_back() {
    with_store::<String>(2, 3, |store| {
        let a = store.create("a".into()).unwrap();
        let _b = store.create("b".into()).unwrap();
        // Out of object indices.
        assert_eq!(store.create("c".into()).unwrap_err(), "c");
        // One version slot left: one draft, then none.
        let d = store.write(a).unwrap();
        assert!(store.write(a).is_none());
        drop(d);
        assert!(store.write(a).is_some());
        store.destroy(a);
        store.end_frame();
        // Out of version slots before indices.
        let c = store.create("c".into()).unwrap();
        let _held = store.write(c).unwrap();
        assert_eq!(store.create("d".into()).unwrap_err(), "d");
    });
}

#[test]
fn errors_when_carving() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("small", |s| {
        let e = s.try_new_store::<u32>(0, 4).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
        let e = s.try_new_store::<u32>(4, 0).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
        let e = s.try_new_store::<u32>(4, 1 << 25).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::TooManySlots);
        let e = s.try_new_store::<u32>(100_000, 4).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(e.scope_name(), "small");
    });
}

#[test]
fn memory_needed_is_enough_and_used_memory_is_deterministic() {
    for (objects, versions) in [(1, 1), (1024, 10), (1025, 3000), (5000, 7)] {
        let need = Store::<[u64; 3]>::memory_needed(objects, versions).unwrap();
        let mut used = Vec::new();
        for _ in 0..2 {
            let mut memory = LinearAllocator::with_capacity(need).unwrap();
            memory.scope("s", |s| {
                s.new_store::<[u64; 3]>(objects, versions);
                used.push(s.used());
            });
        }
        assert!(used[0] <= need);
        assert_eq!(used[0], used[1]);
    }
}

#[test]
fn every_version_is_dropped_exactly_once() {
    let live = Arc::new(AtomicUsize::new(0));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("s", |s| {
        let store = s.new_store::<Counted>(16, 64);
        let ids: Vec<_> = (0..8)
            .map(|i| store.create(Counted::new(i, &live)).unwrap())
            .collect();
        for frame in 0..4 {
            for &id in &ids {
                let mut d = store.write(id).unwrap();
                d.value += 1;
                store.commit(d).unwrap();
            }
            // 8 live + 8 retired this frame.
            assert_eq!(live.load(Ordering::Relaxed), 16, "frame {frame}");
            assert_eq!(store.end_frame(), 8);
            assert_eq!(live.load(Ordering::Relaxed), 8);
        }
        for &id in &ids {
            assert_eq!(store.read(id).unwrap().value, id.index() as u64 + 4);
        }
        // Leave garbage and a draft behind: the scope's end drops all of it.
        store.destroy(ids[0]);
        let mut d = store.write(ids[1]).unwrap();
        d.value = 0;
        store.commit(d).unwrap();
        // 7 current, ids[0]'s retired one, ids[1]'s new and retired ones.
        assert_eq!(live.load(Ordering::Relaxed), 9);
    });
    assert_eq!(live.load(Ordering::Relaxed), 0);
}

#[test]
fn discarded_drafts_free_their_slot_at_once() {
    let live = Arc::new(AtomicUsize::new(0));
    with_store::<Counted>(4, 4, |store| {
        let id = store.create(Counted::new(1, &live)).unwrap();
        for _ in 0..10 {
            let d = store.write(id).unwrap();
            assert_eq!(live.load(Ordering::Relaxed), 2);
            drop(d);
            assert_eq!(live.load(Ordering::Relaxed), 1);
        }
        let v = store.write(id).unwrap().into_inner();
        assert_eq!(v.value, 1);
        assert_eq!(store.versions_in_use(), 1);
    });
    assert_eq!(live.load(Ordering::Relaxed), 0);
}

#[test]
fn pins_keep_versions_alive_across_frames() {
    let live = Arc::new(AtomicUsize::new(0));
    with_store::<Counted>(4, 16, |store| {
        let id = store.create(Counted::new(1, &live)).unwrap();
        let pinned = store.pin(id).unwrap();
        let twice = pinned.clone();
        for i in 2..6 {
            let mut d = store.write(id).unwrap();
            d.value = i;
            store.commit(d).unwrap();
            store.end_frame();
            assert_eq!(pinned.value, 1);
        }
        // The pinned version and the current one.
        assert_eq!(live.load(Ordering::Relaxed), 2);
        drop(pinned);
        assert_eq!(store.end_frame(), 0);
        assert_eq!(twice.value, 1);
        drop(twice);
        assert_eq!(store.end_frame(), 1);
        assert_eq!(live.load(Ordering::Relaxed), 1);
        // A pinned current version is not freed by end_frame, and survives destroy.
        let p = store.pin(id).unwrap();
        store.end_frame();
        store.destroy(id);
        store.end_frame();
        assert_eq!(p.value, 5);
        assert_eq!(store.read(id).map(|c| c.value), None);
        drop(p);
        assert_eq!(store.end_frame(), 1);
        assert_eq!(live.load(Ordering::Relaxed), 0);
    });
}

#[test]
fn pins_dropped_on_another_thread_while_frames_go_on() {
    let live = Arc::new(AtomicUsize::new(0));
    // Up to every frame's version may still be pinned: 50 + current + draft.
    with_store::<Counted>(4, 64, |store| {
        let id = store.create(Counted::new(0, &live)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<scope_stack::Pinned<'_, Counted>>();
        std::thread::scope(|s| {
            let background = s.spawn(move || {
                let mut sum = 0;
                for p in rx {
                    sum += p.value;
                }
                sum
            });
            let frames = if cfg!(miri) { 4 } else { 50 };
            for i in 1..=frames {
                tx.send(store.pin(id).unwrap()).unwrap();
                let mut d = store.write(id).unwrap();
                d.value = i;
                store.commit(d).unwrap();
                store.end_frame();
            }
            drop(tx);
            assert_eq!(background.join().unwrap(), (0..frames).sum::<u64>());
        });
        store.end_frame();
        assert_eq!(store.versions_in_use(), 1);
    });
    assert_eq!(live.load(Ordering::Relaxed), 0);
}

#[test]
fn many_objects_span_blocks() {
    let n = if cfg!(miri) { 1100 } else { 5000 };
    with_store::<u64>(n, n + 8, |store| {
        let ids: Vec<_> = (0..n as u64)
            .map(|i| store.create(i * 3).unwrap())
            .collect();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(store.read(*id), Some(&(i as u64 * 3)));
        }
        for id in ids.iter().step_by(2) {
            assert!(store.destroy(*id));
        }
        store.end_frame();
        let again: Vec<_> = (0..n / 2)
            .map(|i| store.create(i as u64).unwrap())
            .collect();
        let mut indices: Vec<_> = again.iter().map(|i| i.index()).collect();
        indices.sort_unstable();
        let expected: Vec<_> = (0..n as u32).step_by(2).collect();
        assert_eq!(indices, expected);
    });
}

#[test]
fn threads_create_write_and_read_concurrently() {
    let threads = 3;
    let per = if cfg!(miri) { 6 } else { 200 };
    with_store::<(u64, u64)>(threads * per, threads * per * 3, |store| {
        let shared = &*store;
        let ids: Vec<Vec<Id>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        (0..per)
                            .map(|i| {
                                let id = shared.create((t as u64, i as u64)).unwrap();
                                let mut d = shared.write(id).unwrap();
                                d.1 += 1000;
                                shared.commit(d).unwrap();
                                id
                            })
                            .collect()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut all: Vec<_> = ids.iter().flatten().map(|id| id.index()).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), threads * per);
        for (t, list) in ids.iter().enumerate() {
            for (i, id) in list.iter().enumerate() {
                assert_eq!(store.read(*id), Some(&(t as u64, i as u64 + 1000)));
            }
        }
        assert_eq!(store.end_frame(), threads * per);
        assert_eq!(store.versions_in_use(), threads * per);
    });
}

#[test]
fn racing_writers_and_readers_small() {
    // Two writers increment both halves of a pair (keeping a == b); two readers check.
    let rounds = if cfg!(miri) { 5 } else { 500 };
    with_store::<(u64, u64)>(2, 2 * rounds as usize + 8, |store| {
        let id = store.create((0, 0)).unwrap();
        for _frame in 0..3 {
            let shared = &*store;
            let won = std::thread::scope(|s| {
                let writers: Vec<_> = (0..2)
                    .map(|_| {
                        s.spawn(move || {
                            let mut won = 0;
                            for _ in 0..rounds {
                                loop {
                                    let mut d = match shared.write(id) {
                                        Some(d) => d,
                                        None => {
                                            std::thread::yield_now();
                                            continue;
                                        }
                                    };
                                    d.0 += 1;
                                    d.1 += 1;
                                    if shared.try_commit(d).is_ok() {
                                        won += 1;
                                        break;
                                    }
                                }
                            }
                            won
                        })
                    })
                    .collect();
                for _ in 0..2 {
                    s.spawn(move || {
                        for _ in 0..rounds {
                            let (a, b) = *shared.read(id).unwrap();
                            assert_eq!(a, b);
                        }
                    });
                }
                writers.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
            });
            assert_eq!(won, 2 * rounds);
            store.end_frame();
        }
        assert_eq!(store.read(id), Some(&(6 * rounds, 6 * rounds)));
        assert_eq!(store.versions_in_use(), 1);
    });
}
