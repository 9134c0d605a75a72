//! The crate's per-frame paths touch no global heap after warm-up: rotating a frame
//! arena, writing to a frame through `with_scope` and `with_mut`, checking for a level
//! with nothing pending, scratch through the arenas, and the stats update. Counted per
//! thread (allocation-counter's counting global allocator), so Bevy's pool threads do
//! not blur the count.

use bevy_app::{App, TaskPoolPlugin};
use scope_stack::{slot_root, ConcurrentScope, Pool};
use scope_stack_bevy::{FrameArena, LevelSlots, ScopeStackPlugin, ScratchArenas, ScratchStats};

/// Heap allocations `f` made on this thread.
fn allocations_in(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

struct Draws<'s> {
    sprites: &'s Pool<'s, [f32; 2]>,
    label: &'s str,
}
slot_root!(struct DrawsRoot => Draws);

fn new_frame<'s>(scope: &'s ConcurrentScope<'s>) -> Draws<'s> {
    Draws {
        sprites: scope.new_pool(256),
        label: "",
    }
}

slot_root!(struct Unit = for<'s> ());

#[test]
fn rotating_writing_swapping_scratch_and_stats_allocate_nothing_after_warm_up() {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()));
    app.finish();
    app.update();
    let mut arena = FrameArena::<DrawsRoot>::new("frames", 3, 64 << 10, new_frame).unwrap();
    let mut levels = LevelSlots::<Unit>::new("levels", 2, 4096).unwrap();
    let arenas = ScratchArenas::new(64 << 10);
    let mut frame = || {
        arena.rotate();
        arena.with_scope(|d, _| {
            for i in 0..100 {
                let _kept = d.sprites.insert([i as f32, 0.0]).unwrap().into_handle();
            }
        });
        arena.with_mut(|d, scope| {
            d.label = scope.alloc_fmt(format_args!("{} sprites", d.sprites.len()))
        });
        assert!(!levels.swap());
        arenas.with(|s| {
            s.alloc_slice_fill_with(100, |i| i as u64)
                .iter()
                .sum::<u64>()
        })
    };
    // Warm-up: the first frames reserve this thread's pad.
    for _ in 0..5 {
        frame();
    }
    assert_eq!(
        allocations_in(|| for _ in 0..100 {
            frame();
        }),
        0
    );
    // What the stats system does each frame: read every pad's figures, then reset.
    let mut arenas = arenas;
    let mut stats = || {
        let high = arenas.pads_mut().stats().map(|p| p.high_water_mark).max();
        arenas.pads_mut().reset_all();
        high
    };
    assert_eq!(
        allocations_in(|| for _ in 0..10 {
            stats();
        }),
        0
    );
    // And the app's frames, whose `ScratchStats` figures come from the same calls.
    app.update();
    assert!(app.world().resource::<ScratchStats>().frames >= 2);
}
