//! Level files into scopes and slots (features `serde` and `derive`): nested slices,
//! strings, maps and enums round-trip through JSON; malformed files give serde errors
//! and leave nothing behind that outlives its scope or slot; loads after a thread's
//! first take no global-heap allocation.
#![cfg(all(feature = "serde", feature = "derive"))]

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use std::sync::atomic::{AtomicUsize, Ordering};

use scope_stack::serde::{DeserializeIn, ScopeMap, Serde};
use scope_stack::{slot_root, LinearAllocator};
use serde::{Deserialize, Serialize};

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Level<'s> {
    level_name: &'s str,
    #[serde(default)]
    gravity: f32,
    entities: &'s [Entity<'s>],
    polygons: &'s [&'s [(f32, f32)]],
    props: ScopeMap<'s, &'s str, f32>,
    #[serde(skip)]
    loaded_at: u64,
    music: Option<&'s str>,
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Entity<'s> {
    #[serde(rename = "id")]
    name: &'s str,
    tags: &'s [&'s str],
    kind: Kind<'s>,
    at: [f32; 2],
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Kind<'s> {
    Player,
    Enemy { hp: u32, loot: &'s [&'s str] },
    Door(&'s str),
    Light(f32, f32, f32),
}

slot_root!(struct LevelRoot => Level);

const LEVEL: &str = r#"{
    "levelName": "forest",
    "entities": [
        {"id": "hero", "tags": ["brave"], "kind": "player", "at": [1, 2]},
        {"id": "wolf", "tags": [], "kind": {"enemy": {"hp": 30, "loot": ["fang", "fur"]}}, "at": [5, 6]},
        {"id": "gate", "tags": ["north", "locked"], "kind": {"door": "castle"}, "at": [0, 9]},
        {"id": "lamp", "tags": [], "kind": {"light": [1, 0.5, 0.25]}, "at": [3, 3]}
    ],
    "polygons": [[[0, 0], [1, 0], [1, 1]], [], [[2, 2], [3, 3]]],
    "props": {"wind": 0.5, "fog": 0.25},
    "music": null
}"#;

fn check(level: &Level<'_>) {
    assert_eq!(level.level_name, "forest");
    assert_eq!(level.gravity, 0.0);
    assert_eq!(level.loaded_at, 0);
    assert_eq!(level.entities.len(), 4);
    assert_eq!(
        level.entities[1].kind,
        Kind::Enemy {
            hp: 30,
            loot: &["fang", "fur"]
        }
    );
    assert_eq!(level.entities[2].kind, Kind::Door("castle"));
    assert_eq!(level.entities[2].tags, ["north", "locked"]);
    assert_eq!(level.entities[3].kind, Kind::Light(1.0, 0.5, 0.25));
    assert_eq!(level.polygons[2], [(2.0, 2.0), (3.0, 3.0)]);
    assert!(level.polygons[1].is_empty());
    assert_eq!(level.props.get("fog"), Some(&0.25));
    assert_eq!(level.music, None);
}

#[test]
fn level_round_trips_through_json() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |scope| {
        let mut de = serde_json::Deserializer::from_str(LEVEL);
        let level: Level = scope.deserialize(&mut de).unwrap();
        de.end().unwrap();
        check(&level);
        // Serialize back, load again: the same level.
        let text = serde_json::to_string(&level).unwrap();
        let again: Level = scope
            .deserialize(&mut serde_json::Deserializer::from_str(&text))
            .unwrap();
        assert_eq!(again, level);
        assert_eq!(serde_json::to_string(&again).unwrap(), text);
    });
}

#[test]
fn every_scope_kind_takes_a_level() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        // A child scope (`&Scope`), the generic entry, and a concurrent scope's kinds.
        game.scope("child", |child| {
            let level =
                Level::deserialize_in(&**child, &mut serde_json::Deserializer::from_str(LEVEL));
            check(&level.unwrap());
        });
        game.scope_concurrent("jobs", |jobs| {
            let a: Level = jobs
                .deserialize(&mut serde_json::Deserializer::from_str(LEVEL))
                .unwrap();
            let b: Level = std::thread::scope(|t| {
                t.spawn(|| {
                    jobs.local()
                        .deserialize(&mut serde_json::Deserializer::from_str(LEVEL))
                        .unwrap()
                })
                .join()
                .unwrap()
            });
            check(&a);
            check(&b);
        });
        // A slot, in one call, and a concurrent slot built on a loader thread.
        let slots = game.new_slots("levels", 2, 64 << 10);
        let plain = slots
            .load_from::<LevelRoot, _>("forest", &mut serde_json::Deserializer::from_str(LEVEL))
            .unwrap();
        plain.with(check);
        let shared = std::thread::scope(|t| {
            t.spawn(|| {
                slots
                    .load_concurrent_from::<LevelRoot, _>(
                        "forest 2",
                        &mut serde_json::Deserializer::from_str(LEVEL),
                    )
                    .unwrap()
            })
            .join()
            .unwrap()
        });
        shared.with(check);
        assert_eq!(slots.loaded(), 2);
    });
}

/// Truncated files, wrong types, missing and unknown fields.
const BROKEN: &[&str] = &[
    r#"{"levelName": "forest", "entities": [{"id": "hero", "tags": ["br"#,
    r#"{"levelName": 7}"#,
    r#"{"levelName": "x", "entities": [], "polygons": [[[0, "a"]]], "props": {}}"#,
    r#"{"levelName": "x", "entities": [], "polygons": []}"#,
    r#"{"levelName": "x", "entities": [], "polygons": [], "props": {}, "extra": 1}"#,
    r#"{"levelName": "x", "entities": [{"id": "a", "tags": [], "kind": "dragon", "at": [0, 0]}], "polygons": [], "props": {}}"#,
];

#[test]
fn a_broken_file_is_a_serde_error_and_frees_the_slot() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 64 << 10);
        for (i, text) in BROKEN.iter().enumerate() {
            let err = slots
                .load_from::<LevelRoot, _>("broken", &mut serde_json::Deserializer::from_str(text))
                .err()
                .unwrap_or_else(|| panic!("file {i} loaded"));
            assert!(!err.to_string().is_empty());
            assert_eq!(slots.loaded(), 0, "file {i}");
            // The slot is free again at once.
            let ok = slots
                .load_from::<LevelRoot, _>("forest", &mut serde_json::Deserializer::from_str(LEVEL))
                .unwrap();
            assert_eq!(ok.with(|l| l.entities.len()), 4);
        }
        let err = slots
            .load_from::<LevelRoot, _>("x", &mut serde_json::Deserializer::from_str(BROKEN[4]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("unknown field `extra`"), "{err}");
    });
}

/// A task slot (`load_task_from`): the level parsed into the slot's plain scope through
/// a `TaskScope`, checked and dropped on another thread; a broken file frees it.
#[test]
fn a_task_slot_loads_from_a_file_and_crosses_threads() {
    let slots = scope_stack::Slots::leak("levels", 1, 64 << 10).unwrap();
    for (i, text) in BROKEN.iter().enumerate() {
        assert!(
            slots
                .load_task_from::<LevelRoot, _>(
                    "broken",
                    &mut serde_json::Deserializer::from_str(text)
                )
                .is_err(),
            "file {i} loaded"
        );
        assert_eq!(slots.loaded(), 0, "file {i}");
    }
    let level = slots
        .load_task_from::<LevelRoot, _>("forest", &mut serde_json::Deserializer::from_str(LEVEL))
        .unwrap();
    std::thread::spawn(move || level.with(check))
        .join()
        .unwrap();
    assert_eq!(slots.loaded(), 0);
}

#[test]
fn a_broken_file_leaves_the_parent_scope_where_it_was() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let before = game.used();
        for text in BROKEN {
            let failed = game.scope("load", |load| {
                load.deserialize::<Level, _>(&mut serde_json::Deserializer::from_str(text))
                    .is_err()
            });
            assert!(failed);
            assert_eq!(game.used(), before);
        }
    });
}

#[test]
fn a_slot_too_small_names_its_scope_and_is_free_again() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        // Find the size the level needs, then try one byte less.
        let probe = game.new_slots("probe", 1, 64 << 10);
        let need = probe
            .load_from::<LevelRoot, _>("forest", &mut serde_json::Deserializer::from_str(LEVEL))
            .unwrap()
            .used();
        let small = game.new_slots("small", 1, need - 1);
        let err = small
            .load_from::<LevelRoot, _>("forest", &mut serde_json::Deserializer::from_str(LEVEL))
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(
            text.contains("out of memory") && text.contains("forest"),
            "{text}"
        );
        assert!(text.contains("requested"), "{text}");
        assert_eq!(small.loaded(), 0);
        let fits = game.new_slots("fits", 1, need);
        assert!(fits
            .load_from::<LevelRoot, _>("forest", &mut serde_json::Deserializer::from_str(LEVEL))
            .is_ok());
    });
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

#[derive(Deserialize)]
struct Counted(#[allow(dead_code)] u32);
impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn values_with_destructors_are_dropped_once_on_failure() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    // Three placed (one slice of two, one behind `&`), then a failure in the fourth.
    let text = r#"[[[1, 2], [3]], [[4], "x"]]"#;
    DROPS.store(0, Ordering::Relaxed);
    memory.scope("level", |level| {
        let r = level.deserialize::<&[&[&[Serde<Counted>]]], _>(
            &mut serde_json::Deserializer::from_str(text),
        );
        assert!(r.is_err());
    });
    assert_eq!(DROPS.load(Ordering::Relaxed), 4);
    // In a slot: dropped by the failed load itself.
    DROPS.store(0, Ordering::Relaxed);
    slot_root!(struct Nested = for<'s> &'s [&'s [&'s [Serde<Counted>]]]);
    memory.scope("game", |game| {
        let slots = game.new_slots("s", 1, 4096);
        assert!(slots
            .load_from::<Nested, _>("n", &mut serde_json::Deserializer::from_str(text))
            .is_err());
        assert_eq!(DROPS.load(Ordering::Relaxed), 4);
        let ok = slots
            .load_from::<Nested, _>("n", &mut serde_json::Deserializer::from_str("[[[5]]]"))
            .unwrap();
        drop(ok);
        assert_eq!(DROPS.load(Ordering::Relaxed), 5);
    });
}

#[test]
fn nested_data_takes_little_more_than_its_bytes() {
    // 200 polygons of 1..=40 points each: the scope holds the points, the slice
    // headers, and alignment, nothing staged.
    let mut text = String::from("[");
    let mut data = 0;
    // Fewer under Miri, which interprets the JSON parser.
    let count = if cfg!(miri) { 24 } else { 200 };
    for i in 0..count {
        let n = 1 + i % 20;
        text.push_str(if i == 0 { "[" } else { ",[" });
        for j in 0..n {
            text.push_str(&format!("{}[{j}, {i}]", if j == 0 { "" } else { "," }));
        }
        text.push(']');
        data += n * 8 + 16;
    }
    text.push(']');
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let before = level.used();
        let polys: &[&[(f32, f32)]] = level
            .deserialize(&mut serde_json::Deserializer::from_str(&text))
            .unwrap();
        let used = level.used() - before;
        assert_eq!(polys.len(), count);
        assert_eq!(polys[21], [(0.0, 21.0), (1.0, 21.0)]);
        assert!(
            used * 4 <= data * 5 + 64,
            "{used} bytes for {data} bytes of data"
        );
    });
}

#[test]
fn loads_after_the_first_take_no_heap() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 64 << 10);
        let load = || {
            let level = slots
                .load_from::<LevelRoot, _>("forest", &mut serde_json::Deserializer::from_str(LEVEL))
                .unwrap();
            level.with(check);
        };
        load(); // the thread's staging block is reserved here
        assert_eq!(counting_alloc::heap_calls_during(load), 0);
        assert_eq!(counting_alloc::heap_calls_during(load), 0);
    });
}

#[derive(DeserializeIn, Debug, PartialEq)]
struct Newtype<'s>(&'s str);
#[derive(DeserializeIn, Debug, PartialEq)]
struct Pair(u8, #[serde(default)] u8);
#[derive(DeserializeIn, Debug, PartialEq)]
struct Unit;
#[derive(DeserializeIn, Debug, PartialEq, Default)]
#[serde(default)]
struct Settings {
    volume: u8,
    #[serde(alias = "fullscreen")]
    full_screen: bool,
    #[serde(default = "seven")]
    lives: u8,
    #[scope(with_serde)]
    title: String,
}
fn seven() -> u8 {
    7
}
#[derive(DeserializeIn, Debug, PartialEq)]
enum Pick<'s, T> {
    #[serde(rename = "one")]
    One(T),
    #[serde(skip)]
    #[allow(dead_code)]
    Hidden,
    Many(&'s [T]),
}

#[test]
fn derive_attributes_and_shapes() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("s", |s| {
        fn json(t: &str) -> serde_json::Deserializer<serde_json::de::StrRead<'_>> {
            serde_json::Deserializer::from_str(t)
        }
        assert_eq!(
            s.deserialize::<Newtype, _>(&mut json(r#""a""#)).unwrap(),
            Newtype("a")
        );
        assert_eq!(
            s.deserialize::<Pair, _>(&mut json("[1]")).unwrap(),
            Pair(1, 0)
        );
        assert_eq!(s.deserialize::<Unit, _>(&mut json("null")).unwrap(), Unit);
        let got: Settings = s
            .deserialize(&mut json(r#"{"fullscreen": true, "title": "T"}"#))
            .unwrap();
        assert_eq!(
            got,
            Settings {
                volume: 0,
                full_screen: true,
                lives: 7,
                title: "T".into()
            }
        );
        assert_eq!(
            s.deserialize::<Pick<u16>, _>(&mut json(r#"{"one": 3}"#))
                .unwrap(),
            Pick::One(3)
        );
        assert_eq!(
            s.deserialize::<Pick<u16>, _>(&mut json(r#"{"Many": [1, 2]}"#))
                .unwrap(),
            Pick::Many(&[1, 2])
        );
        let err = s
            .deserialize::<Pick<u16>, _>(&mut json(r#"{"Hidden": null}"#))
            .unwrap_err();
        assert!(err.to_string().contains("unknown variant"), "{err}");
        // A missing field without a default is an error; a missing `Option` is `None`.
        let err = s
            .deserialize::<Entity, _>(&mut json(r#"{"id": "a"}"#))
            .unwrap_err();
        assert!(err.to_string().contains("missing field `tags`"), "{err}");
        // Maps and `&'s mut`.
        let m: &mut ScopeMap<&str, &[u8]> =
            s.deserialize(&mut json(r#"{"a": [1], "b": []}"#)).unwrap();
        assert_eq!(m.get("a"), Some(&&[1u8][..]));
        let text: &mut str = s.deserialize(&mut json(r#""frog""#)).unwrap();
        text.make_ascii_uppercase();
        assert_eq!(text, "FROG");
    });
}

/// A level as an editor saves it: the loaded strings, slices and map, with the enemies
/// moved into a `Pool` and the shots into a `DensePool` (issue 39, part 5).
#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Arena<'s> {
    name: &'s str,
    enemies: &'s [Enemy<'s>],
    shots: &'s [[f32; 2]],
    paths: &'s [&'s [(f32, f32)]],
    props: ScopeMap<'s, &'s str, f32>,
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq, Clone, Copy)]
struct Enemy<'s> {
    name: &'s str,
    hp: u32,
}

/// The same level, its lists in containers.
#[derive(Serialize)]
struct ArenaSaved<'a, 's> {
    name: &'s str,
    enemies: &'a scope_stack::Pool<'s, Enemy<'s>>,
    shots: &'a scope_stack::DensePool<'s, [f32; 2]>,
    paths: &'s [&'s [(f32, f32)]],
    props: ScopeMap<'s, &'s str, f32>,
}

const ARENA: &str = r#"{"name":"arena","enemies":[{"name":"wolf","hp":30},{"name":"bear","hp":80},{"name":"newt","hp":1}],"shots":[[1.0,2.0],[3.0,4.0]],"paths":[[[0.0,0.0],[1.0,1.0]],[],[[2.0,2.5]]],"props":{"wind":0.5,"fog":0.25}}"#;

/// Loads `level` into `scope`'s pools and serializes it back with `save`.
fn save_arena<'s, R>(
    scope: &scope_stack::ScopeStack<'s>,
    level: &Arena<'s>,
    save: impl FnOnce(&ArenaSaved<'_, 's>) -> R,
) -> R {
    let enemies = scope.new_pool_pod::<Enemy<'s>>(8);
    for e in level.enemies {
        enemies.insert(*e).unwrap().into_handle();
    }
    let shots = scope.new_dense_pool_pod::<[f32; 2]>(8);
    for s in level.shots {
        shots.insert(*s).unwrap();
    }
    save(&ArenaSaved {
        name: level.name,
        enemies,
        shots,
        paths: level.paths,
        props: level.props,
    })
}

#[test]
fn pools_serialize_their_values_and_a_level_round_trips_in_json() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("editor", |editor| {
        let level: Arena = editor
            .deserialize(&mut serde_json::Deserializer::from_str(ARENA))
            .unwrap();
        let text = save_arena(editor, &level, |saved| {
            serde_json::to_string(saved).unwrap()
        });
        // The same bytes as the file: pools write their values in the file's order.
        assert_eq!(text, ARENA);
        // And they load again into the same level.
        let again: Arena = editor
            .deserialize(&mut serde_json::Deserializer::from_str(&text))
            .unwrap();
        assert_eq!(again, level);
    });
}

#[test]
fn a_level_with_pools_round_trips_in_postcard() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("editor", |editor| {
        let level: Arena = editor
            .deserialize(&mut serde_json::Deserializer::from_str(ARENA))
            .unwrap();
        let bytes = save_arena(editor, &level, |saved| {
            postcard::to_allocvec(saved).unwrap()
        });
        // The saved pools write what the loaded slices write.
        assert_eq!(bytes, postcard::to_allocvec(&level).unwrap());
        editor.scope("reload", |reload| {
            let again: Arena = reload
                .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
                .unwrap();
            assert_eq!(again, level);
            assert_eq!(serde_json::to_string(&again).unwrap(), ARENA);
        });
    });
}

#[test]
fn pools_write_their_values_in_iteration_order_after_removals() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool::<u32>(8);
        let dense = level.new_dense_pool::<u32>(8);
        let mut handles = Vec::new();
        let mut dense_handles = Vec::new();
        for i in 1..=5 {
            handles.push(pool.insert(i).unwrap().into_handle());
            dense_handles.push(dense.insert(i * 10).unwrap());
        }
        pool.remove(handles[1]);
        dense.remove(dense_handles[1]);
        let boxed = pool.insert(99).unwrap(); // owned by its box: not written
        let pool_json = serde_json::to_string(&*pool).unwrap();
        let expected: Vec<u32> = pool.values().copied().collect();
        assert_eq!(pool_json, serde_json::to_string(&expected).unwrap());
        assert!(!expected.contains(&99) && expected.len() == 4);
        drop(boxed);
        let dense_values: Vec<u32> = dense.values().copied().collect();
        assert_eq!(dense_values, [10, 50, 30, 40]);
        assert_eq!(serde_json::to_string(&*dense).unwrap(), "[10,50,30,40]");
        // In postcard: a length, then the values; they read back as a plain list.
        let bytes = postcard::to_allocvec(&*dense).unwrap();
        assert_eq!(
            postcard::from_bytes::<Vec<u32>>(&bytes).unwrap(),
            dense_values
        );
        let bytes = postcard::to_allocvec(&*pool).unwrap();
        assert_eq!(postcard::from_bytes::<Vec<u32>>(&bytes).unwrap(), expected);
        // Empty pools are empty sequences.
        let empty = level.new_pool::<u8>(2);
        assert_eq!(serde_json::to_string(&*empty).unwrap(), "[]");
    });
}

#[derive(DeserializeIn, Serialize)]
struct Names<'s> {
    ids: scope_stack::serde::SortedMap<'s, &'s str, u32>,
}

#[test]
fn a_sorted_map_finds_keys_by_search_and_saves_in_key_order() {
    let count = if cfg!(miri) { 20 } else { 500 };
    let mut text = String::from(r#"{"ids": {"#);
    for i in (0..count).rev() {
        text.push_str(&format!(
            "{}\"n{i:04}\": {i}",
            if i + 1 == count { "" } else { "," }
        ));
    }
    text.push_str("}}");
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let names: Names = level
            .deserialize(&mut serde_json::Deserializer::from_str(&text))
            .unwrap();
        assert_eq!(names.ids.len(), count);
        for i in 0..count {
            assert_eq!(
                names.ids.get(format!("n{i:04}").as_str()),
                Some(&(i as u32))
            );
        }
        assert_eq!(names.ids.get("n9999"), None);
        assert!(names.ids.windows(2).all(|w| w[0].0 < w[1].0));
        // Saved in key order; postcard reads it back the same.
        let bytes = postcard::to_allocvec(&names).unwrap();
        let again: Names = level
            .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
            .unwrap();
        assert_eq!(again.ids, names.ids);
        // A key twice: a serde error.
        let twice = r#"{"ids": {"a": 1, "b": 2, "a": 3}}"#;
        let err = level
            .deserialize::<Names, _>(&mut serde_json::Deserializer::from_str(twice))
            .err()
            .expect("a duplicate key");
        assert!(err.to_string().contains("duplicate key"), "{err}");
    });
}
