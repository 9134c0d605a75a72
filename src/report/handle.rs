//! [`MapHandle`]: the block's memory map from any thread.
//!
//! A plain scope (`ScopeStack`, `Scope`, and through them a slot's scope) is not
//! `Sync`: its owner changes its state without synchronisation, and its child scopes'
//! records live in the owner's stack frames, which go away without notice. A
//! `MapHandle` reads only what stays valid, and is safe to read from another thread,
//! for as long as the scope it was taken from lives.
//!
//! # The premises a handle's report rests on
//!
//! Each premise below was checked against every way a scope opens: `scope` (and
//! `scope_with_budget`), `scratch` / `scratch_for`, [`ScratchPads`](crate::ScratchPads),
//! `scope_concurrent` and its [`LocalScope`]s, slots of each kind (plain, shared through
//! a concurrent scope, task through `TaskScope`, `'static` sets), and builders, heaps
//! and containers made in a parent before a child opened.
//!
//! 1. **Records stay put.** The records of the watched scope and of the scopes it is
//!    nested in (name, start, parent, depth, budget, extras) are written before the
//!    scope's closure runs and never again while it lives; the outer ones outlive it,
//!    because every kind of scope nests as a closure on its thread. A slot's scope has
//!    no parent record, so a handle taken in one stops at the slot. Held for every kind.
//! 2. **Outer finalizer chains are read through their atomic head.** The premise this
//!    replaced, "the outer chains are frozen, each parent being borrowed mutably by the
//!    child it opened", held for `scope` and `scope_concurrent` (a builder holds a
//!    shared borrow of its scope, so it cannot be alive across a `&mut` open) and did
//!    **not** hold for `scratch` and `ScratchPads`, whose parent is only suspended: a
//!    builder made before the inner scope opened links its record when it freezes, and
//!    a report on another thread read the chain's `Cell`s while it did (issue 45, a data
//!    race Miri found). The chain's head is now an atomic that the owner publishes each
//!    record with (release) and a report loads (acquire), and a linked record's `next`
//!    never changes; so a report walks the records linked up to some moment. Holds for
//!    every kind. The watched scope's own chain is not read (as before): its count is
//!    shown as 0, since it changes with every placement.
//! 3. **Containers are read through their report records.** A scope's container list
//!    and each container's report record are atomics (see `crate::scope::info`); a
//!    pool, dense pool or store made before a child opened may change at any time,
//!    from any thread, and its snapshot reads only atomics, so its figures are each
//!    exact when read and may disagree by operations in flight. A heap's row is taken
//!    under the heap's own lock, every figure under one acquisition, so it never
//!    counts a block as both used and free. Held for every kind.
//! 4. **A slot's contents are read under its read pin** (see `crate::slots::table`):
//!    the holder cannot unload the slot while the pin lives, and no pin succeeds once
//!    its unload has begun. Held for plain, shared, task and `'static` sets alike, since
//!    they share the table.
//! 5. **The bump pointer and the high-water mark are relaxed atomics** that only the
//!    owning thread writes (see `crate::block::cursor`); a scratch child has a cursor
//!    of its own, and the handle reads the block's active one at the moment it looks.
//!    Held for every kind; the figures are a snapshot.
//! 6. **A concurrent scope is read through its shared state** (see `super::concurrent`):
//!    the chunk list is published with release stores, and the per-thread chains are
//!    never read while the scope is open. Held.
//!
//! It never reads the scopes opened above it (their records may be gone by the time it
//! follows a pointer), nor the watched scope's own finalizer chain. Invariant:
//! everything a handle's report reads is either immutable for the handle's lifetime or
//! read through atomics, a slot's read pin, or a heap's lock.

use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::block::cursor::Cursor;
use crate::block::linear::LinearAllocator;
use crate::concurrent::{ConcurrentScope, Inner, LocalScope};
use crate::scope::info::ScopeInfo;
use crate::scope::ScopeStack;
use crate::slots::Slots;

use super::gather::rows_down_from;
use super::map::MemoryMap;

/// A handle on a block's memory map that any thread may use: `Copy`, `Send` and `Sync`.
///
/// Take one from the scope a game lives in, before the frame loop, and take maps from
/// the render thread, a rayon job inside `install`, or a debug overlay, without opening
/// a scope for it. It borrows nothing but the scope's lifetime, so the scope goes on
/// opening children (frames) while the handle is in use.
///
/// A map taken through a handle shows the scope the handle came from and every scope
/// it is nested in, with their containers and slots (a slot's rows come from one read
/// under its pin, as in any report). What it may see while the owning thread works:
/// - the block's used bytes and high-water mark as of the moment it reads the bump
///   pointer (a snapshot: a thread placing values meanwhile moves it on);
/// - the scope it came from as the last row, holding every byte above its start:
///   scopes opened above it (frames, scratch on the same block) are counted in its
///   bytes but not listed, and the room that a concurrent scope opened above it has
///   claimed is not counted;
/// - that scope's `finalizers` as 0 (its owner links new ones as it places; the
///   scopes below it show theirs). A scratch scope below it is only suspended, not
///   frozen: a builder it made earlier may still freeze and add a record, so its count
///   may grow between two reports (each report shows whole records);
/// - containers and slots as each one's report record stands when it is read.
///
/// From a concurrent scope ([`ConcurrentScope::map_handle`], [`LocalScope::map_handle`])
/// the handle gives the same map as [`ConcurrentScope::report`].
///
/// ```
/// use scope_stack::{slot_root, LinearAllocator};
/// slot_root!(struct Frame = for<'s> &'s [u32]);
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
/// memory.scope("game", |game| {
///     let frames = game.new_slots("frames", 2, 16 << 10);
///     let map = game.map_handle(); // before the loop: `game` goes on opening frames
///     std::thread::scope(|t| {
///         let render = t.spawn(move || map.report().to_string());
///         let f = frames.load::<Frame>("frame 1", |s| &*s.alloc_slice_copy(&[1, 2, 3])).unwrap();
///         game.scope("scratch", |s| { s.alloc_str("per-frame"); });
///         drop(f);
///         assert!(render.join().unwrap().contains("Slots frames"));
///     });
///     assert_eq!(map.report().scopes[0].name, "game");
/// });
/// ```
///
/// A handle cannot outlive the scope it watches:
///
/// ```compile_fail
/// use scope_stack::{LinearAllocator, MapHandle};
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// let handle: MapHandle<'_> = memory.scope("level", |level| level.map_handle());
/// handle.report(); // error: the handle would outlive `level`
/// ```
#[derive(Clone, Copy)]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub struct MapHandle<'s> {
    source: Source,
    _scope: PhantomData<&'s ()>,
}

#[derive(Clone, Copy)]
enum Source {
    /// A plain scope: its record, its cursor and its block.
    Plain {
        info: NonNull<ScopeInfo>,
        cursor: NonNull<Cursor>,
        block: NonNull<LinearAllocator>,
    },
    /// A concurrent scope's shared state (its own report reads only that).
    Concurrent(NonNull<Inner>),
}

impl core::fmt::Debug for MapHandle<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MapHandle").finish_non_exhaustive()
    }
}

// SAFETY: a handle reads, from any thread, only what the module docs list: records
// that nothing writes while the watched scope lives (`'s`), finalizer chains through
// their atomic heads (acquire; records are immutable once published), atomics, slot
// contents under their read pins, and heap rows under the heap's lock. It writes nothing. So sharing or sending it lets no
// two threads touch the same non-atomic memory with a write among them.
unsafe impl Send for MapHandle<'_> {}
// SAFETY: as above.
unsafe impl Sync for MapHandle<'_> {}

impl<'s> ScopeStack<'s> {
    /// A handle that takes this block's memory map from any thread, for as long as this
    /// scope lives; see [`MapHandle`] for what it shows.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let map = level.map_handle();
    ///     level.new_pool::<u64>(8);
    ///     let text = std::thread::scope(|t| t.spawn(|| map.report().to_string()).join().unwrap());
    ///     assert!(text.contains("Pool<u64>"));
    /// });
    /// ```
    pub fn map_handle(&self) -> MapHandle<'s> {
        MapHandle {
            source: Source::Plain {
                info: NonNull::from(self.info()),
                cursor: NonNull::from(self.cursor()),
                block: NonNull::from(self.allocator()),
            },
            _scope: PhantomData,
        }
    }
}

impl<'env> ConcurrentScope<'env> {
    /// A handle that takes this scope's map from any thread (the map
    /// [`report`](Self::report) gives), for as long as the scope is borrowed.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let map = load.map_handle();
    ///         load.alloc_str("mesh");
    ///         assert_eq!(map.report().scopes[1].name, "load");
    ///     });
    /// });
    /// ```
    pub fn map_handle(&self) -> MapHandle<'_> {
        MapHandle {
            source: Source::Concurrent(NonNull::from(&self.inner)),
            _scope: PhantomData,
        }
    }
}

impl<'a> LocalScope<'a> {
    /// A handle that takes the concurrent scope's map from any thread; see
    /// [`ConcurrentScope::map_handle`].
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let here = load.local();
    ///         let map = here.map_handle();
    ///         here.new_pod(7u64);
    ///         assert_eq!(map.report().scopes[1].name, "load");
    ///     });
    /// });
    /// ```
    pub fn map_handle(&self) -> MapHandle<'a> {
        MapHandle {
            source: Source::Concurrent(NonNull::from(self.inner())),
            _scope: PhantomData,
        }
    }
}

impl Slots {
    /// For a set that lives as long as the program ([`Slots::leak`],
    /// [`Slots::from_static`]): a handle on the memory map of the set's own block,
    /// which any thread may use for good. The map has one scope, named after the set,
    /// holding the set with a row per slot and what each loaded slot holds, as a
    /// scope's map shows a set carved from it; print it as text
    /// ([`MemoryMap`]'s `Display`) or draw it ([`MemoryMap::to_svg`]).
    ///
    /// `None` for a set carved from a scope: take that scope's
    /// [`map_handle`](ScopeStack::map_handle) or [`report`](ScopeStack::report).
    ///
    /// ```
    /// use scope_stack::{slot_root, SlotState, Slots};
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    ///
    /// let levels = Slots::leak("levels", 2, 8192)?;
    /// let map = levels.map_handle().expect("a leaked set has a map of its own");
    /// let forest = levels.load::<Bytes>("forest", |s| &*s.alloc_slice_copy(&[0u8; 1000])).unwrap();
    /// let report = map.report();
    /// assert_eq!(report.scopes[0].name, "levels");
    /// let set = &report.scopes[0].slots[0];
    /// assert_eq!((set.name.as_str(), set.loaded), ("levels", 1));
    /// assert_eq!(set.slots[0].state, SlotState::Loaded);
    /// assert_eq!(set.slots[0].holder.as_deref(), Some("forest"));
    /// assert!(report.to_string().contains("forest"));
    /// drop(forest);
    /// assert_eq!(map.report().scopes[0].slots[0].loaded, 0);
    /// # Ok::<(), scope_stack::AllocError>(())
    /// ```
    pub fn map_handle(&self) -> Option<MapHandle<'static>> {
        let (info, block) = self.home?;
        // SAFETY: a set with a home lives as long as the program, and so do its home's
        // block and record (see `crate::slots::forever`).
        let cursor = NonNull::from(unsafe { block.as_ref() }.root());
        Some(MapHandle {
            source: Source::Plain {
                info,
                cursor,
                block,
            },
            _scope: PhantomData,
        })
    }
}

impl MapHandle<'_> {
    /// A snapshot of the block as the handle sees it (see [`MapHandle`]). Allocates
    /// the map on the global heap, as every report does.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("systems", |systems| {
    ///     systems.alloc_raw(100, 1);
    ///     let map = systems.map_handle().report();
    ///     assert_eq!((map.used, map.scopes.len()), (100, 1));
    /// });
    /// ```
    pub fn report(&self) -> MemoryMap {
        match self.source {
            // SAFETY: the concurrent scope's state lives as long as the scope, which
            // outlives the handle (`'s`); its report is made to run on any thread.
            Source::Concurrent(inner) => unsafe { inner.as_ref() }.report(),
            Source::Plain {
                info,
                cursor,
                block,
            } => {
                // SAFETY: the record, the cursor and the block outlive the watched
                // scope, and so the handle; what is read through them is listed in the
                // module docs.
                unsafe { plain_report(info.as_ref(), cursor.as_ref(), block.as_ref()) }
            }
        }
    }
}

/// The map of a plain scope's handle.
///
/// # Safety
/// `watched` is a live scope's record on `block`, `cursor` its cursor; they stay live
/// for the call. Only the fields the module docs list are read.
unsafe fn plain_report(watched: &ScopeInfo, cursor: &Cursor, block: &LinearAllocator) -> MemoryMap {
    let capacity = block.capacity();
    let block_start = block.end_addr() - capacity;
    // Relaxed atomics, written by the owning thread only: a snapshot.
    let top = cursor.cur();
    let high = block.high_water_addr().max(top);
    // The outer scopes' chains are frozen while the watched one lives; its own is
    // being linked by its owner.
    let scopes = rows_down_from(watched, capacity, block_start, top, false);
    MemoryMap {
        capacity,
        used: top - block_start,
        high_water_mark: high - block_start,
        scopes,
    }
}
