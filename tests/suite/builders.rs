//! Builders that grow in place (`ScopeVec`, `ScopeString`) on every kind of scope: exact
//! drops and drop order, panics in user code, out of memory, zero-sized and over-aligned
//! elements, interleaved placements on shared handles, and exact statistics.

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use scope_stack::{AllocErrorKind, LinearAllocator, Place};

/// Counts its drops in a shared counter and appends its id to a shared log.
#[derive(Debug)]
struct Tracked {
    id: u32,
    drops: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<u32>>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
        self.log.lock().unwrap().push(self.id);
    }
}

struct Tracker {
    drops: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<u32>>>,
}

impl Tracker {
    fn new() -> Tracker {
        Tracker {
            drops: Arc::new(AtomicUsize::new(0)),
            log: Arc::new(Mutex::new(Vec::new())),
        }
    }
    fn make(&self, id: u32) -> Tracked {
        Tracked {
            id,
            drops: self.drops.clone(),
            log: self.log.clone(),
        }
    }
    fn drops(&self) -> usize {
        self.drops.load(Ordering::Relaxed)
    }
    fn log(&self) -> Vec<u32> {
        self.log.lock().unwrap().clone()
    }
}

fn scale(n: usize) -> usize {
    if cfg!(miri) {
        n.min(64)
    } else {
        n
    }
}

#[test]
fn a_vector_grows_in_place_and_freezes_with_no_slack() {
    let n = scale(10_000);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        level.new_pod(7u8); // the vector starts past an odd offset
        let before = level.used();
        let mut v = level.new_vec::<u64>();
        v.push(0);
        let first = v.as_ptr();
        for i in 1..n as u64 {
            v.push(i);
        }
        assert_eq!(v.as_ptr(), first, "grown in place, never moved");
        assert_eq!(first as usize % 8, 0);
        let s = v.into_slice();
        assert_eq!(s.len(), n);
        assert!(s.iter().enumerate().all(|(i, &x)| x == i as u64));
        // Padding to 8 bytes plus exactly the elements.
        let used = level.used() - before;
        assert!(used >= n * 8 && used < n * 8 + 8, "used {used}");
        // The scope is free again and places right after the slice.
        let next = level.new_pod(1u64) as *const u64;
        assert_eq!(next as usize, s.as_ptr_range().end as usize);
    });
    assert_eq!(memory.used(), 0);
}

#[test]
fn dropping_a_builder_drops_its_elements_at_once_and_gives_the_room_back() {
    let t = Tracker::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let before = level.used();
        {
            let mut v = level.new_vec();
            for i in 0..10 {
                v.push(t.make(i));
            }
            assert_eq!(t.drops(), 0);
        }
        assert_eq!(t.drops(), 10);
        assert_eq!(t.log(), (0..10).collect::<Vec<_>>());
        assert_eq!(level.used(), before);
        let mut s = level.new_string();
        s.push_str("frog");
        drop(s);
        assert_eq!(level.used(), before);
    });
    assert_eq!(t.drops(), 10);
}

#[test]
fn frozen_elements_are_dropped_once_at_scope_end_in_order() {
    let t = Tracker::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        level.new_object(t.make(100));
        let mut v = level.new_vec();
        v.extend((0..5).map(|i| t.make(i)));
        let dropped = v.remove(1); // the builder gives it back
        assert_eq!(dropped.id, 1);
        drop(dropped);
        v.truncate(3); // drops id 4
        let s = v.into_slice();
        assert_eq!(s.iter().map(|x| x.id).collect::<Vec<_>>(), [0, 2, 3]);
        level.new_object(t.make(200));
        assert_eq!(t.log(), [1, 4]);
    });
    // Reverse order of construction: 200, then the slice (its elements in order), then 100.
    assert_eq!(t.log(), [1, 4, 200, 0, 2, 3, 100]);
    assert_eq!(t.drops(), 7);
    assert_eq!(memory.used(), 0);
}

#[test]
fn an_empty_builder_takes_no_memory_and_links_no_record() {
    let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    memory.scope("level", |level| {
        let empty: &mut [String] = level.new_vec().into_slice();
        assert!(empty.is_empty());
        let mut v = level.vec_with_capacity::<String>(8);
        v.push(String::from("x"));
        v.clear();
        assert!(v.into_slice().is_empty());
        assert_eq!(level.used(), 0);
        assert_eq!(level.finalizer_count(), 0);
        assert_eq!(level.new_string().into_str(), "");
        assert_eq!(level.used(), 0);
    });
}

#[test]
fn a_panic_in_retain_drops_each_element_once() {
    let t = Tracker::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let mut v = level.new_vec();
        v.extend((0..10).map(|i| t.make(i)));
        let r = catch_unwind(AssertUnwindSafe(|| {
            v.retain(|x| {
                assert!(x.id != 6, "boom");
                x.id % 2 == 0
            })
        }));
        assert!(r.is_err());
        // 1, 3, 5 were removed; 6.. were not looked at and stay.
        assert_eq!(t.drops(), 3);
        assert_eq!(
            v.iter().map(|x| x.id).collect::<Vec<_>>(),
            [0, 2, 4, 6, 7, 8, 9]
        );
        drop(v);
        assert_eq!(t.drops(), 10);
    });
    let mut log = t.log();
    log.sort();
    assert_eq!(log, (0..10).collect::<Vec<_>>(), "each dropped once");
}

#[test]
fn a_panic_in_extend_keeps_what_was_taken_and_drops_it_once() {
    let t = Tracker::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let before = level.used();
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut v = level.new_vec();
            v.extend((0..10).map(|i| {
                assert!(i != 7, "boom");
                t.make(i)
            }));
        }));
        assert!(r.is_err());
        assert_eq!(t.drops(), 7);
        assert_eq!(level.used(), before, "the room went back");
    });
    assert_eq!(t.drops(), 7);
}

#[test]
fn a_panicking_destructor_in_a_dropped_builder_does_not_skip_the_others() {
    struct Bomb(Arc<AtomicUsize>, bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
            if self.1 {
                panic!("bomb");
            }
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let before = level.used();
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut v = level.new_vec();
            for i in 0..5 {
                v.push(Bomb(drops.clone(), i == 2));
            }
        }));
        assert!(r.is_err());
        assert_eq!(drops.load(Ordering::Relaxed), 5);
        assert_eq!(level.used(), before);
    });
}

#[test]
fn out_of_memory_hands_the_value_back_or_panics_naming_the_scope() {
    let mut memory = LinearAllocator::with_capacity(256).unwrap();
    memory.scope("tiny-level", |level| {
        let mut v = level.new_vec::<u64>();
        let mut pushed = 0u64;
        let err = loop {
            match v.try_push(pushed) {
                Ok(()) => pushed += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(err.value, pushed);
        assert_eq!(err.error.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(pushed, 32, "the whole block, no slack");
        assert!(v.iter().copied().eq(0..pushed));
        let r = catch_unwind(AssertUnwindSafe(|| v.push(99)));
        let msg = r.unwrap_err();
        let msg = msg
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or("");
        assert!(msg.contains("tiny-level"), "{msg}");
        assert_eq!(v.len() as u64, pushed);
        assert!(v.try_reserve(1).is_err());
        assert_eq!(v.into_slice().len(), 32);
        assert!(level.try_vec_with_capacity::<u8>(1).is_err());
    });
    memory.scope("words", |level| {
        let mut s = level.new_string();
        assert_eq!(
            s.try_push_str(&"x".repeat(300)).unwrap_err().kind(),
            AllocErrorKind::OutOfMemory
        );
        assert!(s.is_empty());
        s.push_str(&"y".repeat(200));
        assert!(write!(s, "{}", "z".repeat(100)).is_err());
        assert_eq!(s.len(), 200);
        assert_eq!(s.into_str().len(), 200);
    });
}

#[test]
fn zero_sized_elements_take_no_room_and_are_dropped_once() {
    static ZST_DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Unit;
    impl Drop for Unit {
        fn drop(&mut self) {
            ZST_DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }
    let n = scale(1000);
    let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    memory.scope("level", |level| {
        let mut v = level.new_vec::<()>();
        for _ in 0..n {
            v.push(());
        }
        assert_eq!(v.capacity(), usize::MAX);
        assert_eq!(v.into_slice_pod().len(), n);
        assert_eq!(level.used(), 0);
        let mut u = level.new_vec();
        for _ in 0..n {
            u.push(Unit);
        }
        drop(u.pop());
        assert_eq!(ZST_DROPS.load(Ordering::Relaxed), 1);
        let frozen = u.into_slice();
        assert_eq!(frozen.len(), n - 1);
        assert_eq!(level.finalizer_count(), 1, "one record for the slice");
        let mut dropped = level.new_vec();
        dropped.extend((0..3).map(|_| Unit));
        drop(dropped);
        assert_eq!(ZST_DROPS.load(Ordering::Relaxed), 4);
    });
    assert_eq!(ZST_DROPS.load(Ordering::Relaxed), n + 3);
}

#[test]
fn over_aligned_elements_stay_aligned_through_growth_and_freezing() {
    #[repr(align(64))]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Line(u64);
    #[repr(align(64))]
    struct LineDrop(u64, Arc<AtomicUsize>);
    impl Drop for LineDrop {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }
    let n = scale(300);
    let drops = Arc::new(AtomicUsize::new(0));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        level.new_pod(1u8);
        let mut v = level.new_vec();
        for i in 0..n as u64 {
            v.push(Line(i));
            assert_eq!(v.as_ptr() as usize % 64, 0);
        }
        let s = v.into_slice();
        assert_eq!(s.as_ptr() as usize % 64, 0);
        assert_eq!(s[n - 1], Line(n as u64 - 1));
        level.new_pod(1u8);
        let mut d = level.new_vec();
        for i in 0..n as u64 {
            d.push(LineDrop(i, drops.clone()));
        }
        let d = d.into_slice();
        assert_eq!(d.as_ptr() as usize % 64, 0);
        assert!(d.iter().enumerate().all(|(i, x)| x.0 == i as u64));
    });
    assert_eq!(drops.load(Ordering::Relaxed), n);
}

#[test]
fn the_vector_matches_std_vec_under_a_mixed_workload() {
    let steps = scale(5000);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let mut ours = level.new_vec::<String>();
        let mut std_vec: Vec<String> = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for step in 0..steps {
            let r = next();
            let len = std_vec.len();
            match r % 10 {
                0..=3 => {
                    ours.push(step.to_string());
                    std_vec.push(step.to_string());
                }
                4 => assert_eq!(ours.pop(), std_vec.pop()),
                5 => {
                    let i = (r >> 8) as usize % (len + 1);
                    ours.insert(i, step.to_string());
                    std_vec.insert(i, step.to_string());
                }
                6 if len > 0 => {
                    let i = (r >> 8) as usize % len;
                    assert_eq!(ours.remove(i), std_vec.remove(i));
                }
                7 if len > 0 => {
                    let i = (r >> 8) as usize % len;
                    assert_eq!(ours.swap_remove(i), std_vec.swap_remove(i));
                }
                8 => {
                    let k = (r >> 8) % 3;
                    ours.retain(|s| s.len() as u64 % 3 != k);
                    std_vec.retain(|s| s.len() as u64 % 3 != k);
                }
                9 => {
                    let keep = len.saturating_sub((r >> 8) as usize % 4);
                    ours.truncate(keep);
                    std_vec.truncate(keep);
                }
                _ => {}
            }
            assert_eq!(&*ours, &std_vec[..]);
        }
        let frozen = ours.into_slice();
        assert_eq!(frozen, &std_vec[..]);
    });
}

#[test]
fn strings_build_with_write_push_and_pop() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let before = level.used();
        let mut s = level.new_string();
        for i in 0..scale(200) {
            write!(s, "{i},").unwrap();
        }
        s.push('ä');
        assert_eq!(s.pop(), Some('ä'));
        s.push_str("end");
        let expected: String = (0..scale(200)).map(|i| format!("{i},")).collect::<String>() + "end";
        let frozen: &mut str = s.into_str();
        assert_eq!(&*frozen, expected);
        assert_eq!(level.used() - before, expected.len(), "no slack");
    });
}

#[test]
fn through_a_shared_handle_the_builder_moves_when_something_is_placed_above_it() {
    let t = Tracker::new();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let into = &**level;
        let mut v = Place::new_vec(&into);
        v.extend((0..4).map(|i| t.make(i)));
        let cap = v.capacity();
        let marker = into.new_pod(0xabcd_u32);
        // Fill the claimed room, then grow: the room is no longer the top.
        let mut id = 4;
        while v.len() <= cap {
            v.push(t.make(id));
            id += 1;
        }
        assert_eq!(
            *marker, 0xabcd,
            "the value placed above was not overwritten"
        );
        let s = v.into_slice();
        assert!(s.iter().enumerate().all(|(i, x)| x.id == i as u32));
        assert_eq!(*marker, 0xabcd);
        let mut text = Place::new_string(&into);
        text.push_str("a");
        let word = into.alloc_str("between");
        text.push_str(&"b".repeat(100));
        assert_eq!(word, "between");
        assert_eq!(text.len(), 101);
    });
    assert_eq!(t.drops(), t.log().len());
}

#[test]
fn builders_on_a_concurrent_scope_and_its_threads() {
    let threads = if cfg!(miri) { 2 } else { 4 };
    let n = scale(1000);
    let mut memory = LinearAllocator::with_capacity(1 << 22).unwrap();
    memory.scope("frame", |frame| {
        frame.scope_concurrent("jobs", |jobs| {
            let results: Vec<&[String]> = std::thread::scope(|ts| {
                let handles: Vec<_> = (0..threads)
                    .map(|k| {
                        ts.spawn(move || {
                            let here = jobs.local();
                            let mut v = here.new_vec();
                            for i in 0..n {
                                v.push(format!("{k}:{i}"));
                                if i % 64 == 0 {
                                    // Interleaved placements on this thread's chunk.
                                    here.new_pod(i);
                                }
                            }
                            let mut s = jobs.new_string();
                            write!(s, "thread {k}").unwrap();
                            assert_eq!(&*s, format!("thread {k}"));
                            &*v.into_slice()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (k, r) in results.iter().enumerate() {
                assert_eq!(r.len(), n);
                assert!(r.iter().enumerate().all(|(i, s)| *s == format!("{k}:{i}")));
            }
        });
    });
    assert_eq!(memory.used(), 0);
}

#[test]
fn two_builders_at_once_through_a_shared_handle() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let into = &**level;
        let mut words = Place::new_vec(&into);
        for w in ["frog", "toad", "newt"] {
            let mut s = Place::new_string(&into);
            s.push_str(w);
            s.push('!');
            words.push(&*s.into_str());
        }
        let words: &[&str] = words.into_slice_pod();
        assert_eq!(words, ["frog!", "toad!", "newt!"]);
    });
}

scope_stack::slot_root!(struct Names = for<'s> &'s [&'s str]);

#[test]
fn a_slot_builds_its_root_with_builders_through_its_shared_scope() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 2, 16 << 10);
        let level = slots
            .load::<Names>("forest", |s| {
                let mut names = Place::new_vec(&s);
                for i in 0..scale(100) {
                    let mut name = Place::new_string(&s);
                    write!(name, "tree {i}").unwrap();
                    names.push(&*name.into_str());
                }
                &*names.into_slice_pod()
            })
            .unwrap();
        level.with(|names| {
            assert_eq!(names.len(), scale(100));
            assert!(names
                .iter()
                .enumerate()
                .all(|(i, n)| *n == format!("tree {i}")));
        });
        drop(level);
        assert_eq!(slots.loaded(), 0);
    });
}

#[test]
fn a_concurrent_scope_with_small_chunks_or_no_slots_moves_builders_soundly() {
    let n = scale(2000);
    let mut memory = LinearAllocator::with_capacity(1 << 22).unwrap();
    // Small chunks: a vector outgrows its chunk and moves to the next one (or to a
    // direct claim when it is larger than a chunk).
    let small = scope_stack::ConcurrentConfig::new().chunk_size(512);
    // No per-thread slots: every claim is a direct one from the shared region.
    let none = scope_stack::ConcurrentConfig::new().threads(0);
    for config in [small, none] {
        let t = Tracker::new();
        memory.scope("frame", |frame| {
            frame.scope_concurrent_with("jobs", config, |jobs| {
                let mut v = jobs.new_vec();
                let mut s = jobs.new_string();
                for i in 0..n as u32 {
                    v.push(t.make(i));
                    write!(s, "{i};").unwrap();
                    if i % 100 == 0 {
                        jobs.new_pod(i);
                    }
                }
                let s = s.into_str();
                let expected: String = (0..n).map(|i| format!("{i};")).collect();
                assert_eq!(&*s, expected);
                let v = v.into_slice();
                assert!(v.iter().enumerate().all(|(i, x)| x.id == i as u32));
                let mut dropped = jobs.new_vec();
                dropped.extend((0..10).map(|i| t.make(1000 + i)));
                drop(dropped);
                assert_eq!(t.drops(), 10);
            });
        });
        assert_eq!(t.drops(), n + 10);
        assert_eq!(memory.used(), 0);
    }
}

#[test]
fn the_high_water_mark_counts_a_dropped_builders_elements_but_no_slack() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.reset_high_water_mark();
    memory.scope("level", |level| {
        let mut v = level.new_vec::<u64>();
        for i in 0..100 {
            v.push(i); // doubles: claims room for more than 100
        }
        assert!(v.capacity() > 100);
        drop(v);
        assert_eq!(level.used(), 0);
    });
    assert_eq!(memory.high_water_mark(), 800);
}
