//! Slots (rule 10): sub-blocks loaded and unloaded in any order, on any thread.

// `SlotError` keeps its names inline (no heap on the error path), so it is large.
#![allow(clippy::result_large_err)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use scope_stack::{slot_root, LinearAllocator, Loaded, Pool, SlotErrorKind};

/// Pushes its id to a shared log when dropped.
struct Logged {
    id: u32,
    log: Arc<Mutex<Vec<u32>>>,
    panic_on_drop: bool,
}

impl Drop for Logged {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(self.id);
        if self.panic_on_drop {
            panic!("destructor {} panics", self.id);
        }
    }
}

fn logged(id: u32, log: &Arc<Mutex<Vec<u32>>>) -> Logged {
    Logged {
        id,
        log: log.clone(),
        panic_on_drop: false,
    }
}

struct Level<'s> {
    name: &'s str,
    enemies: &'s Pool<'s, [f32; 2]>,
    spawns: &'s [u32],
}
slot_root!(struct LevelRoot = for<'s> Level<'s>);

/// A root whose destructor reads values of its slot.
struct Checked<'s> {
    parts: &'s [Logged],
    log: Arc<Mutex<Vec<u32>>>,
}
impl Drop for Checked<'_> {
    fn drop(&mut self) {
        // Every part is still alive when the root goes.
        let ids: Vec<u32> = self.parts.iter().map(|p| p.id).collect();
        self.log.lock().unwrap().push(1000 + ids.len() as u32);
    }
}
slot_root!(struct CheckedRoot = for<'s> Checked<'s>);

slot_root!(struct Unit = for<'s> ());
slot_root!(struct Number = for<'s> u64);
slot_root!(struct Text = for<'s> &'s str);

fn load_level<'a>(slots: &'a scope_stack::Slots, name: &str) -> Loaded<'a, LevelRoot> {
    slots
        .load::<LevelRoot>(name, |s| Level {
            name: s.alloc_str(name),
            enemies: s.new_pool(16),
            spawns: s.alloc_slice_fill_with(32, |i| i as u32),
        })
        .unwrap()
}

#[test]
fn loaded_slots_drop_in_any_order_and_slots_are_reused() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 2, 32 << 10);
        let a = load_level(levels, "a");
        let b = load_level(levels, "b");
        assert_eq!((a.slot(), b.slot()), (0, 1));
        assert_eq!(levels.loaded(), 2);
        drop(a); // the older one first
        let c = load_level(levels, "c");
        assert_eq!(c.slot(), 0);
        drop(b);
        let d = load_level(levels, "d");
        assert_eq!(d.slot(), 1);
        drop(d); // the newer one first
        c.with(|l| {
            assert_eq!(l.name, "c");
            assert_eq!(l.spawns.iter().sum::<u32>(), 496);
            assert_eq!(l.enemies.capacity(), 16);
        });
        drop(c);
        assert_eq!(levels.loaded(), 0);
    });
    assert_eq!(memory.used(), 0);
}

#[test]
fn the_carving_scope_opens_children_while_slots_are_loaded() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 2, 16 << 10);
        let level = load_level(levels, "forest");
        for frame in 0..3u32 {
            game.scope("frame", |f| {
                let n = f.new_pod(frame);
                level.with(|l| assert_eq!(l.spawns[*n as usize], frame));
            });
        }
        let before = game.allocator().used();
        drop(level);
        assert_eq!(game.allocator().used(), before);
    });
}

#[test]
fn loaded_values_move_into_structs_and_vecs() {
    struct World<'a> {
        playing: Option<Loaded<'a, LevelRoot>>,
        queue: Vec<Loaded<'a, LevelRoot>>,
    }
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 3, 16 << 10);
        let mut world = World {
            playing: None,
            queue: Vec::new(),
        };
        world.playing = Some(load_level(levels, "a"));
        world.queue.push(load_level(levels, "b"));
        world.queue.push(load_level(levels, "c"));
        // Switch: "b" plays, "a" goes.
        world.playing = Some(world.queue.remove(0));
        assert_eq!(world.playing.as_ref().unwrap().name(), "b");
        assert_eq!(levels.loaded(), 2);
        drop(world);
        assert_eq!(levels.loaded(), 0);
    });
}

#[test]
fn dropping_a_loaded_slot_drops_the_root_first_then_the_rest_newest_first() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 16 << 10);
        let mut loaded = slots
            .load::<CheckedRoot>("level", |s| {
                s.new_object(logged(1, &log));
                let parts = s.alloc_slice_fill_with(2, |i| logged(10 + i as u32, &log));
                s.new_object(logged(2, &log));
                Checked {
                    parts,
                    log: log.clone(),
                }
            })
            .unwrap();
        loaded.with_mut(|_, s| {
            s.new_object(logged(3, &log));
        });
        assert!(log.lock().unwrap().is_empty());
        drop(loaded);
        // Root (which sees both parts), then the records newest first: 3, 2, the
        // slice (its elements in order, as a slice drops), 1.
        assert_eq!(*log.lock().unwrap(), [1002, 3, 2, 10, 11, 1]);
    });
}

#[test]
fn a_root_with_a_destructor_is_dropped_even_when_nothing_else_in_its_slot_is() {
    /// A root that needs drop, in a slot whose chain stays empty.
    struct Counted;
    static COUNTED_DROPS: AtomicUsize = AtomicUsize::new(0);
    impl Drop for Counted {
        fn drop(&mut self) {
            COUNTED_DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }
    slot_root!(struct CountedRoot = for<'s> Counted);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 1024);
        for round in 1..=3 {
            let loaded = slots.load::<CountedRoot>("level", |_| Counted).unwrap();
            assert_eq!(COUNTED_DROPS.load(Ordering::SeqCst), round - 1);
            drop(loaded);
            assert_eq!(COUNTED_DROPS.load(Ordering::SeqCst), round);
            assert_eq!(slots.loaded(), 0);
        }
    });
}

#[test]
fn a_panicking_build_frees_the_slot_and_drops_what_it_built() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 16 << 10);
        let result = catch_unwind(AssertUnwindSafe(|| {
            let _ = slots.load::<Unit>("broken", |s| {
                s.new_object(logged(1, &log));
                s.new_object(logged(2, &log));
                panic!("level file corrupt");
            });
        }));
        assert!(result.is_err());
        assert_eq!(*log.lock().unwrap(), [2, 1]);
        assert_eq!(slots.loaded(), 0);
        let again = slots
            .load::<Text>("fixed", |s| &*s.alloc_str("ok"))
            .unwrap();
        assert_eq!(again.with(|t| t.len()), 2);
    });
}

#[test]
fn a_panicking_destructor_skips_no_other_and_the_slot_is_freed() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 16 << 10);
        let loaded = slots
            .load::<Unit>("level", |s| {
                s.new_object(logged(1, &log));
                let mut bad = logged(2, &log);
                bad.panic_on_drop = true;
                s.new_object(bad);
                s.new_object(logged(3, &log));
            })
            .unwrap();
        let result = catch_unwind(AssertUnwindSafe(|| drop(loaded)));
        assert!(result.is_err());
        assert_eq!(*log.lock().unwrap(), [3, 2, 1]);
        assert_eq!(slots.loaded(), 0);
        let _next = slots.load::<Unit>("next", |_| ()).unwrap();
    });
}

#[test]
fn forgetting_a_loaded_slot_leaks_it_and_keeps_it_busy() {
    /// Counts its drops; owns no heap memory (Miri would report the leak).
    struct Leaky;
    static LEAKY_DROPS: AtomicUsize = AtomicUsize::new(0);
    impl Drop for Leaky {
        fn drop(&mut self) {
            LEAKY_DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 2, 16 << 10);
        let leaked = slots
            .load::<Unit>("leaked", |s| {
                s.new_object(Leaky);
            })
            .unwrap();
        std::mem::forget(leaked);
        assert_eq!(slots.loaded(), 1);
        let other = slots.load::<Unit>("other", |_| ()).unwrap();
        assert_eq!(other.slot(), 1);
        let err = slots.load::<Unit>("third", |_| ()).unwrap_err();
        assert_eq!(err.holders().collect::<Vec<_>>(), ["leaked", "other"]);
        // The parent's report and child scopes still work.
        game.scope("frame", |f| {
            f.new_pod(1u8);
            assert_eq!(f.report().scopes.len(), 2);
        });
    });
    // The parent closed over the leaked slot: its value was never dropped.
    assert_eq!(LEAKY_DROPS.load(Ordering::SeqCst), 0);
    assert_eq!(memory.used(), 0);
    // The block is fine for the next scope.
    memory.scope("again", |s| {
        let slots = s.new_slots("levels", 1, 1024);
        let _fresh = slots.load::<Unit>("fresh", |_| ()).unwrap();
        assert_eq!(s.report().scopes[0].slots[0].loaded, 1);
    });
}

#[test]
fn a_build_that_overflows_its_slot_panics_naming_the_slot_scope() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 1024);
        let err = catch_unwind(AssertUnwindSafe(|| {
            let _ = slots.load::<Text>("huge level", |s| &*s.alloc_str(&"x".repeat(4096)));
        }))
        .unwrap_err();
        let message = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains("\"huge level\""), "{message}");
        assert_eq!(slots.loaded(), 0);
    });
}

#[test]
fn with_mut_keeps_allocating_within_the_slot() {
    struct Log<'s> {
        lines: &'s [&'s str],
    }
    slot_root!(struct LogRoot = for<'s> Log<'s>);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("logs", 1, 4096);
        let mut log = slots
            .load::<LogRoot>("log", |_| Log { lines: &[] })
            .unwrap();
        let first = log.used();
        for i in 0..10 {
            log.with_mut(|l, s| {
                let line: &str = s.alloc_fmt(format_args!("line {i}"));
                let mut lines: Vec<&str> = l.lines.to_vec();
                lines.push(line);
                l.lines = s.alloc_slice_copy(&lines);
            });
        }
        assert!(log.used() > first);
        assert_eq!(log.with(|l| l.lines.len()), 10);
        // Past the slot's size, the slot's own scope says no.
        let err = log.with_mut(|_, s| s.try_alloc_raw(8192, 1).unwrap_err());
        assert_eq!(err.scope_name(), "log");
    });
}

struct Frame<'s> {
    number: u64,
    draws: &'s [[f32; 4]],
    labels: &'s [&'s str],
}
slot_root!(struct FrameRoot = for<'s> Frame<'s>);

fn build_frame<'x>(
    jobs: &'x scope_stack::ConcurrentScope<'x>,
    number: u64,
    workers: usize,
) -> Frame<'x> {
    let parts: Vec<&[[f32; 4]]> = std::thread::scope(|t| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                t.spawn(move || &*jobs.alloc_slice_fill_with(20, |i| [(w * 20 + i) as f32; 4]))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let labels: Vec<&str> = (0..4)
        .map(|i| &*jobs.alloc_fmt(format_args!("label {i}")))
        .collect();
    Frame {
        number,
        draws: jobs.alloc_iter(parts.iter().flat_map(|p| p.iter().copied())),
        labels: jobs.alloc_slice_copy(&labels),
    }
}

#[test]
fn concurrent_loads_cross_threads_and_drop_there() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("renderer", |renderer| {
        let frames = renderer.new_slots("frames", 2, 64 << 10);
        let frame = frames
            .load_concurrent::<FrameRoot>("frame 0", |jobs| {
                jobs.new_object(logged(7, &log));
                build_frame(jobs, 0, 2)
            })
            .unwrap();
        let dropped_on = std::thread::scope(|t| {
            t.spawn(move || {
                frame.with(|f| {
                    assert_eq!(f.draws.len(), 40);
                    assert_eq!(f.labels[3], "label 3");
                });
                drop(frame);
                std::thread::current().id()
            })
            .join()
            .unwrap()
        });
        assert_ne!(dropped_on, std::thread::current().id());
        assert_eq!(*log.lock().unwrap(), [7]);
        assert_eq!(frames.loaded(), 0);
    });
}

#[test]
fn a_frame_ring_blocks_only_when_every_frame_is_in_flight() {
    let frames_total: u64 = if cfg!(miri) { 6 } else { 200 };
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("renderer", |renderer| {
        let frames = renderer.new_slots("frames", 3, 32 << 10);
        std::thread::scope(|t| {
            let (send, receive) = mpsc::sync_channel::<Loaded<'_, FrameRoot, _>>(8);
            let (in_flight2, most2) = (in_flight.clone(), most.clone());
            let render = t.spawn(move || {
                let mut next = 0;
                for frame in receive {
                    frame.with(|f| {
                        assert_eq!(f.number, next);
                        assert_eq!(f.draws.len(), 20);
                    });
                    next += 1;
                    in_flight2.fetch_sub(1, Ordering::SeqCst);
                    drop(frame);
                }
                let _ = most2;
                next
            });
            for n in 0..frames_total {
                let frame = frames
                    .load_concurrent_wait::<FrameRoot>("frame", |jobs| build_frame(jobs, n, 1));
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                assert!(frames.loaded() <= 3);
                send.send(frame).unwrap();
            }
            drop(send);
            assert_eq!(render.join().unwrap(), frames_total);
        });
        assert!(most.load(Ordering::SeqCst) <= 3);
        assert_eq!(frames.loaded(), 0);
    });
}

#[test]
fn load_wait_wakes_when_another_thread_drops() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        let held = slots.load::<Number>("first", |_| 1).unwrap();
        std::thread::scope(|t| {
            let waiter = t.spawn(|| {
                slots
                    .load_wait_timeout::<Number>("second", Duration::from_secs(60), |_| 2)
                    .map(|l| l.with(|n| *n))
            });
            std::thread::sleep(Duration::from_millis(20));
            drop(held);
            assert_eq!(waiter.join().unwrap().unwrap(), 2);
        });
        let held = slots.load::<Number>("third", |_| 3).unwrap();
        let err = slots
            .load_wait_timeout::<Number>("fourth", Duration::from_millis(10), |_| 4)
            .unwrap_err();
        assert_eq!(err.kind(), SlotErrorKind::TimedOut);
        drop(held);
    });
}

#[test]
fn many_threads_load_and_drop_from_one_set_of_slots() {
    let rounds = if cfg!(miri) { 3 } else { 200 };
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("shared", 2, 4096);
        std::thread::scope(|t| {
            for w in 0..4u64 {
                t.spawn(move || {
                    for r in 0..rounds {
                        let l = slots.load_wait::<Number>("job", |s| *s.new_pod(w * 1000 + r));
                        assert_eq!(l.with(|n| *n), w * 1000 + r);
                    }
                });
            }
        });
        assert_eq!(slots.loaded(), 0);
    });
}

#[test]
fn reports_show_each_slot_with_its_holder_use_and_high_water_mark() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        game.alloc_raw(100, 1);
        let levels = game.new_slots("levels", 3, 8192);
        let a = levels
            .load::<Text>("forest", |s| &*s.alloc_str(&"x".repeat(3000)))
            .unwrap();
        let b = levels
            .load::<Text>("castle", |s| &*s.alloc_str(&"y".repeat(1000)))
            .unwrap();
        drop(a);
        let map = game.report();
        let set = &map.scopes[0].slots[0];
        assert_eq!((set.count, set.loaded, set.most_loaded), (3, 1, 2));
        let states: Vec<_> = set
            .slots
            .iter()
            .map(|s| (s.state, s.holder.clone()))
            .collect();
        assert_eq!(
            states,
            [
                (scope_stack::SlotState::Free, None),
                (scope_stack::SlotState::Loaded, Some("castle".to_string())),
                (scope_stack::SlotState::Free, None),
            ]
        );
        assert!(set.slots[0].high_water_mark >= 3000);
        assert!(set.slots[1].used >= 1000 && set.slots[1].used < 3000);
        assert_eq!(set.slots[1].offset, set.offset + set.stride);
        assert!(set.offset >= 100);
        let text = map.to_string();
        assert!(text.contains("- Slots levels"), "{text}");
        assert!(text.contains("- Slot castle"), "{text}");
        assert!(text.contains("- Slot free"), "{text}");
        let svg = map.to_svg();
        assert!(svg.contains("castle"));
        // A report from another thread reads the same table.
        let from_thread = std::thread::scope(|t| t.spawn(|| levels.loaded()).join().unwrap());
        assert_eq!(from_thread, 1);
        drop(b);
    });
}
