//! Pools sized from the file with room to grow (features `serde` and `derive`):
//! `#[scope(extra = N)]` and `CapacitySeed::extra` give a `PoolIn` or `DensePoolIn` the
//! file's count plus `N` slots, from JSON (the elements counted while staged) and
//! postcard (the length said up front); inserting up to the capacity works and one
//! more finds the pool full; a sum past what a pool can address is the carve's error,
//! never a panic; no elements and `extra = 0` is the capacity-0 error; a heap
//! collection (sized in bytes) refuses `extra` with an error.
#![cfg(all(feature = "serde", feature = "derive"))]

use scope_stack::serde::{CapacitySeed, DensePoolIn, DeserializeIn, PoolIn, Serde};
use scope_stack::{LinearAllocator, MAX_POOL_CAPACITY};
use serde::de::DeserializeSeed;
use serde::Serialize;

#[derive(DeserializeIn, Debug, PartialEq, Clone, Copy)]
struct Enemy<'s> {
    name: &'s str,
    hp: u32,
}

/// A level whose pools have room for 8 more than the file holds.
#[derive(DeserializeIn)]
struct Level<'s> {
    name: &'s str,
    #[scope(extra = 8)]
    enemies: PoolIn<'s, Enemy<'s>>,
    #[scope(extra = EXTRA_SHOTS)]
    shots: DensePoolIn<'s, [f32; 2]>,
}

const EXTRA_SHOTS: usize = 4 * 2;

/// What a level file holds, written with serde's own derive.
#[derive(Serialize)]
struct LevelFile {
    name: String,
    enemies: Vec<EnemyFile>,
    shots: Vec<[f32; 2]>,
}

#[derive(Serialize)]
struct EnemyFile {
    name: String,
    hp: u32,
}

/// A level of `n` enemies and `n / 2` shots.
fn level_file(n: usize) -> LevelFile {
    LevelFile {
        name: format!("level{n}"),
        enemies: (0..n)
            .map(|i| EnemyFile {
                name: format!("e{i}"),
                hp: i as u32,
            })
            .collect(),
        shots: (0..n / 2).map(|i| [i as f32, 1.0]).collect(),
    }
}

/// Checks a level of `n` enemies read with `extra = 8`: the capacities, the values in
/// file order, room for 8 more of each and not 9.
fn check_level(level: Level<'_>, n: usize) {
    let Level {
        name,
        mut enemies,
        mut shots,
    } = level;
    assert_eq!(name, format!("level{n}"));
    assert_eq!((enemies.len(), enemies.capacity()), (n, n + 8));
    assert_eq!((shots.len(), shots.capacity()), (n / 2, n / 2 + 8));
    for (i, &h) in enemies.file_handles().iter().enumerate() {
        let e = enemies.get(h).unwrap();
        assert_eq!((e.name, e.hp), (format!("e{i}").as_str(), i as u32));
    }
    for (i, &h) in shots.file_handles().iter().enumerate() {
        assert_eq!(shots[h], [i as f32, 1.0]);
    }
    for i in 0..8 {
        let spawned = Enemy {
            name: "spawned",
            hp: 1000 + i,
        };
        enemies.insert_mut(spawned).unwrap();
        shots.insert([0.5, i as f32]).unwrap();
    }
    assert_eq!((enemies.len(), shots.len()), (n + 8, n / 2 + 8));
    let late = Enemy {
        name: "late",
        hp: 0,
    };
    assert_eq!(
        enemies.insert_mut(late),
        Err(late),
        "the pool is full at n + 8"
    );
    assert_eq!(shots.insert([9.0, 9.0]), Err([9.0, 9.0]));
}

#[test]
fn json_levels_get_their_count_and_the_extra() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    for n in [3, 50] {
        let text = serde_json::to_string(&level_file(n)).unwrap();
        memory.scope("level", |level| {
            let mut de = serde_json::Deserializer::from_str(&text);
            let loaded: Level = level.deserialize(&mut de).unwrap();
            assert_eq!(loaded.enemies.capacity(), [11, 58][usize::from(n == 50)]);
            check_level(loaded, n);
        });
    }
}

#[test]
fn postcard_levels_get_their_count_and_the_extra() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    for n in [3, 50] {
        let bytes = postcard::to_allocvec(&level_file(n)).unwrap();
        memory.scope("level", |level| {
            let mut de = postcard::Deserializer::from_bytes(&bytes);
            let loaded: Level = level.deserialize(&mut de).unwrap();
            assert_eq!(loaded.enemies.capacity(), [11, 58][usize::from(n == 50)]);
            check_level(loaded, n);
        });
    }
}

#[test]
fn the_same_seed_sizes_each_file_by_its_count() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let seed = CapacitySeed::<_, PoolIn<u32>>::extra(&**level, 8);
        for n in [0usize, 1, 3, 50] {
            let list: Vec<u32> = (0..n as u32).collect();
            let json = serde_json::to_string(&list).unwrap();
            let pool = seed
                .deserialize(&mut serde_json::Deserializer::from_str(&json))
                .unwrap();
            assert_eq!((pool.len(), pool.capacity()), (n, n + 8), "JSON, {n}");
            let bytes = postcard::to_allocvec(&list).unwrap();
            let pool = seed
                .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
                .unwrap();
            assert_eq!((pool.len(), pool.capacity()), (n, n + 8), "postcard, {n}");
            let dense = CapacitySeed::<_, DensePoolIn<u32>>::extra(&**level, 8)
                .deserialize(&mut serde_json::Deserializer::from_str(&json))
                .unwrap();
            assert_eq!((dense.len(), dense.capacity()), (n, n + 8), "dense, {n}");
        }
        // The exact rule is as before: the same capacity whatever the file holds.
        let exact = CapacitySeed::<_, PoolIn<u32>>::new(&**level, 8)
            .deserialize(&mut serde_json::Deserializer::from_str("[1, 2, 3]"))
            .unwrap();
        assert_eq!(exact.capacity(), 8);
    });
}

#[test]
fn values_that_need_drop_fill_a_pool_with_room_to_grow() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let mut de = serde_json::Deserializer::from_str(r#"["wolf", "bear"]"#);
        let mut names = CapacitySeed::<_, DensePoolIn<Serde<String>>>::extra(&**level, 2)
            .deserialize(&mut de)
            .unwrap();
        assert_eq!((names.len(), names.capacity()), (2, 4));
        names.insert(Serde("boar".to_owned())).unwrap();
        names.insert(Serde("lynx".to_owned())).unwrap();
        assert!(names.insert(Serde("late".to_owned())).is_err());
        let all: Vec<&str> = names.iter().map(|(_, s)| s.0.as_str()).collect();
        assert_eq!(all, ["wolf", "bear", "boar", "lynx"]);
    });
}

#[test]
fn a_sum_past_what_a_pool_can_address_is_the_carves_error() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        // The text of the carve itself, for the same type and sum.
        let carve = level
            .try_new_pool::<u32>(MAX_POOL_CAPACITY + 3)
            .unwrap_err()
            .to_string();
        assert!(carve.contains("too many slots"), "{carve}");
        let bytes = postcard::to_allocvec(&[1u32, 2, 3][..]).unwrap();
        for extra in [MAX_POOL_CAPACITY, usize::MAX - 1, usize::MAX] {
            let json = CapacitySeed::<_, PoolIn<u32>>::extra(&**level, extra)
                .deserialize(&mut serde_json::Deserializer::from_str("[1, 2, 3]"))
                .unwrap_err()
                .to_string();
            assert!(json.contains("too many slots"), "{json}");
            let dense = CapacitySeed::<_, DensePoolIn<u32>>::extra(&**level, extra)
                .deserialize(&mut serde_json::Deserializer::from_str("[1, 2, 3]"))
                .unwrap_err()
                .to_string();
            assert!(dense.contains("too many slots"), "{dense}");
            // postcard keeps no message; the error is still an error, not a panic.
            let e = CapacitySeed::<_, PoolIn<u32>>::extra(&**level, extra)
                .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
                .unwrap_err();
            assert!(matches!(e, postcard::Error::SerdeDeCustom), "{e:?}");
        }
        // Exactly the carve's text for the same sum.
        let json = CapacitySeed::<_, PoolIn<u32>>::extra(&**level, MAX_POOL_CAPACITY)
            .deserialize(&mut serde_json::Deserializer::from_str("[1, 2, 3]"))
            .unwrap_err()
            .to_string();
        assert!(json.starts_with(&carve), "{json}\n(carve: {carve})");
        // The largest sum a pool can have is fine.
        let last = CapacitySeed::<_, PoolIn<u8>>::extra(&**level, MAX_POOL_CAPACITY - 3)
            .deserialize(&mut serde_json::Deserializer::from_str("[1, 2, 3]"));
        // (Its slots do not fit in this 1 MiB block: the error is the scope's room.)
        let e = last.unwrap_err().to_string();
        assert!(e.contains("out of memory in scope \"level\""), "{e}");
    });
}

#[test]
fn no_elements_and_no_extra_is_the_capacity_0_error() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let e = CapacitySeed::<_, PoolIn<u32>>::extra(&**level, 0)
            .deserialize(&mut serde_json::Deserializer::from_str("[]"))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("a pool needs at least one slot (capacity 0)"),
            "{e}"
        );
        let bytes = postcard::to_allocvec::<[u32]>(&[]).unwrap();
        let e = CapacitySeed::<_, DensePoolIn<u32>>::extra(&**level, 0)
            .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
            .unwrap_err();
        assert!(matches!(e, postcard::Error::SerdeDeCustom), "{e:?}");
        let e = CapacitySeed::<_, DensePoolIn<u32>>::extra(&**level, 0)
            .deserialize(&mut serde_json::Deserializer::from_str("[]"))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("a dense pool needs at least one slot"),
            "{e}"
        );
        // With some extra, an empty file is an empty pool with room.
        let mut pool = CapacitySeed::<_, PoolIn<u32>>::extra(&**level, 1)
            .deserialize(&mut serde_json::Deserializer::from_str("[]"))
            .unwrap();
        assert_eq!((pool.len(), pool.capacity()), (0, 1));
        pool.insert_mut(7).unwrap();
        assert_eq!(pool.insert_mut(8), Err(8));
    });
}

#[test]
fn a_field_marked_extra_that_the_file_leaves_out_is_missing() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let mut de = serde_json::Deserializer::from_str(r#"{"name": "x", "shots": []}"#);
        let e = level.deserialize::<Level, _>(&mut de).err().unwrap();
        assert!(e.to_string().contains("missing field `enemies`"), "{e}");
    });
}

#[test]
fn a_bad_element_is_the_files_error() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let e = CapacitySeed::<_, PoolIn<u32>>::extra(&**level, 8)
            .deserialize(&mut serde_json::Deserializer::from_str(r#"[1, "two"]"#))
            .unwrap_err();
        assert!(e.to_string().contains("invalid type"), "{e}");
    });
}

/// A heap collection's capacity is bytes of heap, which no element count gives: the
/// relative rule is refused with an error that asks for an exact one.
#[cfg(feature = "alloc")]
#[test]
fn a_heap_collection_refuses_extra() {
    use scope_stack::Heap;
    type HeapVec<'s> = allocator_api2::vec::Vec<u32, &'s Heap>;

    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let e = CapacitySeed::<_, HeapVec>::extra(&**level, 8)
            .deserialize(&mut serde_json::Deserializer::from_str("[1, 2]"))
            .unwrap_err();
        assert!(e.to_string().contains("takes an exact capacity"), "{e}");
        assert!(e.to_string().contains("extra = 8"), "{e}");
        let v = CapacitySeed::<_, HeapVec>::new(&**level, 1024)
            .deserialize(&mut serde_json::Deserializer::from_str("[1, 2]"))
            .unwrap();
        assert_eq!(v[..], [1, 2]);
    });
}
