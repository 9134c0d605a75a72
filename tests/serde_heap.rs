//! Heap collections filled from level files (features `serde` and `derive`; the map with
//! `hashbrown` too): a `Vec` and a `HashMap` in a heap carved first, from a derived
//! field's `#[scope(capacity = BYTES)]` or a heap of the caller's through `HeapSeed`,
//! JSON round trips, a slot that unloads its heap, and failed loads (bad input, a full
//! heap) that drop every element read exactly once and give the heap its room back.
#![cfg(all(feature = "serde", feature = "derive"))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use allocator_api2::vec::Vec as HeapVec;
use scope_stack::serde::{DeserializeIn, DeserializeInHeap, HeapSeed, Serde};
use scope_stack::{slot_root, Heap, LinearAllocator};
use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize};

#[derive(DeserializeIn, Serialize, Debug, PartialEq, Clone, Copy)]
struct Enemy<'s> {
    name: &'s str,
    hp: u32,
}

/// A level whose enemies live in a heap of their own: the game adds and removes them.
#[derive(DeserializeIn)]
struct Level<'s> {
    name: &'s str,
    #[scope(capacity = 8 << 10)]
    enemies: HeapVec<Enemy<'s>, &'s Heap>,
    #[cfg(feature = "hashbrown")]
    #[scope(capacity = 8 << 10)]
    doors: hashbrown::HashMap<&'s str, u32, hashbrown::DefaultHashBuilder, &'s Heap>,
}
slot_root!(struct LevelRoot => Level);

/// What a level saves as: the file's shape.
fn save(l: &Level<'_>) -> serde_json::Value {
    #[allow(unused_mut)]
    let mut json = serde_json::json!({
        "name": l.name,
        "enemies": l.enemies.iter().collect::<Vec<_>>(),
    });
    #[cfg(feature = "hashbrown")]
    {
        json["doors"] = l
            .doors
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect();
    }
    json
}

const FILE: &str = r#"{
    "name": "forest",
    "enemies": [{"name": "wolf", "hp": 30}, {"name": "bear", "hp": 80}],
    "doors": {"north": 1, "cave": 2}
}"#;

#[test]
fn a_level_fills_its_heaps_and_saves_back_as_it_was_read() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let mut de = serde_json::Deserializer::from_str(FILE);
        let mut level: Level = game.deserialize(&mut de).unwrap();
        assert_eq!(level.name, "forest");
        assert_eq!(
            level.enemies[..],
            [
                Enemy {
                    name: "wolf",
                    hp: 30
                },
                Enemy {
                    name: "bear",
                    hp: 80
                }
            ]
        );
        // The enemies' heap is the level's: it is 8 KiB, and it holds the vector.
        let heap = *level.enemies.allocator();
        assert_eq!((heap.capacity(), heap.live()), (8 << 10, 1));
        #[cfg(feature = "hashbrown")]
        {
            assert_eq!((level.doors["north"], level.doors["cave"]), (1, 2));
            let doors_heap = *level.doors.allocator();
            assert!(!core::ptr::eq(heap, doors_heap), "one heap per field");
            assert_eq!(doors_heap.live(), 1);
        }
        // Saved, then loaded again: the same level, and what the file said.
        let saved = save(&level);
        let again: Level = game
            .deserialize(&mut serde_json::Deserializer::from_str(&saved.to_string()))
            .unwrap();
        assert_eq!(save(&again), saved);
        let mut file: serde_json::Value = serde_json::from_str(FILE).unwrap();
        if cfg!(not(feature = "hashbrown")) {
            file.as_object_mut().unwrap().remove("doors");
        }
        assert_eq!(saved, file);
        // The game churns the heap's vector while the level lives.
        for hp in 0..100 {
            level.enemies.push(Enemy { name: "rat", hp });
        }
        level.enemies.retain(|e| e.hp >= 90);
        level.enemies.shrink_to_fit();
        assert_eq!(level.enemies.len(), 10);
        assert_eq!(heap.live(), 1);
    });
}

/// A level as a slot's root: its heaps go with the slot.
#[test]
fn a_slot_loads_a_level_with_heaps_and_unloads_it() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 2, 64 << 10);
        for _ in 0..3 {
            let mut de = serde_json::Deserializer::from_str(FILE);
            let mut forest = levels.load_from::<LevelRoot, _>("forest", &mut de).unwrap();
            forest.with_mut(|l, _| {
                l.enemies.push(Enemy { name: "owl", hp: 5 });
                assert_eq!(l.enemies.len(), 3);
            });
            let text = game.report().to_string();
            assert!(text.contains("- Heap"), "{text}");
            drop(forest);
        }
    });
}

/// Drop counting: the tests that count hold this lock.
static COUNTING: Mutex<()> = Mutex::new(());
static DROPS: AtomicUsize = AtomicUsize::new(0);

/// A value with a destructor that counts.
#[derive(Deserialize, Debug)]
struct Tracked(#[allow(dead_code)] u32);

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_failed_load_drops_each_element_read_once_and_frees_its_blocks() {
    let _one = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let heap = level.new_heap(4096);
        type Tracks<'s> = HeapVec<Serde<Tracked>, &'s Heap>;
        // Bad input after three elements.
        DROPS.store(0, Ordering::Relaxed);
        let mut de = serde_json::Deserializer::from_str("[1, 2, 3, \"four\", 5]");
        let e = HeapSeed::<_, Tracks>::new(&**level, heap)
            .deserialize(&mut de)
            .unwrap_err();
        assert!(e.to_string().contains("invalid type"), "{e}");
        assert_eq!(DROPS.load(Ordering::Relaxed), 3);
        assert_eq!((heap.used(), heap.live()), (0, 0));
        // A heap too small for the file: the elements that fitted go once.
        DROPS.store(0, Ordering::Relaxed);
        let many = format!("{:?}", (0..2000).collect::<Vec<u32>>());
        let e = Tracks::deserialize_in_heap(
            &**level,
            heap,
            &mut serde_json::Deserializer::from_str(&many),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the heap (4096 bytes) has no room"),
            "{e}"
        );
        let read = DROPS.load(Ordering::Relaxed);
        assert!(read > 100 && read < 2000, "{read}");
        assert_eq!((heap.used(), heap.live()), (0, 0));
        // The heap is whole again: a file that fits loads, and its elements drop once.
        DROPS.store(0, Ordering::Relaxed);
        let ok = Tracks::deserialize_in_heap(
            &**level,
            heap,
            &mut serde_json::Deserializer::from_str("[7, 8]"),
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
        drop(ok);
        assert_eq!(DROPS.load(Ordering::Relaxed), 2);
    });
}

#[cfg(feature = "hashbrown")]
#[test]
fn a_map_in_a_heap_of_the_callers_drops_once_on_failure() {
    type Doors<'s> =
        hashbrown::HashMap<&'s str, Serde<Tracked>, hashbrown::DefaultHashBuilder, &'s Heap>;
    let _one = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let heap = level.new_heap(8192);
        DROPS.store(0, Ordering::Relaxed);
        // A key seen twice keeps its last value (the first drops once), as serde's
        // maps do; then bad input.
        let file = r#"{"a": 1, "b": 2, "a": 3, "c": "four"}"#;
        let e = HeapSeed::<_, Doors>::new(&**level, heap)
            .deserialize(&mut serde_json::Deserializer::from_str(file))
            .unwrap_err();
        assert!(e.to_string().contains("invalid type"), "{e}");
        assert_eq!(DROPS.load(Ordering::Relaxed), 3);
        assert_eq!((heap.used(), heap.live()), (0, 0));
        let doors = HeapSeed::<_, Doors>::new(&**level, heap)
            .deserialize(&mut serde_json::Deserializer::from_str(
                r#"{"a": 1, "b": 2}"#,
            ))
            .unwrap();
        assert_eq!((doors["a"].0 .0, doors["b"].0 .0), (1, 2));
        drop(doors);
        assert_eq!(DROPS.load(Ordering::Relaxed), 5);
    });
}
