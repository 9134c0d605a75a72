//! `MapHandle`: the block's map from any thread. A render thread takes maps while the
//! owning thread opens and closes frame scopes, places values and loads and drops
//! slots; a rayon job takes one inside `install`; each map agrees with itself and
//! shows the watched scope and those below it.

use std::sync::atomic::{AtomicBool, Ordering};

use scope_stack::{slot_root, LinearAllocator, MapHandle, SlotState};

slot_root!(struct Frame = for<'s> &'s [u64]);

fn frames() -> usize {
    if cfg!(miri) {
        6
    } else {
        2_000
    }
}

#[test]
fn a_render_thread_takes_maps_while_the_game_runs_frames() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("systems", |systems| {
        systems.alloc_str("config");
        systems.scope("game", |game| {
            let ring = game.new_slots("frames", 2, 16 << 10);
            let enemies = game.new_pool::<u64>(16);
            let map = game.map_handle();
            let done = AtomicBool::new(false);
            std::thread::scope(|t| {
                let render = t.spawn(|| {
                    let mut maps = 0;
                    while maps == 0 || !done.load(Ordering::Relaxed) {
                        let m = map.report();
                        maps += 1;
                        // The watched scope and the one below it; nothing above.
                        let names: Vec<&str> = m.scopes.iter().map(|s| s.name.as_str()).collect();
                        assert_eq!(names, ["systems", "game"]);
                        let game_row = &m.scopes[1];
                        assert_eq!(
                            game_row.finalizers, 0,
                            "the watched scope's chain is not read"
                        );
                        assert!(m.used <= m.capacity && m.high_water_mark >= m.used);
                        assert!(game_row.start + game_row.own_bytes <= m.used);
                        let set = &game_row.slots[0];
                        let held = set
                            .slots
                            .iter()
                            .filter(|s| s.state != SlotState::Free)
                            .count();
                        assert_eq!(set.loaded, held);
                        for slot in set.slots.iter().filter(|s| !s.contents.is_empty()) {
                            assert_eq!(slot.state, SlotState::Loaded);
                        }
                        assert!(game_row
                            .pools
                            .iter()
                            .any(|p| p.kind == "Pool" && p.capacity == 16));
                        let _ = m.to_string();
                    }
                    maps
                });
                for n in 0..frames() {
                    // A frame scope above the watched one, values with finalizers in
                    // the watched one, a slot loaded and dropped, a pool insert.
                    game.scope("frame", |f| {
                        f.alloc_slice_fill_copy(64, n as u64);
                    });
                    game.new_object(String::from("log line"));
                    let frame = ring
                        .load::<Frame>("frame", |s| &*s.alloc_slice_fill_copy(8, n as u64))
                        .unwrap();
                    let _ = enemies.insert(n as u64).ok().map(|b| b.into_handle());
                    drop(frame);
                }
                done.store(true, Ordering::Relaxed);
                assert!(render.join().unwrap() > 0);
            });
            // On the owning thread, the handle's map agrees with the scope's own.
            let (mine, theirs) = (game.report(), map.report());
            assert_eq!(mine.used, theirs.used);
            assert_eq!(mine.scopes[1].pools, theirs.scopes[1].pools);
            assert_eq!(mine.scopes[1].slots, theirs.scopes[1].slots);
            assert_eq!(
                mine.scopes[0], theirs.scopes[0],
                "the scope below shows whole"
            );
        });
    });
}

#[cfg(not(miri))] // rayon's epoch collector is not strict-provenance clean.
#[test]
fn a_rayon_job_inside_install_takes_the_map() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 2, 64 << 10);
        let map: MapHandle<'_> = game.map_handle();
        let text = pool.install(|| {
            let level = levels
                .load::<Frame>("forest", |s| &*s.alloc_slice_copy(&[1, 2, 3]))
                .unwrap();
            let (a, b) = rayon::join(|| map.report().to_string(), || map.report().to_svg());
            drop(level);
            assert!(b.starts_with("<svg"));
            a
        });
        assert!(text.contains("Slot forest"), "{text}");
        assert!(text.contains("Slots levels"), "{text}");
    });
}
