//! What a memory map shows of a [`Slots`](crate::Slots): one row for the set and one
//! per slot (which scope holds it, bytes used, high-water mark, and what a loaded slot
//! holds; free slots as free).
//!
//! This module owns the slots' part of a report. Invariants: the per-slot figures come
//! from the atomics of the slot table (see `crate::slots::table`), each the value last
//! published by the slot's holder (at the end of its build, of each `with_mut`, and
//! when it unloads). A loaded slot's contents are read only under a read pin, which
//! makes the holder's unload wait until the report lets go, and only through the
//! holder fields published before the slot was marked loaded (its scope record and
//! concurrent scope) and the atomics behind them (container lists and snapshots).
//! So a report may be taken on any thread while other threads load, build and drop
//! slots.

use alloc::string::String;
use alloc::vec::Vec;

use crate::scope::info::PoolLink;

use super::concurrent::{concurrent_report, ConcurrentReport};
use super::pool_row::PoolReport;
use super::pool_rows;
use crate::scope::info::ScopeInfo;
use crate::slots::carve::Slots;
use crate::slots::table::{BUILDING, FREE};
use crate::sync::Ordering;

/// A [`Slots`](crate::Slots) in a [`ScopeReport`](crate::ScopeReport): the set and each
/// slot.
///
/// ```
/// use scope_stack::{slot_root, LinearAllocator, SlotState};
/// slot_root!(struct Bytes = for<'s> &'s [u8]);
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
/// memory.scope("game", |game| {
///     let levels = game.new_slots("levels", 2, 8192);
///     let _a = levels.load::<Bytes>("forest", |s| &*s.alloc_slice_copy(&[0u8; 1000])).unwrap();
///     let map = game.report();
///     let slots = &map.scopes[0].slots[0];
///     assert_eq!((slots.name.as_str(), slots.count, slots.bytes_each, slots.loaded), ("levels", 2, 8192, 1));
///     assert_eq!(slots.slots[0].state, SlotState::Loaded);
///     assert_eq!(slots.slots[0].holder.as_deref(), Some("forest"));
///     assert!(slots.slots[0].used >= 1000);
///     assert_eq!(slots.slots[1].state, SlotState::Free);
///     println!("{map}"); // a row for "levels" and one per slot
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlotsReport {
    /// The name given to `new_slots`.
    pub name: String,
    /// Offset of slot 0 from the start of the block.
    pub offset: usize,
    /// Number of slots.
    pub count: usize,
    /// Bytes each slot may use.
    pub bytes_each: usize,
    /// Distance between two slots' starts (`bytes_each` rounded up to 64).
    pub stride: usize,
    /// Slots held when the report was taken (being built or loaded).
    pub loaded: usize,
    /// The most slots ever held at once.
    pub most_loaded: usize,
    /// Each slot, in order.
    pub slots: Vec<SlotReport>,
}

/// One slot in a [`SlotsReport`].
///
/// ```
/// # use scope_stack::{slot_root, LinearAllocator, SlotState};
/// # slot_root!(struct Unit = for<'s> ());
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("game", |game| {
///     let frames = game.new_slots("frames", 1, 1024);
///     drop(frames.load::<Unit>("frame 1", |s| { s.alloc_raw(500, 1); }).unwrap());
///     let slot = &game.report().scopes[0].slots[0].slots[0];
///     assert_eq!((slot.state, slot.holder.as_deref(), slot.used), (SlotState::Free, None, 0));
///     assert!(slot.high_water_mark >= 500); // what the dropped frame reached
///     assert_eq!(slot.loads, 1);
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlotReport {
    /// The slot's index.
    pub index: usize,
    /// Offset of the slot's first byte from the start of the block.
    pub offset: usize,
    /// Free, being built or loaded.
    pub state: SlotState,
    /// The name of the scope that holds it (`None` when free, or while its holder is
    /// being named).
    pub holder: Option<String>,
    /// Bytes in use, as of the end of the build or the holder's last `with_mut`.
    pub used: usize,
    /// The most bytes the slot ever held (over every load).
    pub high_water_mark: usize,
    /// Loads so far.
    pub loads: usize,
    /// The containers carved in the slot's scope (pools, dense pools, stores, slots),
    /// read live while the slot is loaded; empty while it is free or being built.
    pub contents: Vec<PoolReport>,
    /// For a slot loaded through a concurrent scope: its region and the chunks its
    /// threads claimed.
    pub concurrent: Option<ConcurrentReport>,
}

/// What a slot is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SlotState {
    /// Nobody holds it.
    Free,
    /// A load is building its root.
    Building,
    /// A [`Loaded`](crate::Loaded) holds it.
    Loaded,
}

/// The report of the `Slots` that `link` names.
///
/// # Safety
/// `link` was registered by `new_slots`, and its scope is live.
pub(super) unsafe fn slots_report(
    link: &PoolLink,
    capacity: usize,
    block_start: usize,
) -> SlotsReport {
    // SAFETY: per the caller, `ptr` points at the live `Slots`.
    let slots = unsafe { link.ptr.cast::<Slots>().as_ref() };
    let rows = (0..slots.count)
        .map(|i| {
            let view = slots.record(i).view();
            // SAFETY: `capacity` is the carving block's, and the slots live (caller).
            let (contents, concurrent) = unsafe { slot_contents(slots, i, capacity, block_start) };
            let state = match view.state {
                FREE => SlotState::Free,
                BUILDING => SlotState::Building,
                _ => SlotState::Loaded,
            };
            SlotReport {
                index: i,
                offset: slots.start_of(i) - block_start,
                state,
                holder: (state != SlotState::Free && view.name_len > 0)
                    .then(|| String::from(view.name())),
                used: view.used,
                high_water_mark: view.high_water,
                loads: view.loads,
                contents,
                concurrent,
            }
        })
        .collect();
    SlotsReport {
        name: String::from(slots.name()),
        offset: slots.region - block_start,
        count: slots.count,
        bytes_each: slots.bytes_each,
        stride: slots.stride,
        loaded: slots.loaded(),
        most_loaded: slots.most_held.load(Ordering::Relaxed),
        slots: rows,
    }
}

/// What loaded slot `i` holds: the containers carved in its scope (and in its
/// concurrent scope, for a slot loaded through one), and that concurrent scope's
/// region. Nothing while the slot is free, being built or unloading.
///
/// # Safety
/// `slots` are live, carved from a block of `capacity` bytes starting at
/// `block_start`.
unsafe fn slot_contents(
    slots: &Slots,
    i: usize,
    capacity: usize,
    block_start: usize,
) -> (Vec<PoolReport>, Option<ConcurrentReport>) {
    let Some(pin) = slots.record(i).pin_for_read() else {
        return (Vec::new(), None);
    };
    let h = pin.holder_ptr();
    // SAFETY: the pin keeps the slot loaded (its unload waits for the pin), and the
    // holder wrote `info` and `concurrent` before it published the slot as loaded
    // (release; the pin's check acquires). Only those two fields are read, through
    // the raw pointer: the holder may be writing the others. A scope's container list
    // and its extras are atomics (see `crate::scope::info`), and each container's
    // snapshot reads only atomics.
    unsafe {
        let info = &*core::ptr::addr_of!((*h).info).cast::<ScopeInfo>();
        let mut contents = pool_rows(info, capacity, block_start);
        let mut concurrent = None;
        if let Some(c) = *core::ptr::addr_of!((*h).concurrent) {
            let inner = &c.as_ref().scope.inner;
            let cinfo = inner.info.get().as_ref();
            // The concurrent scope's rows follow the slot scope's: their `owner`
            // indices count from the start of their own list, so they move too.
            let first = contents.len();
            contents.extend(
                pool_rows(cinfo, capacity, block_start)
                    .into_iter()
                    .map(|mut row| {
                        row.owner = row.owner.map(|o| o + first);
                        row
                    }),
            );
            concurrent = Some(concurrent_report(inner));
        }
        drop(pin);
        (contents, concurrent)
    }
}
