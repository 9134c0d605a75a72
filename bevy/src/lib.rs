//! Bevy glue for [`scope_stack`]: a deterministic memory map inside a Bevy app.
//!
//! - [`ScopeStackPlugin`] warms every thread of Bevy's task pools (Compute, AsyncCompute,
//!   IO) and the main thread as its settings say (scratch pads by default; the core's
//!   thread-local scratch and serde staging on request), so no thread reserves scratch
//!   memory mid-game, and keeps [`ScratchStats`] (every byte it reserved) up to date
//!   each frame.
//! - [`Scratch`] is a read-only system parameter: per-thread scratch scopes that unwind
//!   when the closure returns. Systems that use it still run in parallel.
//! - [`FrameArena`] is a ring of frame slots, rotated in [`First`](bevy_app::First):
//!   each frame gets a fresh slot, and the oldest frame unloads.
//! - [`LevelSlots`] streams levels: each is built on the
//!   [`AsyncComputeTaskPool`](bevy_tasks::AsyncComputeTaskPool) and swapped in during
//!   [`PreUpdate`](bevy_app::PreUpdate) once ready; each arrival or failure is a
//!   [`LevelMessage`]. With the `serde` feature a level file is read on that task
//!   (`stream_file`, `stream_from_reader`) into the thread's reused buffer
//!   ([`with_level_file_bytes`]).
//! - [`MemoryMaps`] and [`MemoryMapRequest`] print or save the memory map from a system.
//! - [`ScratchStats`], [`FrameArenaStats`] and [`LevelSlotsStats`] hold the figures to
//!   size scratch pads and slots from; with the `diagnostic` feature they are also
//!   `bevy_diagnostic` diagnostics (see [`diagnostic_path`]).
//!
//! ```
//! use bevy_app::{App, TaskPoolPlugin, Update};
//! use scope_stack_bevy::{Scratch, ScopeStackPlugin, ScratchStats};
//!
//! fn count_words(scratch: Scratch) {
//!     let words = scratch.with(|s| s.alloc_str("one two three").split(' ').count());
//!     assert_eq!(words, 3);
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
//!     .add_systems(Update, count_words);
//! app.finish();
//! app.cleanup();
//! app.update();
//! assert!(app.world().resource::<ScratchStats>().threads >= 1);
//! ```
//!
//! # Rules and recipes
//!
//! The README has each with a tested example; in short:
//!
//! - **`Send + Sync`.** [`FrameArena<R>`] and [`LevelSlots<R>`] need
//!   `R::Of<'static>: Send + Sync` (systems read the root through `Res` on any thread,
//!   and a frame or level may unload on another thread than the one that built it); a
//!   value with a destructor placed in one must be `Send + 'static` (its finalizer runs
//!   where the slot unloads); writes through `Res` ([`FrameArena::with_scope`]) go
//!   through the root's shared types (`Pool`, atomics, `Mutex`); a
//!   [`Pool`](scope_stack::Pool) is `Sync` when its items are `Send + Sync`.
//!   [`ScratchArenas`] is `Send + Sync`, and the scopes it lends are neither.
//! - **`par_iter`.** One scratch scope per batch: [`Scratch::for_each_batch`] over
//!   `query.contiguous_par_iter()`. For any query: capture `&scratch` ([`Scratch`]) in
//!   the `par_iter` closure and call `scratch.with` per item; each thread opens scopes
//!   on its own pad.
//! - **`TaskPool::scope`** needs its tasks' results `Send + 'static`: return owned
//!   values, or write into memory that outlives the scope (the current frame through
//!   `with_scope`, or a slice placed before it and split with `chunks_mut`), with each
//!   task's temporaries on its thread's pad ([`ScratchArenas::with`]).
//! - **Headless.** Add `TaskPoolPlugin` before [`ScopeStackPlugin`] (`MinimalPlugins`
//!   and `DefaultPlugins` include it) and call `app.finish()` before driving
//!   `app.update()` yourself (`App::run` does).
#![warn(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(feature = "diagnostic")]
mod diagnostic;
mod frames;
mod level_files;
mod levels;
mod map;
mod plugin;
mod scratch;
mod stats;

#[cfg(feature = "diagnostic")]
pub use diagnostic::diagnostic_path;
pub use frames::{rotate_frames, FrameArena};
pub use level_files::{with_level_file_bytes, with_level_reader_bytes};
#[cfg(feature = "serde")]
pub use levels::LevelReader;
pub use levels::{swap_levels, LevelEvent, LevelMessage, LevelScope, LevelSlots, LoadedLevel};
pub use map::{print_memory_map, MemoryMapRequest, MemoryMaps};
pub use plugin::{
    warm_task_pools, ScopeStackAppExt, ScopeStackFirst, ScopeStackPlugin, ScopeStackPreLast,
    ScopeStackSystems,
};
pub use scratch::{
    whole_tables_in_debug, PoolWarmed, PoolsWarmed, Scratch, ScratchArenas, ScratchStats,
};
pub use stats::{FrameArenaStats, FrameStats, LevelSlotsStats, LevelStats};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The core crate, re-exported so an app names one version of it.
pub use scope_stack;
