//! The root families of in-place levels: [`ArchivedRoot`] (the archived bytes alone)
//! and [`InPlaceRoot`] (the archived half beside a runtime half a build step carved).
//!
//! Invariant: the `&'s Archived<T>` a root holds points into the slot's own memory (or
//! was put there by the holder through [`Loaded::with_mut`](crate::Loaded::with_mut),
//! which lends only references that live as long as the slot), so it is valid for as
//! long as the `Loaded` that owns the slot; it is never written through.

use core::marker::PhantomData;

use rkyv::{Archive, Archived};

use crate::slots::SlotRoot;

/// The root family of a level read in place with no runtime half (feature `rkyv`):
/// `ArchivedRoot<T>::Of<'s>` is `&'s Archived<T>`, a reference into the slot's memory.
///
/// [`Slots::load_archived`](crate::Slots::load_archived) and its forms return a
/// `Loaded<'_, ArchivedRoot<T>, K>`; [`Loaded::with`](crate::Loaded::with) lends the
/// archived level.
///
/// ```
/// use scope_stack::inplace::ArchivedRoot;
/// use scope_stack::{Loaded, Slots};
///
/// #[derive(rkyv::Archive, rkyv::Serialize)]
/// struct Level {
///     name: String,
/// }
///
/// let levels = Slots::leak("levels", 1, 4096)?;
/// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&Level { name: "forest".into() }).unwrap();
/// let level: Loaded<'_, ArchivedRoot<Level>> = levels.load_archived("forest", &file).unwrap();
/// assert_eq!(level.with(|l| l.name.as_str().len()), 6);
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct ArchivedRoot<T>(PhantomData<fn() -> T>);

impl<T: Archive + 'static> SlotRoot for ArchivedRoot<T> {
    type Of<'s> = &'s Archived<T>;
}

/// The root family of a level read in place with a runtime half (feature `rkyv`):
/// `InPlaceRoot<T, U>::Of<'s>` is [`InPlace<'s, T, U::Of<'s>>`](InPlace), the archived
/// level and what the build step made from it (`U` is the runtime half's own
/// [`SlotRoot`] family).
///
/// [`Slots::load_archived_with`](crate::Slots::load_archived_with) and its forms return
/// a `Loaded<'_, InPlaceRoot<T, U>, K>`.
///
/// ```
/// use scope_stack::inplace::InPlaceRoot;
/// use scope_stack::{slot_root, Pool, Slots};
///
/// #[derive(rkyv::Archive, rkyv::Serialize)]
/// struct Level {
///     spawns: Vec<u32>,
/// }
/// slot_root!(struct Enemies = for<'s> &'s Pool<'s, u32>);
///
/// let levels = Slots::leak("levels", 1, 8192)?;
/// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&Level { spawns: vec![30, 80] }).unwrap();
/// let level = levels
///     .load_archived_with::<Level, Enemies, ()>("forest", &file, |level, scope| {
///         let pool = scope.new_pool(8);
///         for hp in level.spawns.iter() {
///             let _ = pool.insert(hp.to_native()).map_err(drop)?.into_handle();
///         }
///         Ok(pool)
///     })
///     .unwrap();
/// assert_eq!(level.with(|l| l.runtime.len()), 2);
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct InPlaceRoot<T, U>(PhantomData<fn() -> (T, U)>);

impl<T: Archive + 'static, U: SlotRoot> SlotRoot for InPlaceRoot<T, U> {
    type Of<'s> = InPlace<'s, T, U::Of<'s>>;
}

/// A level read in place, with its runtime half (feature `rkyv`): the archived level,
/// validated and read where it lies in the slot, and what the build step carved beside
/// it from the archived data (pools of live enemies, a heap, counters). The archived
/// half is read-only; what the game changes lives in `runtime`, reached through
/// [`Loaded::with_mut`](crate::Loaded::with_mut).
///
/// ```
/// use scope_stack::inplace::InPlace;
/// use scope_stack::{slot_root, Slots};
///
/// #[derive(rkyv::Archive, rkyv::Serialize)]
/// struct Level {
///     start_hp: u32,
/// }
/// slot_root!(struct Hp = for<'s> u32);
///
/// let levels = Slots::leak("levels", 1, 4096)?;
/// let file = rkyv::to_bytes::<rkyv::rancor::Error>(&Level { start_hp: 100 }).unwrap();
/// let mut level = levels
///     .load_archived_with::<Level, Hp, ()>("forest", &file, |l, _| Ok(l.start_hp.to_native()))
///     .unwrap();
/// level.with_mut(|l, _| l.runtime -= 30);
/// assert_eq!(level.with(|l| (l.archived.start_hp.to_native(), l.runtime)), (100, 70));
/// # Ok::<(), scope_stack::AllocError>(())
/// ```
pub struct InPlace<'s, T: Archive, U> {
    /// The archived level, in the slot's memory, validated (or vouched for by an
    /// `unsafe` caller) before this was made.
    pub archived: &'s Archived<T>,
    /// What the build step made from the archived level, in the same slot.
    pub runtime: U,
}
