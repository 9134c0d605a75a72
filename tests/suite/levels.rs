//! Levels built anywhere: every container (pool, dense pool, store, slots) carved from
//! every scope kind, a level with pools built on a loader thread and played on another,
//! levels dropped in any order, a game loop inside rayon's pool, and reports that list
//! containers carved from a concurrent scope.

use std::sync::atomic::{AtomicUsize, Ordering};

use scope_stack::{
    slot_root, store::Id, Carve, DenseHandle, DensePool, Handle, LinearAllocator, Pool, Store,
};

/// Enemies made and dropped, per test (tests run in parallel).
struct Tally {
    made: AtomicUsize,
    dropped: AtomicUsize,
}
impl Tally {
    const fn new() -> Tally {
        Tally {
            made: AtomicUsize::new(0),
            dropped: AtomicUsize::new(0),
        }
    }
}
static UNCOUNTED: Tally = Tally::new();

/// An enemy with a destructor (it owns a heap name), counted.
struct Enemy {
    name: String,
    hp: u32,
    tally: &'static Tally,
}
impl Enemy {
    fn new(name: &str, hp: u32) -> Enemy {
        Enemy::counted(name, hp, &UNCOUNTED)
    }
    fn counted(name: &str, hp: u32, tally: &'static Tally) -> Enemy {
        tally.made.fetch_add(1, Ordering::Relaxed);
        Enemy {
            name: name.to_string(),
            hp,
            tally,
        }
    }
}
impl Drop for Enemy {
    fn drop(&mut self) {
        self.tally.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

struct Level<'s> {
    title: &'s str,
    enemies: &'s mut Pool<'s, Enemy>,
    shots: &'s mut DensePool<'s, [f32; 4]>,
    doors: &'s mut Store<'s, u32>,
    door: Id,
    boss: Option<Handle<Enemy>>,
    last_shot: Option<DenseHandle<[f32; 4]>>,
}
slot_root!(struct LevelRoot => Level);

fn frames() -> u32 {
    if cfg!(miri) {
        4
    } else {
        200
    }
}

/// Builds a level through any scope kind.
fn build<'s>(into: impl Carve<'s> + Copy, title: &str, enemies: u32) -> Level<'s> {
    build_counted(into, title, enemies, &UNCOUNTED)
}

/// The same, counting the enemies in `tally`.
fn build_counted<'s>(
    into: impl Carve<'s> + Copy,
    title: &str,
    enemies: u32,
    tally: &'static Tally,
) -> Level<'s> {
    let pool = into.new_pool::<Enemy>(64);
    let mut boss = None;
    for i in 0..enemies {
        let h = pool
            .insert(Enemy::counted(title, 10 + i, tally))
            .ok()
            .unwrap()
            .into_handle();
        boss.get_or_insert(h);
    }
    let doors = into.new_store::<u32>(8, 16);
    let door = doors.create(1).unwrap();
    Level {
        title: into.alloc_str(title),
        enemies: pool,
        shots: into.new_dense_pool(128),
        doors,
        door,
        boss,
        last_shot: None,
    }
}

/// One frame: insert, remove and `get_mut` through the `&mut` reached from the root.
fn play(level: &mut Level<'_>, frame: u32) {
    if let Some(boss) = level.boss {
        level.enemies.get_mut(boss).unwrap().hp += 1;
    }
    let h = level
        .enemies
        .insert(Enemy::new("minion", frame))
        .ok()
        .unwrap()
        .into_handle();
    assert_eq!(level.enemies.remove(h).unwrap().hp, frame);
    if let Some(old) = level.last_shot.take() {
        assert!(level.shots.remove(old).is_some());
    }
    level.last_shot = Some(level.shots.insert([frame as f32; 4]).unwrap());
    let mut draft = level.doors.write(level.door).unwrap();
    *draft += 1;
    level.doors.commit(draft).ok().unwrap();
    // Frees the versions no reader can see any more.
    level.doors.end_frame();
}

#[test]
fn a_level_with_pools_loads_on_a_loader_thread_and_plays_on_another() {
    static TALLY: Tally = Tally::new();
    let mut memory = LinearAllocator::with_capacity(8 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 3, 1 << 20);
        std::thread::scope(|t| {
            // The loader thread builds two levels while "town" is built here.
            let loader = t.spawn(|| {
                let forest = levels
                    .load_concurrent::<LevelRoot>("forest", |s| {
                        build_counted(s, "forest", 3, &TALLY)
                    })
                    .unwrap();
                let cave = levels
                    .load_concurrent::<LevelRoot>("cave", |s| build_counted(s, "cave", 2, &TALLY))
                    .unwrap();
                (forest, cave)
            });
            let town = levels
                .load_concurrent::<LevelRoot>("town", |s| build_counted(s, "town", 1, &TALLY))
                .unwrap();
            let (mut forest, cave) = loader.join().unwrap();
            // The game thread (a second spawned thread) plays the forest.
            let forest = t
                .spawn(move || {
                    for frame in 0..frames() {
                        forest.with_mut(|level, _| play(level, frame));
                    }
                    forest
                })
                .join()
                .unwrap();
            forest.with(|l| {
                assert_eq!(l.title, "forest");
                assert_eq!(l.enemies.len(), 3);
                assert_eq!(l.shots.len(), 1);
                assert_eq!(l.enemies.get(l.boss.unwrap()).unwrap().hp, 10 + frames());
                assert_eq!(l.enemies.get(l.boss.unwrap()).unwrap().name, "forest");
            });
            // Levels unload in any order.
            drop(cave);
            drop(forest);
            assert_eq!(levels.loaded(), 1);
            drop(town);
        });
        assert_eq!(levels.loaded(), 0);
    });
    // Every enemy the levels' pools held was dropped once, when its level unloaded.
    assert_eq!(TALLY.made.load(Ordering::Relaxed), 6);
    assert_eq!(TALLY.dropped.load(Ordering::Relaxed), 6);
}

#[cfg(not(miri))] // rayon's epoch collector is not strict-provenance clean.
#[test]
fn a_game_loop_holding_a_loaded_level_runs_inside_rayon_install() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 1 << 20);
        let mut level = levels
            .load_concurrent::<LevelRoot>("arena", |s| build(s, "arena", 4))
            .unwrap();
        pool.install(|| {
            for frame in 0..frames() {
                level.with_mut(|l, _| play(l, frame));
            }
        });
        assert_eq!(level.with(|l| l.enemies.len()), 4);
    });
}

#[test]
fn every_container_comes_from_every_scope_kind() {
    let mut memory = LinearAllocator::with_capacity(8 << 20).unwrap();
    memory.scope("game", |game| {
        // A plain scope, through the trait.
        let plain = build(&**game, "plain", 2);
        assert_eq!(plain.enemies.len(), 2);
        game.scope_concurrent("load", |load| {
            std::thread::scope(|t| {
                for w in 0..3 {
                    t.spawn(move || {
                        let local = load.local();
                        let pool = local.new_pool::<Enemy>(8);
                        pool.insert(Enemy::new("w", w)).ok().unwrap().into_handle();
                        let shards = load.new_pool_with_shards::<u64>(8, 2);
                        assert_eq!(shards.shard_count(), 2);
                        let dense = local.new_dense_pool::<u32>(8);
                        dense.insert(w).unwrap();
                        let store = load.new_store::<u32>(4, 8);
                        assert_eq!(*store.read(store.create(w).unwrap()).unwrap(), w);
                        let slots = local.new_slots("frames", 2, 4096);
                        slot_root!(struct Count = for<'s> u32);
                        let frame = slots.load::<Count>("f", |_| w).unwrap();
                        assert_eq!(frame.with(|n| *n), w);
                        // Errors are the plain scope's.
                        assert!(local.try_new_pool::<u8>(0).is_err());
                        assert!(load.try_new_dense_pool::<u8>(0).is_err());
                        assert!(local.try_new_store::<u8>(0, 1).is_err());
                        assert!(load.try_new_slots("x", 0, 1).is_err());
                    });
                }
            });
            // Containers carved on workers show in the concurrent scope's report.
            let map = load.report();
            let row = map.scopes.iter().find(|s| s.name == "load").unwrap();
            let kinds: Vec<&str> = row.pools.iter().map(|p| p.kind).collect();
            for kind in ["Pool", "DensePool", "Store", "Slots"] {
                assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
            }
            assert_eq!(kinds.iter().filter(|k| **k == "DensePool").count(), 3);
        });
    });
}

#[test]
fn a_pool_that_does_not_fit_in_a_slot_is_an_error_that_frees_the_slot() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 4096);
        let err = levels
            .try_load_concurrent::<LevelRoot>("huge", |s| {
                let enemies = s.try_new_pool::<Enemy>(10_000)?;
                let shots = s.try_new_dense_pool(8)?;
                let doors = s.try_new_store(1, 1)?;
                let door = doors.create(0).unwrap();
                Ok(Level {
                    title: "",
                    enemies,
                    shots,
                    doors,
                    door,
                    boss: None,
                    last_shot: None,
                })
            })
            .unwrap_err();
        assert!(err.to_string().contains("huge"), "{err}");
        assert_eq!(levels.loaded(), 0);
    });
}

/// Items that need no drop may borrow the scope their pool lives in, on every kind of
/// scope: names placed in a level's slot are held by its pools' items.
#[test]
fn pool_items_that_need_no_drop_borrow_their_scope() {
    #[derive(Clone, Copy)]
    struct Foe<'s> {
        name: &'s str,
        hp: u32,
    }
    struct Arena<'s> {
        foes: &'s mut Pool<'s, Foe<'s>>,
        tags: &'s mut DensePool<'s, &'s str>,
    }
    slot_root!(struct ArenaRoot => Arena);
    fn build<'s>(into: impl Carve<'s> + Copy) -> Arena<'s> {
        let foes = into.new_pool_pod::<Foe<'s>>(8);
        let tags = into.new_dense_pool_pod::<&'s str>(8);
        for (i, name) in ["wolf", "bear"].into_iter().enumerate() {
            let name: &'s str = into.alloc_str(name);
            foes.insert(Foe { name, hp: i as u32 })
                .ok()
                .unwrap()
                .into_handle();
            tags.insert(name).unwrap();
        }
        Arena { foes, tags }
    }
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let plain = build(&**game);
        assert_eq!(plain.foes.len(), 2);
        let arenas = game.new_slots("arenas", 2, 16 << 10);
        let a = arenas.load::<ArenaRoot>("plain", |s| build(s)).unwrap();
        let mut b = arenas
            .load_concurrent::<ArenaRoot>("shared", |s| build(s))
            .unwrap();
        b.with_mut(|arena, scope| {
            let name: &str = scope.alloc_str("crow");
            arena.tags.insert(name).unwrap();
        });
        let names = |arena: &Arena<'_>| {
            let mut n: Vec<String> = arena.tags.values().map(|t| t.to_string()).collect();
            n.sort();
            n.join(",")
        };
        assert_eq!(a.with(|arena| names(arena)), "bear,wolf");
        assert_eq!(b.with(|arena| names(arena)), "bear,crow,wolf");
        let hp: u32 = std::thread::scope(|t| {
            t.spawn(move || {
                b.with(|arena| {
                    let names: Vec<&str> = arena.foes.iter().map(|(_, f)| f.name).collect();
                    assert!(names.contains(&"wolf") && names.contains(&"bear"));
                    arena.foes.iter().map(|(_, f)| f.hp).sum()
                })
            })
            .join()
            .unwrap()
        });
        assert_eq!(hp, 1);
    });
}

/// The block's memory map sees inside loaded slots: each slot's containers (and a
/// concurrent slot's region) are listed under it, read while the slot is loaded, on any
/// thread; free slots list nothing.
#[test]
fn the_memory_map_lists_what_each_loaded_slot_holds() {
    use scope_stack::SlotState;
    let mut memory = LinearAllocator::with_capacity(8 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 3, 1 << 20);
        let plain = levels
            .load::<LevelRoot>("plain", |s| build(s, "plain", 2))
            .unwrap();
        let shared = levels
            .load_concurrent::<LevelRoot>("shared", |s| build(s, "shared", 5))
            .unwrap();
        let map = game.report();
        let set = &map.scopes[0].slots[0];
        let row = |name: &str| {
            set.slots
                .iter()
                .find(|s| s.holder.as_deref() == Some(name))
                .unwrap()
        };
        for (name, enemies) in [("plain", 2), ("shared", 5)] {
            let slot = row(name);
            assert_eq!(slot.state, SlotState::Loaded);
            let kinds: Vec<&str> = slot.contents.iter().map(|p| p.kind).collect();
            for kind in ["Pool", "DensePool", "Store"] {
                assert!(
                    kinds.contains(&kind),
                    "{name}: {kind} missing from {kinds:?}"
                );
            }
            let pool = slot
                .contents
                .iter()
                .find(|p| p.kind == "Pool" && p.capacity == 64)
                .unwrap();
            assert_eq!(pool.len, enemies);
            // Rows lie inside the slot.
            for p in &slot.contents {
                assert!(
                    p.offset >= slot.offset && p.offset < slot.offset + set.bytes_each,
                    "{p:?}"
                );
            }
        }
        assert!(row("plain").concurrent.is_none());
        assert!(row("shared").concurrent.is_some());
        let free = set
            .slots
            .iter()
            .find(|s| s.state == SlotState::Free)
            .unwrap();
        assert!(free.contents.is_empty() && free.concurrent.is_none());
        // The same from a concurrent scope's report on a worker thread, while slots
        // change hands.
        drop(plain);
        let text =
            std::thread::scope(|t| t.spawn(|| shared.with(|l| l.enemies.len())).join().unwrap());
        assert_eq!(text, 5);
        let after = game.report();
        let set = &after.scopes[0].slots[0];
        assert_eq!(
            set.slots.iter().filter(|s| !s.contents.is_empty()).count(),
            1
        );
    });
}

/// Reports taken on other threads while slots load and unload never read a slot that
/// is being torn down (the unload waits for them), and see only whole rows.
#[test]
fn reports_while_slots_change_hands_read_only_live_contents() {
    let rounds = if cfg!(miri) { 3 } else { 300 };
    let mut memory = LinearAllocator::with_capacity(8 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 2, 1 << 20);
        let frames = game.new_slots("frames", 1, 1 << 20);
        // A reader: a concurrent slot whose scope reports the block it lives in would
        // see only itself, so the reader reports through the game scope, on this
        // thread, while loader threads load and drop levels.
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|t| {
            for w in 0..2 {
                let done = &done;
                t.spawn(move || {
                    for r in 0..rounds {
                        let l = levels
                            .load_concurrent_wait::<LevelRoot>("w", |s| build(s, "w", (w + r) % 7));
                        l.with(|l| assert!(l.enemies.len() < 7));
                    }
                    if w == 0 {
                        done.store(true, Ordering::Relaxed);
                    }
                });
            }
            let _keep = frames;
            while !done.load(Ordering::Relaxed) {
                let map = game.report();
                for slot in &map.scopes[0].slots[0].slots {
                    for p in &slot.contents {
                        assert!(p.len <= p.capacity, "{p:?}");
                    }
                }
            }
        });
    });
}
