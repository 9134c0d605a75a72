//! What a JSON level takes in its slot, by the slot kind `LevelSlots` loads it through:
//! a task slot (`LevelReader::read`, the default) takes what a plain load takes; a
//! concurrent slot (`LevelReader::read_concurrent`) takes more (per-thread chunks).
//! The figures are the crate's own report (`Loaded::used`); `--nocapture` prints them
//! (the README's sizing table).
#![cfg(feature = "serde")]
// `LoadError` keeps the slot's error inline (no heap), as the core's own tests allow.
#![allow(clippy::result_large_err)]

use bevy_app::{App, TaskPoolPlugin};
use scope_stack::{slot_root, DeserializeIn, Slots};
use scope_stack_bevy::{LevelReader, LevelSlots, LoadedLevel, ScopeStackAppExt, ScopeStackPlugin};

#[derive(DeserializeIn)]
#[allow(dead_code)]
struct Room<'s> {
    name: &'s str,
    tiles: &'s [u16],
    doors: &'s [[f32; 2]],
}

#[derive(DeserializeIn)]
#[allow(dead_code)]
struct Level<'s> {
    name: &'s str,
    spawns: &'s [[f32; 2]],
    rooms: &'s [Room<'s>],
    tags: &'s [&'s str],
}
slot_root!(struct LevelRoot => Level);

/// A level file of about 13 KB: 400 spawn points, 24 rooms of 64 tiles and 4 doors,
/// 40 tags.
fn level_file() -> Vec<u8> {
    let spawns: Vec<String> = (0..400)
        .map(|i| format!("[{}, {}]", i % 37, i / 37))
        .collect();
    let rooms: Vec<String> = (0..24)
        .map(|r| {
            let tiles: Vec<String> = (0..64).map(|t| ((r * 7 + t) % 300).to_string()).collect();
            format!(
                r#"{{"name": "room {r}", "tiles": [{}], "doors": [[0, 1], [2, 3], [4, 5], [6, 7]]}}"#,
                tiles.join(", ")
            )
        })
        .collect();
    let tags: Vec<String> = (0..40).map(|t| format!("\"tag-{t}\"")).collect();
    format!(
        r#"{{"name": "harbour", "spawns": [{}], "rooms": [{}], "tags": [{}]}}"#,
        spawns.join(", "),
        rooms.join(", "),
        tags.join(", ")
    )
    .into_bytes()
}

/// How the level is read: `LevelReader::read` or `read_concurrent`.
type Read = fn(&[u8], LevelReader<'_, LevelRoot>) -> Result<LoadedLevel<LevelRoot>, String>;

/// Streams the level through `LevelSlots` with `read` and returns its bytes in use.
fn streamed(read: Read) -> (usize, &'static str) {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::lean()))
        .insert_level_slots(LevelSlots::<LevelRoot>::new("levels", 2, 256 << 10).unwrap());
    app.finish();
    app.world_mut()
        .resource_mut::<LevelSlots<LevelRoot>>()
        .stream_from_bytes("harbour", level_file(), read);
    let start = std::time::Instant::now();
    while app.world().resource::<LevelSlots<LevelRoot>>().is_loading() {
        assert!(start.elapsed().as_secs() < 10, "the build never finished");
        app.update();
    }
    let levels = app.world().resource::<LevelSlots<LevelRoot>>();
    let level = levels.current().expect("the level loaded");
    assert_eq!(
        level.with(|l| (l.spawns.len(), l.rooms.len(), l.tags.len())),
        (400, 24, 40)
    );
    if std::env::var_os("LEVEL_MAP").is_some() {
        println!("{}", levels.map_handle().report());
    }
    (level.used(), level.kind())
}

#[test]
fn a_task_slot_level_takes_what_a_plain_load_takes() {
    let file = level_file();
    let plain_slots = Slots::leak("plain", 1, 256 << 10).unwrap();
    let plain = plain_slots
        .load_from::<LevelRoot, _>("harbour", &mut serde_json::Deserializer::from_slice(&file))
        .unwrap()
        .used();
    let (task, kind) = streamed(|bytes, reader| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        reader
            .read(&mut de)
            .map(Into::into)
            .map_err(|e| e.to_string())
    });
    assert_eq!(kind, "task");
    let (shared, kind) = streamed(|bytes, reader| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        reader
            .read_concurrent(&mut de)
            .map(Into::into)
            .map_err(|e| e.to_string())
    });
    assert_eq!(kind, "shared");
    println!(
        "JSON level of {} B: plain load {plain} B, task slot (read) {task} B ({:.2}x), \
         concurrent slot (read_concurrent) {shared} B ({:.2}x)",
        file.len(),
        task as f64 / plain as f64,
        shared as f64 / plain as f64,
    );
    assert!(
        task as f64 <= plain as f64 * 1.1,
        "a task slot took {task} B for a level a plain load fits in {plain} B"
    );
    assert!(shared > task);
}
