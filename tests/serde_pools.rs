//! Pools filled from level files (features `serde` and `derive`): `PoolIn` and
//! `DensePoolIn` with the capacity taken from the file or given, from JSON (no length
//! up front) and postcard (a length first), handles in file order, room to insert more,
//! errors for too many elements and bad capacities, and values with destructors
//! dropped exactly once on success and on failure, on a plain scope, a concurrent
//! scope and a slot.
#![cfg(all(feature = "serde", feature = "derive"))]

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use scope_stack::serde::{CapacitySeed, DensePoolIn, DeserializeIn, PoolIn, Seed, Serde};
use scope_stack::{slot_root, LinearAllocator, Place, MAX_POOL_CAPACITY};
use serde::de::{DeserializeSeed, Deserializer, Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Elements per file: fewer under Miri.
const N: usize = if cfg!(miri) { 12 } else { 300 };

#[derive(DeserializeIn, Serialize, Debug, PartialEq, Clone, Copy)]
struct Enemy<'s> {
    name: &'s str,
    hp: u32,
    loot: &'s [&'s str],
}

/// `n` enemies as JSON: `{"name": "e0", "hp": 0, "loot": [...]}`, ...
fn enemies_json(n: usize) -> String {
    let mut s = String::from("[");
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        let loot: Vec<String> = (0..i % 3).map(|j| format!("\"l{i}.{j}\"")).collect();
        write!(
            s,
            r#"{{"name":"e{i}","hp":{i},"loot":[{}]}}"#,
            loot.join(",")
        )
        .unwrap();
    }
    s.push(']');
    s
}

fn check_enemy(i: usize, e: &Enemy<'_>) {
    assert_eq!(e.name, format!("e{i}"));
    assert_eq!(e.hp as usize, i);
    assert_eq!(e.loot.len(), i % 3);
    if let Some(l) = e.loot.last() {
        assert_eq!(*l, format!("l{i}.{}", i % 3 - 1));
    }
}

fn json(text: &str) -> serde_json::Deserializer<serde_json::de::StrRead<'_>> {
    serde_json::Deserializer::from_str(text)
}

#[test]
fn pools_fill_from_json_with_the_files_length_and_keep_its_order() {
    let text = enemies_json(N);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        let enemies: PoolIn<Enemy> = level.deserialize(&mut json(&text)).unwrap();
        assert_eq!((enemies.capacity(), enemies.file_handles().len()), (N, N));
        for (i, &h) in enemies.file_handles().iter().enumerate() {
            check_enemy(i, enemies.get(h).unwrap());
        }
        assert_eq!(serde_json::to_string(&enemies).unwrap(), text);

        let shots: DensePoolIn<Enemy> = level.deserialize(&mut json(&text)).unwrap();
        assert_eq!((shots.len(), shots.capacity()), (N, N));
        for (i, &h) in shots.file_handles().iter().enumerate() {
            check_enemy(i, &shots[h]);
        }
        assert_eq!(serde_json::to_string(&shots).unwrap(), text);
        // Both pools show in the scope's report, as pools carved by `new_pool` do.
        let map = level.report();
        let kinds: Vec<(&str, usize, usize)> = map.scopes[0]
            .pools
            .iter()
            .map(|p| (p.kind, p.len, p.capacity))
            .collect();
        assert_eq!(kinds, [("Pool", N, N), ("DensePool", N, N)]);
    });
}

#[test]
fn pools_round_trip_through_postcard() {
    let text = enemies_json(N);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("editor", |editor| {
        let enemies: PoolIn<Enemy> = editor.deserialize(&mut json(&text)).unwrap();
        let dense: DensePoolIn<Enemy> = editor.deserialize(&mut json(&text)).unwrap();
        let bytes = postcard::to_allocvec(&enemies).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&dense).unwrap());
        editor.scope("reload", |reload| {
            // The length comes first: the pool is carved at once and filled.
            let again: PoolIn<Enemy> = reload
                .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
                .unwrap();
            assert_eq!(again.capacity(), N);
            for (i, &h) in again.file_handles().iter().enumerate() {
                check_enemy(i, again.get(h).unwrap());
            }
            assert_eq!(serde_json::to_string(&again).unwrap(), text);
            let again: DensePoolIn<Enemy> = reload
                .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
                .unwrap();
            assert_eq!(serde_json::to_string(&again).unwrap(), text);
            // With a capacity given.
            let mut de = postcard::Deserializer::from_bytes(&bytes);
            let wide = CapacitySeed::<_, PoolIn<Enemy>>::new(&**reload, 2 * N)
                .deserialize(&mut de)
                .unwrap();
            assert_eq!((wide.capacity(), wide.file_handles().len()), (2 * N, N));
            assert_eq!(serde_json::to_string(&wide).unwrap(), text);
        });
    });
}

#[test]
fn a_given_capacity_leaves_room_to_insert_more() {
    let text = enemies_json(10);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let scope = &**level;
        let mut enemies = CapacitySeed::<_, PoolIn<Enemy>>::new(scope, 16)
            .deserialize(&mut json(&text))
            .unwrap();
        assert_eq!((enemies.capacity(), enemies.len()), (16, 10));
        let extra = Enemy {
            name: scope.alloc_str("late"),
            hp: 99,
            loot: &[],
        };
        for _ in 0..6 {
            enemies.insert_mut(extra).unwrap();
        }
        assert!(enemies.insert_mut(extra).is_err());
        // A value removed from the file's list, then values pooled since: the file's
        // order first, the rest after.
        let third = enemies.file_handles()[2];
        assert_eq!(enemies.remove(third).unwrap().name, "e2");
        let saved: Vec<serde_json::Value> =
            serde_json::from_str(&serde_json::to_string(&enemies).unwrap()).unwrap();
        assert_eq!(saved.len(), 15);
        let names: Vec<&str> = saved.iter().map(|v| v["name"].as_str().unwrap()).collect();
        assert_eq!(&names[..3], ["e0", "e1", "e3"]);
        assert!(names[9..].iter().all(|n| *n == "late"));

        let mut dense = CapacitySeed::<_, DensePoolIn<Enemy>>::new(scope, 11)
            .deserialize(&mut json(&text))
            .unwrap();
        let h = dense.insert(extra).unwrap();
        assert!(dense.is_full() && dense[h].name == "late");
        let first = dense.file_handles()[0];
        dense.remove(first).unwrap();
        let saved: Vec<serde_json::Value> =
            serde_json::from_str(&serde_json::to_string(&dense).unwrap()).unwrap();
        let names: Vec<&str> = saved.iter().map(|v| v["name"].as_str().unwrap()).collect();
        assert_eq!(names.len(), 10);
        assert_eq!((names[0], names[8], names[9]), ("e1", "e9", "late"));
    });
}

#[test]
fn values_pooled_after_the_load_are_saved_after_the_files_in_a_pool_of_many_shards() {
    // 2,048 slots in 32 shards: the file's values fill several shards, so their slots
    // are not in file order.
    let n: u32 = if cfg!(miri) { 150 } else { 1500 };
    let (text, _) = numbers(n as usize);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let mut pool = CapacitySeed::<_, PoolIn<u32>>::new(&**level, 2048)
            .deserialize(&mut json(&text))
            .unwrap();
        assert!(pool.shard_count() > 1);
        let mut dense = CapacitySeed::<_, DensePoolIn<u32>>::new(&**level, 2048)
            .deserialize(&mut json(&text))
            .unwrap();
        let file = pool.file_handles();
        let dense_file = dense.file_handles();
        for i in (0..n as usize).step_by(7) {
            pool.remove(file[i]).unwrap();
            dense.remove(dense_file[i]).unwrap();
        }
        for v in 0..n / 3 {
            pool.insert_mut(10_000 + v).unwrap();
            dense.insert(10_000 + v).unwrap();
        }
        // The file's values first, in its order, then the others in the pool's order.
        let mut expected: Vec<u32> = file.iter().filter_map(|&h| pool.get(h)).copied().collect();
        expected.extend(
            pool.iter()
                .filter(|(h, _)| !file.contains(h))
                .map(|(_, v)| *v),
        );
        assert_eq!(
            serde_json::to_string(&pool).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
        let mut expected: Vec<u32> = dense_file
            .iter()
            .filter_map(|&h| dense.get(h))
            .copied()
            .collect();
        expected.extend(
            dense
                .iter()
                .filter(|(h, _)| !dense_file.contains(h))
                .map(|(_, v)| *v),
        );
        assert_eq!(
            serde_json::to_string(&dense).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
        assert_eq!(expected.len(), dense.len());
    });
}

#[test]
fn more_elements_than_the_capacity_is_an_invalid_length_error() {
    let text = enemies_json(5);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let scope = &**level;
        let e = CapacitySeed::<_, PoolIn<Enemy>>::new(scope, 4)
            .deserialize(&mut json(&text))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("invalid length 5, expected at most 4 elements"),
            "{e}"
        );
        let e = CapacitySeed::<_, DensePoolIn<Enemy>>::new(scope, 4)
            .deserialize(&mut json(&text))
            .unwrap_err();
        assert!(e.to_string().contains("expected at most 4 elements"), "{e}");
        // postcard says the length first: the error comes before any element is read.
        let bytes = postcard::to_allocvec(&[1u32, 2, 3, 4, 5][..]).unwrap();
        let e = CapacitySeed::<_, PoolIn<u32>>::new(scope, 4)
            .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
            .unwrap_err();
        assert!(matches!(e, postcard::Error::SerdeDeCustom), "{e:?}");
        let ok = CapacitySeed::<_, PoolIn<u32>>::new(scope, 5)
            .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
            .unwrap();
        assert_eq!(ok.len(), 5);
    });
}

#[test]
fn a_capacity_of_zero_or_too_large_is_a_clear_error() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let scope = &**level;
        let e = CapacitySeed::<_, PoolIn<u32>>::new(scope, 0)
            .deserialize(&mut json("[]"))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("a pool needs at least one slot (capacity 0)"),
            "{e}"
        );
        let e = CapacitySeed::<_, DensePoolIn<u32>>::new(scope, 0)
            .deserialize(&mut json("[]"))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("a dense pool needs at least one slot"),
            "{e}"
        );
        // An empty file with no capacity given: no pool can hold it.
        let e = scope
            .deserialize::<PoolIn<u32>, _>(&mut json("[]"))
            .unwrap_err();
        assert!(e.to_string().contains("capacity 0"), "{e}");
        let bytes = postcard::to_allocvec::<[u32]>(&[]).unwrap();
        let e = scope
            .deserialize::<DensePoolIn<u32>, _>(&mut postcard::Deserializer::from_bytes(&bytes))
            .unwrap_err();
        assert!(matches!(e, postcard::Error::SerdeDeCustom), "{e:?}");
        let e = CapacitySeed::<_, PoolIn<u8>>::new(scope, MAX_POOL_CAPACITY + 1)
            .deserialize(&mut json("[1]"))
            .unwrap_err();
        assert!(e.to_string().contains("too many slots"), "{e}");
        let e = CapacitySeed::<_, PoolIn<u64>>::new(scope, 1 << 20)
            .deserialize(&mut json("[1]"))
            .unwrap_err();
        assert!(e.to_string().contains("level"), "{e}");
        // Not a sequence.
        let e = scope
            .deserialize::<PoolIn<u32>, _>(&mut json("7"))
            .unwrap_err();
        assert!(
            e.to_string().contains("a sequence of the pool's values"),
            "{e}"
        );
    });
}

#[test]
fn a_pool_from_json_takes_the_pool_and_its_handles_and_nothing_staged() {
    let (text, _) = numbers(N);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        // Capacity from the file's length: staged, then carved and moved in. The scope
        // holds what `new_pool` takes, the handles, and at most their alignment.
        let carved = level.scope("carved", |s| {
            s.new_pool::<u32>(N);
            s.used()
        });
        let used = level.scope("pool", |s| {
            let p: PoolIn<u32> = s.deserialize(&mut json(&text)).unwrap();
            assert_eq!(p.capacity(), N);
            s.used()
        });
        let most = carved + 8 * N + 8;
        assert!(used <= most, "{used} bytes, at most {most} expected");
        let carved = level.scope("carved", |s| {
            s.new_dense_pool::<u32>(N);
            s.used()
        });
        let used = level.scope("dense", |s| {
            let p: DensePoolIn<u32> = s.deserialize(&mut json(&text)).unwrap();
            assert_eq!(p.capacity(), N);
            s.used()
        });
        let most = carved + 8 * N + 8;
        assert!(used <= most, "{used} bytes, at most {most} expected");
    });
}

#[test]
fn loads_after_the_first_take_no_heap() {
    let text = enemies_json(N);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        let mut load = || {
            level.scope("load", |s| {
                let p: PoolIn<Enemy> = s.deserialize(&mut json(&text)).unwrap();
                let d = CapacitySeed::<_, DensePoolIn<Enemy>>::new(&**s, 2 * N)
                    .deserialize(&mut json(&text))
                    .unwrap();
                assert_eq!((p.len(), d.len()), (N, N));
            })
        };
        load(); // the thread's staging block is reserved here
        assert_eq!(counting_alloc::heap_calls_during(&mut load), 0);
    });
}

/// Drop counting: the tests that count hold this lock, so they do not count each
/// other's drops.
static DROP_LOCK: Mutex<()> = Mutex::new(());
static DROPS: AtomicUsize = AtomicUsize::new(0);

#[derive(Deserialize, Serialize, Debug)]
struct Tracked(u32);
impl Drop for Tracked {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

fn drops() -> usize {
    DROPS.swap(0, Ordering::Relaxed)
}

/// `[0, 1, ..., n - 1]`, and the same cut off after `n` elements.
fn numbers(n: usize) -> (String, String) {
    let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let whole = format!("[{}]", items.join(","));
    let cut = format!("[{},", items.join(","));
    (whole, cut)
}

#[test]
fn values_with_destructors_are_dropped_once_in_a_plain_scope() {
    let _lock = DROP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    drops();
    let (whole, cut) = numbers(N);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        let mut pool: PoolIn<Serde<Tracked>> = level.deserialize(&mut json(&whole)).unwrap();
        let dense: DensePoolIn<Serde<Tracked>> = level.deserialize(&mut json(&whole)).unwrap();
        assert_eq!(drops(), 0);
        let h = pool.file_handles()[N - 1];
        assert_eq!(pool.remove(h).unwrap().0 .0 as usize, N - 1);
        assert_eq!(drops(), 1);
        assert_eq!(dense[dense.file_handles()[1]].0 .0, 1);
        let saved = serde_json::to_string(&dense).unwrap();
        assert_eq!(saved, whole);
    });
    assert_eq!(drops(), 2 * N - 1);

    // A truncated file: the elements read wait in the stash (capacity from the file)
    // and are dropped at once, or are in the pool (capacity given) and are dropped
    // when the scope ends.
    memory.scope("level", |level| {
        assert!(level
            .deserialize::<PoolIn<Serde<Tracked>>, _>(&mut json(&cut))
            .is_err());
        assert_eq!(drops(), N);
        assert!(level
            .deserialize::<DensePoolIn<Serde<Tracked>>, _>(&mut json(&cut))
            .is_err());
        assert_eq!(drops(), N);
        let r = CapacitySeed::<_, PoolIn<Serde<Tracked>>>::new(&**level, N + 1)
            .deserialize(&mut json(&cut));
        assert!(r.is_err());
        let r = CapacitySeed::<_, DensePoolIn<Serde<Tracked>>>::new(&**level, N + 1)
            .deserialize(&mut json(&cut));
        assert!(r.is_err());
        assert_eq!(drops(), 0);
        // Too many: the extra element is dropped at once, the rest with the scope.
        let r = CapacitySeed::<_, PoolIn<Serde<Tracked>>>::new(&**level, N - 1)
            .deserialize(&mut json(&whole));
        assert!(r.is_err());
        assert_eq!(drops(), 1);
    });
    assert_eq!(drops(), 2 * N + (N - 1));

    // Postcard, cut off: the length says N, the bytes end early.
    let bytes = postcard::to_allocvec(&(0..N as u32).collect::<Vec<_>>()).unwrap();
    let cut = &bytes[..bytes.len() - 1];
    memory.scope("level", |level| {
        let r = level
            .deserialize::<PoolIn<Serde<Tracked>>, _>(&mut postcard::Deserializer::from_bytes(cut));
        assert!(r.is_err());
        let r = level.deserialize::<DensePoolIn<Serde<Tracked>>, _>(
            &mut postcard::Deserializer::from_bytes(cut),
        );
        assert!(r.is_err());
    });
    assert_eq!(drops(), 2 * (N - 1));
}

#[test]
fn values_with_destructors_are_dropped_once_in_a_concurrent_scope() {
    let _lock = DROP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    drops();
    let (whole, cut) = numbers(N);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("frame", |frame| {
        frame.scope_concurrent("jobs", |jobs| {
            let (a, b) = std::thread::scope(|t| {
                let a = t.spawn(|| {
                    let pool: PoolIn<Serde<Tracked>> = jobs.deserialize(&mut json(&whole)).unwrap();
                    assert!(jobs
                        .deserialize::<DensePoolIn<Serde<Tracked>>, _>(&mut json(&cut))
                        .is_err());
                    pool.len()
                });
                let b = t.spawn(|| {
                    let local = jobs.local();
                    let dense = CapacitySeed::<_, DensePoolIn<Serde<Tracked>>>::new(local, 2 * N)
                        .deserialize(&mut json(&whole))
                        .unwrap();
                    assert!(CapacitySeed::<_, PoolIn<Serde<Tracked>>>::new(local, 2 * N)
                        .deserialize(&mut json(&cut))
                        .is_err());
                    dense.len()
                });
                (a.join().unwrap(), b.join().unwrap())
            });
            assert_eq!((a, b), (N, N));
            // Only the stash's elements are gone so far.
            assert_eq!(drops(), N);
        });
        assert_eq!(drops(), 3 * N);
    });
}

/// A level written `["name", [values...]]`, its pool given room for 16 values: what
/// `#[scope(capacity = 16)]` on a derived field does, by hand.
struct Level<'s> {
    name: &'s str,
    items: PoolIn<'s, Serde<Tracked>>,
}

impl<'s> DeserializeIn<'s> for Level<'s> {
    fn deserialize_in<'de, P, D>(scope: P, de: D) -> Result<Self, D::Error>
    where
        P: Place<'s> + Copy,
        D: Deserializer<'de>,
    {
        struct V<'s, P>(P, std::marker::PhantomData<&'s ()>);
        impl<'de, 's, P: Place<'s> + Copy> Visitor<'de> for V<'s, P> {
            type Value = Level<'s>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a level")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Level<'s>, A::Error> {
                let name = seq
                    .next_element_seed(Seed::new(self.0))?
                    .ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let items = seq
                    .next_element_seed(CapacitySeed::new(self.0, 16))?
                    .ok_or_else(|| A::Error::invalid_length(1, &self))?;
                Ok(Level { name, items })
            }
        }
        de.deserialize_tuple(2, V(scope, std::marker::PhantomData))
    }
}

slot_root!(struct LevelRoot => Level);
slot_root!(struct Items = for<'s> PoolIn<'s, Serde<Tracked>>);

#[test]
fn values_with_destructors_are_dropped_once_in_a_slot() {
    let _lock = DROP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    drops();
    let (whole, cut) = numbers(N);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 1 << 20);
        let loaded = slots
            .load_from::<Items, _>("items", &mut json(&whole))
            .unwrap();
        assert_eq!(loaded.with(|p| p.file_handles().len()), N);
        drop(loaded);
        assert_eq!(drops(), N);
        // A failed load frees the slot at once, having dropped what it read.
        let e = slots
            .load_from::<Items, _>("cut", &mut json(&cut))
            .err()
            .unwrap();
        assert!(!e.to_string().is_empty());
        assert_eq!((drops(), slots.loaded()), (N, 0));

        let text = r#"["forest", [1, 2, 3]]"#;
        let mut forest = slots
            .load_from::<LevelRoot, _>("forest", &mut json(text))
            .unwrap();
        forest.with_mut(|level, _| {
            assert_eq!((level.name, level.items.capacity()), ("forest", 16));
            for i in 3..16 {
                level.items.insert_mut(Serde(Tracked(i))).unwrap();
            }
            let back = level.items.insert_mut(Serde(Tracked(99))).unwrap_err();
            drop(back);
        });
        assert_eq!(drops(), 1);
        drop(forest);
        assert_eq!(drops(), 16);
        // Too many for the capacity: an error, the slot is free, each value dropped.
        let many = numbers(17).0;
        let text = format!(r#"["forest", {many}]"#);
        assert!(slots
            .load_from::<LevelRoot, _>("many", &mut json(&text))
            .is_err());
        assert_eq!((drops(), slots.loaded()), (17, 0));
    });
}

/// Elements that do not fit in the staging block carry on in the scope.
#[cfg(not(miri))]
#[test]
fn a_sequence_larger_than_the_staging_block_fills_a_pool() {
    #[derive(Deserialize, Serialize)]
    struct Big(Tracked, [u64; 32], [u64; 32], [u64; 32], [u64; 32]);
    let _lock = DROP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    drops();
    // 1,100 elements of over 1 KiB: more than the 1 MiB staging block.
    let n = 1100;
    let items: Vec<Big> = (0..n)
        .map(|i| Big(Tracked(i), [i as u64; 32], [1; 32], [2; 32], [3; 32]))
        .collect();
    let text = serde_json::to_string(&items).unwrap();
    drop(items);
    assert_eq!(drops(), n as usize);
    let mut memory = LinearAllocator::with_capacity(16 << 20).unwrap();
    memory.scope("level", |level| {
        let pool: PoolIn<Serde<Big>> = level.deserialize(&mut json(&text)).unwrap();
        assert_eq!(pool.capacity(), n as usize);
        // The elements went on in the scope's doubling buffer, whose old buffers stay
        // taken: more than the pool's values twice over.
        assert!(level.used() > 2 * n as usize * std::mem::size_of::<Big>());
        for (i, &h) in pool.file_handles().iter().enumerate() {
            assert_eq!(pool.get(h).unwrap().0 .1[0], i as u64);
        }
        assert_eq!(serde_json::to_string(&pool).unwrap(), text);
        assert_eq!(drops(), 0);
        // Cut off inside the last element: every element read so far, and the first
        // field of the last, is dropped once.
        let cut = &text[..text.len() - 10];
        assert!(level
            .deserialize::<DensePoolIn<Serde<Big>>, _>(&mut json(cut))
            .is_err());
        assert_eq!(drops(), n as usize);
    });
    assert_eq!(drops(), n as usize);
}

/// The derive and the pools together: `#[scope(capacity = N)]` on a `PoolIn` field
/// carves that many slots; a `DensePoolIn` without it takes its capacity from the file.
#[derive(DeserializeIn)]
struct Arena<'s> {
    name: &'s str,
    #[scope(capacity = 64)]
    enemies: PoolIn<'s, Enemy<'s>>,
    shots: DensePoolIn<'s, [f32; 2]>,
}

#[test]
fn a_derived_level_carves_its_pools_with_the_capacity_its_attribute_gives() {
    let text = format!(
        r#"{{"name": "pit", "enemies": {}, "shots": [[1, 2], [3, 4], [5, 6]]}}"#,
        enemies_json(5)
    );
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let arena: Arena = level.deserialize(&mut json(&text)).unwrap();
        assert_eq!(arena.name, "pit");
        assert_eq!(arena.enemies.capacity(), 64);
        assert_eq!(arena.enemies.len(), 5);
        for (i, h) in arena.enemies.file_handles().iter().enumerate() {
            check_enemy(i, arena.enemies.get(*h).unwrap());
        }
        assert_eq!(arena.shots.capacity(), 3);
        let last = arena.shots.file_handles()[2];
        assert_eq!(arena.shots.get(last), Some(&[5.0, 6.0]));
        // More enemies than the attribute's capacity: a serde error naming it.
        let crowded = format!(
            r#"{{"name": "pit", "enemies": {}, "shots": []}}"#,
            enemies_json(65)
        );
        let err = level
            .deserialize::<Arena, _>(&mut json(&crowded))
            .err()
            .expect("65 enemies in 64 slots");
        assert!(err.to_string().contains("64"), "{err}");
    });
}
