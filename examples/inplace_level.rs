//! A level cooked with rkyv, read straight from its file into a slot, and played where
//! it lies: the geometry and names are the archive's, the live enemies a `Pool` the
//! build step filled from the archived spawn list (feature `rkyv`).
//!
//! Run with `cargo run --example inplace_level --features rkyv`.

use std::fs::File;

use rkyv::rancor::Error as RkyvError;
use scope_stack::inplace::{BuildError, FromReader};
use scope_stack::{slot_root, LinearAllocator, Pool};

/// The game's level type: what the tools cook and the game reads in place.
#[derive(rkyv::Archive, rkyv::Serialize)]
struct Level {
    name: String,
    geometry: Vec<[f32; 3]>,
    spawns: Vec<Spawn>,
}

#[derive(rkyv::Archive, rkyv::Serialize)]
struct Spawn {
    kind: String,
    hp: u32,
}

/// The runtime half: live enemies, their names borrowed from the archive.
struct Enemy<'s> {
    kind: &'s str,
    hp: u32,
}
slot_root!(struct Live = for<'s> &'s mut Pool<'s, Enemy<'s>>);

/// The cooking tool: the game's own types, written with `rkyv::to_bytes`.
fn cook(name: &str, enemies: u32) -> Level {
    Level {
        name: name.into(),
        geometry: (0..1000).map(|i| [i as f32, 0.0, (i * 2) as f32]).collect(),
        spawns: (0..enemies)
            .map(|i| Spawn {
                kind: if i % 2 == 0 {
                    "wolf".into()
                } else {
                    "bear".into()
                },
                hp: 20 + i,
            })
            .collect(),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir();
    let mut files = Vec::new();
    for (name, enemies) in [("forest", 40), ("castle", 80)] {
        let path = dir.join(format!("scope-stack-{name}.level"));
        std::fs::write(&path, rkyv::to_bytes::<RkyvError>(&cook(name, enemies))?)?;
        files.push((name, path));
    }

    let mut memory = LinearAllocator::with_capacity(1 << 20)?;
    memory.scope("game", |game| -> Result<(), Box<dyn std::error::Error>> {
        let levels = game.new_slots("levels", 2, 128 << 10);
        for (name, path) in &files {
            let file = File::open(path)?;
            let len = file.metadata()?.len() as usize;
            // One read, straight into the slot; validated before the game sees it.
            let mut level = levels
                .load_archived_with::<Level, Live, &str>(name, FromReader::new(file, len), |level, scope| {
                    let enemies = scope.try_new_pool_pod(level.spawns.len()).map_err(|_| "no room for enemies")?;
                    for s in level.spawns.iter() {
                        let enemy = Enemy { kind: s.kind.as_str(), hp: s.hp.to_native() };
                        let _ = enemies.insert(enemy).map_err(|_| "pool full")?.into_handle();
                    }
                    Ok(enemies)
                })
                .map_err(|e: BuildError<&str>| e.to_string())?;
            // Play: the runtime half changes, the archived half is read where it lies.
            for _frame in 0..10 {
                level.with_mut(|l, _| {
                    for e in l.runtime.values_mut() {
                        e.hp = e.hp.saturating_sub(if e.kind == "wolf" { 3 } else { 1 });
                    }
                });
            }
            level.with(|l| {
                let alive = l.runtime.values().filter(|e| e.hp > 0).count();
                println!(
                    "{}: {} vertices, {} spawns, {alive} alive after 10 frames ({} bytes in the slot)",
                    l.archived.name,
                    l.archived.geometry.len(),
                    l.archived.spawns.len(),
                    level.used()
                );
            });
            // Dropping `level` unloads the slot in one step for the next level.
        }
        assert_eq!(levels.loaded(), 0);
        Ok(())
    })?;
    for (_, path) in files {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}
