//! Levels from files: loading a level file into heap types against loading it straight
//! into a scope or a slot with `DeserializeIn` (issue 39).
//!
//! The level is generated here: entities with names, tags and component arrays, nested
//! polygon lists and a map of properties, sized to about 1 MB and 10 MB of JSON; and a
//! canada-like level (only rings of float pairs, the shape of json-benchmark's
//! `canada.json`). Each is written in JSON (`serde_json`) and in a binary format
//! (`postcard`). Each is loaded
//! four ways, in the same run:
//!
//! - `heap`: heap types with `#[derive(Deserialize)]` (`Vec`, `String`, `HashMap`);
//! - `heap_to_slot`: today's path without this feature: the heap types, copied into a
//!   slot, then dropped;
//! - `scope`: `#[derive(DeserializeIn)]` types deserialized into a scope;
//! - `slot_thread`: the same into a slot with `Slots::load_concurrent_from`, on a
//!   loader thread (the level then crosses back to the bench thread).
//!
//! Load and unload are measured apart: `load/...` times the load only (for
//! `slot_thread`, on the loader thread), `unload/...` times what ends the level
//! (dropping the heap types, closing the scope, or dropping the `Loaded` slot).
//!
//! Load times are the loading thread's CPU time (`CLOCK_THREAD_CPUTIME_ID` on Linux,
//! wall time elsewhere), so on a shared machine the time other processes held the core
//! does not count. Unload times are wall time (`Instant`), one unload at a time, so for
//! the scope and slot rows, which take well under a microsecond, they include the
//! clock read itself: read them as upper bounds.
//!
//! Run with `cargo bench -p benches --bench level_load` (add `-- --warm-up-time 1
//! --measurement-time 3` for a short run); a summary table with the ratios follows the
//! criterion output. `-- --test` runs every case once, on the small level only.

mod common;

use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use criterion::{BenchmarkId, Criterion};
use scope_stack::serde::{DeserializeIn, ScopeMap};
use scope_stack::{slot_root, LinearAllocator, Loaded, Scope, ScopeStack, Shared, Slots};
use serde::{Deserialize, Serialize};

// ---- The level as heap types ----

#[derive(Serialize, Deserialize)]
struct HeapLevel {
    name: String,
    entities: Vec<HeapEntity>,
    polygons: Vec<Vec<(f32, f32)>>,
    props: HashMap<String, f32>,
}

#[derive(Serialize, Deserialize)]
struct HeapEntity {
    name: String,
    tags: Vec<String>,
    position: [f32; 3],
    health: u32,
    components: Vec<Component>,
}

/// A component: a kind and four parameters. It places nothing, so it is the same type
/// on both sides.
#[derive(Serialize, Deserialize, DeserializeIn, Clone, Copy)]
struct Component {
    kind: u16,
    values: [f32; 4],
}

// ---- The same level in a scope ----

#[derive(DeserializeIn)]
struct Level<'s> {
    name: &'s str,
    entities: &'s [Entity<'s>],
    polygons: &'s [&'s [(f32, f32)]],
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

slot_root!(struct LevelRoot => Level);

/// Copies heap types into a scope (`heap_to_slot`): each slice is carved once, then
/// filled.
fn copy_in<'s>(s: &'s ScopeStack<'s>, heap: &HeapLevel) -> Level<'s> {
    let blank = Entity {
        name: "",
        tags: &[],
        position: [0.0; 3],
        health: 0,
        components: &[],
    };
    let entities = s.alloc_slice_fill_copy(heap.entities.len(), blank);
    for (to, from) in entities.iter_mut().zip(&heap.entities) {
        let tags = s.alloc_slice_fill_copy(from.tags.len(), "");
        for (t, f) in tags.iter_mut().zip(&from.tags) {
            *t = s.alloc_str(f);
        }
        *to = Entity {
            name: s.alloc_str(&from.name),
            tags,
            position: from.position,
            health: from.health,
            components: s.alloc_slice_copy(&from.components),
        };
    }
    let polygons = s.alloc_slice_fill_copy(heap.polygons.len(), &[][..]);
    for (to, from) in polygons.iter_mut().zip(&heap.polygons) {
        *to = s.alloc_slice_copy(from);
    }
    let props = s.alloc_slice_fill_copy(heap.props.len(), ("", 0.0f32));
    for (to, (k, v)) in props.iter_mut().zip(&heap.props) {
        *to = (s.alloc_str(k), *v);
    }
    Level {
        name: s.alloc_str(&heap.name),
        entities,
        polygons,
        props: ScopeMap::new(props),
    }
}

/// What every loaded level must add up to, so that no path skips work.
fn checksum_heap(l: &HeapLevel) -> usize {
    l.name.len()
        + l.entities
            .iter()
            .map(|e| {
                e.name.len()
                    + e.tags.len()
                    + e.components.len()
                    + e.health as usize
                    + (e.position[2] > 0.0) as usize
            })
            .sum::<usize>()
        + l.polygons.iter().map(Vec::len).sum::<usize>()
        + l.props.len()
}

fn checksum(l: &Level<'_>) -> usize {
    l.name.len()
        + l.entities
            .iter()
            .map(|e| {
                e.name.len()
                    + e.tags.len()
                    + e.components.len()
                    + e.health as usize
                    + (e.position[2] > 0.0) as usize
            })
            .sum::<usize>()
        + l.polygons.iter().map(|p| p.len()).sum::<usize>()
        + l.props.len()
}

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
}

const TAGS: &[&str] = &[
    "enemy", "friendly", "boss", "loot", "patrol", "sleeping", "flying", "water", "fire",
];

/// A level of `n` entities, `n / 2` polygons and 64 properties.
fn make_level(n: usize) -> HeapLevel {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let entities = (0..n)
        .map(|i| HeapEntity {
            name: format!("entity_{i}_{}", rng.below(10_000)),
            tags: (0..rng.below(4))
                .map(|_| TAGS[rng.below(TAGS.len() as u64) as usize].to_string())
                .collect(),
            position: [rng.float(), rng.float(), rng.float()],
            health: rng.below(1000) as u32,
            components: (0..1 + rng.below(6))
                .map(|_| Component {
                    kind: rng.below(32) as u16,
                    values: [rng.float(), rng.float(), rng.float(), rng.float()],
                })
                .collect(),
        })
        .collect();
    let polygons = (0..n / 2)
        .map(|_| {
            (0..3 + rng.below(10))
                .map(|_| (rng.float(), rng.float()))
                .collect()
        })
        .collect();
    let props = (0..64)
        .map(|i| (format!("property_{i}"), rng.float()))
        .collect();
    HeapLevel {
        name: "generated level".to_string(),
        entities,
        polygons,
        props,
    }
}

/// A canada-like level (the shape of serde-rs/json-benchmark's `canada.json`): no
/// entities, no properties, and 480 rings of 10 to 450 float pairs, about 2 MB of JSON.
/// Every ring is a list of elements that place nothing, whose length postcard gives.
fn make_canada() -> HeapLevel {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let polygons = (0..480)
        .map(|_| {
            (0..10 + rng.below(441))
                .map(|_| (rng.float(), rng.float()))
                .collect()
        })
        .collect();
    HeapLevel {
        name: "canada".to_string(),
        entities: Vec::new(),
        polygons,
        props: HashMap::new(),
    }
}

/// A level file in both formats.
struct Files {
    label: &'static str,
    json: Vec<u8>,
    binary: Vec<u8>,
    /// What the level adds up to (see `checksum`).
    sum: usize,
    entities: usize,
}

/// A level whose JSON is about `bytes` long.
fn files(label: &'static str, bytes: usize) -> Files {
    let probe = serde_json::to_vec(&make_level(1000)).unwrap().len();
    files_of(label, make_level(bytes * 1000 / probe))
}

/// The files of `level`.
fn files_of(label: &'static str, level: HeapLevel) -> Files {
    Files {
        label,
        json: serde_json::to_vec(&level).unwrap(),
        binary: postcard::to_allocvec(&level).unwrap(),
        sum: checksum_heap(&level),
        entities: level.entities.len(),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Json,
    Binary,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Binary => "postcard",
        }
    }
    fn bytes(self, f: &Files) -> &[u8] {
        match self {
            Format::Json => &f.json,
            Format::Binary => &f.binary,
        }
    }
}

fn heap_load(format: Format, bytes: &[u8]) -> HeapLevel {
    match format {
        Format::Json => serde_json::from_slice(bytes).unwrap(),
        Format::Binary => postcard::from_bytes(bytes).unwrap(),
    }
}

fn scope_load<'s>(format: Format, s: &ScopeStack<'s>, bytes: &[u8]) -> Level<'s> {
    match format {
        Format::Json => s
            .deserialize(&mut serde_json::Deserializer::from_slice(bytes))
            .unwrap(),
        Format::Binary => s
            .deserialize(&mut postcard::Deserializer::from_bytes(bytes))
            .unwrap(),
    }
}

fn slot_load<'a>(format: Format, slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, LevelRoot, Shared> {
    match format {
        Format::Json => slots
            .load_concurrent_from::<LevelRoot, _>(
                "level",
                &mut serde_json::Deserializer::from_slice(bytes),
            )
            .unwrap(),
        Format::Binary => slots
            .load_concurrent_from::<LevelRoot, _>(
                "level",
                &mut postcard::Deserializer::from_bytes(bytes),
            )
            .unwrap(),
    }
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

const WAYS: [&str; 4] = ["heap", "heap_to_slot", "scope", "slot_thread"];

/// One load (`unload == false`) or unload of `files` in `format`, the way `way` does
/// it, `iters` times; returns the time of the measured part.
fn run(
    way: &str,
    format: Format,
    files: &Files,
    memory: &mut Scope<'_, '_>,
    slots: &Slots,
    iters: u64,
    unload: bool,
) -> Duration {
    let bytes = format.bytes(files);
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        match way {
            "heap" => {
                let clock = Clock::start();
                let level = heap_load(format, bytes);
                let load = clock.elapsed();
                assert_eq!(checksum_heap(&level), files.sum);
                let t = Instant::now();
                drop(black_box(level));
                total += if unload { t.elapsed() } else { load };
            }
            "heap_to_slot" => {
                let clock = Clock::start();
                let heap = heap_load(format, bytes);
                let level = slots
                    .load::<LevelRoot>("level", |s| copy_in(s, &heap))
                    .unwrap();
                drop(heap);
                let load = clock.elapsed();
                assert_eq!(level.with(checksum), files.sum);
                let t = Instant::now();
                drop(black_box(level));
                total += if unload { t.elapsed() } else { load };
            }
            "scope" => {
                let mut load = Duration::ZERO;
                let mut t = Instant::now();
                memory.scope("level", |s| {
                    let clock = Clock::start();
                    let level = scope_load(format, s, bytes);
                    load = clock.elapsed();
                    assert_eq!(checksum(&level), files.sum);
                    black_box(&level);
                    t = Instant::now();
                });
                total += if unload { t.elapsed() } else { load };
            }
            "slot_thread" => {
                let (level, load) = std::thread::scope(|th| {
                    th.spawn(|| {
                        let clock = Clock::start();
                        let level = slot_load(format, slots, bytes);
                        (level, clock.elapsed())
                    })
                    .join()
                    .unwrap()
                });
                assert_eq!(level.with(checksum), files.sum);
                let t = Instant::now();
                drop(black_box(level));
                total += if unload { t.elapsed() } else { load };
            }
            _ => unreachable!(),
        }
    }
    total
}

/// Loads the 1 MB level once in `format`, into heap types and into a scope, each
/// inside a function of its own that callgrind can count alone
/// (`scripts/level_profile.sh`, run with `LEVEL_LOAD_PROFILE=json` or `postcard`).
fn profile(format: Format) {
    // `LEVEL_LOAD_LEVEL=canada` profiles the canada-like level instead.
    let f = match std::env::var("LEVEL_LOAD_LEVEL").as_deref() {
        Ok("canada") => files_of("canada", make_canada()),
        _ => files("1MB", 1 << 20),
    };
    let mut memory = LinearAllocator::with_capacity(8 << 20).unwrap();
    memory.scope("profile", |s| {
        {
            // The heap types first, once to warm malloc's arena and once counted, so
            // their count does not depend on what the scope's code allocated before.
            drop(black_box(heap_load(format, format.bytes(&f))));
            let heap = profiled_heap_load(format, format.bytes(&f));
            assert_eq!(checksum_heap(&heap), f.sum);
            drop(heap);
            // Once before, so the thread's staging block is reserved outside the count.
            s.scope("warm", |w| {
                black_box(checksum(&scope_load(format, w, format.bytes(&f))))
            });
            s.scope("level", |l| {
                let level = profiled_scope_load(format, l, format.bytes(&f));
                assert_eq!(checksum(&level), f.sum);
            });
        }
    });
}

#[inline(never)]
fn profiled_heap_load(format: Format, bytes: &[u8]) -> HeapLevel {
    heap_load(format, black_box(bytes))
}

#[inline(never)]
fn profiled_scope_load<'s>(format: Format, s: &ScopeStack<'s>, bytes: &[u8]) -> Level<'s> {
    scope_load(format, s, black_box(bytes))
}

fn main() {
    if let Ok(format) = std::env::var("LEVEL_LOAD_PROFILE") {
        return profile(if format == "json" {
            Format::Json
        } else {
            Format::Binary
        });
    }
    let started = SystemTime::now();
    let smoke = std::env::args().any(|a| a == "--test");
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let sets: Vec<Files> = if smoke {
        vec![files("1MB", 1 << 20), files_of("canada", make_canada())]
    } else {
        vec![
            files("1MB", 1 << 20),
            files_of("canada", make_canada()),
            files("10MB", 10 << 20),
        ]
    };
    for f in &sets {
        println!(
            "level {}: {} entities, JSON {} bytes, postcard {} bytes",
            f.label,
            f.entities,
            f.json.len(),
            f.binary.len()
        );
    }
    // Room for the largest level twice over, in a scope and in each of two slots.
    let largest = sets.iter().map(|f| f.json.len()).max().unwrap_or(0);
    let mut memory = LinearAllocator::with_capacity(6 * largest + (16 << 20)).unwrap();
    let mut cases = Vec::new();
    memory.scope("bench", |game| {
        let slots = game.new_slots("levels", 2, largest + (4 << 20));
        // What a loaded level takes in its scope, in each format (a sequence longer
        // than the thread's first staging block moves to a larger one, so the scope
        // holds the data alone at every size).
        for f in &sets {
            for format in [Format::Json, Format::Binary] {
                let used = game.scope("probe", |s| {
                    let level = scope_load(format, s, format.bytes(f));
                    assert_eq!(checksum(&level), f.sum);
                    s.used()
                });
                println!(
                    "level {} from {}: {:.2} MB in its scope",
                    f.label,
                    format.name(),
                    used as f64 / 1e6
                );
            }
        }
        for f in &sets {
            for format in [Format::Json, Format::Binary] {
                for phase in ["load", "unload"] {
                    let group_name = format!("level_load/{phase}/{}/{}", format.name(), f.label);
                    let mut group = c.benchmark_group(&group_name);
                    for way in WAYS {
                        group.bench_function(BenchmarkId::from_parameter(way), |b| {
                            b.iter_custom(|iters| {
                                run(way, format, f, game, slots, iters, phase == "unload")
                            })
                        });
                    }
                    group.finish();
                    cases.push(group_name);
                }
            }
        }
    });
    c.final_summary();
    print_table(&cases, started);
}

/// Prints each group's medians and each way's ratio to `heap`.
fn print_table(groups: &[String], started: SystemTime) {
    if !common::measuring() {
        return;
    }
    let Some(dir) = common::criterion_dir() else {
        return;
    };
    println!();
    println!(
        "Medians; loads: ratio to `heap` (below 1 = faster); unloads: times faster than `heap`:"
    );
    println!(
        "{:<36} {:>12} {:>12} {:>12} {:>12}",
        "group", WAYS[0], WAYS[1], WAYS[2], WAYS[3]
    );
    for group in groups {
        let ns: Vec<Option<f64>> = WAYS
            .iter()
            .map(|w| common::fresh_median(&dir, group, w, started))
            .collect();
        let cell = |v: Option<f64>| match v {
            Some(ns) if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
            Some(ns) if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
            Some(ns) => format!("{ns:.0} ns"),
            None => "-".to_string(),
        };
        // Loads: the way's time over heap's (below 1 = faster). Unloads: how many
        // times faster than dropping the heap types.
        let unload = group.contains("/unload/");
        let ratio = |v: Option<f64>| match (v, ns[0]) {
            (Some(a), Some(b)) if unload => format!("{:.0}x", b / a),
            (Some(a), Some(b)) => format!("{:.3}", a / b),
            _ => "-".to_string(),
        };
        println!(
            "{:<36} {:>12} {:>12} {:>12} {:>12}",
            group,
            cell(ns[0]),
            cell(ns[1]),
            cell(ns[2]),
            cell(ns[3])
        );
        println!(
            "{:<36} {:>12} {:>12} {:>12} {:>12}",
            if unload {
                "  speedup over heap"
            } else {
                "  ratio to heap"
            },
            "1",
            ratio(ns[1]),
            ratio(ns[2]),
            ratio(ns[3])
        );
    }
}
