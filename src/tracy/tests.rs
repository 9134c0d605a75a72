//! The events a scripted program shows the profiler, read from the seam's recorder:
//! exact sequences for small programs, and for bigger ones the rules every sequence
//! keeps (each allocation ends once, by a free or a discard; names are right; nothing
//! lies outside its scope's memory).
use std::collections::{HashMap, HashSet};
use std::string::{String, ToString};
use std::vec::Vec;

use crate::profiler::record::{Recorded, Recording};
use crate::{slot_root, LinearAllocator};

use Recorded::{Alloc, Discard, Free};

fn plot(name: &str, value: usize) -> Recorded {
    Recorded::Plot {
        name: name.to_string(),
        value: value as f64,
    }
}

/// Checks what every recording must keep, and returns the allocations per pool
/// (address, size), in order. Each [`Recorded::Connected`] starts a new capture: the
/// profiler that connects knows nothing of what came before.
///
/// The rules: an allocation is not empty and not made twice while live; a free ends
/// an allocation this capture was shown; a discard ends a pool this capture was shown
/// an allocation of since that pool's last discard (Tracy's server mis-times what
/// follows any other discard); every pool and plot is named (no empty segment); at the
/// end, every allocation was ended by a free or a discard.
fn check_rules(events: &[Recorded]) -> HashMap<&'static str, Vec<(usize, usize)>> {
    let mut live: HashMap<&'static str, HashSet<usize>> = HashMap::new();
    let mut shown: HashSet<&'static str> = HashSet::new();
    let mut allocs: HashMap<&'static str, Vec<(usize, usize)>> = HashMap::new();
    let named = |e: &Recorded, name: &str| {
        assert!(
            !name.is_empty() && !name.split('/').any(str::is_empty),
            "{e:?}: every pool and plot is named"
        );
    };
    for e in events {
        match *e {
            Alloc { pool, addr, size } => {
                named(e, pool);
                assert!(size > 0, "{e:?}: no empty allocations");
                assert!(
                    live.entry(pool).or_default().insert(addr),
                    "{e:?}: allocated twice while live"
                );
                shown.insert(pool);
                allocs.entry(pool).or_default().push((addr, size));
            }
            Free { pool, addr } => assert!(
                live.entry(pool).or_default().remove(&addr),
                "{e:?}: freed but not shown, or not live"
            ),
            Discard { pool } => {
                live.remove(pool);
                assert!(
                    shown.remove(pool),
                    "{e:?}: a discard of a pool this capture was not shown an allocation of"
                );
            }
            Recorded::Plot { ref name, .. } => named(e, name),
            Recorded::Connected => {
                live.clear();
                shown.clear();
            }
            Recorded::Message { .. } => {}
        }
    }
    for (pool, addrs) in &live {
        assert!(addrs.is_empty(), "{pool}: {addrs:?} never ended");
    }
    allocs
}

/// The pools shown in `events` (allocated in, freed in or discarded).
fn pools(events: &[Recorded]) -> HashSet<&'static str> {
    events
        .iter()
        .filter_map(|e| match e {
            Alloc { pool, .. } | Free { pool, .. } | Discard { pool } => Some(*pool),
            _ => None,
        })
        .collect()
}

fn addr<T: ?Sized>(r: &T) -> usize {
    (r as *const T).cast::<u8>().addr()
}

#[test]
fn nested_scopes_allocate_in_their_own_pools_and_each_close_is_one_discard() {
    let rec = Recording::start("tn_");
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    let mut seen = Vec::new();
    memory.scope("tn_systems", |systems| {
        let a = systems.alloc_slice_copy(&[1u32; 4]);
        seen.push(Alloc {
            pool: "tn_systems",
            addr: addr(a),
            size: 16,
        });
        systems.scope("level", |level| {
            let b = level.new_pod(5u64);
            seen.push(Alloc {
                pool: "tn_systems/level",
                addr: addr(b),
                size: 8,
            });
            let t = level.alloc_fmt(format_args!("level {}", 3));
            seen.push(Alloc {
                pool: "tn_systems/level",
                addr: addr(t),
                size: 7,
            });
        });
    });
    let events = rec.finish();
    seen.extend([
        Discard {
            pool: "tn_systems/level",
        },
        plot("tn_systems used", 16),
        plot("tn_systems high-water", 16 + 8 + 7),
        Discard { pool: "tn_systems" },
        plot("tn_systems used", 0),
        plot("tn_systems high-water", 16 + 8 + 7),
    ]);
    assert_eq!(events, seen);
    check_rules(&events);
}

#[test]
fn a_box_in_a_scope_is_an_allocation_and_a_free_and_grows_show_as_both() {
    use allocator_api2::boxed::Box;
    use allocator_api2::vec::Vec as ApiVec;
    let rec = Recording::start("tb_");
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    let mut boxed_at = 0;
    memory.scope("tb_scope", |s| {
        let b = Box::new_in(7u64, &**s);
        boxed_at = addr(&*b);
        drop(b);
        let mut v = ApiVec::with_capacity_in(2, &**s);
        v.extend([1u8, 2, 3]); // grows in place: a free and a new allocation
    });
    let events = rec.finish();
    assert_eq!(
        events[..2],
        [
            Alloc {
                pool: "tb_scope",
                addr: boxed_at,
                size: 8
            },
            Free {
                pool: "tb_scope",
                addr: boxed_at
            }
        ]
    );
    let allocs = check_rules(&events);
    // The box, then the vector's first buffer and its growth at the same address.
    let sizes: Vec<usize> = allocs["tb_scope"].iter().map(|a| a.1).collect();
    assert_eq!(sizes[0], 8);
    assert_eq!(sizes[1], 2);
    assert!(sizes[2] >= 3);
    assert_eq!(allocs["tb_scope"][1].0, allocs["tb_scope"][2].0);
    assert!(events.contains(&Discard { pool: "tb_scope" }));
}

#[test]
fn a_concurrent_scope_shows_every_workers_allocations_in_its_pool() {
    let rec = Recording::start("tc_");
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    let (lo, hi) = (memory.start_addr(), memory.end_addr());
    let mut placed: Vec<(usize, usize)> = Vec::new();
    memory.scope("tc_frame", |frame| {
        frame.scope_concurrent("jobs", |jobs| {
            let per_thread: Vec<Vec<(usize, usize)>> = std::thread::scope(|t| {
                let workers: Vec<_> = (0..2)
                    .map(|w| {
                        t.spawn(move || {
                            (0..20u32)
                                .map(|i| {
                                    let s = jobs.local().alloc_slice_fill_copy(4, w * 100 + i);
                                    (addr(&*s), 16)
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                workers.into_iter().map(|h| h.join().unwrap()).collect()
            });
            placed = per_thread.concat();
            // The shared handle places in the same pool.
            let s = jobs.alloc_str("shared");
            placed.push((addr(s), 6));
            let v = jobs.new_pod(7u64);
            placed.push((addr(v), 8));
        });
    });
    let events = rec.finish();
    let allocs = check_rules(&events);
    let mut shown = allocs["tc_frame/jobs"].clone();
    shown.sort();
    placed.sort();
    assert_eq!(shown, placed, "exactly what was placed, once each");
    assert!(shown.iter().all(|&(a, s)| a >= lo && a + s <= hi));
    assert!(
        !allocs.contains_key("tc_frame"),
        "the parent placed nothing"
    );
    let discards: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, Discard { .. }))
        .collect();
    // The parent showed no allocation, so it gets no discard (Tracy's server mis-times
    // what follows a discard of a pool it has not seen).
    assert_eq!(
        discards,
        [&Discard {
            pool: "tc_frame/jobs"
        }]
    );
}

struct Level<'s> {
    name: &'s str,
}
slot_root!(struct LevelRoot = for<'s> Level<'s>);

#[test]
fn slots_unloaded_out_of_order_each_end_with_one_discard() {
    let rec = Recording::start("ts_");
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("tg_game", |game| {
        let levels = game.new_slots("ts_levels", 3, 4096);
        let load = |name: &str| {
            levels
                .load::<LevelRoot>(name, |s| Level {
                    name: s.alloc_str(name),
                })
                .unwrap()
        };
        let forest = load("forest");
        let castle = load("castle");
        let unnamed = load("");
        castle.with(|l| assert_eq!(l.name, "castle"));
        drop(forest); // first in, first out
        drop(unnamed);
        let forest_again = load("forest");
        drop(castle);
        drop(forest_again);
    });
    let events = rec.finish();
    let allocs = check_rules(&events);
    assert_eq!(
        allocs["ts_levels/forest"].len(),
        4,
        "two loads: a name and a root each"
    );
    assert_eq!(allocs["ts_levels/castle"][0].1, 6);
    assert!(allocs.keys().any(|k| k.starts_with("ts_levels[")));
    let discards: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Discard { pool } => Some(*pool),
            _ => None,
        })
        .collect();
    assert_eq!(discards[0], "ts_levels/forest");
    assert!(discards[1].starts_with("ts_levels["));
    assert_eq!(discards[2..], ["ts_levels/castle", "ts_levels/forest"]);
    // Each load plots the slot's use; each unload plots 0.
    assert!(events.contains(&plot("ts_levels/castle used", 0)));
    assert!(events
        .iter()
        .any(|e| matches!(e, Recorded::Plot { name, value } if name == "ts_levels/forest used" && *value > 0.0)));
}

#[test]
fn pools_show_inserts_and_removes_and_end_with_one_discard() {
    let rec = Recording::start("tp_");
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("tp_level", |level| {
        let pool = level.new_pool::<u64>(4);
        let a = pool.insert(1).unwrap();
        let b = pool.insert(2).unwrap();
        let (a_at, b_at) = (addr(&*a), addr(&*b));
        drop(a);
        let kept = b.into_handle(); // stays in the pool until it is dropped
        assert_eq!(pool.get(kept), Some(&2));
        let h = pool.insert_mut(3).unwrap();
        assert_eq!(pool.remove(h), Some(3));
        let dense = level.new_dense_pool::<u32>(4);
        let x = dense.insert(10).unwrap();
        let y = dense.insert(11).unwrap();
        let x_at = addr(&dense[x]);
        let y_at = addr(&dense[y]);
        dense.remove(x); // the last object moves into the hole: the last cell ends
        let _ = (a_at, b_at, x_at, y_at);
    });
    let events = rec.finish();
    let allocs = check_rules(&events);
    assert_eq!(allocs["tp_level/Pool<u64>"].len(), 3);
    assert!(allocs["tp_level/Pool<u64>"].iter().all(|a| a.1 == 8));
    assert_eq!(allocs["tp_level/DensePool<u32>"].len(), 2);
    let frees: Vec<&Recorded> = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Free {
                    pool: "tp_level/DensePool<u32>",
                    ..
                }
            )
        })
        .collect();
    assert_eq!(frees.len(), 1);
    // The pool's memory is one allocation of the level; the pools' own pools end with
    // the level, before it.
    assert!(allocs["tp_level"].len() >= 2);
    let order: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Discard { pool } => Some(*pool),
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        ["tp_level/DensePool<u32>", "tp_level/Pool<u64>", "tp_level"]
    );
    let lens: Vec<f64> = events
        .iter()
        .filter_map(|e| match e {
            Recorded::Plot { name, value } if name == "tp_level/Pool<u64> len" => Some(*value),
            _ => None,
        })
        .collect();
    assert_eq!(lens, [1.0, 2.0, 1.0, 2.0, 1.0, 0.0]);
}

#[test]
fn two_live_pools_of_one_name_get_different_names() {
    let rec = Recording::start("tt_");
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("tt_level", |level| {
        let a = level.new_pool::<u8>(2);
        let b = level.new_pool::<u8>(2);
        let _x = a.insert(1).unwrap();
        let _y = b.insert(2).unwrap();
    });
    let allocs = check_rules(&rec.finish());
    assert!(
        allocs.contains_key("tt_level/Pool<u8>"),
        "{:?}",
        allocs.keys()
    );
    assert!(allocs.contains_key("tt_level/Pool<u8>#2"));
}

#[test]
fn out_of_memory_sends_the_map_and_places_nothing() {
    let rec = Recording::start("to_");
    let mut memory = LinearAllocator::with_capacity(256).unwrap();
    memory.scope("to_small", |s| {
        s.alloc_raw(100, 1);
        assert!(s.try_alloc_raw(1000, 1).is_err());
    });
    let events = rec.finish();
    let messages: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            Recorded::Message { text } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), 1);
    assert!(messages[0].contains("out of memory"), "{}", messages[0]);
    assert!(messages[0].contains("to_small"), "the map names the scope");
    let allocs = check_rules(&events);
    assert_eq!(allocs["to_small"], [(memory.start_addr(), 100)]);
}

#[test]
fn an_iterator_collected_in_place_shows_the_size_it_kept() {
    let rec = Recording::start("ti_");
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let mut at = 0;
    memory.scope("ti_scope", |s| {
        // No size hint: the room grows while it collects.
        let v = s.alloc_iter((0..1000u32).filter(|n| n % 3 == 0));
        at = addr(&v[0]);
        assert_eq!(v.len(), 334);
    });
    let events = rec.finish();
    let allocs = check_rules(&events);
    let last = *allocs["ti_scope"].last().unwrap();
    assert_eq!(last, (at, 334 * 4));
}

#[test]
fn a_builder_shows_the_size_it_kept_and_a_dropped_one_is_freed() {
    let rec = Recording::start("tb_");
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let mut at = 0;
    memory.scope("tb_scope", |s| {
        let mut gone = s.new_vec::<u64>();
        gone.extend(0..10);
        drop(gone); // freed: the next builder reuses its bytes
        let mut v = s.new_vec::<u32>();
        for i in 0..334 {
            v.push(i); // grows in place past its first claim
        }
        let v = v.into_slice();
        at = addr(&v[0]);
        let mut t = s.new_string();
        t.push_str("frog");
        assert_eq!(t.into_str(), "frog");
    });
    let events = rec.finish();
    let allocs = check_rules(&events);
    let kept = &allocs["tb_scope"];
    assert!(kept.contains(&(at, 334 * 4)), "{kept:?}");
    assert_eq!(*kept.last().unwrap(), (at + 334 * 4, 4));
}

struct PoolLevel<'s> {
    name: &'s str,
    pool: &'s mut crate::Pool<'s, u32>,
}
slot_root!(struct PoolLevelRoot = for<'s> PoolLevel<'s>);

/// Loads `name` into `levels` through a concurrent scope, with a pool of two objects.
fn load_pool_level<'a>(
    levels: &'a crate::Slots,
    name: &str,
) -> crate::Loaded<'a, PoolLevelRoot, crate::Shared> {
    let level = levels
        .load_concurrent::<PoolLevelRoot>(name, |jobs| {
            let pool = jobs.new_pool::<u32>(4);
            PoolLevel {
                name: jobs.alloc_str(name),
                pool,
            }
        })
        .unwrap();
    level.with(|l| {
        let _kept = l.pool.insert(1).unwrap().into_handle();
        let _gone = l.pool.insert(2).unwrap();
    });
    level
}

#[test]
fn a_slot_loaded_through_a_concurrent_scope_names_its_pools_once() {
    let rec = Recording::start("tl_");
    let mut memory = LinearAllocator::with_capacity(1 << 18).unwrap();
    memory.scope("tl_game", |game| {
        let levels = game.new_slots("tl_levels", 2, 32 << 10);
        let canyon = load_pool_level(levels, "canyon");
        canyon.with(|l| assert_eq!(l.name, "canyon"));
        drop(canyon);
    });
    let events = rec.finish();
    let allocs = check_rules(&events);
    let shown = pools(&events);
    assert!(shown.contains("tl_levels/canyon/Pool<u32>"), "{shown:?}");
    assert!(
        shown.iter().all(|p| !p.contains("canyon/canyon")),
        "{shown:?}"
    );
    // The concurrent scope places in the slot's pool: the level's name, its root, the
    // pool's arrays (and the scope's own record, placed by the slot).
    assert!(
        allocs["tl_levels/canyon"]
            .iter()
            .any(|&(_, size)| size == 6),
        "the name"
    );
    let discards: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Discard { pool } => Some(*pool),
            _ => None,
        })
        .collect();
    assert_eq!(
        discards,
        ["tl_levels/canyon/Pool<u32>", "tl_levels/canyon", "tl_game"],
        "one discard of the slot's pool, at the unload"
    );
    assert!(events.contains(&plot("tl_levels/canyon used", 0)));
}

#[test]
fn a_profiler_connecting_mid_run_is_shown_only_pools_that_open_after() {
    use allocator_api2::boxed::Box;
    let rec = Recording::start_disconnected("tm_");
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("tm_game", |game| {
        let levels = game.new_slots("tm_levels", 3, 32 << 10);
        let enemies = game.new_pool::<u64>(8);
        let early = enemies.insert(1).unwrap();
        let canyon = load_pool_level(levels, "canyon");
        let mut late_pool = None;
        game.scope("frame", |frame| {
            let early_box = Box::new_in(7u64, &**frame);
            rec.connect(); // partway through a frame
            let _ = frame.new_pod(3u64); // the frame opened before: not shown
            drop(early_box); // allocated before: its free is not shown
            frame.scope("inner", |inner| {
                let b = Box::new_in(9u32, &**inner);
                drop(b);
                inner.new_pod(1u8);
            });
            frame.scope_concurrent("jobs", |jobs| {
                jobs.alloc_str("in a concurrent scope opened after");
            });
            let pool = frame.new_pool::<u32>(4);
            let _a = pool.insert(5).unwrap();
            let _b = pool.insert(6).unwrap().into_handle();
            late_pool = Some(());
        });
        drop(early); // a pool that opened before: nothing
        let _ = enemies.insert(2).unwrap();
        canyon.with(|l| drop(l.pool.insert(3).unwrap())); // a slot loaded before
        drop(canyon); // its unload: no discard, no plot
        let forest = load_pool_level(levels, "forest");
        game.scope("frame", |frame| {
            frame.new_pod(4u64);
        });
        rec.disconnect();
        game.scope("frame", |frame| {
            frame.new_pod(5u64);
        });
        let glacier = load_pool_level(levels, "glacier"); // opened while none connected
        rec.connect(); // a second capture
        drop(forest); // named in the first: nothing in the second
        drop(glacier);
        game.scope("frame", |frame| {
            frame.new_pod(6u64);
        });
        assert!(late_pool.is_some());
    });
    let events = rec.finish();
    let allocs = check_rules(&events);
    let captures: Vec<&[Recorded]> = events.split(|e| *e == Recorded::Connected).collect();
    assert_eq!(captures.len(), 3);
    assert!(captures[0].is_empty(), "nothing before a profiler connects");
    let first = pools(captures[1]);
    let second = pools(captures[2]);
    let want_first = [
        "tm_game/frame/inner",
        "tm_game/frame/jobs",
        "tm_game/frame/Pool<u32>",
        "tm_levels/forest",
        "tm_levels/forest/Pool<u32>",
        "tm_game/frame",
    ];
    for pool in want_first {
        assert!(first.contains(pool), "{pool} in {first:?}");
    }
    assert_eq!(first.len(), want_first.len(), "{first:?}");
    assert_eq!(
        second,
        HashSet::from(["tm_game/frame"]),
        "only the frame that opened after the second connect"
    );
    // The first frame, shown from its start in the first capture, is the second
    // frame of the game; the one that opened before the connect showed nothing.
    assert_eq!(allocs["tm_game/frame"].len(), 2, "one frame per capture");
    assert!(!events
        .iter()
        .any(|e| matches!(e, Recorded::Plot { name, .. } if name.starts_with("tm_game ") || name.starts_with("tm_levels/canyon"))));
    assert!(events.contains(&plot("tm_game/frame/Pool<u32> len", 0)));
}

#[test]
fn twenty_thousand_frame_names_keep_the_name_table_bounded() {
    use crate::profiler::names;
    let rec = Recording::start("tq_");
    let _table = names::exclusive();
    names::reset();
    let mut memory = LinearAllocator::with_capacity(1 << 18).unwrap();
    memory.scope("tq_game", |game| {
        let frames = game.new_slots("tq_frames", 2, 4096);
        let mut name = String::new();
        for i in 0..20_000u32 {
            use core::fmt::Write;
            name.clear();
            write!(name, "frame {i}").unwrap();
            game.scope(&name, |frame| {
                frame.new_pod(i);
            });
            let slot = frames
                .load::<LevelRoot>(&name, |s| Level {
                    name: s.alloc_str("x"),
                })
                .unwrap();
            drop(slot);
        }
    });
    // (Other tests may be making names at the same time: count this test's.)
    let count = names::count_with_prefix("tq_");
    names::reset();
    let events = rec.finish();
    check_rules(&events);
    let shown = pools(&events);
    // Every frame was shown, the first under their own names, the rest under the
    // names' base names.
    assert!(shown.contains("tq_game/frame 0") && shown.contains("tq_frames/frame 0"));
    assert!(shown.contains("tq_game/frame *") && shown.contains("tq_frames/frame *"));
    assert!(!shown.contains("tq_game/frame 19999"));
    // The game, then frame names until the limit, then the two base names.
    assert_eq!(count, names::NAME_LIMIT + 2);
    assert_eq!(shown.len(), count, "each name a pool");
    let discards = events
        .iter()
        .filter(|e| matches!(e, Discard { .. }))
        .count();
    assert_eq!(
        discards,
        2 * 20_000 + 1,
        "every frame and slot, then the game"
    );
}

#[test]
fn past_the_hard_limit_new_pools_are_not_shown() {
    use crate::profiler::names;
    let rec = Recording::start("th_");
    let _table = names::exclusive();
    names::reset();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    // Names without digits have themselves as base names.
    let letters = |mut i: usize| {
        let mut s = String::from("th_");
        for _ in 0..3 {
            s.push(char::from(b'a' + (i % 26) as u8));
            i /= 26;
        }
        s
    };
    for i in 0..names::HARD_LIMIT + 100 {
        memory.scope(&letters(i), |s| {
            s.new_pod(1u8);
        });
    }
    let (count, ours) = (names::count(), names::count_with_prefix("th_"));
    names::reset();
    let events = rec.finish();
    check_rules(&events);
    assert_eq!(count, names::HARD_LIMIT);
    assert_eq!(pools(&events).len(), ours, "every name made was shown");
    assert!(ours > names::NAME_LIMIT);
    assert!(!pools(&events).contains(letters(names::HARD_LIMIT + 50).as_str()));
}

slot_root!(struct HeapRoot = for<'s> &'s crate::Heap);

#[test]
fn a_heap_is_a_pool_of_its_own_and_ends_with_one_discard() {
    use allocator_api2::boxed::Box;
    use allocator_api2::vec::Vec as ApiVec;
    let rec = Recording::start("tz_");
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let mut seen = Vec::new();
    const HEAP: &str = "tz_level/Heap";
    memory.scope("tz_level", |level| {
        let heap = level.new_heap(4096);
        let b = Box::new_in(7u64, heap);
        let at = addr(&*b);
        drop(b);
        seen.extend([
            Alloc {
                pool: HEAP,
                addr: at,
                size: 8,
            },
            Free {
                pool: HEAP,
                addr: at,
            },
        ]);
        // A grow and a shrink: each a free and an allocation, moved or not.
        let mut v: ApiVec<u64, _> = ApiVec::with_capacity_in(2, heap);
        let first = v.as_ptr().addr();
        v.extend([1, 2, 3]);
        let grown = v.as_ptr().addr();
        let grown_size = v.capacity() * 8;
        v.shrink_to_fit();
        let shrunk = v.as_ptr().addr();
        seen.extend([
            Alloc {
                pool: HEAP,
                addr: first,
                size: 16,
            },
            Free {
                pool: HEAP,
                addr: first,
            },
            Alloc {
                pool: HEAP,
                addr: grown,
                size: grown_size,
            },
            Free {
                pool: HEAP,
                addr: grown,
            },
            Alloc {
                pool: HEAP,
                addr: shrunk,
                size: 24,
            },
        ]);
        // Zero-sized requests are not shown.
        drop(Box::new_in((), heap));
        // Left in the heap: the scope's end discards it with the heap's pool.
        core::mem::forget(v);
        // A frame opens and closes above the heap: its own pool, not the heap's.
        level.scope("frame", |f| {
            f.new_pod(1u32);
        });
    });
    // A heap in a slot ends when the slot unloads.
    memory.scope("tz_game", |game| {
        let levels = game.new_slots("tz_levels", 1, 16 * 1024);
        let cave = levels
            .load::<HeapRoot>("cave", |s| s.new_heap(4096))
            .unwrap();
        cave.with(|heap| core::mem::forget(Box::new_in([0u8; 40], *heap)));
        drop(cave);
        game.new_pod(0u8); // the slot's discard comes before the game's
    });
    let events = rec.finish();
    check_rules(&events);
    let heap_events: Vec<Recorded> = events
        .iter()
        .filter(|e| matches!(e, Alloc { pool, .. } | Free { pool, .. } | Discard { pool } if *pool == HEAP))
        .cloned()
        .collect();
    seen.push(Discard { pool: HEAP });
    assert_eq!(heap_events, seen);
    // The heap's discard comes before its scope's, which comes after the frame's.
    let discards: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Discard { pool } => Some(*pool),
            _ => None,
        })
        .collect();
    assert_eq!(
        discards,
        [
            "tz_level/frame",
            HEAP,
            "tz_level",
            "tz_levels/cave/Heap",
            "tz_levels/cave",
            "tz_game"
        ]
    );
}

#[test]
fn a_heap_opened_with_no_profiler_stays_hidden() {
    use allocator_api2::boxed::Box;
    let rec = Recording::start_disconnected("tw_");
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let (mut hidden, mut shown) = (0, 0);
    memory.scope("tw_level", |level| {
        let heap = level.new_heap(4096);
        rec.connect();
        let b = Box::new_in(1u64, heap);
        hidden = addr(&*b);
        drop(b);
        let later = level.new_heap(4096);
        let b = Box::new_in(2u64, later);
        shown = addr(&*b);
        drop(b);
    });
    let events = rec.finish();
    check_rules(&events);
    // The heap opened before the profiler connected shows nothing (and has no name,
    // so the later one is plain `Heap`): only the later one's events.
    const HEAP: &str = "tw_level/Heap";
    let heap_events: Vec<&Recorded> = events
        .iter()
        .filter(|e| matches!(e, Alloc { pool, .. } | Free { pool, .. } | Discard { pool } if pool.ends_with("Heap")))
        .collect();
    assert_eq!(
        heap_events,
        [
            &Alloc {
                pool: HEAP,
                addr: shown,
                size: 8
            },
            &Free {
                pool: HEAP,
                addr: shown
            },
            &Discard { pool: HEAP }
        ]
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e, Alloc { addr, .. } if *addr == hidden)));
}

/// The pools discarded in `events`, in order.
#[cfg(feature = "rkyv")]
fn discards(events: &[Recorded]) -> Vec<&'static str> {
    events
        .iter()
        .filter_map(|e| match e {
            Discard { pool } => Some(*pool),
            _ => None,
        })
        .collect()
}

/// A level read in place (feature `rkyv`): its archived bytes are the first allocation
/// in the slot's pool, whole, and end with the slot's one discard.
#[cfg(feature = "rkyv")]
#[test]
fn an_archive_read_in_place_is_one_allocation_in_its_slots_pool() {
    let rec = Recording::start("ta_");
    let file = rkyv::to_bytes::<rkyv::rancor::Error>(&std::vec![7u32; 100]).unwrap();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("ta_game", |game| {
        let levels = game.new_slots("ta_levels", 1, 4096);
        let level = levels.load_archived::<Vec<u32>>("forest", &file).unwrap();
        assert_eq!(level.with(|l| l.len()), 100);
        drop(level);
        // A refused archive: placed, then discarded with its slot.
        assert!(levels
            .load_archived::<Vec<u32>>("cut", &file[..10])
            .is_err());
    });
    let events = rec.finish();
    let allocs = check_rules(&events);
    assert_eq!(allocs["ta_levels/forest"][0].1, file.len());
    assert_eq!(allocs["ta_levels/cut"][0].1, 10);
    let discards = discards(&events);
    // Each slot's discard follows its archive's own (see the next test).
    assert_eq!(
        discards[..4],
        [
            "ta_levels/forest/Archive Vec<u32>",
            "ta_levels/forest",
            "ta_levels/cut/Archive Vec<u32>",
            "ta_levels/cut"
        ]
    );
}

/// A level read in place (feature `rkyv`) is also a pool of its own, named as its row
/// in the memory map (`<slot>/Archive <Level>`): one allocation, the whole archive at
/// its address, ended by one discard when the slot unloads (before the slot's own
/// discard), for a refused archive too; a slot loaded through a concurrent scope names
/// it once. With no profiler connected nothing is named or placed for it.
#[cfg(feature = "rkyv")]
#[test]
fn an_archive_read_in_place_is_a_named_allocation_of_its_own() {
    slot_root!(struct Len = for<'s> usize);
    let rec = Recording::start("tn_");
    let file = rkyv::to_bytes::<rkyv::rancor::Error>(&std::vec![7u32; 100]).unwrap();
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let (mut forest, mut canyon, mut shown_used) = (0, 0, 0);
    memory.scope("tn_game", |game| {
        let levels = game.new_slots("tn_levels", 1, 4096);
        let level = levels.load_archived::<Vec<u32>>("forest", &file).unwrap();
        forest = level.with(|l| addr(*l));
        shown_used = level.used();
        drop(level);
        assert!(levels
            .load_archived::<Vec<u32>>("cut", &file[..10])
            .is_err());
        let level = levels
            .load_archived_concurrent_with::<Vec<u32>, Len, ()>("canyon", &file, |l, _| Ok(l.len()))
            .unwrap();
        canyon = level.with(|l| addr(l.archived));
        drop(level);
    });
    let events = rec.finish();
    let allocs = check_rules(&events);
    const FOREST: &str = "tn_levels/forest/Archive Vec<u32>";
    const CANYON: &str = "tn_levels/canyon/Archive Vec<u32>";
    // The archived root sits at the archive's end; the allocation is all its bytes.
    let size = file.len();
    let root = core::mem::size_of::<rkyv::Archived<Vec<u32>>>();
    assert_eq!(allocs[FOREST], [(forest + root - size, size)]);
    assert_eq!(
        allocs["tn_levels/cut/Archive Vec<u32>"],
        [(allocs["tn_levels/cut"][0].0, 10)]
    );
    assert_eq!(allocs[CANYON], [(canyon + root - size, size)]);
    // Still the slot pool's first allocation, too: the slot's use counts it.
    assert_eq!(allocs["tn_levels/forest"][0], (forest + root - size, size));
    let discards = discards(&events);
    assert_eq!(
        discards[..6],
        [
            FOREST,
            "tn_levels/forest",
            "tn_levels/cut/Archive Vec<u32>",
            "tn_levels/cut",
            CANYON,
            "tn_levels/canyon"
        ]
    );

    // No profiler: nothing named, nothing shown, and nothing placed in the slot for
    // the profiler (the record that ends the archive's pool is not there).
    let hidden = Recording::start_disconnected("th_");
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("th_game", |game| {
        let levels = game.new_slots("th_levels", 1, 4096);
        let level = levels.load_archived::<Vec<u32>>("forest", &file).unwrap();
        assert!(level.used() < shown_used, "{} < {shown_used}", level.used());
    });
    assert!(pools(&hidden.finish()).is_empty());
}
