//! `FrameArena`: rotation in `First`, parallel writers through `Res`, `ResMut` writers,
//! and the oldest frame unloading (its finalizers run).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bevy_app::{App, PostUpdate, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use scope_stack::{slot_root, ConcurrentScope, Pool};
use scope_stack_bevy::{FrameArena, ScopeStackAppExt, ScopeStackPlugin};

static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// Counts its drops, so the test sees when a frame's finalizers run.
struct Counted;
impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

struct Frame<'s> {
    sprites: &'s Pool<'s, [f32; 2]>,
    labels: Mutex<Vec<&'s str>>,
    title: &'s str,
}
slot_root!(struct FrameRoot => Frame);

fn new_frame<'s>(scope: &'s ConcurrentScope<'s>) -> Frame<'s> {
    scope.new_object(Counted);
    Frame {
        sprites: scope.new_pool(1024),
        labels: Mutex::new(Vec::new()),
        title: "",
    }
}

fn sprites_a(frame: Res<FrameArena<FrameRoot>>) {
    frame.with_scope(|f, scope| {
        for i in 0..100 {
            let _kept = f.sprites.insert([i as f32, 0.0]).unwrap().into_handle();
        }
        f.labels.lock().unwrap().push(scope.alloc_str("a"));
    });
}

fn sprites_b(frame: Res<FrameArena<FrameRoot>>) {
    frame.with_scope(|f, scope| {
        for i in 0..100 {
            let _kept = f.sprites.insert([0.0, i as f32]).unwrap().into_handle();
        }
        f.labels.lock().unwrap().push(scope.alloc_str("b"));
    });
}

fn title(mut frame: ResMut<FrameArena<FrameRoot>>) {
    let n = frame.frame();
    frame.with_mut(|f, scope| f.title = scope.alloc_fmt(format_args!("frame {n}")));
}

#[derive(Resource, Default)]
struct Seen(Vec<(u64, usize, usize, String)>);

fn read(frame: Res<FrameArena<FrameRoot>>, mut seen: ResMut<Seen>) {
    let (sprites, labels, title) = frame.with(|f| {
        (
            f.sprites.len(),
            f.labels.lock().unwrap().len(),
            f.title.to_string(),
        )
    });
    seen.0.push((frame.frame(), sprites, labels, title));
}

#[test]
fn frames_rotate_writers_share_the_frame_and_the_oldest_unloads() {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
        .init_resource::<Seen>()
        .insert_frame_arena(
            FrameArena::<FrameRoot>::new("frames", 3, 128 << 10, new_frame).unwrap(),
        )
        .add_systems(
            Update,
            (
                sprites_a,
                sprites_b,
                title.after(sprites_a).after(sprites_b),
            ),
        )
        .add_systems(PostUpdate, read);
    app.finish();
    for _ in 0..10 {
        app.update();
    }
    let seen = &app.world().resource::<Seen>().0;
    assert_eq!(seen.len(), 10);
    for (i, (frame, sprites, labels, title)) in seen.iter().enumerate() {
        let n = i as u64 + 1;
        assert_eq!(*frame, n);
        assert_eq!((*sprites, *labels), (200, 2), "frame {n}");
        assert_eq!(title, &format!("frame {n}"));
    }
    let arena = app.world().resource::<FrameArena<FrameRoot>>();
    assert_eq!(arena.frames_held(), 3);
    assert_eq!(arena.slots().loaded(), 3);
    // Frames 0..=10 were loaded, three are held: eight unloaded, each dropping its
    // `Counted` (11 loaded, frames 8, 9 and 10 still held).
    assert_eq!(DROPPED.load(Ordering::Relaxed), 8);
    assert_eq!(
        arena.previous(2).map(|f| f.name().to_string()).as_deref(),
        Some("frame 8")
    );
    assert_eq!(arena.current().name(), "frame 10");
    // An older frame still holds what was written to it.
    assert_eq!(arena.previous(1).unwrap().with(|f| f.sprites.len()), 200);
}
