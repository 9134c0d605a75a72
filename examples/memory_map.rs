//! Writes a picture of a block's memory map to `target/memory_map.svg` (or the path given
//! as the first argument; it never writes into the source tree) and prints the same map
//! as a table: a systems scope with a settings store and a `Slots` set of two streamed
//! world cells (one loaded, holding a pool of its props, one free), a level with its
//! pools (a concurrent `Pool` per kind of object, a `DensePool` roster of props) and
//! finalized objects, and a frame scope on top, with a concurrent scope that three
//! workers fill.
//!
//! Run it with `cargo run --example memory_map` (optionally pass an output path).

use scope_stack::{slot_root, ConcurrentConfig, LinearAllocator, Pool};

#[derive(Clone, Copy, Default)]
struct Enemy {
    _position: [f32; 3],
    _health: u32,
}

#[derive(Clone, Copy, Default)]
struct Projectile {
    _position: [f32; 3],
    _velocity: [f32; 3],
}

/// Something placed in a world cell.
#[derive(Clone, Copy, Default)]
struct Prop {
    _position: [f32; 3],
    _kind: u32,
}

// A loaded cell's root: the pool of its props, carved in the cell's slot.
slot_root!(struct Cell = for<'s> &'s Pool<'s, Prop>);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = match std::env::args().nth(1) {
        Some(path) => std::path::PathBuf::from(path),
        None => default_path(),
    };
    let mut memory = LinearAllocator::with_capacity(512 * 1024)?;
    let (svg, table) = memory.scope("systems", |systems| {
        systems.new_object(String::from("renderer")); // finalized: dropped on unwind
        systems.alloc_slice_fill_with(8 * 1024, |i| i as u8); // shader cache
        let settings = systems.new_store::<[f32; 4]>(64, 128); // versioned settings
        for i in 0..20 {
            settings.create([i as f32; 4]).ok();
        }
        // Streamed world cells: two slots that load and unload in any order. One holds
        // a cell (its terrain and a pool of its props), the other is free.
        let cells = systems.new_slots("cells", 2, 24 * 1024);
        let _cell = cells
            .load::<Cell>("cell 3,4", |cell| {
                cell.alloc_slice_fill_with(6 * 1024, |i| i as u8); // terrain
                let props = cell.new_pool::<Prop>(256);
                for _ in 0..90 {
                    // Kept in the pool (by handle) until the cell unloads.
                    props.insert(Prop::default()).ok().map(|p| p.into_handle());
                }
                &*props
            })
            .expect("a free cell");
        systems.scope_with_budget("level", 384 * 1024, |level| {
            level.alloc_slice_fill_with(24 * 1024, |i| i as u32); // level geometry
            let enemies = level.new_pool::<Enemy>(2048);
            let projectiles = level.new_pool::<Projectile>(4096);
            let sounds = level.new_pool::<String>(64);
            let _e: Vec<_> = (0..700)
                .map(|_| enemies.insert(Enemy::default()).ok())
                .collect();
            let _p: Vec<_> = (0..1500)
                .map(|_| projectiles.insert(Projectile::default()).ok())
                .collect();
            let _s = sounds.insert(String::from("ambience"));
            let props = level.new_dense_pool::<u64>(512);
            let placed: Vec<_> = (0..300).filter_map(|i| props.insert(i).ok()).collect();
            for &h in placed.iter().step_by(3) {
                props.remove(h); // destructible props, already broken
            }
            level.new_object(String::from("level name"));
            level.scope("frame", |frame| {
                frame.alloc_slice_fill_with(16 * 1024, |i| i as u16); // draw list
                frame.alloc_fmt(format_args!("frame {}", 1));
                // Three workers cull into a concurrent scope: each claims a chunk.
                let config = ConcurrentConfig::new().budget(48 * 1024).threads(4);
                frame.scope_concurrent_with("jobs", config, |jobs| {
                    let all_started = std::sync::Barrier::new(3);
                    std::thread::scope(|t| {
                        for w in 0..3u32 {
                            let all_started = &all_started;
                            t.spawn(move || {
                                all_started.wait(); // all three live: a chunk each
                                let here = jobs.local();
                                for batch in 0..4 * (w + 1) {
                                    here.alloc_iter((0..90).filter(|i| i % 3 == batch % 3));
                                }
                                all_started.wait();
                            });
                        }
                    });
                    let map = jobs.report();
                    (map.to_svg(), map.to_string())
                })
            })
        })
    });
    std::fs::write(&path, svg)?;
    println!("{table}");
    println!("wrote {}", path.display());
    Ok(())
}

/// `memory_map.svg` in the build's target folder: `CARGO_TARGET_DIR` if set, else the
/// `target/` beside this package's manifest (created if needed), so a run never leaves
/// files in the source tree.
fn default_path() -> std::path::PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let _ = std::fs::create_dir_all(&target);
    target.join("memory_map.svg")
}
