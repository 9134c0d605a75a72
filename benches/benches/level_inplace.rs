//! Levels in place (issue 49, item 5): two level shapes, each loaded five ways,
//! interleaved, in one run.
//!
//! The two shapes, each sized to about 1 MB and 10 MB of JSON:
//!
//! - the entity level (`HeapLevel`, labelled `1MB` and `10MB`): `level_load`'s generated
//!   shape (entities with names, tags, a position and component arrays; nested polygon
//!   lists of float pairs; a map of properties) plus a geometry list of float triples
//!   and a spawn table: many small strings and lists, about one per 40 archive bytes;
//! - the geometry level (`HeapWorld`, labelled `geo1MB` and `geo10MB`), as an engine
//!   cooks a cell of a streamed world: named meshes (positions and normals as
//!   `Vec<[f32; 3]>`, triangle indices as `Vec<u32>`, 128–639 vertices each, a few
//!   hundred meshes at 10 MB), a navigation grid (`Vec<u16>`, 256 cells per mesh) and six
//!   spawn tables: few, long lists, one string or list per 1.9 KB of archive at 1 MB and
//!   per 4.1 KB at 10 MB.
//!
//! Each level is written once at the start as JSON (`serde_json`), postcard and rkyv's
//! archived form (`rkyv::to_bytes`), all three from the same heap value. The five ways:
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
//! level (both shapes, both sizes) is loaded every way, a batch of loads per way (about
//! 30 ms, at least one load), the five ways in an order that rotates from round to
//! round. A load's time is the loading thread's CPU time (`CLOCK_THREAD_CPUTIME_ID` on
//! Linux), so time another process held the core does not count; an unload's (dropping
//! the heap types, or the `Loaded`) is wall time (`Instant`) of that one drop, so for
//! the slots, which unload in tens of nanoseconds, it includes a clock read: read those
//! as upper bounds (the table prints the cost of an empty pair of clock reads beside
//! them). The table gives the medians over rounds (per load), each way's ratio to
//! `postcard_heap` on the same level and the median of the rounds' own ratios.
//!
//! It also prints, for each level, the files' lengths, what each slot holds
//! (`Loaded::used`) against the archive's length, and the same for a load with a build
//! step (`load_archived_with`, a pool of live spawns filled from the archived spawn
//! tables): the slot should hold the archive, what the build step placed, and the root.
//!
//! `LEVEL_INPLACE_PROFILE=1` (or `=10` for the 10 MB entity level, `=geo1` and `=geo10`
//! for the geometry level) loads and unloads that one level once each way inside
//! `profiled_*` functions, for callgrind (docs/PERFORMANCE.md, "Levels in place
//! (issue 49)", has the command).
//!
//! Run: `cargo bench -p benches --profile release --bench level_inplace`. CI's smoke run,
//! `-- --test`, takes the two 1 MB levels only: it checks every way once on each, prints
//! the memory lines, then times one round of one load per way.

mod common;

use std::cell::Cell;
use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use rkyv::api::high::{HighSerializer, HighValidator};
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor::Error as RkyvError;
use rkyv::ser::allocator::ArenaHandle;
use rkyv::util::AlignedVec;
use scope_stack::inplace::ArchivedRoot;
use scope_stack::serde::{DeserializeIn, ScopeMap};
use scope_stack::{slot_root, LinearAllocator, Loaded, Pool, SlotRoot, Slots};
use serde::de::DeserializeOwned;
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
    /// A normal's component: -1 to 1 in steps of 1/1024.
    fn unit(&mut self) -> f32 {
        (self.below(2048) as f32) / 1024.0 - 1.0
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

// ---- The geometry level: a cell of a streamed world ----

#[derive(Serialize, Deserialize, rkyv::Archive, rkyv::Serialize)]
struct HeapWorld {
    name: String,
    meshes: Vec<HeapMesh>,
    nav: HeapNav,
    spawn_tables: Vec<HeapSpawnTable>,
}

#[derive(Serialize, Deserialize, rkyv::Archive, rkyv::Serialize)]
struct HeapMesh {
    name: String,
    /// The smallest and the largest corner.
    bounds: [[f32; 3]; 2],
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    /// Three per triangle.
    indices: Vec<u32>,
}

#[derive(Serialize, Deserialize, rkyv::Archive, rkyv::Serialize)]
struct HeapNav {
    width: u32,
    height: u32,
    /// One cost per cell, row by row.
    cells: Vec<u16>,
}

#[derive(Serialize, Deserialize, rkyv::Archive, rkyv::Serialize)]
struct HeapSpawnTable {
    name: String,
    spawns: Vec<HeapSpawn>,
}

#[derive(DeserializeIn)]
struct World<'s> {
    name: &'s str,
    meshes: &'s [Mesh<'s>],
    nav: Nav<'s>,
    spawn_tables: &'s [SpawnTable<'s>],
}

#[derive(DeserializeIn, Clone, Copy)]
struct Mesh<'s> {
    name: &'s str,
    bounds: [[f32; 3]; 2],
    positions: &'s [[f32; 3]],
    normals: &'s [[f32; 3]],
    indices: &'s [u32],
}

#[derive(DeserializeIn, Clone, Copy)]
struct Nav<'s> {
    width: u32,
    height: u32,
    cells: &'s [u16],
}

#[derive(DeserializeIn, Clone, Copy)]
struct SpawnTable<'s> {
    name: &'s str,
    spawns: &'s [Spawn<'s>],
}

slot_root!(struct WorldRoot => World);

type ArchivedWorld = rkyv::Archived<HeapWorld>;

const MESH_KINDS: &[&str] = &["rock", "wall", "tree", "bridge", "house", "cliff", "ruin"];

/// A world cell of `n` meshes (128–639 vertices each, two triangles per vertex), a
/// navigation grid of `256 n` cells and six spawn tables.
fn make_world(n: usize) -> HeapWorld {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let meshes = (0..n)
        .map(|i| {
            let vertices = 128 + rng.below(512) as usize;
            let positions: Vec<[f32; 3]> = (0..vertices).map(|_| rng.triple()).collect();
            let normals = (0..vertices)
                .map(|_| [rng.unit(), rng.unit(), rng.unit()])
                .collect();
            let indices = (0..6 * vertices)
                .map(|_| rng.below(vertices as u64) as u32)
                .collect();
            let mut bounds = [positions[0], positions[0]];
            for p in &positions {
                for k in 0..3 {
                    bounds[0][k] = bounds[0][k].min(p[k]);
                    bounds[1][k] = bounds[1][k].max(p[k]);
                }
            }
            HeapMesh {
                name: format!(
                    "{}_{i:04}",
                    MESH_KINDS[rng.below(MESH_KINDS.len() as u64) as usize]
                ),
                bounds,
                positions,
                normals,
                indices,
            }
        })
        .collect();
    let (width, height) = (128, 2 * n.max(1) as u32);
    let nav = HeapNav {
        width,
        height,
        cells: (0..width * height)
            .map(|_| rng.below(1024) as u16)
            .collect(),
    };
    let spawn_tables = (0..6)
        .map(|t| HeapSpawnTable {
            name: format!("spawn_table_{t}"),
            spawns: (0..16 + rng.below(32))
                .map(|_| HeapSpawn {
                    kind: KINDS[rng.below(KINDS.len() as u64) as usize].to_string(),
                    at: rng.triple(),
                    count: 1 + rng.below(12) as u32,
                    waves: (0..1 + rng.below(4))
                        .map(|_| rng.below(20) as u16)
                        .collect(),
                })
                .collect(),
        })
        .collect();
    HeapWorld {
        name: "streamed world cell".to_string(),
        meshes,
        nav,
        spawn_tables,
    }
}

// ---- The two shapes behind one trait ----

/// A level shape: its heap type (`Self`, cooked to all three files), its slot type
/// (from postcard) and the checks of each family.
trait Shape:
    Serialize
    + DeserializeOwned
    + for<'a> rkyv::Serialize<HighSerializer<AlignedVec, ArenaHandle<'a>, RkyvError>>
    + rkyv::Archive<Archived: for<'a> CheckBytes<HighValidator<'a, RkyvError>>>
    + 'static
{
    /// The same level in a slot, from postcard.
    type Slot: SlotRoot;
    /// The size parameter of the probe from which `files` scales.
    const PROBE: usize;
    /// The level of size parameter `n`, the same every run.
    fn make(n: usize) -> Self;
    /// Its counts, for the files line.
    fn describe(&self) -> String;
    fn load_slot<'a>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, Self::Slot>;
    /// What the level adds up to, so that no way skips work; each family's checksum
    /// reads the same parts.
    fn checksum(&self) -> usize;
    fn checksum_slot(l: &<Self::Slot as SlotRoot>::Of<'_>) -> usize;
    fn checksum_archived(l: &rkyv::Archived<Self>) -> usize;
    /// Every field of `l` equals `self`'s.
    fn same_heap(&self, l: &Self) -> bool;
    fn same_slot(&self, l: &<Self::Slot as SlotRoot>::Of<'_>) -> bool;
    fn same_archived(&self, l: &rkyv::Archived<Self>) -> bool;
    /// The spawns the build step turns into live ones.
    fn spawns(&self) -> impl Iterator<Item = &HeapSpawn>;
    fn archived_spawns(l: &rkyv::Archived<Self>) -> impl Iterator<Item = &ArchivedHeapSpawn>;
}

impl Shape for HeapLevel {
    type Slot = LevelRoot;
    const PROBE: usize = 1000;
    fn make(n: usize) -> Self {
        make_level(n)
    }
    fn describe(&self) -> String {
        format!(
            "{} entities, {} vertices, {} polygons, {} spawns",
            self.entities.len(),
            self.geometry.len(),
            self.polygons.len(),
            self.spawns.len()
        )
    }
    fn load_slot<'a>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, LevelRoot> {
        slots
            .load_from::<LevelRoot, _>("level", &mut postcard::Deserializer::from_bytes(bytes))
            .unwrap()
    }
    fn checksum(&self) -> usize {
        checksum_heap(self)
    }
    fn checksum_slot(l: &Level<'_>) -> usize {
        checksum_slot(l)
    }
    fn checksum_archived(l: &Archived) -> usize {
        checksum_archived(l)
    }
    fn same_heap(&self, l: &Self) -> bool {
        same_heap(self, l)
    }
    fn same_slot(&self, l: &Level<'_>) -> bool {
        same_slot(self, l)
    }
    fn same_archived(&self, l: &Archived) -> bool {
        same_archived(self, l)
    }
    fn spawns(&self) -> impl Iterator<Item = &HeapSpawn> {
        self.spawns.iter()
    }
    fn archived_spawns(l: &Archived) -> impl Iterator<Item = &ArchivedHeapSpawn> {
        l.spawns.iter()
    }
}

impl Shape for HeapWorld {
    type Slot = WorldRoot;
    const PROBE: usize = 20;
    fn make(n: usize) -> Self {
        make_world(n)
    }
    fn describe(&self) -> String {
        let vertices: usize = self.meshes.iter().map(|m| m.positions.len()).sum();
        let triangles: usize = self.meshes.iter().map(|m| m.indices.len() / 3).sum();
        format!(
            "{} meshes, {vertices} vertices, {triangles} triangles, a {}x{} navigation \
             grid, {} spawn tables of {} spawns",
            self.meshes.len(),
            self.nav.width,
            self.nav.height,
            self.spawn_tables.len(),
            self.spawns().count()
        )
    }
    fn load_slot<'a>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, WorldRoot> {
        slots
            .load_from::<WorldRoot, _>("world", &mut postcard::Deserializer::from_bytes(bytes))
            .unwrap()
    }
    fn checksum(&self) -> usize {
        checksum_world_heap(self)
    }
    fn checksum_slot(l: &World<'_>) -> usize {
        checksum_world_slot(l)
    }
    fn checksum_archived(l: &ArchivedWorld) -> usize {
        checksum_world_archived(l)
    }
    fn same_heap(&self, l: &Self) -> bool {
        same_world_heap(self, l)
    }
    fn same_slot(&self, l: &World<'_>) -> bool {
        same_world_slot(self, l)
    }
    fn same_archived(&self, l: &ArchivedWorld) -> bool {
        same_world_archived(self, l)
    }
    fn spawns(&self) -> impl Iterator<Item = &HeapSpawn> {
        self.spawn_tables.iter().flat_map(|t| &t.spawns)
    }
    fn archived_spawns(l: &ArchivedWorld) -> impl Iterator<Item = &ArchivedHeapSpawn> {
        l.spawn_tables.iter().flat_map(|t| t.spawns.iter())
    }
}

/// A level in its three files.
struct Files<T> {
    label: &'static str,
    json: Vec<u8>,
    postcard: Vec<u8>,
    archive: Vec<u8>,
    /// The value the files were written from, to check every way against.
    heap: T,
    /// What the level adds up to (see `Shape::checksum`).
    sum: usize,
}

/// A level of shape `T` whose JSON is about `bytes` long.
fn files<T: Shape>(label: &'static str, bytes: usize) -> Files<T> {
    let probe = serde_json::to_vec(&T::make(T::PROBE)).unwrap().len();
    let heap = T::make(bytes * T::PROBE / probe);
    Files {
        label,
        json: serde_json::to_vec(&heap).unwrap(),
        postcard: postcard::to_allocvec(&heap).unwrap(),
        archive: rkyv::to_bytes::<RkyvError>(&heap).unwrap().into_vec(),
        sum: heap.checksum(),
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

// ---- The geometry level's checks ----

fn checksum_world_heap(w: &HeapWorld) -> usize {
    w.name.len()
        + w.meshes
            .iter()
            .map(|m| {
                m.name.len()
                    + m.positions.iter().filter(|p| p[1] > 0.0).count()
                    + m.normals.iter().filter(|n| n[2] > 0.0).count()
                    + m.indices.len()
                    + m.indices.last().map_or(0, |&i| i as usize)
                    + (m.bounds[1][0] > m.bounds[0][0]) as usize
            })
            .sum::<usize>()
        + (w.nav.width + w.nav.height) as usize
        + w.nav.cells.iter().filter(|&&c| c > 512).count()
        + w.spawn_tables
            .iter()
            .flat_map(|t| t.spawns.iter().map(|s| (t.name.len(), s)))
            .map(|(n, s)| n + s.kind.len() + s.count as usize + s.waves.len())
            .sum::<usize>()
}

fn checksum_world_slot(w: &World<'_>) -> usize {
    w.name.len()
        + w.meshes
            .iter()
            .map(|m| {
                m.name.len()
                    + m.positions.iter().filter(|p| p[1] > 0.0).count()
                    + m.normals.iter().filter(|n| n[2] > 0.0).count()
                    + m.indices.len()
                    + m.indices.last().map_or(0, |&i| i as usize)
                    + (m.bounds[1][0] > m.bounds[0][0]) as usize
            })
            .sum::<usize>()
        + (w.nav.width + w.nav.height) as usize
        + w.nav.cells.iter().filter(|&&c| c > 512).count()
        + w.spawn_tables
            .iter()
            .flat_map(|t| t.spawns.iter().map(|s| (t.name.len(), s)))
            .map(|(n, s)| n + s.kind.len() + s.count as usize + s.waves.len())
            .sum::<usize>()
}

fn checksum_world_archived(w: &ArchivedWorld) -> usize {
    w.name.len()
        + w.meshes
            .iter()
            .map(|m| {
                m.name.len()
                    + m.positions
                        .iter()
                        .filter(|p| p[1].to_native() > 0.0)
                        .count()
                    + m.normals.iter().filter(|n| n[2].to_native() > 0.0).count()
                    + m.indices.len()
                    + m.indices.last().map_or(0, |i| i.to_native() as usize)
                    + (m.bounds[1][0].to_native() > m.bounds[0][0].to_native()) as usize
            })
            .sum::<usize>()
        + (w.nav.width.to_native() + w.nav.height.to_native()) as usize
        + w.nav.cells.iter().filter(|c| c.to_native() > 512).count()
        + w.spawn_tables
            .iter()
            .flat_map(|t| t.spawns.iter().map(|s| (t.name.len(), s)))
            .map(|(n, s)| n + s.kind.len() + s.count.to_native() as usize + s.waves.len())
            .sum::<usize>()
}

/// Every field of `w` (loaded into heap types) equals `want`'s.
fn same_world_heap(want: &HeapWorld, w: &HeapWorld) -> bool {
    let meshes = want.meshes.len() == w.meshes.len()
        && want.meshes.iter().zip(&w.meshes).all(|(a, b)| {
            a.name == b.name
                && a.bounds == b.bounds
                && a.positions == b.positions
                && a.normals == b.normals
                && a.indices == b.indices
        });
    let tables = want.spawn_tables.len() == w.spawn_tables.len()
        && want.spawn_tables.iter().zip(&w.spawn_tables).all(|(a, b)| {
            a.name == b.name
                && a.spawns.len() == b.spawns.len()
                && a.spawns.iter().zip(&b.spawns).all(|(x, y)| {
                    x.kind == y.kind && x.at == y.at && x.count == y.count && x.waves == y.waves
                })
        });
    want.name == w.name
        && meshes
        && want.nav.width == w.nav.width
        && want.nav.height == w.nav.height
        && want.nav.cells == w.nav.cells
        && tables
}

/// Every field of `w` (loaded into a slot from postcard) equals `want`'s.
fn same_world_slot(want: &HeapWorld, w: &World<'_>) -> bool {
    let meshes = want.meshes.len() == w.meshes.len()
        && want.meshes.iter().zip(w.meshes).all(|(a, b)| {
            a.name == b.name
                && a.bounds == b.bounds
                && a.positions[..] == b.positions[..]
                && a.normals[..] == b.normals[..]
                && a.indices[..] == b.indices[..]
        });
    let tables = want.spawn_tables.len() == w.spawn_tables.len()
        && want.spawn_tables.iter().zip(w.spawn_tables).all(|(a, b)| {
            a.name == b.name
                && a.spawns.len() == b.spawns.len()
                && a.spawns.iter().zip(b.spawns).all(|(x, y)| {
                    x.kind == y.kind
                        && x.at == y.at
                        && x.count == y.count
                        && x.waves[..] == y.waves[..]
                })
        });
    want.name == w.name
        && meshes
        && want.nav.width == w.nav.width
        && want.nav.height == w.nav.height
        && want.nav.cells[..] == w.nav.cells[..]
        && tables
}

/// Every field of `w` (read in place from the archive) equals `want`'s.
fn same_world_archived(want: &HeapWorld, w: &ArchivedWorld) -> bool {
    let triple = |a: &[f32; 3], b: &[rkyv::Archived<f32>; 3]| {
        a.iter().zip(b).all(|(x, y)| *x == y.to_native())
    };
    let triples = |a: &[[f32; 3]], b: &[[rkyv::Archived<f32>; 3]]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| triple(x, y))
    };
    let meshes = want.meshes.len() == w.meshes.len()
        && want.meshes.iter().zip(w.meshes.iter()).all(|(a, b)| {
            a.name == b.name.as_str()
                && triples(&a.bounds, &b.bounds)
                && triples(&a.positions, &b.positions)
                && triples(&a.normals, &b.normals)
                && a.indices.len() == b.indices.len()
                && a.indices
                    .iter()
                    .zip(b.indices.iter())
                    .all(|(x, y)| *x == y.to_native())
        });
    let tables = want.spawn_tables.len() == w.spawn_tables.len()
        && want
            .spawn_tables
            .iter()
            .zip(w.spawn_tables.iter())
            .all(|(a, b)| {
                a.name == b.name.as_str()
                    && a.spawns.len() == b.spawns.len()
                    && a.spawns.iter().zip(b.spawns.iter()).all(|(x, y)| {
                        x.kind == y.kind.as_str()
                            && triple(&x.at, &y.at)
                            && x.count == y.count.to_native()
                            && x.waves.len() == y.waves.len()
                            && x.waves
                                .iter()
                                .zip(y.waves.iter())
                                .all(|(p, q)| *p == q.to_native())
                    })
            });
    let nav = want.nav.width == w.nav.width.to_native()
        && want.nav.height == w.nav.height.to_native()
        && want.nav.cells.len() == w.nav.cells.len()
        && want
            .nav
            .cells
            .iter()
            .zip(w.nav.cells.iter())
            .all(|(x, y)| *x == y.to_native());
    want.name == w.name.as_str() && meshes && nav && tables
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

fn load_json_heap<T: Shape>(bytes: &[u8]) -> T {
    serde_json::from_slice(bytes).unwrap()
}

fn load_postcard_heap<T: Shape>(bytes: &[u8]) -> T {
    postcard::from_bytes(bytes).unwrap()
}

fn load_postcard_slot<'a, T: Shape>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, T::Slot> {
    T::load_slot(slots, bytes)
}

fn load_archived<'a, T: Shape>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, ArchivedRoot<T>> {
    slots.load_archived::<T>("level", bytes).unwrap()
}

fn load_unchecked<'a, T: Shape>(slots: &'a Slots, bytes: &[u8]) -> Loaded<'a, ArchivedRoot<T>> {
    // SAFETY: `bytes` is `Files::archive`, written by `rkyv::to_bytes` for a `T` in this
    // very build, unaltered.
    unsafe { slots.load_archived_unchecked::<T>("level", bytes) }.unwrap()
}

/// Loads `f` once `way`, checks it against the heap value field by field, unloads it.
fn check<T: Shape>(way: Way, f: &Files<T>, slots: &Slots) {
    let ok = match way {
        Way::JsonHeap => f.heap.same_heap(&load_json_heap::<T>(&f.json)),
        Way::PostcardHeap => f.heap.same_heap(&load_postcard_heap::<T>(&f.postcard)),
        Way::PostcardSlot => {
            load_postcard_slot::<T>(slots, &f.postcard).with(|l| f.heap.same_slot(l))
        }
        Way::Archived => load_archived::<T>(slots, &f.archive).with(|l| f.heap.same_archived(l)),
        Way::Unchecked => load_unchecked::<T>(slots, &f.archive).with(|l| f.heap.same_archived(l)),
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
fn time_way<T: Shape>(way: Way, f: &Files<T>, slots: &Slots, reps: u32) -> (f64, f64) {
    let (mut load, mut unload) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..reps {
        match way {
            Way::JsonHeap | Way::PostcardHeap => {
                let clock = Clock::start();
                let level = if way == Way::JsonHeap {
                    load_json_heap::<T>(black_box(&f.json))
                } else {
                    load_postcard_heap::<T>(black_box(&f.postcard))
                };
                load += clock.elapsed();
                assert_eq!(level.checksum(), f.sum);
                let t = Instant::now();
                drop(black_box(level));
                unload += t.elapsed();
            }
            Way::PostcardSlot => {
                let clock = Clock::start();
                let level = load_postcard_slot::<T>(slots, black_box(&f.postcard));
                load += clock.elapsed();
                assert_eq!(level.with(|l| T::checksum_slot(l)), f.sum);
                let t = Instant::now();
                drop(black_box(level));
                unload += t.elapsed();
            }
            Way::Archived | Way::Unchecked => {
                let clock = Clock::start();
                let level = if way == Way::Archived {
                    load_archived::<T>(slots, black_box(&f.archive))
                } else {
                    load_unchecked::<T>(slots, black_box(&f.archive))
                };
                load += clock.elapsed();
                assert_eq!(level.with(|l| T::checksum_archived(l)), f.sum);
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

/// One level, one way: its batch length and its per-load times, one per round.
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

// ---- The levels of both shapes, side by side ----

/// One level's files, whatever its shape, for the run's list.
trait Set {
    fn label(&self) -> &'static str;
    /// The longest of its files.
    fn largest(&self) -> usize;
    /// Its counts and its files' lengths.
    fn print_files(&self);
    fn check(&self, way: Way, slots: &Slots);
    fn print_memory(&self, slots: &Slots);
    fn time(&self, way: Way, slots: &Slots, reps: u32) -> (f64, f64);
    fn profile(&self, slots: &Slots);
}

impl<T: Shape> Set for Files<T> {
    fn label(&self) -> &'static str {
        self.label
    }
    fn largest(&self) -> usize {
        self.json.len().max(self.archive.len())
    }
    fn print_files(&self) {
        println!(
            "level {}: {}; JSON {} B, postcard {} B, archive {} B",
            self.label,
            self.heap.describe(),
            self.json.len(),
            self.postcard.len(),
            self.archive.len()
        );
    }
    fn check(&self, way: Way, slots: &Slots) {
        check(way, self, slots);
    }
    fn print_memory(&self, slots: &Slots) {
        print_memory(self, slots);
    }
    fn time(&self, way: Way, slots: &Slots, reps: u32) -> (f64, f64) {
        time_way(way, self, slots, reps)
    }
    fn profile(&self, slots: &Slots) {
        profile(self, slots);
    }
}

// ---- Callgrind ----

/// Loads and unloads `f` once each way, each step in a function of its own that
/// callgrind can count (`--toggle-collect='*profiled_*'`, then
/// `callgrind_annotate --inclusive=yes`). Each way runs once before, so malloc's arena
/// and the slots' pages are warm.
fn profile<T: Shape>(f: &Files<T>, slots: &Slots) {
    for way in WAYS {
        check(way, f, slots);
    }
    let heap = profiled_load_json_heap::<T>(&f.json);
    assert_eq!(heap.checksum(), f.sum);
    profiled_unload_json_heap(heap);
    let heap = profiled_load_postcard_heap::<T>(&f.postcard);
    assert_eq!(heap.checksum(), f.sum);
    profiled_unload_postcard_heap(heap);
    let level = profiled_load_postcard_slot::<T>(slots, &f.postcard);
    assert_eq!(level.with(|l| T::checksum_slot(l)), f.sum);
    profiled_unload_postcard_slot(level);
    let level = profiled_load_archived::<T>(slots, &f.archive);
    assert_eq!(level.with(|l| T::checksum_archived(l)), f.sum);
    profiled_unload_archived(level);
    let level = profiled_load_unchecked::<T>(slots, &f.archive);
    assert_eq!(level.with(|l| T::checksum_archived(l)), f.sum);
    profiled_unload_unchecked(level);
    // Any slot's unload, for comparison: a slot that holds one `u32`.
    let level = slots.load::<Empty>("empty", |_| 7).unwrap();
    assert_eq!(level.with(|n| *n), 7);
    profiled_unload_empty_slot(level);
}

#[inline(never)]
fn profiled_load_json_heap<T: Shape>(bytes: &[u8]) -> T {
    load_json_heap(black_box(bytes))
}

#[inline(never)]
fn profiled_load_postcard_heap<T: Shape>(bytes: &[u8]) -> T {
    load_postcard_heap(black_box(bytes))
}

#[inline(never)]
fn profiled_load_postcard_slot<'a, T: Shape>(
    slots: &'a Slots,
    bytes: &[u8],
) -> Loaded<'a, T::Slot> {
    load_postcard_slot::<T>(slots, black_box(bytes))
}

#[inline(never)]
fn profiled_load_archived<'a, T: Shape>(
    slots: &'a Slots,
    bytes: &[u8],
) -> Loaded<'a, ArchivedRoot<T>> {
    load_archived(slots, black_box(bytes))
}

#[inline(never)]
fn profiled_load_unchecked<'a, T: Shape>(
    slots: &'a Slots,
    bytes: &[u8],
) -> Loaded<'a, ArchivedRoot<T>> {
    load_unchecked(slots, black_box(bytes))
}

// Each unload passes its own constant through `black_box`, so the compiler does not
// merge the functions with the same body into one symbol.

#[inline(never)]
fn profiled_unload_json_heap<T>(level: T) {
    black_box(1);
    drop(black_box(level));
}

#[inline(never)]
fn profiled_unload_postcard_heap<T>(level: T) {
    black_box(2);
    drop(black_box(level));
}

#[inline(never)]
fn profiled_unload_postcard_slot<R: SlotRoot>(level: Loaded<'_, R>) {
    black_box(3);
    drop(black_box(level));
}

#[inline(never)]
fn profiled_unload_archived<T: Shape>(level: Loaded<'_, ArchivedRoot<T>>) {
    black_box(4);
    drop(black_box(level));
}

#[inline(never)]
fn profiled_unload_unchecked<T: Shape>(level: Loaded<'_, ArchivedRoot<T>>) {
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
fn print_memory<T: Shape>(f: &Files<T>, slots: &Slots) {
    let plain = load_archived::<T>(slots, &f.archive);
    let used = plain.used();
    drop(plain);
    let postcard = load_postcard_slot::<T>(slots, &f.postcard).used();
    let placed = Cell::new(0);
    let built = slots
        .load_archived_with::<T, LiveRoot, &str>("built", &f.archive[..], |level, scope| {
            let before = scope.used();
            let pool = scope
                .try_new_pool_pod(T::archived_spawns(level).count())
                .map_err(|_| "no room for the spawns")?;
            for s in T::archived_spawns(level) {
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
        .spawns()
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
        f.heap.spawns().count(),
        placed.get(),
        built_used - archive - placed.get(),
    );
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let profiling = std::env::var("LEVEL_INPLACE_PROFILE").ok();
    let level = |label, bytes| Box::new(files::<HeapLevel>(label, bytes)) as Box<dyn Set>;
    let world = |label, bytes| Box::new(files::<HeapWorld>(label, bytes)) as Box<dyn Set>;
    let sets: Vec<Box<dyn Set>> = match profiling.as_deref() {
        Some("10") => vec![level("10MB", 10 << 20)],
        Some("geo1") => vec![world("geo1MB", 1 << 20)],
        Some("geo10") => vec![world("geo10MB", 10 << 20)],
        Some(_) => vec![level("1MB", 1 << 20)],
        None if smoke => vec![level("1MB", 1 << 20), world("geo1MB", 1 << 20)],
        None => vec![
            level("1MB", 1 << 20),
            level("10MB", 10 << 20),
            world("geo1MB", 1 << 20),
            world("geo10MB", 10 << 20),
        ],
    };
    // Two slots, each room for the largest file (any of the three is larger than what
    // it loads into a slot) and some.
    let largest = sets.iter().map(|f| f.largest()).max().unwrap_or(0);
    let slot_size = largest + (1 << 20);
    let mut memory = LinearAllocator::with_capacity(2 * slot_size + (1 << 20)).unwrap();
    memory.scope("bench", |game| {
        let slots = game.new_slots("levels", 2, slot_size);
        if profiling.is_some() {
            return sets[0].profile(slots);
        }
        for f in &sets {
            f.print_files();
            for way in WAYS {
                f.check(way, slots);
            }
            f.print_memory(slots);
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
                    let (load, _) = f.time(way, slots, 1);
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
                // The five ways of this level, starting at a different one each round.
                for k in 0..WAYS.len() {
                    let i = set * WAYS.len() + (round + k) % WAYS.len();
                    let case = &mut cases[i];
                    let (load, unload) = f.time(case.way, slots, case.reps);
                    case.load.push(load / case.reps as f64);
                    case.unload.push(unload / case.reps as f64);
                }
            }
        }
        print_table(&sets, &mut cases, rounds);
    });
}

/// The medians, and each way's ratio to `postcard_heap` on the same level.
fn print_table(sets: &[Box<dyn Set>], cases: &mut [Case], rounds: usize) {
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
        "`vs postcard_heap`: postcard_heap's median on the same level ÷ the way's (above \
         1 = faster); in brackets the median of the rounds' own ratios."
    );
    println!(
        "{:<8} {:<14} {:>6} {:>11} {:>20} {:>11} {:>20}",
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
                "{:<8} {:<14} {:>6} {:>11} {:>20} {:>11} {:>20}",
                f.label(),
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
