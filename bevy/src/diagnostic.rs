//! The crate's figures as `bevy_diagnostic` diagnostics (feature `diagnostic`), so they
//! show where Bevy users look (`LogDiagnosticsPlugin`, an on-screen overlay, any
//! reader of [`DiagnosticsStore`](bevy_diagnostic::DiagnosticsStore)).
//!
//! Paths, all in bytes but the counts:
//! - `scope_stack/scratch/frame_high_water`, `.../frame_high_water_total`,
//!   `.../bytes_reserved` ([`ScratchStats`](crate::ScratchStats)),
//! - `scope_stack/frames/<set>/last_frame_bytes`, `.../high_water`
//!   ([`FrameArenaStats`](crate::FrameArenaStats)),
//! - `scope_stack/levels/<set>/current_bytes`, `.../high_water`, `.../loads`,
//!   `.../failures` ([`LevelSlotsStats`](crate::LevelSlotsStats)),
//!
//! where `<set>` is the slot set's name (a `/` in it becomes `_`). The
//! [`ScopeStackPlugin`](crate::ScopeStackPlugin) registers the scratch diagnostics and
//! [`ScopeStackAppExt`](crate::ScopeStackAppExt) those of each set it adds, with a
//! system that measures them each frame after the stats are taken. A set's path text is
//! leaked once when it is registered (as the set itself is), so measuring clones no
//! string and allocates nothing once the diagnostics' histories are full.
//!
//! ```
//! use bevy_app::{App, TaskPoolPlugin};
//! use bevy_diagnostic::DiagnosticsStore;
//! use scope_stack::slot_root;
//! use scope_stack_bevy::{diagnostic_path, FrameArena, ScopeStackAppExt, ScopeStackPlugin};
//! slot_root!(struct Bytes = for<'s> &'s [u8]);
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
//!     .insert_frame_arena(
//!         FrameArena::<Bytes>::new("frames", 2, 4096, |s| &*s.alloc_slice_copy(&[0u8; 100])).unwrap(),
//!     );
//! app.update();
//! app.update();
//! let store = app.world().resource::<DiagnosticsStore>();
//! let path = diagnostic_path("frames", "frames", "last_frame_bytes");
//! assert!(store.get(&path).unwrap().value().unwrap() >= 100.0);
//! let reserved = diagnostic_path("scratch", "", "bytes_reserved");
//! assert!(store.get(&reserved).unwrap().value().unwrap() > 0.0);
//! ```

use std::marker::PhantomData;

use bevy_app::{App, First, Last, PreUpdate};
use bevy_diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic};
use bevy_ecs::prelude::*;

use crate::plugin::ScopeStackSystems;
use crate::scratch::ScratchStats;
use crate::stats::{FrameArenaStats, LevelSlotsStats};

/// The path of one of the crate's diagnostics: `scope_stack/<kind>/<set>/<figure>`, or
/// `scope_stack/<kind>/<figure>` when `set` is empty (the scratch figures). `kind` is
/// `scratch` (figures `frame_high_water`, `frame_high_water_total`, `bytes_reserved`),
/// `frames` (`last_frame_bytes`, `high_water`) or `levels` (`current_bytes`,
/// `high_water`, `loads`, `failures`). A `/` in `set` becomes `_`.
///
/// ```
/// let path = scope_stack_bevy::diagnostic_path("levels", "world/levels", "loads");
/// assert_eq!(path.as_str(), "scope_stack/levels/world_levels/loads");
/// ```
pub fn diagnostic_path(kind: &str, set: &str, figure: &str) -> DiagnosticPath {
    DiagnosticPath::new(path_text(kind, set, figure))
}

fn path_text(kind: &str, set: &str, figure: &str) -> String {
    if set.is_empty() {
        format!("scope_stack/{kind}/{figure}")
    } else {
        format!("scope_stack/{kind}/{}/{figure}", set.replace('/', "_"))
    }
}

/// The paths of one kind of figures, for the system that measures them.
#[derive(Resource)]
struct Paths<T: 'static, const N: usize> {
    paths: [DiagnosticPath; N],
    _of: PhantomData<fn() -> T>,
}

fn register<T: 'static, const N: usize>(
    app: &mut App,
    kind: &str,
    set: &str,
    figures: [(&str, &'static str); N],
) {
    let paths = figures.map(|(figure, suffix)| {
        // Leaked once per registration, so measuring clones a borrowed path (no heap).
        let text = path_text(kind, set, figure).into_boxed_str();
        let path = DiagnosticPath::const_new(Box::leak(text));
        app.register_diagnostic(Diagnostic::new(path.clone()).with_suffix(suffix));
        path
    });
    app.insert_resource(Paths::<T, N> {
        paths,
        _of: PhantomData,
    });
}

/// Registers the scratch diagnostics and measures them in `Last`, after the stats.
pub(crate) fn register_scratch(app: &mut App) {
    register::<ScratchStats, 3>(
        app,
        "scratch",
        "",
        [
            ("frame_high_water", " B"),
            ("frame_high_water_total", " B"),
            ("bytes_reserved", " B"),
        ],
    );
    app.add_systems(Last, measure_scratch.after(ScopeStackSystems::ScratchStats));
}

fn measure_scratch(
    stats: Res<ScratchStats>,
    paths: Res<Paths<ScratchStats, 3>>,
    mut diagnostics: Diagnostics,
) {
    let [high, total, reserved] = &paths.paths;
    diagnostics.add_measurement(high, || stats.frame_high_water as f64);
    diagnostics.add_measurement(total, || stats.frame_high_water_total as f64);
    diagnostics.add_measurement(reserved, || stats.bytes_reserved as f64);
}

/// Registers a frame arena's diagnostics and measures them in `First`, after the
/// rotation.
pub(crate) fn register_frames<R: 'static>(app: &mut App, set: &str) {
    register::<FrameArenaStats<R>, 2>(
        app,
        "frames",
        set,
        [("last_frame_bytes", " B"), ("high_water", " B")],
    );
    app.add_systems(
        First,
        measure_frames::<R>.after(ScopeStackSystems::RotateFrames),
    );
}

fn measure_frames<R: 'static>(
    stats: Res<FrameArenaStats<R>>,
    paths: Res<Paths<FrameArenaStats<R>, 2>>,
    mut diagnostics: Diagnostics,
) {
    let [last, high] = &paths.paths;
    diagnostics.add_measurement(last, || stats.last_frame_bytes as f64);
    diagnostics.add_measurement(high, || stats.high_water as f64);
}

/// Registers a level set's diagnostics and measures them in `PreUpdate`, after the
/// swap.
pub(crate) fn register_levels<R: 'static>(app: &mut App, set: &str) {
    register::<LevelSlotsStats<R>, 4>(
        app,
        "levels",
        set,
        [
            ("current_bytes", " B"),
            ("high_water", " B"),
            ("loads", ""),
            ("failures", ""),
        ],
    );
    app.add_systems(
        PreUpdate,
        measure_levels::<R>.after(ScopeStackSystems::SwapLevels),
    );
}

fn measure_levels<R: 'static>(
    stats: Res<LevelSlotsStats<R>>,
    paths: Res<Paths<LevelSlotsStats<R>, 4>>,
    mut diagnostics: Diagnostics,
) {
    let [current, high, loads, failures] = &paths.paths;
    diagnostics.add_measurement(current, || stats.current_bytes as f64);
    diagnostics.add_measurement(high, || stats.high_water as f64);
    diagnostics.add_measurement(loads, || stats.loads as f64);
    diagnostics.add_measurement(failures, || stats.failures as f64);
}
