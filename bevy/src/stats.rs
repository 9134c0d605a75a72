//! Stats resources for the app's frame arenas and level slots: [`FrameArenaStats`] and
//! [`LevelSlotsStats`], kept by the systems that rotate the frames and swap the levels.
//!
//! Invariant: each figure is read from the arena or the set by the system that already
//! holds it mutably ([`rotate_frames`](crate::rotate_frames), [`swap_levels`](crate::swap_levels)),
//! with relaxed loads of the slots' published `used` figures (see
//! [`Loaded::used`](scope_stack::Loaded::used)), and written with `set_if_neq`: a frame in
//! which nothing changed writes nothing and leaves the resource unchanged for change
//! detection.

use std::marker::PhantomData;
use std::ops::Deref;

use bevy_ecs::prelude::*;

/// What a [`FrameArena`](crate::FrameArena) used, as of its last rotation (a `Copy`
/// value; [`FrameArena::stats`](crate::FrameArena::stats) and the
/// [`FrameArenaStats`] resource give it).
///
/// ```
/// use scope_stack::slot_root;
/// use scope_stack_bevy::FrameArena;
/// slot_root!(struct Bytes = for<'s> &'s [u8]);
///
/// let mut arena = FrameArena::<Bytes>::new("frames", 2, 4096, |s| &*s.alloc_slice_copy(&[0u8; 100])).unwrap();
/// arena.rotate();
/// let stats = arena.stats();
/// assert_eq!(stats.frames, 1);
/// assert!(stats.last_frame_bytes >= 100 && stats.high_water >= stats.last_frame_bytes);
/// assert_eq!(stats.bytes_each, 4096);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameStats {
    /// Frames rotated so far (the current frame's number).
    pub frames: u64,
    /// Bytes the last finished frame used in its slot (as published at the end of its
    /// last `with_scope` or `with_mut`).
    pub last_frame_bytes: usize,
    /// The most bytes any finished frame used: size the slots from this.
    pub high_water: usize,
    /// Bytes in each frame slot.
    pub bytes_each: usize,
    /// Frames loaded now (the current one and those still in flight).
    pub frames_held: usize,
}

/// What a [`LevelSlots`](crate::LevelSlots) set has loaded (a `Copy` value;
/// [`LevelSlots::stats`](crate::LevelSlots::stats) and the [`LevelSlotsStats`]
/// resource give it).
///
/// ```
/// use scope_stack::slot_root;
/// use scope_stack_bevy::LevelSlots;
/// slot_root!(struct Unit = for<'s> ());
/// let stats = LevelSlots::<Unit>::new("levels", 2, 4096).unwrap().stats();
/// assert_eq!((stats.loads, stats.failures, stats.current_bytes), (0, 0, 0));
/// assert_eq!(stats.bytes_each, 4096);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelStats {
    /// Levels swapped in so far.
    pub loads: u64,
    /// Builds that failed so far.
    pub failures: u64,
    /// Bytes the playing level uses in its slot (0 when none plays), as published at
    /// the end of its build or its last `with_mut` / `with_scope`.
    pub current_bytes: usize,
    /// The most bytes any level used so far: size the slots from this.
    pub high_water: usize,
    /// Bytes in each level slot.
    pub bytes_each: usize,
    /// Whether a build is pending.
    pub loading: bool,
}

/// The [`FrameStats`] of the app's [`FrameArena<R>`](crate::FrameArena), as a resource
/// that [`rotate_frames`](crate::rotate_frames) keeps (inserted by
/// [`ScopeStackAppExt::insert_frame_arena`](crate::ScopeStackAppExt::insert_frame_arena)).
/// Reading it does not conflict with systems that write the frame.
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin};
/// use scope_stack::slot_root;
/// use scope_stack_bevy::{FrameArena, FrameArenaStats, ScopeStackAppExt, ScopeStackPlugin};
/// slot_root!(struct Unit = for<'s> ());
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .insert_frame_arena(FrameArena::<Unit>::new("frames", 3, 4096, |_| ()).unwrap());
/// app.update();
/// app.update();
/// let stats = app.world().resource::<FrameArenaStats<Unit>>();
/// assert_eq!((stats.frames, stats.frames_held), (2, 3));
/// ```
#[derive(Resource)]
pub struct FrameArenaStats<R: 'static> {
    stats: FrameStats,
    _root: PhantomData<fn() -> R>,
}

/// The [`LevelStats`] of the app's [`LevelSlots<R>`](crate::LevelSlots), as a resource
/// that [`swap_levels`](crate::swap_levels) keeps (inserted by
/// [`ScopeStackAppExt::insert_level_slots`](crate::ScopeStackAppExt::insert_level_slots)).
///
/// ```
/// use bevy_app::{App, TaskPoolPlugin};
/// use scope_stack::slot_root;
/// use scope_stack_bevy::{LevelSlots, LevelSlotsStats, ScopeStackAppExt, ScopeStackPlugin};
/// slot_root!(struct Unit = for<'s> ());
///
/// let mut app = App::new();
/// app.add_plugins((TaskPoolPlugin::default(), ScopeStackPlugin::default()))
///     .insert_level_slots(LevelSlots::<Unit>::new("levels", 2, 4096).unwrap());
/// app.update();
/// let stats = app.world().resource::<LevelSlotsStats<Unit>>();
/// assert_eq!((stats.loads, stats.bytes_each), (0, 4096));
/// ```
#[derive(Resource)]
pub struct LevelSlotsStats<R: 'static> {
    stats: LevelStats,
    _root: PhantomData<fn() -> R>,
}

macro_rules! stats_resource {
    ($resource:ident, $stats:ident) => {
        impl<R> $resource<R> {
            /// The resource holding `stats`.
            ///
            /// ```
            #[doc = concat!("use scope_stack_bevy::{", stringify!($resource), ", ", stringify!($stats), "};")]
            /// # scope_stack::slot_root!(struct Unit = for<'s> ());
            #[doc = concat!("let r = ", stringify!($resource), "::<Unit>::new(", stringify!($stats), "::default());")]
            #[doc = concat!("assert_eq!(*r, ", stringify!($stats), "::default());")]
            /// ```
            pub fn new(stats: $stats) -> Self {
                $resource {
                    stats,
                    _root: PhantomData,
                }
            }

            /// Writes `stats` if they differ from the figures held (so a resource
            /// whose figures did not change does not show as changed).
            pub(crate) fn set_if_neq(this: &mut ResMut<'_, Self>, stats: $stats) {
                if this.stats != stats {
                    this.stats = stats;
                }
            }
        }

        impl<R> Deref for $resource<R> {
            type Target = $stats;
            fn deref(&self) -> &$stats {
                &self.stats
            }
        }

        impl<R> Clone for $resource<R> {
            fn clone(&self) -> Self {
                $resource::new(self.stats)
            }
        }

        impl<R> std::fmt::Debug for $resource<R> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.stats.fmt(f)
            }
        }
    };
}

stats_resource!(FrameArenaStats, FrameStats);
stats_resource!(LevelSlotsStats, LevelStats);
