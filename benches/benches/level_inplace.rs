//! Levels in place (issue 49, item 5): one level loaded five ways, interleaved, in one
//! run.
//!
//! The level has the shape of `level_load`'s generated level (entities with names, tags,
//! a position and component arrays; nested polygon lists of float pairs; a map of
//! properties) plus a geometry list of float triples and a spawn table, sized to about
//! 1 MB and 10 MB of JSON. It is written once at the start as JSON (`serde_json`),
//! postcard and rkyv's archived form (`rkyv::to_bytes`), all three from the same heap
//! value. The five ways:
//!
//! - `json_heap`: JSON into heap types (`#[derive(Deserialize)]`: `Vec`, `String`,
//!   `HashMap`);
//! - `postcard_heap`: postcard into the same heap types;
//! - `postcard_slot`: postcard into a slot with `Slots::load_from` and
//!   `#[derive(DeserializeIn)]` types;
//! - `archived`: the archived bytes copied into a slot and validated with bytecheck
//!   (`Slots::load_archived`);
//! - `unchecked`: the same without validation (`unsafe Slots::load_archived_unchecked`,
//!   for files the game cooked itself).
//!
//! Before anything is timed, each way's level is compared field by field with the heap
//! value the files were written from; each timed load is checked again by a checksum of
//! its parts (outside the timed part).
//!
//! Timing: `rounds` rounds (21 by default, `LEVEL_INPLACE_ROUNDS`). In each round every
//! size is loaded every way, a batch of loads per way (about 30 ms, at least one load),
//! the five ways in an order that rotates from round to round. A load's time is the
//! loading thread's CPU time (`CLOCK_THREAD_CPUTIME_ID` on Linux), so time another
//! process held the core does not count; an unload's (dropping the heap types, or the
//! `Loaded`) is wall time (`Instant`) of that one drop, so for the slots, which unload in
//! tens of nanoseconds, it includes a clock read: read those as upper bounds (the
//! table prints the cost of an empty pair of clock reads beside them). The table gives
//! the medians over rounds (per load), each way's ratio to `postcard_heap` and the
//! median of the rounds' own ratios.
//!
//! It also prints, for each size, the files' lengths, what each slot holds
//! (`Loaded::used`) against the archive's length, and the same for a load with a build
//! step (`load_archived_with`, a pool of live spawns filled from the archived spawn
//! table): the slot should hold the archive, what the build step placed, and the root.
//!
//! `LEVEL_INPLACE_PROFILE=1` (or `=10` for the 10 MB level) loads and unloads the level
//! once each way inside `profiled_*` functions, for callgrind (docs/PERFORMANCE.md,
//! "Levels in place (issue 49)", has the command).
//!
//! Run: `cargo bench -p benches --profile release --bench level_inplace`. CI's smoke run,
//! `-- --test`, takes the 1 MB level only: it checks every way once, prints the memory
//! line, then times one round of one load per way.

mod common;

use std::cell::Cell;
use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use rkyv::rancor::Error as RkyvError;
use scope_stack::inplace::ArchivedRoot;
use scope_stack::serde::{DeserializeIn, ScopeMap};
use scope_stack::{slot_root, LinearAllocator, Loaded, Pool, Slots};
use serde::{Deserialize, Serialize};

// ---- The level as heap types: what the tools cook and the heap ways load ----

#[derive(Serialize, Deserialize, rkyv::Archive, rkyv::Serialize)]
struct HeapLevel {
    name: String,
    entities: Vec<HeapEntity>,
    geometry: Vec<[f32; 3]>,
    polygons: Vec<Vec<(f32, f32)>>,
    spawns: Vec<HeapSpawn>,
    props: HashMap<String, f32>,
}

#[derive(Serialize, Deserialize, rkyv::Archive, rkyv::Serialize)]
struct HeapEntity {
    name: String,
    tags: Vec<String>,
    position: [f32; 3],
    health: u32,
    components: Vec<Component>,
}

#[derive(Serialize, Deserialize, rkyv::Archive, rkyv::Serialize)]
struct HeapSpawn {
    kind: String,
    at: [f32; 3],
    count: u32,
    waves: Vec<u16>,
}

/// A component: a kind and four parameters. It places nothing, so the heap and slot
/// families share it.
#[derive(Serialize, Deserialize, DeserializeIn, rkyv::Archive, rkyv::Serialize, Clone, Copy)]
struct Component {
    kind: u16,
    values: [f32; 4],
}

// ---- The same level in a slot, from postcard ----

#[derive(DeserializeIn)]
struct Level<'s> {
    name: &'s str,
    entities: &'s [Entity<'s>],
    geometry: &'s [[f32; 3]],
    polygons: &'s [&'s [(f32, f32)]],
    spawns: &'s [Spawn<'s>],
    props: ScopeMap<'s, &'s str, f32>,
}

#[derive(DeserializeIn, Clone, Copy)]
struct Entity<'s> {
    name: &'s str,
    tags: &'s [&'s str],
    position: [f32; 3],
    health: u32,
    components: &'s [Component],
}

#[derive(DeserializeIn, Clone, Copy)]
struct Spawn<'s> {
    kind: &'s str,
    at: [f32; 3],
    count: u32,
    waves: &'s [u16],
}

slot_root!(struct LevelRoot => Level);

/// A live spawn of the runtime half (the build-step row of the memory table): its kind
/// borrowed from the archive.
struct Live<'s> {
    kind: &'s str,
    left: u32,
}
slot_root!(struct LiveRoot = for<'s> &'s mut Pool<'s, Live<'s>>);

// A slot that holds one number: what any slot's unload costs (callgrind's row).
slot_root!(struct Empty = for<'s> u32);

type Archived = rkyv::Archived<HeapLevel>;

// ---- Level data ----

/// A tiny xorshift: the same level every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn float(&mut self) -> f32 {
        (self.below(1 << 20) as f32) / 64.0 - 8192.0
    }
    fn triple(&mut self) -> [f32; 3] {
        [self.float(), self.float(), self.float()]
    }
}

const TAGS: &[&str] = &[
    "enemy", "friendly", "boss", "loot", "patrol", "sleeping", "flying", "water", "fire",
];
const KINDS: &[&str] = &["wolf", "bear", "bandit", "skeleton", "wraith", "troll"];

/// A level of `n` entities, `2n` geometry vertices, `n / 2` polygons, `n / 8` spawns
/// and 64 properties.
fn make_level(n: usize) -> HeapLevel {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let entities = (0..n)
        .map(|i| HeapEntity {
            name: format!("entity_{i}_{}", rng.below(10_000)),
            tags: (0..rng.below(4))
                .map(|_| TAGS[rng.below(TAGS.len() as u64) as usize].to_string())
                .collect(),
            position: rng.triple(),
            health: rng.below(1000) as u32,
            components: (0..1 + rng.below(6))
                .map(|_| Component {
                    kind: rng.below(32) as u16,
                    values: [rng.float(), rng.float(), rng.float(), rng.float()],
                })
                .collect(),
        })
        .collect();
    let geometry = (0..2 * n).map(|_| rng.triple()).collect();
    let polygons = (0..n / 2)
        .map(|_| {
            (0..3 + rng.below(10))
                .map(|_| (rng.float(), rng.float()))
                .collect()
        })
        .collect();
    let spawns = (0..n / 8)
        .map(|_| HeapSpawn {
            kind: KINDS[rng.below(KINDS.len() as u64) as usize].to_string(),
            at: rng.triple(),
            count: 1 + rng.below(12) as u32,
            waves: (0..1 + rng.below(4))
                .map(|_| rng.below(20) as u16)
                .collect(),
        })
        .collect();
    let props = (0..64)
        .map(|i| (format!("property_{i}"), rng.float()))
        .collect();
    HeapLevel {
        name: "generated level".to_string(),
        entities,
        geometry,
        polygons,
        spawns,
        props,
    }
}

/// A level in its three files.
struct Files {
    label: &'static str,
    json: Vec<u8>,
    postcard: Vec<u8>,
    archive: Vec<u8>,
    /// The value the files were written from, to check every way against.
    heap: HeapLevel,
    /// What the level adds up to (see `checksum_heap`).
    sum: usize,
}

/// A level whose JSON is about `bytes` long.
fn files(label: &'static str, bytes: usize) -> Files {
    let probe = serde_json::to_vec(&make_level(1000)).unwrap().len();
    let heap = make_level(bytes * 1000 / probe);
    Files {
        label,
        json: serde_json::to_vec(&heap).unwrap(),
        postcard: postcard::to_allocvec(&heap).unwrap(),
        archive: rkyv::to_bytes::<RkyvError>(&heap).unwrap().into_vec(),
        sum: checksum_heap(&heap),
        heap,
    }
}

// ---- Checks ----

/// What every loaded level must add up to, so that no way skips work. Each family's
/// checksum reads the same parts.
fn checksum_heap(l: &HeapLevel) -> usize {
    l.name.len()
        + l.entities
            .iter()
            .map(|e| e.name.len() + e.tags.len() + e.components.len() + e.health as usize)
            .sum::<usize>()
        + l.geometry.iter().filter(|g| g[1] > 0.0).count()
        + l.polygons.iter().map(Vec::len).sum::<usize>()
        + l.spawns
            .iter()
            .map(|s| s.kind.len() + s.count as usize + s.waves.len())
            .sum::<usize>()
        + l.props.len()
}

fn checksum_slot(l: &Level<'_>) -> usize {
    l.name.len()
        + l.entities
            .iter()
            .map(|e| e.name.len() + e.tags.len() + e.components.len() + e.health as usize)
            .sum::<usize>()
        + l.geometry.iter().filter(|g| g[1] > 0.0).count()
        + l.polygons.iter().map(|p| p.len()).sum::<usize>()
        + l.spawns
            .iter()
            .map(|s| s.kind.len() + s.count as usize + s.waves.len())
            .sum::<usize>()
        + l.props.len()
}

fn checksum_archived(l: &Archived) -> usize {
    l.name.len()
        + l.entities
            .iter()
            .map(|e| {
                e.name.len() + e.tags.len() + e.components.len() + e.health.to_native() as usize
            })
            .sum::<usize>()
        + l.geometry.iter().filter(|g| g[1].to_native() > 0.0).count()
        + l.polygons.iter().map(|p| p.len()).sum::<usize>()
        + l.spawns
            .iter()
            .map(|s| s.kind.len() + s.count.to_native() as usize + s.waves.len())
            .sum::<usize>()
        + l.props.len()
}

/// Every field of `l` (loaded into heap types) equals `want`'s.
fn same_heap(want: &HeapLevel, l: &HeapLevel) -> bool {
    let entities = want.entities.len() == l.entities.len()
        && want.entities.iter().zip(&l.entities).all(|(a, b)| {
            a.name == b.name
                && a.tags == b.tags
                && a.position == b.position
                && a.health == b.health
                && a.components.len() == b.components.len()
                && a.components
                    .iter()
                    .zip(&b.components)
                    .all(|(x, y)| x.kind == y.kind && x.values == y.values)
        });
    let spawns = want.spawns.len() == l.spawns.len()
        && want.spawns.iter().zip(&l.spawns).all(|(a, b)| {
            a.kind == b.kind && a.at == b.at && a.count == b.count && a.waves == b.waves
        });
    want.name == l.name
        && entities
        && want.geometry == l.geometry
        && want.polygons == l.polygons
        && spawns
        && want.props == l.props
}

/// Every field of `l` (loaded into a slot from postcard) equals `want`'s.
fn same_slot(want: &HeapLevel, l: &Level<'_>) -> bool {
    let entities = want.entities.len() == l.entities.len()
        && want.entities.iter().zip(l.entities).all(|(a, b)| {
            a.name == b.name
                && a.tags.len() == b.tags.len()
                && a.tags.iter().zip(b.tags).all(|(x, y)| x == y)
                && a.position == b.position
                && a.health == b.health
                && a.components.len() == b.components.len()
                && a.components
                    .iter()
                    .zip(b.components)
                    .all(|(x, y)| x.kind == y.kind && x.values == y.values)
        });
    let polygons = want.polygons.len() == l.polygons.len()
        && want
            .polygons
            .iter()
            .zip(l.polygons)
            .all(|(a, b)| a[..] == b[..]);
    let spawns = want.spawns.len() == l.spawns.len()
        && want.spawns.iter().zip(l.spawns).all(|(a, b)| {
            a.kind == b.kind && a.at == b.at && a.count == b.count && a.waves[..] == b.waves[..]
        });
    let props = want.props.len() == l.props.len()
        && want
            .props
            .iter()
            .all(|(k, v)| l.props.get(k.as_str()) == Some(v));
    want.name == l.name
        && entities
        && want.geometry[..] == l.geometry[..]
        && polygons
        && spawns
        && props
}

/// Every field of `l` (read in place from the archive) equals `want`'s.
fn same_archived(want: &HeapLevel, l: &Archived) -> bool {
    let triple = |a: &[f32; 3], b: &[rkyv::Archived<f32>; 3]| {
        a.iter().zip(b).all(|(x, y)| *x == y.to_native())
    };
    let entities = want.entities.len() == l.entities.len()
        && want.entities.iter().zip(l.entities.iter()).all(|(a, b)| {
            a.name == b.name.as_str()
                && a.tags.len() == b.tags.len()
                && a.tags
                    .iter()
                    .zip(b.tags.iter())
                    .all(|(x, y)| x == y.as_str())
                && triple(&a.position, &b.position)
                && a.health == b.health.to_native()
                && a.components.len() == b.components.len()
                && a.components.iter().zip(b.components.iter()).all(|(x, y)| {
                    x.kind == y.kind.to_native()
                        && x.values
                            .iter()
                            .zip(&y.values)
                            .all(|(p, q)| *p == q.to_native())
                })
        });
    let geometry = want.geometry.len() == l.geometry.len()
        && want
            .geometry
            .iter()
            .zip(l.geometry.iter())
            .all(|(a, b)| triple(a, b));
    let polygons = want.polygons.len() == l.polygons.len()
        && want.polygons.iter().zip(l.polygons.iter()).all(|(a, b)| {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(p, q)| p.0 == q.0.to_native() && p.1 == q.1.to_native())
        });
    let spawns = want.spawns.len() == l.spawns.len()
        && want.spawns.iter().zip(l.spawns.iter()).all(|(a, b)| {
            a.kind == b.kind.as_str()
                && triple(&a.at, &b.at)
                && a.count == b.count.to_native()
                && a.waves.len() == b.waves.len()
                && a.waves
                    .iter()
                    .zip(b.waves.iter())
                    .all(|(x, y)| *x == y.to_native())
        });
    let props = want.props.len() == l.props.len()
        && want
            .props
            .iter()
            .all(|(k, v)| l.props.get(k.as_str()).map(|x| x.to_native()) == Some(*v));
    want.name == l.name.as_str() && entities && geometry && polygons && spawns && props
}

// ---- The five ways ----

#[derive(Clone, Copy, PartialEq, Debug)]
enum Way {
    JsonHeap,
    PostcardHeap,
    PostcardSlot,
    Archived,
    Unchecked,
}

const WAYS: [Way; 5] = [
    Way::JsonHeap,
    Way::PostcardHeap,
    Way::PostcardSlot,
    Way::Archived,
    Way::Unchecked,
];

impl Way {
    fn name(self) -> &'static str {
        match self {
            Way::JsonHeap => "json_heap",
            Way::PostcardHeap => "postcard_heap",
            Way::PostcardSlot => "postcard_slot",
            Way::Archived => "archived",
            Way::Unchecked => "unchecked",
        }
    }
}

fn load_json_heap(bytes: &[u8]) -> HeapLevel {
    serde_json::from_slice(bytes).unwrap()
}

fn load_postcard_heap(bytes: &[u8]) -> HeapLevel {
    postcard::from_bytes(bytes).unwrap()
}

fn load_postcard_slot<'a>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, LevelRoot> {
    slots
        .load_from::<LevelRoot, _>("level", &mut postcard::Deserializer::from_bytes(bytes))
        .unwrap()
}

fn load_archived<'a>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, ArchivedRoot<HeapLevel>> {
    slots.load_archived::<HeapLevel>("level", bytes).unwrap()
}

fn load_unchecked<'a>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, ArchivedRoot<HeapLevel>> {
    // SAFETY: `bytes` is `Files::archive`, written by `rkyv::to_bytes` for a
    // `HeapLevel` in this very build, unaltered.
    unsafe { slots.load_archived_unchecked::<HeapLevel>("level", bytes) }.unwrap()
}

/// Loads `f` once `way`, checks it against the heap value field by field, unloads it.
fn check(way: Way, f: &Files, slots: &Slots) {
    let ok = match way {
        Way::JsonHeap => same_heap(&f.heap, &load_json_heap(&f.json)),
        Way::PostcardHeap => same_heap(&f.heap, &load_postcard_heap(&f.postcard)),
        Way::PostcardSlot => load_postcard_slot(slots, &f.postcard).with(|l| same_slot(&f.heap, l)),
        Way::Archived => load_archived(slots, &f.archive).with(|l| same_archived(&f.heap, l)),
        Way::Unchecked => load_unchecked(slots, &f.archive).with(|l| same_archived(&f.heap, l)),
    };
    assert!(
        ok,
        "level {}: `{}` does not read the values it was written from",
        f.label,
        way.name()
    );
    assert_eq!(slots.loaded(), 0);
}

// ---- Timing ----

/// This thread's CPU clock, or wall time where there is none.
struct Clock(Instant, Option<Duration>);

impl Clock {
    fn start() -> Self {
        Clock(Instant::now(), common::thread_cpu_time())
    }
    fn elapsed(&self) -> Duration {
        match (self.1, common::thread_cpu_time()) {
            (Some(a), Some(b)) => b - a,
            _ => self.0.elapsed(),
        }
    }
}

/// `reps` loads and unloads of `f`, the way `way` does it: the loads' total CPU time
/// and the unloads' total wall time, in ns.
fn time_way(way: Way, f: &Files, slots: &Slots, reps: u32) -> (f64, f64) {
    let (mut load, mut unload) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..reps {
        match way {
            Way::JsonHeap | Way::PostcardHeap => {
                let clock = Clock::start();
                let level = if way == Way::JsonHeap {
                    load_json_heap(black_box(&f.json))
                } else {
                    load_postcard_heap(black_box(&f.postcard))
                };
                load += clock.elapsed();
                assert_eq!(checksum_heap(&level), f.sum);
                let t = Instant::now();
                drop(black_box(level));
                unload += t.elapsed();
            }
            Way::PostcardSlot => {
                let clock = Clock::start();
                let level = load_postcard_slot(slots, black_box(&f.postcard));
                load += clock.elapsed();
                assert_eq!(level.with(checksum_slot), f.sum);
                let t = Instant::now();
                drop(black_box(level));
                unload += t.elapsed();
            }
            Way::Archived | Way::Unchecked => {
                let clock = Clock::start();
                let level = if way == Way::Archived {
                    load_archived(slots, black_box(&f.archive))
                } else {
                    load_unchecked(slots, black_box(&f.archive))
                };
                load += clock.elapsed();
                assert_eq!(level.with(|l| checksum_archived(l)), f.sum);
                let t = Instant::now();
                drop(black_box(level));
                unload += t.elapsed();
            }
        }
    }
    (load.as_nanos() as f64, unload.as_nanos() as f64)
}

/// The median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One size, one way: its batch length and its per-load times, one per round.
struct Case {
    set: usize,
    way: Way,
    reps: u32,
    load: Vec<f64>,
    unload: Vec<f64>,
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

// ---- Callgrind ----

/// Loads and unloads `f` once each way, each step in a function of its own that
/// callgrind can count (`--toggle-collect='*profiled_*'`, then
/// `callgrind_annotate --inclusive=yes`). Each way runs once before, so malloc's arena
/// and the slots' pages are warm.
fn profile(f: &Files, slots: &Slots) {
    for way in WAYS {
        check(way, f, slots);
    }
    let heap = profiled_load_json_heap(&f.json);
    assert_eq!(checksum_heap(&heap), f.sum);
    profiled_unload_json_heap(heap);
    let heap = profiled_load_postcard_heap(&f.postcard);
    assert_eq!(checksum_heap(&heap), f.sum);
    profiled_unload_postcard_heap(heap);
    let level = profiled_load_postcard_slot(slots, &f.postcard);
    assert_eq!(level.with(checksum_slot), f.sum);
    profiled_unload_postcard_slot(level);
    let level = profiled_load_archived(slots, &f.archive);
    assert_eq!(level.with(|l| checksum_archived(l)), f.sum);
    profiled_unload_archived(level);
    let level = profiled_load_unchecked(slots, &f.archive);
    assert_eq!(level.with(|l| checksum_archived(l)), f.sum);
    profiled_unload_unchecked(level);
    // Any slot's unload, for comparison: a slot that holds one `u32`.
    let level = slots.load::<Empty>("empty", |_| 7).unwrap();
    assert_eq!(level.with(|n| *n), 7);
    profiled_unload_empty_slot(level);
}

#[inline(never)]
fn profiled_load_json_heap(bytes: &[u8]) -> HeapLevel {
    load_json_heap(black_box(bytes))
}

#[inline(never)]
fn profiled_load_postcard_heap(bytes: &[u8]) -> HeapLevel {
    load_postcard_heap(black_box(bytes))
}

#[inline(never)]
fn profiled_load_postcard_slot<'a>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, LevelRoot> {
    load_postcard_slot(slots, black_box(bytes))
}

#[inline(never)]
fn profiled_load_archived<'a>(
    slots: &'a Slots,
    bytes: &[u8],
) -> Loaded<'a, ArchivedRoot<HeapLevel>> {
    load_archived(slots, black_box(bytes))
}

#[inline(never)]
fn profiled_load_unchecked<'a>(
    slots: &'a Slots,
    bytes: &[u8],
) -> Loaded<'a, ArchivedRoot<HeapLevel>> {
    load_unchecked(slots, black_box(bytes))
}

// Each unload passes its own constant through `black_box`, so the compiler does not
// merge the functions with the same body into one symbol.

#[inline(never)]
fn profiled_unload_json_heap(level: HeapLevel) {
    black_box(1);
    drop(black_box(level));
}

#[inline(never)]
fn profiled_unload_postcard_heap(level: HeapLevel) {
    black_box(2);
    drop(black_box(level));
}

#[inline(never)]
fn profiled_unload_postcard_slot(level: Loaded<'_, LevelRoot>) {
    black_box(3);
    drop(black_box(level));
}

#[inline(never)]
fn profiled_unload_archived(level: Loaded<'_, ArchivedRoot<HeapLevel>>) {
    black_box(4);
    drop(black_box(level));
}

#[inline(never)]
fn profiled_unload_unchecked(level: Loaded<'_, ArchivedRoot<HeapLevel>>) {
    black_box(5);
    drop(black_box(level));
}

#[inline(never)]
fn profiled_unload_empty_slot(level: Loaded<'_, Empty>) {
    black_box(6);
    drop(black_box(level));
}

// ---- Memory ----

/// What the slot holds after an in-place load, with and without a build step, against
/// the archive's length.
fn print_memory(f: &Files, slots: &Slots) {
    let plain = load_archived(slots, &f.archive);
    let used = plain.used();
    drop(plain);
    let postcard = load_postcard_slot(slots, &f.postcard).used();
    let placed = Cell::new(0);
    let built = slots
        .load_archived_with::<HeapLevel, LiveRoot, &str>("built", &f.archive[..], |level, scope| {
            let before = scope.used();
            let pool = scope
                .try_new_pool_pod(level.spawns.len())
                .map_err(|_| "no room for the spawns")?;
            for s in level.spawns.iter() {
                let live = Live {
                    kind: s.kind.as_str(),
                    left: s.count.to_native(),
                };
                let _ = pool.insert(live).map_err(|_| "pool full")?.into_handle();
            }
            placed.set(scope.used() - before);
            Ok(pool)
        })
        .unwrap();
    let live = built.with(|l| {
        l.runtime
            .values()
            .map(|s| s.left as usize + s.kind.len())
            .sum::<usize>()
    });
    let want = f
        .heap
        .spawns
        .iter()
        .map(|s| s.count as usize + s.kind.len())
        .sum::<usize>();
    assert_eq!(live, want);
    let built_used = built.used();
    drop(built);
    let archive = f.archive.len();
    println!(
        "level {}: archive {archive} B; `archived` slot uses {used} B = archive + {} B; \
         with a build step (a pool of {} live spawns, {} B) {built_used} B = archive + \
         pool + {} B; `postcard_slot` uses {postcard} B",
        f.label,
        used - archive,
        f.heap.spawns.len(),
        placed.get(),
        built_used - archive - placed.get(),
    );
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let profiling = std::env::var("LEVEL_INPLACE_PROFILE").ok();
    let sets: Vec<Files> = match profiling.as_deref() {
        Some("10") => vec![files("10MB", 10 << 20)],
        Some(_) => vec![files("1MB", 1 << 20)],
        None if smoke => vec![files("1MB", 1 << 20)],
        None => vec![files("1MB", 1 << 20), files("10MB", 10 << 20)],
    };
    // Two slots, each room for the largest file (any of the three is larger than what
    // it loads into a slot) and some.
    let largest = sets
        .iter()
        .map(|f| f.json.len().max(f.archive.len()))
        .max()
        .unwrap_or(0);
    let slot_size = largest + (1 << 20);
    let mut memory = LinearAllocator::with_capacity(2 * slot_size + (1 << 20)).unwrap();
    memory.scope("bench", |game| {
        let slots = game.new_slots("levels", 2, slot_size);
        if profiling.is_some() {
            return profile(&sets[0], slots);
        }
        for f in &sets {
            println!(
                "level {}: {} entities, {} vertices, {} polygons, {} spawns; JSON {} B, \
                 postcard {} B, archive {} B",
                f.label,
                f.heap.entities.len(),
                f.heap.geometry.len(),
                f.heap.polygons.len(),
                f.heap.spawns.len(),
                f.json.len(),
                f.postcard.len(),
                f.archive.len()
            );
            for way in WAYS {
                check(way, f, slots);
            }
            print_memory(f, slots);
        }
        // The smoke run times one round of single loads, so the timed code runs too.
        let rounds: usize = if smoke {
            1
        } else {
            std::env::var("LEVEL_INPLACE_ROUNDS")
                .ok()
                .and_then(|r| r.parse().ok())
                .unwrap_or(21)
        };
        // Batches of about 30 ms per way, from one load each way (which also warms it).
        let mut cases = Vec::new();
        for (set, f) in sets.iter().enumerate() {
            for way in WAYS {
                let reps = if smoke {
                    1
                } else {
                    let (load, _) = time_way(way, f, slots, 1);
                    (30e6 / load).clamp(1.0, 10_000.0) as u32
                };
                cases.push(Case {
                    set,
                    way,
                    reps,
                    load: Vec::new(),
                    unload: Vec::new(),
                });
            }
        }
        for round in 0..rounds {
            for (set, f) in sets.iter().enumerate() {
                // The five ways of this size, starting at a different one each round.
                for k in 0..WAYS.len() {
                    let i = set * WAYS.len() + (round + k) % WAYS.len();
                    let case = &mut cases[i];
                    let (load, unload) = time_way(case.way, f, slots, case.reps);
                    case.load.push(load / case.reps as f64);
                    case.unload.push(unload / case.reps as f64);
                }
            }
        }
        print_table(&sets, &mut cases, rounds);
    });
}

/// The medians, and each way's ratio to `postcard_heap`.
fn print_table(sets: &[Files], cases: &mut [Case], rounds: usize) {
    // What an empty pair of clock reads costs, for the unload columns.
    let mut clock: Vec<f64> = (0..10_001)
        .map(|_| {
            let t = Instant::now();
            black_box(t.elapsed()).as_nanos() as f64
        })
        .collect();
    let clock = median(&mut clock);
    println!();
    println!(
        "Medians of {rounds} interleaved rounds, per load. Load: thread CPU time; unload: \
         wall time of one drop (an empty pair of clock reads: {clock:.0} ns)."
    );
    println!(
        "`vs postcard_heap`: postcard_heap's median ÷ the way's (above 1 = faster); in \
         brackets the median of the rounds' own ratios."
    );
    println!(
        "{:<6} {:<14} {:>6} {:>11} {:>20} {:>11} {:>20}",
        "level", "way", "batch", "load", "vs postcard_heap", "unload", "vs postcard_heap"
    );
    for (set, f) in sets.iter().enumerate() {
        let base = set * WAYS.len() + 1; // postcard_heap
        let (base_load, base_unload) = (cases[base].load.clone(), cases[base].unload.clone());
        let (bl, bu) = (
            median(&mut base_load.clone()),
            median(&mut base_unload.clone()),
        );
        for case in cases.iter_mut().filter(|c| c.set == set) {
            let mut load_ratios: Vec<f64> = base_load
                .iter()
                .zip(&case.load)
                .map(|(b, a)| b / a)
                .collect();
            let mut unload_ratios: Vec<f64> = base_unload
                .iter()
                .zip(&case.unload)
                .map(|(b, a)| b / a)
                .collect();
            let (l, u) = (median(&mut case.load), median(&mut case.unload));
            println!(
                "{:<6} {:<14} {:>6} {:>11} {:>20} {:>11} {:>20}",
                f.label,
                case.way.name(),
                case.reps,
                fmt_ns(l),
                format!("{:.2}x [{:.2}x]", bl / l, median(&mut load_ratios)),
                fmt_ns(u),
                format!("{:.0}x [{:.0}x]", bu / u, median(&mut unload_ratios)),
            );
        }
    }
}
