//! `LevelSlots`: levels built on the async compute pool, swapped in during `PreUpdate`,
//! the replaced level unloading; built from a file's bytes with the `serde` feature.

// `SlotError` keeps its names inline (no heap), as the core's own tests allow.
#![allow(clippy::result_large_err)]

use std::sync::atomic::{AtomicUsize, Ordering};

use bevy_app::{App, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use scope_stack::{slot_root, Place};
use scope_stack_bevy::{LevelEvent, LevelMessage, LevelSlots, ScopeStackAppExt, ScopeStackPlugin};

static DROPPED: AtomicUsize = AtomicUsize::new(0);

struct Counted;
impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg_attr(feature = "serde", derive(scope_stack::DeserializeIn))]
struct Level<'s> {
    name: &'s str,
    spawns: &'s [[f32; 2]],
}
slot_root!(struct LevelRoot => Level);

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
        .insert_level_slots(LevelSlots::<LevelRoot>::new("levels", 2, 64 << 10).unwrap());
    app.finish();
    app
}

fn levels(app: &App) -> &LevelSlots<LevelRoot> {
    app.world().resource::<LevelSlots<LevelRoot>>()
}

/// Runs frames until the pending build is swapped in (at most 10 s).
fn run_until_swapped(app: &mut App) {
    let start = std::time::Instant::now();
    while levels(app).is_loading() {
        assert!(start.elapsed().as_secs() < 10, "the build never finished");
        app.update();
    }
}

#[test]
fn a_level_streams_in_and_the_next_one_replaces_it() {
    let mut app = app();
    app.update();
    assert!(levels(&app).current().is_none());
    for (round, name) in ["forest", "castle", "caves"].into_iter().enumerate() {
        app.world_mut()
            .resource_mut::<LevelSlots<LevelRoot>>()
            .stream(name, move |s| {
                s.new_object(Counted);
                Level {
                    name: s.alloc_str(name),
                    spawns: s.alloc_slice_fill_with(100 * (round + 1), |i| [i as f32, 1.0]),
                }
            });
        run_until_swapped(&mut app);
        let levels = levels(&app);
        assert_eq!(levels.with(|l| l.name.to_string()).as_deref(), Some(name));
        assert_eq!(levels.with(|l| l.spawns.len()), Some(100 * (round + 1)));
        assert_eq!(levels.swaps(), round as u64 + 1);
        assert_eq!(levels.slots().loaded(), 1, "the replaced level unloaded");
        // Every level before this one dropped its `Counted` at its swap.
        assert_eq!(DROPPED.load(Ordering::Relaxed), round);
    }
    app.world_mut()
        .resource_mut::<LevelSlots<LevelRoot>>()
        .unload();
    assert_eq!(DROPPED.load(Ordering::Relaxed), 3);
    assert_eq!(levels(&app).slots().loaded(), 0);
}

#[test]
fn a_level_too_big_for_its_slot_is_an_error_and_the_slot_is_free() {
    let mut app = app();
    app.world_mut()
        .resource_mut::<LevelSlots<LevelRoot>>()
        .stream_with("huge", |slots, name| {
            slots.try_load_concurrent::<LevelRoot>(name, |s| {
                Ok(Level {
                    name: "huge",
                    spawns: s.try_alloc_slice_fill_with(1 << 20, |_| [0.0; 2])?,
                })
            })
        });
    run_until_swapped(&mut app);
    let levels = levels(&app);
    assert!(levels.current().is_none());
    assert!(
        levels.last_error().unwrap().contains("huge"),
        "{:?}",
        levels.last_error()
    );
    assert_eq!(levels.slots().loaded(), 0);
}

#[cfg(feature = "serde")]
#[test]
fn a_level_streams_in_from_a_files_bytes() {
    let mut app = app();
    let file = br#"{"name": "harbour", "spawns": [[1, 2], [3, 4], [5, 6]]}"#.to_vec();
    app.world_mut()
        .resource_mut::<LevelSlots<LevelRoot>>()
        .stream_from_bytes("harbour", file, |bytes, reader| {
            reader.read(&mut serde_json::Deserializer::from_slice(bytes))
        });
    run_until_swapped(&mut app);
    let levels = levels(&app);
    assert_eq!(
        levels.with(|l| (l.name.to_string(), l.spawns[2])),
        Some(("harbour".to_string(), [5.0, 6.0]))
    );
    assert_eq!(levels.current().unwrap().name(), "harbour");
}

#[cfg(feature = "serde")]
#[test]
fn a_broken_file_is_an_error_and_the_playing_level_stays() {
    let mut app = app();
    let good = br#"{"name": "harbour", "spawns": []}"#.to_vec();
    let bad = br#"{"name": "harbour", "spawns": [[1, "x"]]}"#.to_vec();
    for file in [good, bad] {
        app.world_mut()
            .resource_mut::<LevelSlots<LevelRoot>>()
            .stream_from_bytes("harbour", file, |bytes, reader| {
                reader.read(&mut serde_json::Deserializer::from_slice(bytes))
            });
        run_until_swapped(&mut app);
    }
    let levels = levels(&app);
    assert!(levels.last_error().is_some());
    assert_eq!(levels.swaps(), 1);
    assert_eq!(levels.with(|l| l.name.len()), Some(7));
    assert_eq!(levels.slots().loaded(), 1);
}

/// Every level message read so far, in order.
#[derive(Resource, Default)]
struct Heard(Vec<LevelMessage<LevelRoot>>);

fn listen(mut messages: MessageReader<LevelMessage<LevelRoot>>, mut heard: ResMut<Heard>) {
    heard.0.extend(messages.read().cloned());
}

fn listening_app() -> App {
    let mut app = app();
    app.init_resource::<Heard>().add_systems(Update, listen);
    app
}

fn heard(app: &mut App) -> Vec<LevelMessage<LevelRoot>> {
    std::mem::take(&mut app.world_mut().resource_mut::<Heard>().0)
}

#[test]
fn levels_announce_ready_swapped_and_failed() {
    let mut app = listening_app();
    app.update();
    assert!(
        heard(&mut app).is_empty(),
        "no message before a build finishes"
    );
    let stream = |app: &mut App, name: &'static str| {
        app.world_mut()
            .resource_mut::<LevelSlots<LevelRoot>>()
            .stream(name, move |s| Level {
                name: s.alloc_str(name),
                spawns: &[],
            });
        run_until_swapped(app);
        app.update(); // `listen` runs in `Update`, after the swap in `PreUpdate`
    };
    stream(&mut app, "forest");
    assert_eq!(
        heard(&mut app),
        [
            LevelMessage::new("forest".into(), LevelEvent::Ready),
            LevelMessage::new("forest".into(), LevelEvent::Swapped { replaced: None }),
        ]
    );
    stream(&mut app, "castle");
    assert_eq!(
        heard(&mut app),
        [
            LevelMessage::new("castle".into(), LevelEvent::Ready),
            LevelMessage::new(
                "castle".into(),
                LevelEvent::Swapped {
                    replaced: Some("forest".into())
                }
            ),
        ]
    );
    app.world_mut()
        .resource_mut::<LevelSlots<LevelRoot>>()
        .stream_with("huge", |slots, name| {
            slots.try_load_concurrent::<LevelRoot>(name, |s| {
                Ok(Level {
                    name: "huge",
                    spawns: s.try_alloc_slice_fill_with(1 << 20, |_| [0.0; 2])?,
                })
            })
        });
    run_until_swapped(&mut app);
    app.update();
    let messages = heard(&mut app);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(&*messages[0].name, "huge");
    let LevelEvent::Failed { error } = &messages[0].event else {
        panic!("{messages:?}")
    };
    assert_eq!(
        Some(&**error),
        app.world().resource::<LevelSlots<LevelRoot>>().last_error()
    );
    let levels = levels(&app);
    assert_eq!((levels.swaps(), levels.failures()), (2, 1));
    assert_eq!(levels.with(|l| l.name.len()), Some(6), "castle still plays");
    // Nothing more on quiet frames.
    app.update();
    assert!(heard(&mut app).is_empty());
}

#[cfg(feature = "serde")]
#[test]
fn a_good_file_and_a_corrupt_one_announce_themselves() {
    let mut app = listening_app();
    let good = br#"{"name": "harbour", "spawns": [[1, 2]]}"#.to_vec();
    let corrupt = br#"{"name": "docks", "spawns": [[1, "x"]]}"#.to_vec();
    for (name, file) in [("harbour", good), ("docks", corrupt)] {
        app.world_mut()
            .resource_mut::<LevelSlots<LevelRoot>>()
            .stream_from_bytes(name, file, |bytes, reader| {
                reader.read(&mut serde_json::Deserializer::from_slice(bytes))
            });
        run_until_swapped(&mut app);
    }
    app.update();
    let messages = heard(&mut app);
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(
        messages[..2],
        [
            LevelMessage::new("harbour".into(), LevelEvent::Ready),
            LevelMessage::new("harbour".into(), LevelEvent::Swapped { replaced: None }),
        ]
    );
    assert_eq!(&*messages[2].name, "docks");
    match &messages[2].event {
        LevelEvent::Failed { error } => assert!(error.contains("invalid type"), "{error}"),
        other => panic!("{other:?}"),
    }
    let levels = levels(&app);
    assert_eq!((levels.swaps(), levels.failures()), (1, 1));
    assert_eq!(levels.current().unwrap().name(), "harbour");
    assert_eq!(
        levels.slots().loaded(),
        1,
        "the corrupt level's slot is free"
    );
}
