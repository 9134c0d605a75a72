//! The memory map from a system: `MemoryMapRequest` prints or saves it, the text lists
//! every leaked set and the scratch figures, the SVG files are written.

use bevy_app::{App, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use scope_stack::slot_root;
use scope_stack_bevy::{
    FrameArena, LevelSlots, MemoryMapRequest, MemoryMaps, ScopeStackAppExt, ScopeStackPlugin,
    ScratchStats,
};

slot_root!(struct Bytes = for<'s> &'s [u8]);

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
        .insert_frame_arena(
            FrameArena::<Bytes>::new("map test frames", 2, 16 << 10, |s| {
                &*s.alloc_slice_fill_copy(5000, 7u8)
            })
            .unwrap(),
        )
        .insert_level_slots(LevelSlots::<Bytes>::new("map test levels", 2, 16 << 10).unwrap());
    app.finish();
    app
}

#[test]
fn the_text_lists_every_set_with_its_frames_and_the_scratch_figures() {
    let mut app = app();
    app.update();
    app.update();
    let maps = app.world().resource::<MemoryMaps>();
    assert_eq!(maps.handles().len(), 2);
    let text = maps.text(app.world().resource::<ScratchStats>());
    assert!(text.contains("map test frames"), "{text}");
    assert!(text.contains("map test levels"), "{text}");
    assert!(
        text.contains("frame 2") && text.contains("frame 1"),
        "{text}"
    );
    assert!(text.contains("scratch pads:"), "{text}");
}

fn ask_to_save(mut request: ResMut<MemoryMapRequest>, mut asked: Local<bool>) {
    if !*asked {
        request.save_to =
            Some(std::env::temp_dir().join(format!("scope-stack-bevy-map-{}", std::process::id())));
        *asked = true;
    }
}

#[test]
fn a_request_saves_the_text_and_one_svg_per_set_once() {
    let mut app = app();
    app.add_systems(Update, ask_to_save);
    for _ in 0..3 {
        app.update();
    }
    let request = app.world().resource::<MemoryMapRequest>();
    assert_eq!(request.served, 1);
    assert!(!request.is_pending());
    let files = request.last_saved.clone().unwrap().unwrap();
    assert_eq!(files.len(), 3);
    assert!(files[1].ends_with("map_test_frames.svg"));
    let svg = std::fs::read_to_string(&files[1]).unwrap();
    assert!(svg.starts_with("<svg") || svg.contains("<svg"));
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("map test levels"));
    std::fs::remove_dir_all(files[0].parent().unwrap()).unwrap();
}
