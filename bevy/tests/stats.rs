//! `FrameArenaStats` and `LevelSlotsStats`: the figures follow the frames and the
//! levels, and a frame in which nothing changed leaves the level stats untouched (no
//! change detected); with the `diagnostic` feature, the same figures are diagnostics.

// `SlotError` keeps its names inline (no heap), as the core's own tests allow.
#![allow(clippy::result_large_err)]

use bevy_app::{App, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use scope_stack::slot_root;
use scope_stack_bevy::{
    FrameArena, FrameArenaStats, LevelSlots, LevelSlotsStats, ScopeStackAppExt, ScopeStackPlugin,
};

slot_root!(struct Bytes = for<'s> &'s [u8]);

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
        .insert_frame_arena(FrameArena::<Bytes>::new("frames", 3, 64 << 10, |_| &[]).unwrap())
        .insert_level_slots(LevelSlots::<Bytes>::new("levels", 2, 64 << 10).unwrap());
    app.finish();
    app
}

/// Writes `n` bytes into the current frame through `Res`.
#[derive(Resource)]
struct Write(usize);

fn write(arena: Res<FrameArena<Bytes>>, n: Res<Write>) {
    arena.with_scope(|_, scope| {
        scope.alloc_slice_fill_copy(n.0, 7u8);
    });
}

fn stream(app: &mut App, name: &'static str, bytes: usize) {
    app.world_mut()
        .resource_mut::<LevelSlots<Bytes>>()
        .stream_with(name, move |slots, name| {
            slots.try_load_concurrent::<Bytes>(name, |s| {
                Ok(&*s.try_alloc_slice_fill_copy(bytes, 1u8)?)
            })
        });
    let start = std::time::Instant::now();
    while app.world().resource::<LevelSlots<Bytes>>().is_loading() {
        assert!(start.elapsed().as_secs() < 10, "the build never finished");
        app.update();
    }
}

#[test]
fn frame_stats_follow_the_bytes_each_frame_used() {
    let mut app = app();
    app.insert_resource(Write(1000)).add_systems(Update, write);
    app.update(); // frame 1 writes 1000
    app.world_mut().resource_mut::<Write>().0 = 5000;
    app.update(); // rotates (frame 1: 1000), frame 2 writes 5000
    let stats = *app.world().resource::<FrameArenaStats<Bytes>>().clone();
    assert_eq!(stats.frames, 2);
    // A concurrent slot counts the chunks its threads claimed, a few KiB over the data.
    assert!(
        (1000..64 << 10).contains(&stats.last_frame_bytes),
        "{stats:?}"
    );
    let first = stats.last_frame_bytes;
    app.world_mut().resource_mut::<Write>().0 = 10;
    app.update(); // rotates (frame 2: 5000)
    app.update(); // rotates (frame 3: 10)
    let stats = *app.world().resource::<FrameArenaStats<Bytes>>().clone();
    assert_eq!(stats.frames, 4);
    assert!(stats.last_frame_bytes < first, "{stats:?}");
    assert!(
        stats.high_water >= 5000 && stats.high_water > first,
        "{stats:?}"
    );
    assert_eq!((stats.bytes_each, stats.frames_held), (64 << 10, 3));
    assert_eq!(
        stats,
        app.world().resource::<FrameArena<Bytes>>().stats(),
        "the resource and the arena agree"
    );
}

/// Counts the frames in which `LevelSlotsStats` showed as changed.
#[derive(Resource, Default)]
struct Changes(u32);

fn count_changes(stats: Res<LevelSlotsStats<Bytes>>, mut changes: ResMut<Changes>) {
    if stats.is_changed() && !stats.is_added() {
        changes.0 += 1;
    }
}

#[test]
fn level_stats_count_loads_and_failures_and_change_only_when_they_do() {
    let mut app = app();
    app.init_resource::<Changes>()
        .add_systems(Update, count_changes);
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(app.world().resource::<Changes>().0, 0, "quiet frames");
    stream(&mut app, "small", 1000);
    stream(&mut app, "big", 20_000);
    stream(&mut app, "too big", 1 << 20);
    let stats = *app.world().resource::<LevelSlotsStats<Bytes>>().clone();
    assert_eq!((stats.loads, stats.failures, stats.loading), (2, 1, false));
    assert!(
        (20_000..64 << 10).contains(&stats.current_bytes),
        "{stats:?}"
    );
    assert_eq!(stats.high_water, stats.current_bytes);
    assert_eq!(stats.bytes_each, 64 << 10);
    let changes = app.world().resource::<Changes>().0;
    // Each stream changes `loading` (on, then off with the result): at most two a level.
    assert!((3..=6).contains(&changes), "{changes}");
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(app.world().resource::<Changes>().0, changes, "quiet again");
    stream(&mut app, "small again", 1000);
    let stats = *app.world().resource::<LevelSlotsStats<Bytes>>().clone();
    assert!(
        stats.current_bytes < 20_000 && stats.high_water >= 20_000,
        "{stats:?}"
    );
}

#[cfg(feature = "diagnostic")]
#[test]
fn the_figures_are_diagnostics() {
    use bevy_diagnostic::DiagnosticsStore;
    use scope_stack_bevy::diagnostic_path;

    let mut app = app();
    app.insert_resource(Write(3000)).add_systems(Update, write);
    stream(&mut app, "forest", 2000);
    stream(&mut app, "too big", 1 << 20);
    app.update();
    app.update();
    let store = app.world().resource::<DiagnosticsStore>();
    let value = |kind, set, figure| {
        store
            .get(&diagnostic_path(kind, set, figure))
            .and_then(|d| d.value())
            .unwrap_or_else(|| panic!("no {kind}/{set}/{figure}"))
    };
    assert!(value("frames", "frames", "last_frame_bytes") >= 3000.0);
    assert!(value("frames", "frames", "high_water") >= 3000.0);
    assert!(value("levels", "levels", "current_bytes") >= 2000.0);
    assert_eq!(value("levels", "levels", "loads"), 1.0);
    assert_eq!(value("levels", "levels", "failures"), 1.0);
    let reserved = value("scratch", "", "bytes_reserved");
    assert!(reserved >= (1 << 20) as f64, "{reserved}");
    assert!(value("scratch", "", "frame_high_water") >= 0.0);
}
