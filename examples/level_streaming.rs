//! The main job, end to end: an engine on one block of memory.
//!
//! - A systems scope holds what lives for the whole run.
//! - A versioned store in the systems scope holds the world settings (gravity, wind);
//!   each level load commits its own, and the workers read them lock-free every frame.
//! - Each level loads into its own scope: level data plus entity, projectile and sound
//!   pools sized for that level, and a dense roster of the props the level places
//!   (some destructible: the level script breaks them and leaves debris).
//! - The level's scene data is built by several loader threads at once, straight into a
//!   concurrent scope: each decodes a sector of the map into a list of spawn points,
//!   and the main thread gathers the lists into the level's table after the join.
//! - Frames run on several worker threads that spawn and despawn objects in the pools,
//!   each thread using a per-frame scratch scope for its temporaries. Each frame every
//!   worker also writes the list of enemies it can see into the same concurrent scope;
//!   the main thread reads every list after the workers are joined.
//! - Unloading a level is leaving its scope: the pools' remaining objects are dropped and
//!   the memory rewinds, so the next level (with different pool sizes) reuses it.
//!
//! It prints a progress line per batch of frames, the memory map after each load, and at
//! the end frames per second, allocations per second, the share of the workers' frame
//! time spent waiting for each other at the frame barrier, and how many global-heap
//! allocations happened while frames ran (counted by the global allocator below; it
//! must be 0).
//!
//! The pools get one shard per worker (plus one for the main thread), so each worker
//! spawns into its own slots. Frames meet at a spin-then-sleep barrier: a `std` barrier
//! (a mutex and a condition variable) costs more than a frame's work once a dozen
//! threads meet at it twice per frame.
//!
//! ```text
//! cargo run --release --example level_streaming -- --frames 600 --threads 2 --levels 3
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use scope_stack::store::Store;
use scope_stack::{scratch, ConcurrentScope, DensePool, LinearAllocator, PoolBox};

// ----- counting the global heap -----

/// Counts global-heap allocations (all threads) while `COUNTING` is on.
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static HEAP_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; counting does not touch the memory.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            HEAP_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            HEAP_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

// ----- the game objects -----

#[derive(Clone, Copy)]
struct Enemy {
    position: [f32; 3],
    health: u32,
}

#[derive(Clone, Copy)]
struct Projectile {
    position: [f32; 3],
    velocity: [f32; 3],
    frames_left: u32,
}

/// A playing sound; its name is static data, its volume fades out.
struct Sound {
    name: &'static str,
    volume: f32,
}

/// World settings, shared by every system through a versioned store: a level load
/// commits new ones while nothing reads, workers read them every frame.
#[derive(Clone, Copy)]
struct WorldSettings {
    gravity: f32,
    wind: [f32; 2],
}

/// A prop the level places: static scenery, or destructible (a crate, a barrel).
struct Prop {
    tile: u32,
    destructible: bool,
    debris: bool,
}

/// How big one level is.
struct LevelConfig {
    name: &'static str,
    tiles: usize,
    enemies: usize,
    projectiles: usize,
    sounds: usize,
    /// Props placed at load (the roster has room for their debris too).
    props: usize,
    gravity: f32,
}

const LEVELS: [LevelConfig; 2] = [
    LevelConfig {
        name: "harbour",
        tiles: 64 * 1024,
        enemies: 2_000,
        projectiles: 8_000,
        sounds: 64,
        props: 300,
        gravity: -9.8,
    },
    LevelConfig {
        name: "canyon",
        tiles: 128 * 1024,
        enemies: 500,
        projectiles: 16_000,
        sounds: 32,
        props: 120,
        gravity: -4.0,
    },
];

const SOUND_NAMES: [&str; 4] = ["step", "shot", "splash", "wind"];

struct Options {
    frames: usize,
    threads: usize,
    levels: usize,
}

fn parse_options() -> Options {
    let mut o = Options {
        frames: 600,
        threads: 2,
        levels: 2,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = |name: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} needs a number"))
        };
        match flag.as_str() {
            "--frames" => o.frames = value("--frames").max(1),
            "--threads" => o.threads = value("--threads").max(1),
            "--levels" => o.levels = value("--levels").max(1),
            "-h" | "--help" => {
                println!("usage: level_streaming [--frames N] [--threads N] [--levels N]");
                std::process::exit(0);
            }
            other => panic!("unknown flag {other} (try --help)"),
        }
    }
    o
}

// ----- the frame barrier -----

/// A barrier for a fixed set of threads that meet thousands of times a second. An
/// arriving thread counts itself in; the last one resets the count and starts the next
/// generation. The others spin on the generation for a moment (a frame's stragglers
/// are usually microseconds behind), then sleep on it with a futex, so that a waiting
/// thread never holds a core that a working one needs (there may be more threads than
/// cores). No lock, no heap, and no system call unless someone actually slept.
struct FrameBarrier {
    threads: usize,
    arrived: CachePadded<AtomicUsize>,
    generation: CachePadded<AtomicU32>,
    sleepers: CachePadded<AtomicUsize>,
}

impl FrameBarrier {
    /// Spins before sleeping: some tens of microseconds, longer than a frame's work.
    const SPINS: u32 = 1_000;

    fn new(threads: usize) -> Self {
        FrameBarrier {
            threads,
            arrived: CachePadded::new(AtomicUsize::new(0)),
            generation: CachePadded::new(AtomicU32::new(0)),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    fn wait(&self) {
        // Read the generation before counting ourselves in: it cannot move on until we
        // have arrived.
        let generation = self.generation.load(Ordering::Acquire);
        // AcqRel: the last arriver sees every other thread's frame work, and releases
        // it to all of them through the generation store below.
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            // SeqCst, with the sleepers' SeqCst below: either we see a sleeper's count
            // and wake it, or its futex wait sees the new generation and returns.
            self.generation
                .store(generation.wrapping_add(1), Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                atomic_wait::wake_all(&*self.generation);
            }
            return;
        }
        for _ in 0..Self::SPINS {
            if self.generation.load(Ordering::Acquire) != generation {
                return;
            }
            std::hint::spin_loop();
        }
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.generation.load(Ordering::SeqCst) == generation {
            atomic_wait::wait(&self.generation, generation);
        }
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Per-worker state kept across frames: the objects this worker spawned.
struct Worker<'p> {
    enemies: Vec<PoolBox<'p, Enemy>>,
    projectiles: Vec<PoolBox<'p, Projectile>>,
    sounds: Vec<PoolBox<'p, Sound>>,
    /// This frame's world settings.
    world: WorldSettings,
    rng: u64,
}

impl Worker<'_> {
    fn next(&mut self) -> u64 {
        // xorshift64: deterministic per worker.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }
}

fn main() -> Result<(), scope_stack::AllocError> {
    let options = parse_options();
    let started = Instant::now();
    let mut memory = LinearAllocator::with_capacity(32 << 20)?;
    let allocations = AtomicU64::new(0);
    // Nanoseconds the workers spent at the frame barrier, all workers together.
    let waiting = AtomicU64::new(0);
    let mut frame_time = Duration::ZERO;
    let mut frames_run = 0u64;

    memory.scope("systems", |systems| {
        // Systems-lifetime data: asset names and a log, alive across every level.
        let asset_names = systems.alloc_slice_fill_with(256, |i| i as u32);
        let log = systems.new_object(Vec::<String>::with_capacity(options.levels));
        // The world settings: one object, a few versions (the current one, a level
        // load's draft, and the one it replaces until `end_frame`).
        let settings: &mut Store<'_, WorldSettings> = systems.new_store(16, 8);
        let world = settings
            .create(WorldSettings {
                gravity: -9.8,
                wind: [0.0, 0.0],
            })
            .ok()
            .expect("an empty store has room");

        for level_no in 0..options.levels {
            let config = &LEVELS[level_no % LEVELS.len()];
            systems.scope("level", |level| {
                // ----- load -----
                let tiles = level.alloc_slice_fill_with(config.tiles, |i| (i % 251) as u8);
                // One shard per worker and one for this thread: each worker spawns into
                // slots of its own, and steals only when its shard runs dry.
                // The level's sizes are for up to four workers; more workers spawn more.
                let shards = options.threads + 1;
                let scale = options.threads.div_ceil(4);
                let enemies =
                    level.new_pool_with_shards::<Enemy>(config.enemies * scale, shards);
                let projectiles =
                    level.new_pool_with_shards::<Projectile>(config.projectiles * scale, shards);
                let sounds = level.new_pool_with_shards::<Sound>(config.sounds * scale, shards);
                let title = level.alloc_fmt(format_args!("level {} ({})", level_no + 1, config.name));
                // Props: placed now, half of them destructible; room for as many debris.
                let props: &mut DensePool<'_, Prop> = level.new_dense_pool(config.props * 2);
                for i in 0..config.props {
                    let prop = Prop {
                        tile: (i * 7919 % config.tiles) as u32,
                        destructible: i % 2 == 0,
                        debris: false,
                    };
                    if props.insert(prop).is_err() {
                        unreachable!("the roster is sized for the level");
                    }
                }
                // This level's world settings, committed before any worker reads them.
                let mut draft = settings.write(world).expect("the settings object lives");
                draft.gravity = config.gravity;
                draft.wind = [0.5 * level_no as f32, 0.0];
                if settings.commit(draft).is_err() {
                    unreachable!("nobody destroys the settings");
                }
                // ----- the scene: built by several threads at once -----
                // A concurrent scope: the loaders, then the frame workers, place
                // variable-sized data in it from every thread at the same time. It lives
                // until the level's frames are over.
                let level_nanos = AtomicU64::new(0);
                let (lists, entries) = level.scope_concurrent("scene", |scene| {
                let spawn_points = load_spawn_points(scene, tiles, options.threads);
                println!(
                    "\nloaded {title}: {} spawn points decoded by {} threads",
                    spawn_points.iter().map(|s| s.len()).sum::<usize>(),
                    spawn_points.len()
                );
                println!("{}", scene.report());

                // ----- frames on worker threads -----
                // The workers meet once per frame, among themselves; worker 0 also
                // keeps the clock and prints progress. This thread only waits for them.
                let barrier = FrameBarrier::new(options.threads);
                let seen = std::thread::scope(|t| {
                    let workers: Vec<_> = (0..options.threads).map(|w| {
                        let (barrier, allocations, waiting) = (&barrier, &allocations, &waiting);
                        let level_nanos = &level_nanos;
                        let (enemies, projectiles, sounds) = (&*enemies, &*projectiles, &*sounds);
                        let tiles = &*tiles;
                        let (settings, props) = (&*settings, &*props);
                        t.spawn(move || {
                            // The lists of enemies this worker saw, one per frame, each in
                            // the scene scope (room for the references reserved now).
                            let mut seen: Vec<&[u32]> = Vec::with_capacity(options.frames);
                            let mut me = Worker {
                                enemies: Vec::with_capacity(enemies.capacity()),
                                projectiles: Vec::with_capacity(projectiles.capacity()),
                                sounds: Vec::with_capacity(sounds.capacity()),
                                world: *settings.read(world).expect("the settings object lives"),
                                rng: 0x9E37_79B9_7F4A_7C15 ^ ((w as u64 + 1) * 0x1234_5678),
                            };
                            scratch(|_| ()); // build this thread's scratch arenas now
                            barrier.wait(); // everyone is ready
                            if w == 0 {
                                COUNTING.store(true, Ordering::SeqCst);
                            }
                            barrier.wait(); // counting is on: the frames start
                            let level_start = Instant::now();
                            let batch = (options.frames / 5).max(1);
                            let mut waited = Duration::ZERO;
                            for frame in 0..options.frames {
                                // Lock-free read of the current settings: no write, no wait.
                                me.world = *settings.read(world).expect("the settings object lives");
                                let n = run_frame(&mut me, w, frame, enemies, projectiles, sounds, tiles);
                                // This frame's visible enemies, written into the scene
                                // scope at bump speed (no lock, no atomic read-modify-write).
                                let visible = scene.try_alloc_iter(
                                    me.enemies.iter().map(|e| e.position).enumerate()
                                        .filter(|(_, p)| p[0] < 250.0 && p[2] < 250.0)
                                        .map(|(i, _)| i as u32),
                                );
                                if let Ok(list) = visible {
                                    seen.push(list);
                                }
                                allocations.fetch_add(n + 1, Ordering::Relaxed);
                                let t0 = Instant::now();
                                barrier.wait(); // frame end
                                waited += t0.elapsed();
                                let last = frame + 1 == options.frames;
                                if w == 0 && ((frame + 1) % batch == 0 || last) {
                                    println!(
                                        "  frames {:>5}/{}: {:>5} enemies, {:>5} projectiles, {:>3} sounds live",
                                        frame + 1,
                                        options.frames,
                                        enemies.len(),
                                        projectiles.len(),
                                        sounds.len()
                                    );
                                }
                            }
                            if w == 0 {
                                COUNTING.store(false, Ordering::SeqCst);
                                level_nanos.store(level_start.elapsed().as_nanos() as u64, Ordering::Relaxed);
                            }
                            waiting.fetch_add(waited.as_nanos() as u64, Ordering::Relaxed);
                            barrier.wait(); // worker 0 has printed the last progress line
                            // Despawn what is left (the level unwind would drop it too).
                            let left = me.enemies.len() + me.projectiles.len() + me.sounds.len();
                            black_box(left + props.len());
                            seen
                        })
                    }).collect();
                    workers.into_iter().map(|h| h.join().expect("a worker panicked")).collect::<Vec<_>>()
                });
                // The workers are joined: this thread reads every list they wrote.
                let lists: usize = seen.iter().map(Vec::len).sum();
                let entries: usize = seen.iter().flatten().map(|l| l.len()).sum();
                (lists, entries)
                });
                frame_time += Duration::from_nanos(level_nanos.into_inner());
                // Between frames: the replaced settings version is freed.
                settings.end_frame();
                // The level script: every destructible prop breaks and leaves debris.
                let broken: Vec<_> = props
                    .handles()
                    .filter(|&h| props[h].destructible)
                    .collect();
                for h in &broken {
                    if let Some(prop) = props.remove(*h) {
                        let debris = Prop {
                            tile: prop.tile,
                            destructible: false,
                            debris: true,
                        };
                        if props.insert(debris).is_err() {
                            unreachable!("a slot was just freed");
                        }
                    }
                }
                let debris = props.iter().filter(|p| p.debris).count();
                frames_run += options.frames as u64;
                log.push(format!(
                    "{title}: peak {} enemies, {} projectiles, {} sounds; {} props ({} debris); \
                     {lists} visibility lists ({entries} entries) read after the join",
                    enemies.high_water_len(),
                    projectiles.high_water_len(),
                    sounds.high_water_len(),
                    props.len(),
                    debris
                ));
            });
            // ----- unloaded: the level's memory is back -----
            println!(
                "unloaded level {}: {} bytes in use, asset table intact ({} entries)",
                level_no + 1,
                systems.allocator().used(),
                asset_names.len()
            );
        }
        println!();
        for line in log.iter() {
            println!("{line}");
        }
    });

    let secs = frame_time.as_secs_f64().max(1e-9);
    let heap = HEAP_ALLOCATIONS.load(Ordering::SeqCst);
    println!(
        "\n{} frames on {} threads in {:.2} s of frame time ({:.2} s total)",
        frames_run,
        options.threads,
        secs,
        started.elapsed().as_secs_f64()
    );
    println!("frames per second:      {:.0}", frames_run as f64 / secs);
    println!(
        "allocations per second: {:.0} (pool inserts and scratch allocations)",
        allocations.load(Ordering::Relaxed) as f64 / secs
    );
    println!(
        "block high-water mark:  {} KiB of {} KiB",
        memory.high_water_mark() / 1024,
        memory.capacity() / 1024
    );
    let worker_secs = secs * options.threads as f64;
    let waited = waiting.load(Ordering::Relaxed) as f64 / 1e9;
    println!(
        "frame synchronisation:  {:.1}% of the workers' frame time at the barrier ({:.1} us per frame)",
        100.0 * waited / worker_secs,
        1e6 * waited / options.threads as f64 / frames_run.max(1) as f64
    );
    println!("global-heap allocations while frames ran: {heap}");
    assert_eq!(heap, 0, "the frame loop touched the global heap");
    Ok(())
}

/// The level loader: `threads` threads each decode a sector of the map into a list of
/// spawn points (tiles of one kind), placed straight into the scene scope; this thread
/// gathers the lists into the level's table (in the same scope) after the join.
fn load_spawn_points<'w>(
    scene: &'w ConcurrentScope<'_>,
    tiles: &[u8],
    threads: usize,
) -> &'w [&'w [u32]] {
    let sector = tiles.len().div_ceil(threads);
    let lists: Vec<&'w [u32]> = std::thread::scope(|t| {
        let loaders: Vec<_> = (0..threads)
            .map(|w| {
                t.spawn(move || {
                    let (lo, hi) = (w * sector, ((w + 1) * sector).min(tiles.len()));
                    let points =
                        scene.alloc_iter((lo..hi).filter(|&i| tiles[i] == 250).map(|i| i as u32));
                    &*points
                })
            })
            .collect();
        loaders
            .into_iter()
            .map(|h| h.join().expect("a loader panicked"))
            .collect()
    });
    scene.alloc_slice_copy(&lists)
}

/// One worker's frame: spawn and despawn objects, update them, and use a scratch scope
/// for temporaries. Returns how many allocations it made.
fn run_frame<'p>(
    me: &mut Worker<'p>,
    worker: usize,
    frame: usize,
    enemies: &'p scope_stack::Pool<'_, Enemy>,
    projectiles: &'p scope_stack::Pool<'_, Projectile>,
    sounds: &'p scope_stack::Pool<'_, Sound>,
    tiles: &[u8],
) -> u64 {
    let world = me.world;
    let mut allocations = 0;
    // Spawn: a few enemies, a burst of projectiles, now and then a sound.
    for _ in 0..4 {
        let r = me.next();
        let enemy = Enemy {
            position: [(r % 1000) as f32, 0.0, ((r >> 16) % 1000) as f32],
            health: 100,
        };
        if let Ok(b) = enemies.insert(enemy) {
            me.enemies.push(b);
            allocations += 1;
        }
    }
    for _ in 0..16 {
        let r = me.next();
        let p = Projectile {
            position: [0.0; 3],
            velocity: [
                (r % 7) as f32 + world.wind[0],
                1.0,
                ((r >> 8) % 7) as f32 + world.wind[1],
            ],
            frames_left: 10 + (r % 50) as u32,
        };
        if let Ok(b) = projectiles.insert(p) {
            me.projectiles.push(b);
            allocations += 1;
        }
    }
    if frame % 8 == worker % 8 {
        let r = me.next() as usize;
        if let Ok(b) = sounds.insert(Sound {
            name: SOUND_NAMES[r % SOUND_NAMES.len()],
            volume: 1.0,
        }) {
            me.sounds.push(b);
            allocations += 1;
        }
    }

    // Update: enemies walk, projectiles fly and expire, sounds fade.
    for e in me.enemies.iter_mut() {
        e.position[0] = (e.position[0] + 7.0) % 1000.0;
        e.position[2] = (e.position[2] + 3.0) % 1000.0;
    }
    me.projectiles.retain_mut(|p| {
        let velocity = p.velocity;
        for (x, v) in p.position.iter_mut().zip(velocity) {
            *x += v;
        }
        p.velocity[1] += world.gravity / 60.0;
        p.frames_left -= 1;
        p.frames_left > 0
    });
    me.sounds.retain_mut(|s| {
        s.volume *= 0.9;
        black_box(s.name);
        s.volume > 0.05
    });

    // Scratch: which enemies are hit this frame, and a label for the debug overlay.
    allocations += scratch(|s| {
        let hits = s.alloc_slice_fill_with(me.enemies.len(), |i| {
            let e = &me.enemies[i];
            let tile = tiles[(e.position[0] as usize * 31 + e.position[2] as usize) % tiles.len()];
            tile % 3 == 0
        });
        let label = s.alloc_fmt(format_args!(
            "worker {worker} frame {frame}: {} hits",
            hits.len()
        ));
        black_box(label);
        for (e, hit) in me.enemies.iter_mut().zip(hits.iter()) {
            if *hit {
                e.health = e.health.saturating_sub(25);
            }
        }
        2
    });
    me.enemies.retain(|e| e.health > 0);
    allocations
}
