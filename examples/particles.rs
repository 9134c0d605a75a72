//! The particle system of *Game Programming Patterns*' Object Pool chapter, on a
//! [`Pool`] carved from a level scope, with several threads spawning and killing
//! particles.
//!
//! Each frame has two phases:
//! 1. **Spawn** (shared `&Pool`): emitter threads insert particles at the same time.
//!    When the pool is full they follow the chapter's advice for effects: just don't
//!    create the particle; nobody will miss one sparkle. One thread also fires short
//!    sparks that it holds as `PoolBox`es and kills itself within the frame, and one
//!    thread reads the live particles (`iter`) to find the effect's bounds.
//! 2. **Simulate** (exclusive `&mut Pool`): move every particle and kill the ones whose
//!    time is up (`retain`).
//!
//! When the level scope ends, the particles still alive are dropped and the memory
//! rewinds. Run with `cargo run --example particles`.

use std::sync::atomic::{AtomicUsize, Ordering};

use scope_stack::{LinearAllocator, Pool};

/// One particle: moves in a straight line for a number of frames, then dies.
#[derive(Clone, Copy, Debug)]
struct Particle {
    frames_left: u32,
    x: f64,
    y: f64,
    x_vel: f64,
    y_vel: f64,
}

impl Particle {
    fn new(x: f64, y: f64, x_vel: f64, y_vel: f64, lifetime: u32) -> Particle {
        Particle {
            frames_left: lifetime,
            x,
            y,
            x_vel,
            y_vel,
        }
    }

    /// Moves one frame; returns `false` once the particle's time is up.
    fn animate(&mut self) -> bool {
        self.frames_left = self.frames_left.saturating_sub(1);
        self.x += self.x_vel;
        self.y += self.y_vel;
        self.frames_left > 0
    }
}

/// A tiny deterministic random source, so the example needs no dependency.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

const CAPACITY: usize = 512;
const EMITTERS: u64 = 3;
const FRAMES: u32 = 12;

fn main() {
    // A level's whole budget: the pool and everything else it loads.
    let need = Pool::<Particle>::memory_needed(CAPACITY).unwrap();
    let mut memory = LinearAllocator::with_capacity(need + 4096).expect("reserve level memory");

    memory.scope("level", |level| {
        let particles = level.new_pool::<Particle>(CAPACITY);
        println!(
            "pool: {} slots, {} bytes of scope memory",
            particles.capacity(),
            level.used()
        );
        let skipped = AtomicUsize::new(0);
        let sparks = AtomicUsize::new(0);

        for frame in 0..FRAMES {
            // ----- phase 1: spawn, from several threads at once -----
            let pool: &Pool<'_, Particle> = particles;
            let (skipped, sparks) = (&skipped, &sparks);
            let bounds = std::thread::scope(|threads| {
                for emitter in 0..EMITTERS {
                    threads.spawn(move || {
                        let mut rng = Rng(frame as u64 * 977 + emitter * 31 + 1);
                        let (cx, cy) = (emitter as f64 * 10.0, 0.0);
                        for _ in 0..50 {
                            let p = Particle::new(
                                cx,
                                cy,
                                rng.unit() * 2.0 - 1.0,
                                rng.unit() * 2.0 - 1.0,
                                2 + (rng.unit() * 6.0) as u32,
                            );
                            match pool.insert(p) {
                                // The pool owns it from now on; the simulate phase
                                // finds it by iterating, so the handle is not kept.
                                Ok(b) => {
                                    b.into_handle();
                                }
                                // Full: just don't create it.
                                Err(_) => {
                                    skipped.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        }
                    });
                }
                // Sparks: live for a moment inside this thread, then are killed by
                // dropping their box, which frees the slot for the emitters.
                threads.spawn(move || {
                    for i in 0..40 {
                        if let Ok(mut spark) =
                            pool.insert(Particle::new(0.0, 0.0, 1.0, i as f64 * 0.1, 3))
                        {
                            while spark.animate() {}
                            sparks.fetch_add(1, Ordering::Relaxed);
                        } // killed here
                    }
                });
                // A reader: bounds of the particles already handed to the pool.
                let reader = threads.spawn(move || {
                    pool.iter().fold((f64::MAX, f64::MIN), |(lo, hi), (_, p)| {
                        (lo.min(p.x), hi.max(p.x))
                    })
                });
                reader.join().unwrap()
            });

            // ----- phase 2: simulate, with exclusive access -----
            let spawned = particles.len();
            particles.retain(|_, p| p.animate());
            println!(
                "frame {frame:2}: {spawned:3} live after spawning, {:3} after simulating \
                 (x in {:.1}..{:.1})",
                particles.len(),
                if bounds.0 == f64::MAX { 0.0 } else { bounds.0 },
                if bounds.1 == f64::MIN { 0.0 } else { bounds.1 },
            );
        }

        println!(
            "high water: {} of {} slots; {} particles skipped because the pool was full; \
             {} sparks fired",
            particles.high_water_len(),
            particles.capacity(),
            skipped.load(Ordering::Relaxed),
            sparks.load(Ordering::Relaxed),
        );
    }); // the particles still alive are dropped here, then the memory rewinds

    assert_eq!(memory.used(), 0);
}
