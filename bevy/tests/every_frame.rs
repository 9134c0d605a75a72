//! The plugin's every-frame systems (the frame rotation and the scratch stats) run in
//! its two single-threaded schedules, placed once in the main order: `ScopeStackFirst`
//! just before `First`, `ScopeStackPreLast` between `PostUpdate` and `Last`. Systems in
//! `First` see the new frame; systems in `Last` see this frame's scratch figures.

use bevy_app::{App, First, Last, MainScheduleOrder, PostUpdate, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use scope_stack::slot_root;
use scope_stack_bevy::{
    FrameArena, ScopeStackAppExt, ScopeStackFirst, ScopeStackPlugin, ScopeStackPreLast,
    ScopeStackSystems, Scratch, ScratchStats,
};

slot_root!(struct Unit = for<'s> ());

#[derive(Resource, Default)]
struct Seen {
    frames_in_first: Vec<u64>,
    stats_in_last: Vec<(u64, usize)>,
}

fn in_first(arena: Res<FrameArena<Unit>>, mut seen: ResMut<Seen>) {
    seen.frames_in_first.push(arena.frame());
}

fn use_scratch(scratch: Scratch) {
    scratch.with(|s| {
        s.alloc_raw(3000, 1);
    });
}

fn in_last(stats: Res<ScratchStats>, mut seen: ResMut<Seen>) {
    seen.stats_in_last
        .push((stats.frames, stats.frame_high_water));
}

fn order(app: &App) -> Vec<InternedScheduleLabel> {
    app.world().resource::<MainScheduleOrder>().labels.clone()
}

fn position(order: &[InternedScheduleLabel], label: impl ScheduleLabel) -> usize {
    let label = label.intern();
    let at: Vec<usize> = (0..order.len()).filter(|&i| order[i] == label).collect();
    assert_eq!(at.len(), 1, "{label:?} is placed once");
    at[0]
}

fn check(mut app: App) {
    app.init_resource::<Seen>()
        .add_systems(First, in_first)
        .add_systems(Update, use_scratch)
        // Ordering against the sets still builds (they run in the plugin's schedules).
        .add_systems(
            Last,
            in_last
                .after(ScopeStackSystems::ScratchStats)
                .after(ScopeStackSystems::MemoryMap),
        );
    app.finish();
    app.cleanup();
    let order = order(&app);
    assert_eq!(
        position(&order, ScopeStackFirst) + 1,
        position(&order, First)
    );
    assert_eq!(
        position(&order, PostUpdate) + 1,
        position(&order, ScopeStackPreLast)
    );
    assert_eq!(
        position(&order, ScopeStackPreLast) + 1,
        position(&order, Last)
    );
    for _ in 0..3 {
        app.update();
    }
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.frames_in_first, [1, 2, 3], "rotated before First");
    assert_eq!(
        seen.stats_in_last.iter().map(|s| s.0).collect::<Vec<_>>(),
        [1, 2, 3],
        "this frame's figures in Last"
    );
    assert!(seen.stats_in_last.iter().all(|s| s.1 >= 3000));
    assert_eq!(app.world().resource::<FrameArena<Unit>>().frame(), 3);
}

fn arena() -> FrameArena<Unit> {
    FrameArena::<Unit>::new("frames", 2, 4096, |_| ()).unwrap()
}

#[test]
fn the_rotation_and_the_stats_run_in_the_plugins_schedules_around_bevys() {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::lean()))
        .insert_frame_arena(arena());
    check(app);
}

#[test]
fn a_frame_arena_inserted_before_the_plugin_places_the_schedules_once() {
    let mut app = App::new();
    app.add_plugins(TaskPoolPlugin::default())
        .insert_frame_arena(arena())
        .add_plugins(ScopeStackPlugin::lean());
    check(app);
}
