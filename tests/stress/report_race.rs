//! Stress: a report reads a slot's contents while another thread unloads the slot and
//! loads it again, over and over (issue 37). The reporter must never read a slot that
//! its holder has begun to unload: every content row it sees is one of the two
//! containers each load carves (a `Pool<u64>` and a `DensePool<u32>` of 4 slots), with
//! figures inside their bounds. On the code before the fix this crashed (SIGSEGV in
//! `report::gather::pool_rows`) within a fraction of a second in release builds.
//!
//! Run in release (CI does): `cargo test --release --test stress report_race::`.
//! 20 million loads in release, fewer in debug, a few hundred under Miri (CI runs it
//! under Miri with 16 seeds, each putting the thread switches elsewhere: see `.ci/run`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use scope_stack::{slot_root, DensePool, LinearAllocator, Pool, SlotState};

struct Level<'s> {
    enemies: &'s Pool<'s, u64>,
    shots: &'s DensePool<'s, u32>,
}
slot_root!(struct LevelRoot = for<'s> Level<'s>);

/// Loads in release, debug and Miri builds; `REPORT_RACE_LOADS` overrides it.
fn loads() -> usize {
    if let Some(n) = std::env::var("REPORT_RACE_LOADS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    if cfg!(miri) {
        40
    } else if cfg!(debug_assertions) {
        200_000
    } else {
        20_000_000
    }
}

#[test]
fn reports_read_slots_that_are_unloaded_and_loaded_again() {
    let loads = loads();
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 16 << 10);
        let done = AtomicBool::new(false);
        let seen_loaded = AtomicUsize::new(0);
        let started = AtomicUsize::new(0);
        game.scope_concurrent("watch", |watch| {
            std::thread::scope(|t| {
                let reporter = t.spawn(|| {
                    let (mut reports, mut rows) = (0usize, 0usize);
                    // At least one report, however fast the loader is.
                    while reports == 0 || !done.load(Ordering::Relaxed) {
                        started.fetch_add(1, Ordering::Relaxed);
                        let map = watch.report();
                        reports += 1;
                        let game_row = map.scopes.iter().find(|s| s.name == "game").unwrap();
                        let set = &game_row.slots[0];
                        assert_eq!((set.name.as_str(), set.count), ("levels", 1));
                        for slot in &set.slots {
                            if slot.state == SlotState::Free {
                                assert!(slot.contents.is_empty(), "contents of a free slot");
                                continue;
                            }
                            let kinds: Vec<_> =
                                slot.contents.iter().map(|r| (r.kind, r.type_name.as_str())).collect();
                            if slot.state == SlotState::Building {
                                // What the build has carved so far (issue 47): the
                                // containers in the order made, each one whole.
                                let all = [("Pool", "u64"), ("DensePool", "u32")];
                                assert_eq!(kinds, all[..kinds.len()], "{slot:?}");
                                for row in &slot.contents {
                                    assert_eq!(row.capacity, 4, "{row:?}");
                                    assert!(row.len <= 4, "{row:?}");
                                }
                                assert!(slot.used <= set.bytes_each, "{slot:?}");
                                continue;
                            }
                            // A loaded slot shows both containers, or none (it began to
                            // unload before the report pinned it).
                            if slot.contents.is_empty() {
                                continue;
                            }
                            seen_loaded.fetch_add(1, Ordering::Relaxed);
                            assert_eq!(kinds, [("Pool", "u64"), ("DensePool", "u32")]);
                            for row in &slot.contents {
                                rows += 1;
                                assert_eq!(row.capacity, 4, "{row:?}");
                                assert!(row.len <= 4 && row.high_water_len <= 4, "{row:?}");
                                assert_eq!(row.owner, None, "{row:?}");
                                // Inside the slot's own bytes.
                                assert!(
                                    row.offset >= slot.offset
                                        && row.offset + row.bytes <= slot.offset + set.bytes_each,
                                    "row outside its slot: {row:?} in {slot:?}"
                                );
                            }
                        }
                    }
                    (reports, rows)
                });
                for n in 0..loads {
                    let level = levels
                        .load::<LevelRoot>("level", |s| {
                            if n % 2 == 0 {
                                // Moves the containers (and their report links) between loads.
                                s.alloc_slice_fill_copy(16, u64::MAX);
                            }
                            let enemies = s.new_pool::<u64>(4);
                            let shots = s.new_dense_pool::<u32>(4);
                            let _ = enemies.insert(n as u64).ok().unwrap().into_handle();
                            shots.insert(n as u32).unwrap();
                            Level { enemies, shots }
                        })
                        .unwrap();
                    level.with(|l| assert_eq!((l.enemies.len(), l.shots.len()), (1, 1)));
                    if cfg!(miri) {
                        // Miri runs one thread at a time and seldom switches: wait
                        // until the reporter has begun a report while the slot is
                        // loaded, so the unload below races a report in flight (its
                        // seed picks where the switches fall).
                        let seen = started.load(Ordering::Relaxed);
                        while started.load(Ordering::Relaxed) == seen {
                            std::thread::yield_now();
                        }
                    }
                    drop(level);
                }
                done.store(true, Ordering::Relaxed);
                let (reports, rows) = reporter.join().unwrap();
                assert!(reports > 0);
                // With millions of loads the reporter reads loaded slots many times
                // over (about 400,000 of 20 million on two cores); under Miri each seed
                // runs a few dozen, and CI runs 16 seeds (see `.ci/run`).
                if !cfg!(miri) {
                    assert!(seen_loaded.load(Ordering::Relaxed) > 0, "never saw the slot loaded");
                }
                eprintln!(
                    "report_race: {loads} loads, {reports} reports, {} saw the slot loaded, {rows} rows checked",
                    seen_loaded.load(Ordering::Relaxed)
                );
            });
        });
    });
}
