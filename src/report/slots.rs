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
//! concurrent scope) and the atomics behind them (container lists and snapshots). A
//! slot being built is read the same way, under a pin its holder allows once those
//! fields are written, before `build` runs: the bytes placed so far (the scope's bump
//! pointer, or what its concurrent scope claimed) and the containers carved so far.
//! So a report may be taken on any thread while other threads load, build and drop
//! slots.

use alloc::string::String;
use alloc::vec::Vec;

use super::concurrent::ConcurrentReport;
use super::pool_row::PoolReport;

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
    /// Threads blocked in a `_wait` load ([`Slots::load_wait`](crate::Slots::load_wait)
    /// and the like) and tasks whose async load
    /// ([`Slots::load_async`](crate::Slots::load_async) and the like) is parked, waiting
    /// for a slot of this set when the report was taken: one atomic load, so a sample.
    /// A thread counts from just before its last look for a free slot until it wakes,
    /// a task while its waker is stored (not between a wake and its next poll). 0
    /// without the `std` feature, which has no waiting loads. The text prints it after
    /// the set's `held` figure when it is not 0.
    ///
    /// ```
    /// use std::time::Duration;
    /// use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Unit = for<'s> ());
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("service", |service| {
    ///     let requests = service.new_slots("requests", 1, 1024);
    ///     let held = requests.load::<Unit>("request", |_| ()).unwrap();
    ///     std::thread::scope(|t| {
    ///         let waiter = t.spawn(|| requests.load_wait::<Unit>("next", |_| ()).slot());
    ///         while service.report().scopes[0].slots[0].waiting == 0 {
    ///             std::thread::sleep(Duration::from_millis(1));
    ///         }
    ///         assert!(service.report().to_string().contains("1/1 slots held (high-water 1), 1 waiting"));
    ///         drop(held);
    ///         assert_eq!(waiter.join().unwrap(), 0);
    ///     });
    ///     assert_eq!(service.report().scopes[0].slots[0].waiting, 0);
    /// });
    /// ```
    pub waiting: usize,
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
    /// Bytes in use, as of the end of the build or the holder's last `with_mut`. For a
    /// slot being built ([`SlotState::Building`]), the bytes placed so far, read live
    /// while the build runs on another thread: the slot scope's bump pointer (values
    /// placed in scopes the build opens inside it count while those are open), or, for
    /// a slot loaded through a concurrent scope, what that scope has claimed from the
    /// slot (its state, per-thread table, chunks and single allocations). A sample,
    /// like every figure of a report taken while other threads work.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use scope_stack::{slot_root, LinearAllocator, SlotState};
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 1, 64 << 10);
    ///     let map = game.map_handle();
    ///     let (placed, was_placed) = mpsc::channel();
    ///     let (go_on, wait) = mpsc::channel::<()>();
    ///     std::thread::scope(|t| {
    ///         t.spawn(move || {
    ///             let level = levels.load::<Bytes>("forest", |s| {
    ///                 let bytes = &*s.alloc_slice_fill_copy(10_000, 7u8);
    ///                 placed.send(()).unwrap();
    ///                 wait.recv().unwrap(); // the map is taken here
    ///                 bytes
    ///             });
    ///             drop(level);
    ///         });
    ///         was_placed.recv().unwrap();
    ///         let report = map.report();
    ///         let slot = &report.scopes[0].slots[0].slots[0];
    ///         assert_eq!(slot.state, SlotState::Building);
    ///         assert!(slot.used >= 10_000);
    ///         assert!(report.to_string().contains("placed so far"));
    ///         go_on.send(()).unwrap();
    ///     });
    /// });
    /// ```
    pub used: usize,
    /// The most bytes the slot ever held (over every load).
    pub high_water_mark: usize,
    /// Loads so far.
    pub loads: usize,
    /// The containers carved in the slot's scope (pools, dense pools, stores, slots),
    /// read live while the slot is loaded or being built (those a build has carved so
    /// far: a container is listed once it is whole); empty while it is free.
    pub contents: Vec<PoolReport>,
    /// For a slot loaded through a concurrent scope: its region and the chunks its
    /// threads claimed (so far, while it is being built).
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
