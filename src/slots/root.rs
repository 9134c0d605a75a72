//! The root type family: how a [`Slots`](super::Slots) user names the type of the value
//! a loaded slot holds, for every lifetime the slot's scope may have.
//!
//! Invariant: a family is `'static` and its members differ only in the slot scope's
//! lifetime, so a root built for one lifetime is read back for another (shorter, and
//! higher-ranked) one with the same layout and drop glue.

/// A family of root types, one per slot-scope lifetime: `Of<'s>` is the root a slot
/// holds while its scope has lifetime `'s`.
///
/// Write one per root type, by hand or with [`slot_root!`](crate::slot_root):
///
/// ```
/// use scope_stack::{LinearAllocator, SlotRoot};
///
/// struct Level<'s> {
///     names: &'s [&'s str],
/// }
/// struct LevelRoot;
/// impl SlotRoot for LevelRoot {
///     type Of<'s> = Level<'s>;
/// }
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("game", |game| {
///     let slots = game.new_slots("levels", 2, 4096);
///     let level = slots
///         .load::<LevelRoot>("forest", |s| Level {
///             names: s.alloc_slice_copy(&[&*s.alloc_str("oak"), &*s.alloc_str("elm")]),
///         })
///         .unwrap();
///     assert_eq!(level.with(|l| l.names.join("+")), "oak+elm");
/// });
/// ```
pub trait SlotRoot: 'static {
    /// The root's type while the slot's scope has lifetime `'s`.
    type Of<'s>;
}

/// Declares a unit struct that names a [`SlotRoot`] family:
/// `slot_root!(pub struct LevelRoot = for<'s> Level<'s>);` is
/// `pub struct LevelRoot; impl SlotRoot for LevelRoot { type Of<'s> = Level<'s>; }`.
/// For a type with exactly one lifetime parameter, `slot_root!(pub struct LevelRoot =>
/// Level);` says the same.
///
/// ```
/// use scope_stack::{slot_root, LinearAllocator};
///
/// pub struct Frame<'s> {
///     pub draws: &'s [u32],
/// }
/// slot_root!(pub struct FrameRoot = for<'s> Frame<'s>);
/// slot_root!(struct CountRoot = for<'s> u64); // a root that borrows nothing
/// slot_root!(struct ShortRoot => Frame); // the same as `= for<'s> Frame<'s>`
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("renderer", |renderer| {
///     let frames = renderer.new_slots("frames", 3, 4096);
///     let frame = frames
///         .load::<FrameRoot>("frame 1", |s| Frame { draws: s.alloc_slice_copy(&[1, 2, 3]) })
///         .unwrap();
///     assert_eq!(frame.with(|f| f.draws.len()), 3);
///     let count = frames.load::<CountRoot>("count", |_| 7).unwrap();
///     assert_eq!(count.with(|n| *n), 7);
///     drop(frame);
///     let short = frames.load::<ShortRoot>("frame 2", |s| Frame { draws: s.alloc_slice_copy(&[4]) });
///     assert_eq!(short.unwrap().with(|f| f.draws[0]), 4);
/// });
/// ```
#[macro_export]
macro_rules! slot_root {
    ($(#[$meta:meta])* $vis:vis struct $name:ident = for<$lt:lifetime> $ty:ty $(;)?) => {
        $(#[$meta])*
        $vis struct $name;
        impl $crate::slots::root::SlotRoot for $name {
            type Of<$lt> = $ty;
        }
    };
    ($(#[$meta:meta])* $vis:vis struct $name:ident => $ty:ident $(;)?) => {
        $(#[$meta])*
        $vis struct $name;
        impl $crate::slots::root::SlotRoot for $name {
            type Of<'s> = $ty<'s>;
        }
    };
}
