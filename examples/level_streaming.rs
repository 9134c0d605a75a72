//! The showcase: levels stream in and out of two slots while frames flow through a
//! ring of three, all on one block of memory, with no global-heap allocation while
//! frames run.
//!
//! - A `systems` scope carves two level slots and a ring of three frame slots.
//! - Levels come from JSON files in `examples/levels/` (edit them by hand: a broken
//!   file is reported with its name, line and column, and the level playing plays on).
//!   The files' bytes are read at start. Levels load on a loader thread, each file
//!   parsed once, where it is used: `load_concurrent_wait_from_with` waits for a free
//!   level slot, deserializes the file straight into its concurrent scope
//!   (`#[derive(DeserializeIn)]`: names, enemy groups, patrol paths and a map of
//!   properties, with no heap types on the way), then runs the build step in the same
//!   slot: rayon jobs decode the level's tiles into it, and the loader carves the
//!   level's `Pool` of enemies (from the file's groups) and `DensePool` of shots there
//!   too (the `#[serde(skip)]` field the file does not hold). A bad file or a refused
//!   level frees the slot at once. The finished `Loaded` level, pools and all, is sent
//!   to the game thread. The game plays
//!   level A while B loads; when B arrives it switches to B and drops A, whose slot
//!   rewinds in one step for the next level. Four levels go round, so each slot is
//!   freed both before and after the other one.
//! - The whole game loop runs inside the frame jobs' rayon pool (`install`): every frame
//!   it moves the enemies in place, replaces one (remove + insert) and fires a shot
//!   (the oldest one is removed), all through `with_mut`.
//! - Every frame the game thread builds the frame's output in the ring with two rayon
//!   jobs (2,000 draw commands and 200 labels), sends the `Loaded` frame to the render
//!   thread, which reads it and drops it there. `load_concurrent_wait` blocks only when
//!   all three frames are still in flight.
//! - The memory map is printed at the end, with the last level playing and the next
//!   one just loaded, taken on a frame worker through a `MapHandle`; `stats_alloc`'s
//!   instrumented global allocator shows that frames run without the global heap
//!   (every thread's, rayon's injector included).
//!
//! ```text
//! cargo run --release --features serde,derive --example level_streaming -- --frames 2000 --jobs 2
//! ```

use std::alloc::System;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::{Duration, Instant};

use scope_stack::serde::{DeserializeIn, ScopeMap};
use scope_stack::{
    slot_root, ConcurrentScope, DenseHandle, DensePool, LinearAllocator, Loaded, Pool, Shared,
    Slots,
};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

/// Counts global-heap allocations on every thread (`Region` reads the counts).
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

// ----- levels -----

#[derive(Clone, Copy)]
struct Enemy {
    position: [f32; 2],
    velocity: [f32; 2],
}

#[derive(Clone, Copy)]
struct Shot {
    position: [f32; 2],
    velocity: [f32; 2],
}

/// A level: its file (`examples/levels/*.json`), deserialized straight into the
/// level's slot (its strings, lists and map are placed there, and the file's bytes may
/// go), and what the loader's build step adds in the same slot.
#[derive(DeserializeIn)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Level<'s> {
    name: &'s str,
    music: &'s str,
    /// The seed the loader's jobs decode the map from.
    tile_seed: u32,
    /// Room for shots in flight (the level's `DensePool`).
    shots: u32,
    /// Where the enemies start: each group a grid of `count` enemies.
    enemy_groups: &'s [EnemyGroup<'s>],
    /// Patrol paths: lists of points, one list per path.
    patrols: &'s [&'s [[f32; 2]]],
    /// Free-form properties (`gravity`, `wind`, `fog`), in file order.
    props: ScopeMap<'s, &'s str, f32>,
    /// Not in the file: the decoded map and the level's pools, built after the file
    /// is read (`build_level`); always `Some` in a level the loader hands out.
    #[serde(skip)]
    built: Option<Built<'s>>,
}

#[derive(DeserializeIn)]
#[serde(deny_unknown_fields)]
struct EnemyGroup<'s> {
    name: &'s str,
    at: [f32; 2],
    velocity: [f32; 2],
    count: u32,
    columns: u32,
}

/// What the build step adds to a level file, in its slot, on the loader and its jobs.
struct Built<'s> {
    /// The decoded map.
    tiles: &'s [u8],
    /// Spawn points found in the map (one list per decode job).
    spawns: &'s [&'s [u32]],
    /// Moved every frame, in place; one leaves and one arrives every frame.
    enemies: &'s mut Pool<'s, Enemy>,
    /// One shot fired every frame; the oldest goes when the ring is full.
    shots: &'s mut DensePool<'s, Shot>,
    /// The live shots' handles, oldest first from `fired % len` (in the slot too).
    shot_ring: &'s mut [Option<DenseHandle<Shot>>],
    fired: usize,
}
slot_root!(struct LevelRoot => Level);

const TILES: usize = 256 * 1024;

/// Where the level files are (found from any working directory).
const LEVEL_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/levels");

/// The build step of a level load, on the loader thread, in the slot the file was just
/// read into: two jobs decode halves of the map and list its spawn points, and the
/// level's pools are carved here, on the loader's side, and travel with the level.
/// Refuses a level with no enemies (the slot is free again at once).
fn build_level<'x>(
    file: &mut Level<'x>,
    scope: &'x ConcurrentScope<'x>,
    jobs: &rayon::ThreadPool,
) -> Result<(), String> {
    let capacity: u32 = file.enemy_groups.iter().map(|g| g.count).sum();
    if capacity == 0 {
        return Err(format!("level \"{}\" has no enemies", file.name));
    }
    let seed = file.tile_seed.wrapping_mul(2_654_435_761);
    let decode = |half: usize| -> (&'x [u8], &'x [u32]) {
        let lo = half * TILES / 2;
        let tiles = &*scope.alloc_slice_fill_with(TILES / 2, |i| {
            let x = (lo + i) as u32 ^ seed;
            (x.wrapping_mul(0x9E37_79B9) >> 24) as u8
        });
        let spawns = &*scope.alloc_iter(
            tiles
                .iter()
                .enumerate()
                .filter(|&(_, &t)| t == 250)
                .map(|(i, _)| (lo + i) as u32),
        );
        (tiles, spawns)
    };
    let ((a, sa), (b, sb)) = jobs.install(|| rayon::join(|| decode(0), || decode(1)));
    let tiles = scope.alloc_iter(a.iter().chain(b).copied());
    let spawns = scope.alloc_slice_copy(&[sa, sb]);
    let enemies = scope.new_pool::<Enemy>(capacity as usize);
    let wind = file.props.get("wind").copied().unwrap_or(0.0);
    for group in file.enemy_groups.iter() {
        let columns = group.columns.max(1);
        for i in 0..group.count {
            let enemy = Enemy {
                position: [
                    group.at[0] + (i % columns) as f32,
                    group.at[1] + (i / columns) as f32,
                ],
                velocity: [group.velocity[0] + wind, group.velocity[1]],
            };
            // The handle is not kept: the enemy stays in the pool until removed.
            enemies
                .insert(enemy)
                .ok()
                .expect("room for every enemy")
                .into_handle();
        }
    }
    let shots = (file.shots as usize).max(1);
    file.built = Some(Built {
        tiles,
        spawns,
        enemies,
        shots: scope.new_dense_pool::<Shot>(shots),
        shot_ring: scope.alloc_slice_fill_copy(shots, None),
        fired: 0,
    });
    Ok(())
}

impl<'s> Level<'s> {
    /// What the build step added (every level the loader hands out has it).
    fn built(&self) -> &Built<'s> {
        self.built.as_ref().expect("built by the loader")
    }
}

/// A level file: its path, its slot name (the file name without its number and
/// extension) and its bytes.
struct LevelText {
    path: String,
    name: String,
    text: Vec<u8>,
}

/// Reads every level file's bytes at start (the only file reads), in file-name order.
/// They are parsed when they load, once each time.
fn read_levels() -> Result<Vec<LevelText>, Box<dyn std::error::Error>> {
    let mut paths: Vec<_> = std::fs::read_dir(LEVEL_DIR)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "json"));
    paths.sort();
    let mut levels = Vec::new();
    for path in &paths {
        levels.push(LevelText {
            path: path.display().to_string(),
            name: slot_name(path),
            text: std::fs::read(path)?,
        });
    }
    if levels.is_empty() {
        return Err(format!("no level files (*.json) in {LEVEL_DIR}").into());
    }
    Ok(levels)
}

/// `examples/levels/2_glacier.json` -> `glacier`.
fn slot_name(path: &Path) -> String {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    match stem.split_once('_') {
        Some((_, name)) => name.to_string(),
        None => stem.into_owned(),
    }
}

/// One frame of play, through the `&mut` the level's `with_mut` lends: the enemies
/// move in place, one leaves and a new one arrives, and a shot is fired.
fn play(level: &mut Level<'_>, frame: usize) {
    let level = level.built.as_mut().expect("built by the loader");
    for (_, e) in level.enemies.iter_mut() {
        e.position[0] = (e.position[0] + e.velocity[0]) % 1000.0;
        e.position[1] = (e.position[1] + e.velocity[1]) % 1000.0;
    }
    let leaving = level.enemies.iter().next().map(|(h, _)| h);
    if let Some(gone) = leaving.and_then(|h| level.enemies.remove(h)) {
        let arriving = Enemy {
            position: [gone.position[1], gone.position[0]],
            velocity: gone.velocity,
        };
        level
            .enemies
            .insert(arriving)
            .ok()
            .expect("a slot was just freed")
            .into_handle();
    }
    let at = level.fired % level.shot_ring.len();
    if let Some(oldest) = level.shot_ring[at].take() {
        level.shots.remove(oldest);
    }
    let shot = Shot {
        position: [frame as f32, 0.0],
        velocity: [0.0, 2.0],
    };
    level.shot_ring[at] = level.shots.insert(shot).ok();
    level.fired += 1;
    for handle in level.shot_ring.iter().flatten() {
        if let Some(s) = level.shots.get_mut(*handle) {
            s.position[1] += s.velocity[1];
        }
    }
}

// ----- frames -----

#[derive(Clone, Copy)]
struct Draw {
    mesh: u32,
    transform: [f32; 4],
}

/// One frame's output: what the render thread draws.
struct Frame<'s> {
    number: usize,
    level: &'s str,
    draws: &'s [Draw],
    labels: &'s [&'s str],
}
slot_root!(struct FrameRoot = for<'s> Frame<'s>);

const DRAWS: usize = 2_000;
const LABELS: usize = 200;

/// Builds frame `number` of `level` with two jobs: draw commands and labels.
fn build_frame<'x>(jobs: &'x ConcurrentScope<'x>, number: usize, level: &Level<'_>) -> Frame<'x> {
    let (name, level) = (level.name, level.built());
    let (draws, labels) =
        rayon::join(
            || {
                &*jobs.alloc_iter(level.enemies.iter().take(DRAWS).enumerate().map(
                    |(i, (_, e))| Draw {
                        mesh: level.tiles[i * 97 % level.tiles.len()] as u32,
                        transform: [e.position[0], e.position[1], 1.0, number as f32],
                    },
                ))
            },
            || {
                let names: [&str; LABELS] = core::array::from_fn(|i| {
                    &*jobs.alloc_fmt(format_args!("enemy {} hp {}", i, (number + i) % 100))
                });
                &*jobs.alloc_slice_copy(&names)
            },
        );
    Frame {
        number,
        level: jobs.alloc_str(name),
        draws,
        labels,
    }
}

// ----- threads -----

/// A level the loader sends: loaded and built, or why not (the file's path and the
/// error: the file's line and column, the slot, or the build step's refusal).
type Arrival<'a> = Result<Loaded<'a, LevelRoot, Shared>, String>;

/// The loader thread: loads each requested level from its file into a free level slot
/// and sends it back (waiting while both slots are in use). The file is deserialized
/// on this thread, once; its map is decoded by `pool`'s jobs in the build step.
fn loader<'a>(
    levels: &'a Slots,
    files: &[LevelText],
    pool: &rayon::ThreadPool,
    requests: Receiver<usize>,
    done: SyncSender<Arrival<'a>>,
) {
    for number in requests {
        let file = &files[number % files.len()];
        let mut de = serde_json::Deserializer::from_slice(&file.text);
        let level = levels
            .load_concurrent_wait_from_with::<LevelRoot, _, _>(
                &file.name,
                &mut de,
                |level, scope| build_level(level, scope, pool),
            )
            .map_err(|e| format!("{}: {e}", file.path));
        if done.send(level).is_err() {
            return;
        }
    }
}

/// The render thread: reads each frame and drops it (freeing its slot for the game
/// thread). Returns the frames and draw commands it saw.
fn render(frames: Receiver<Loaded<'_, FrameRoot, Shared>>) -> (usize, usize) {
    let (mut seen, mut draws) = (0, 0);
    for frame in frames {
        frame.with(|f| {
            assert_eq!(f.number, seen, "frames arrive in order");
            assert_eq!(f.labels.len(), LABELS);
            draws += f
                .draws
                .iter()
                .filter(|d| d.mesh < 256 && d.transform[2] == 1.0)
                .count();
            std::hint::black_box(f.level);
        });
        seen += 1;
    }
    (seen, draws)
}

struct Options {
    frames: usize,
    jobs: usize,
}

fn parse_options() -> Options {
    let mut o = Options {
        frames: 2_000,
        jobs: 2,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = |name: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} needs a number"))
        };
        match flag.as_str() {
            "--frames" => o.frames = value("--frames").max(40),
            "--jobs" => o.jobs = value("--jobs").max(1),
            "-h" | "--help" => {
                println!("usage: level_streaming [--frames N] [--jobs N]");
                std::process::exit(0);
            }
            other => panic!("unknown flag {other} (try --help)"),
        }
    }
    o
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = parse_options();
    // One pool builds frames (the game thread runs on it), another loads levels, so a
    // load never takes a frame's workers.
    let frame_jobs = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs)
        .build()?;
    let load_jobs = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
    let mut memory = LinearAllocator::with_capacity(4 << 20)?;
    let files = read_levels()?;
    println!(
        "{} level files from {LEVEL_DIR}: {}",
        files.len(),
        files
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "each frame: {DRAWS} draw commands and {LABELS} formatted labels, built by {} rayon \
         job(s) into a frame slot, read and dropped on the render thread",
        options.jobs
    );
    let (heap, refusals) = memory.scope("systems", |systems| -> Result<(u64, usize), String> {
        let levels = systems.new_slots("levels", 2, 1 << 20);
        let frames = systems.new_slots("frames", 3, 256 << 10);
        let (level_requests, requested) = sync_channel::<usize>(1);
        let (level_done, mut loaded_levels) = sync_channel(1);
        let (frame_out, frame_in) = sync_channel(3);
        // The map from any thread: the frame pool's workers take it below.
        let map = systems.map_handle();
        let counts = std::thread::scope(|t| -> Result<(u64, usize), String> {
            let (load_jobs, files) = (&load_jobs, &files);
            let render = t.spawn(move || render(frame_in));
            t.spawn(move || loader(levels, files, load_jobs, requested, level_done));
            level_requests.send(0).expect("the loader runs");
            let mut playing = loaded_levels.recv().expect("the loader runs")?;
            let (warm_up, every) = (20, options.frames / 5);
            let mut next_level = 1;
            let mut switches = Vec::with_capacity(8);
            let (mut blocked, mut slot_bytes, mut number) = (Duration::ZERO, 0, 0);
            let mut counted: Option<Region<'static, System>> = None;
            let mut refused = Vec::new();
            let started = Instant::now();
            // The whole game loop runs on the frame pool: a shared `Loaded` level may be
            // held there (and dropped there when the next one arrives).
            let playing_in = &mut playing;
            let arrivals = &mut loaded_levels;
            let (counted_in, refused_in) = (&mut counted, &mut refused);
            frame_jobs.install(|| {
                // Held as `&mut`: a `Receiver` is `Send`, not `Sync`.
                let arrivals: &mut Receiver<_> = &mut *arrivals;
                let playing = playing_in;
                while number < options.frames {
                    if number == warm_up {
                        *counted_in = Some(Region::new(GLOBAL));
                    }
                    // Now and then ask for the next level; it loads while this one plays.
                    if number % every == every / 2 {
                        level_requests.send(next_level).expect("the loader runs");
                        next_level += 1;
                    }
                    match arrivals.try_recv() {
                        Ok(Ok(new)) => {
                            switches.push((number, new.slot()));
                            // Switch, then let the old level go: its slot rewinds at once.
                            drop(std::mem::replace(playing, new));
                        }
                        // A broken file: its slot is already free, and this level plays on.
                        Ok(Err(e)) => refused_in.push(e),
                        Err(_) => {}
                    }
                    playing.with_mut(|level, _| play(level, number));
                    let t0 = Instant::now();
                    let frame = playing.with(|level| {
                        frames.load_concurrent_wait::<FrameRoot>("frame", |jobs| {
                            build_frame(jobs, number, level)
                        })
                    });
                    blocked += t0.elapsed();
                    slot_bytes = slot_bytes.max(frame.used());
                    frame_out.send(frame).expect("the render thread runs");
                    number += 1;
                }
            });
            let heap = counted.map_or(0, |r| {
                let c = r.change();
                (c.allocations + c.reallocations) as u64
            });
            let elapsed = started.elapsed();
            for e in &refused {
                println!("a level did not load, and the one playing played on: {e}");
            }
            drop(frame_out);
            let (seen, draws) = render.join().expect("the render thread panicked");
            let spawns: usize = playing.with(|l| l.built().spawns.iter().map(|s| s.len()).sum());
            let (live_enemies, live_shots) =
                playing.with(|l| (l.built().enemies.len(), l.built().shots.len()));
            playing.with(|f| {
                let props: Vec<String> = f.props.iter().map(|(k, v)| format!("{k} {v}")).collect();
                let points: usize = f.patrols.iter().map(|p| p.len()).sum();
                println!(
                    "the last level played, from its file: {} (music {}), {} enemy groups (the first \"{}\"), {} patrol paths of {points} points, properties: {}",
                    f.name,
                    f.music,
                    f.enemy_groups.len(),
                    f.enemy_groups.first().map_or("-", |g| g.name),
                    f.patrols.len(),
                    props.join(", ")
                );
            });
            // One more level, so the map shows a transition: both level slots loaded
            // (unless one asked for during the last frames is still on its way).
            // Every request made so far has arrived (loaded or refused) unless one asked
            // for during the last frames is still on its way.
            if switches.len() + refused.len() + 1 == next_level {
                level_requests.send(next_level).expect("the loader runs");
            }
            drop(level_requests);
            match loaded_levels.recv().expect("the loader runs") {
                Ok(next) => {
                    println!(
                        "\nmemory map at the end, while {} (playing) and {} (just loaded) are both in their slots:",
                        playing.name(),
                        next.name()
                    );
                    // Taken on a frame worker, as a debug overlay inside the game loop would.
                    println!("{}", frame_jobs.install(|| map.report()));
                }
                Err(e) => {
                    println!("the next level did not load: {e}");
                    println!("\nmemory map at the end, while {} plays:", playing.name());
                    println!("{}", frame_jobs.install(|| map.report()));
                }
            }
            drop(playing);
            let switched = &switches;
            println!("the last level played holds {live_enemies} enemies in its pool and {live_shots} shots in its dense pool");
            println!(
                "level switches (frame, slot it loaded into): {switched:?}; the last level has {spawns} spawn points"
            );
            println!(
                "{seen} frames read and dropped on the render thread ({draws} draw commands), never more than 3 in flight"
            );
            println!(
                "frame slot in use per frame: {} KiB of {} KiB",
                slot_bytes.div_ceil(1024),
                frames.bytes_each() / 1024
            );
            println!(
                "slot allocations per second: {:.0} ({} per frame: the draws, {LABELS} label texts, the label list, the level name, the root)",
                (seen * (LABELS + 4)) as f64 / elapsed.as_secs_f64(),
                LABELS + 4
            );
            println!(
                "frames per second: {:.0}",
                seen as f64 / elapsed.as_secs_f64()
            );
            println!(
                "game thread time in building frames or waiting for a free frame slot: {:.0}%",
                100.0 * blocked.as_secs_f64() / elapsed.as_secs_f64()
            );
            Ok((heap, refused.len()))
        })?;
        assert_eq!(levels.loaded() + frames.loaded(), 0);
        Ok(counts)
    })?;
    println!(
        "block high-water mark: {} KiB of {} KiB",
        memory.high_water_mark() / 1024,
        memory.capacity() / 1024
    );
    println!("global-heap allocations while frames ran (after 20 warm-up frames): {heap}");
    // With the `tracy` feature too: while no profiler is connected nothing is named
    // (names are copied to the heap only for a connected profiler).
    // A refused level's error (the file's line and column) is a heap string.
    if refusals == 0 {
        assert_eq!(heap, 0, "the frame loop touched the global heap");
    }
    Ok(())
}
