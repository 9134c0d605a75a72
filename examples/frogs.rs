//! The talk's `FrogSystem`, grown into a tiny engine loop on one block of memory:
//! a systems scope, two levels loaded and unloaded in turn (each with its own pool size:
//! "reconfigure after rewind"), and per-frame scratch scopes.
//!
//! Run it with `cargo run --release --example frogs`.

use std::sync::Mutex;

use scope_stack::{LinearAllocator, ScopeStack};

#[derive(Clone, Copy, Default)]
struct Frog {
    position: [f32; 2],
    velocity: [f32; 2],
}

/// Level-lifetime system: plain data plus one object with cleanup (the lock).
struct FrogSystem<'s> {
    frogs: &'s mut [Frog],
    lock: &'s Mutex<u64>, // finalized: dropped when the level unwinds
}

impl<'s> FrogSystem<'s> {
    fn init(level: &ScopeStack<'s>, max_frogs: usize) -> &'s mut FrogSystem<'s> {
        level.new_pod(FrogSystem {
            frogs: level.alloc_slice_fill_with(max_frogs, |i| Frog {
                position: [(i % 100) as f32, 0.0],
                velocity: [1.0, 0.5],
            }),
            lock: level.new_object(Mutex::new(0)),
        })
    }

    /// One frame: the temporaries live in the frame's scope and vanish with it.
    fn update(&mut self, frame: &ScopeStack<'_>, dt: f32) -> usize {
        let mut hops = self.lock.lock().unwrap();
        // Scratch: indices of frogs that left the pond this frame.
        let outside = frame.alloc_slice_fill_with(self.frogs.len(), |_| 0u32);
        let mut n = 0;
        for (i, frog) in self.frogs.iter_mut().enumerate() {
            frog.position[0] += frog.velocity[0] * dt;
            frog.position[1] += frog.velocity[1] * dt;
            if frog.position[0] > 100.0 {
                frog.position[0] -= 100.0;
                outside[n] = i as u32;
                n += 1;
            }
        }
        *hops += n as u64;
        n
    }
}

fn main() -> Result<(), scope_stack::AllocError> {
    let mut memory = LinearAllocator::with_capacity(8 << 20)?;
    memory.scope("systems", |systems| {
        let log = systems.new_object(Vec::<String>::with_capacity(8));
        for (level_no, max_frogs) in [(1, 10_000usize), (2, 50_000)] {
            systems.scope("level", |level| {
                let frogs = FrogSystem::init(level, max_frogs);
                let level_used = level.allocator().used();
                let mut wrapped = 0;
                for frame_no in 0..120 {
                    wrapped += level.scope("frame", |frame| {
                        let title =
                            frame.alloc_fmt(format_args!("level {level_no} frame {frame_no}"));
                        debug_assert!(title.starts_with("level"));
                        frogs.update(frame, 1.0 / 60.0)
                    });
                }
                log.push(format!(
                    "level {level_no}: {max_frogs} frogs, {wrapped} wrap-arounds, \
                     {} KiB in use at load, {} hops counted",
                    level_used / 1024,
                    frogs.lock.lock().unwrap()
                ));
            });
            // The level's memory is back: the next level starts at the same address.
            println!(
                "after unloading level {level_no}: {} bytes in use",
                systems.allocator().used()
            );
        }
        for line in log.iter() {
            println!("{line}");
        }
    });
    println!(
        "block: {} KiB, high-water mark {} KiB, {} bytes in use at exit",
        memory.capacity() / 1024,
        memory.high_water_mark() / 1024,
        memory.used()
    );
    Ok(())
}
