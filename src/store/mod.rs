//! `Store<T>`: a versioned object store, "the Truth" of Niklas Gray's *Multi-Threading
//! The Truth*, carved from a scope.
//!
//! An engine keeps its shared data (assets, entities, settings) in one store. Many
//! threads [`read`](Store::read) it every frame without locks or waiting. A writer
//! takes a private copy of an object with [`write`](Store::write), changes it, and
//! publishes it with [`commit`](Store::commit) (last writer wins) or
//! [`try_commit`](Store::try_commit) (only if nobody committed that object since the
//! copy was taken). Every commit makes a new *version*; readers see either the old one
//! or the new one, whole, never a mix. Old versions are freed by
//! [`end_frame`](Store::end_frame), when the program is back at its root state.
//!
//! ```
//! use scope_stack::LinearAllocator;
//!
//! #[derive(Clone)]
//! struct Position { x: f32, y: f32, z: f32 }
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 20)?;
//! memory.scope("editor", |editor| {
//!     let truth = editor.new_store::<Position>(1000, 4000);
//!     let id = truth.create(Position { x: 7.0, y: 3.0, z: 2.0 }).ok().unwrap();
//!     for _frame in 0..3 {
//!         std::thread::scope(|threads| {
//!             let truth = &*truth;
//!             threads.spawn(move || {
//!                 // A reader sees (7, 3, 2) or (7, 5, 5): never (7, 5, 2).
//!                 let p = truth.read(id).unwrap();
//!                 assert!(p.y + p.z == 5.0 || p.y + p.z == 10.0);
//!             });
//!             let mut draft = truth.write(id).unwrap();
//!             draft.y = 5.0;
//!             draft.z = 5.0;
//!             truth.commit(draft).ok().unwrap();
//!         });
//!         truth.end_frame(); // the replaced version is freed here
//!     }
//! });
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! # The frame rule, checked by the compiler
//!
//! The seed has no `end_read`: a reader's pointer is good until the end of the frame.
//! Here that is a borrow. [`read`](Store::read) returns `&T` borrowed from `&Store`,
//! and [`end_frame`](Store::end_frame) takes `&mut Store`, so a read reference cannot
//! be held across it:
//!
//! ```compile_fail,E0502
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("level", |level| {
//!     let store = level.new_store::<String>(16, 32);
//!     let id = store.create("lamp".to_string()).unwrap();
//!     let lamp = store.read(id).unwrap();
//!     store.end_frame(); // error: `*store` is also borrowed as immutable
//!     println!("{lamp}");
//! });
//! ```
//!
//! The same holds for a [`Draft`]: it cannot be committed after the frame it was taken
//! in, which is why [`try_commit`](Store::try_commit) can compare version slots without
//! fearing that a slot was freed and reused (ABA):
//!
//! ```compile_fail,E0502
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("level", |level| {
//!     let store = level.new_store::<u32>(16, 32);
//!     let id = store.create(1).unwrap();
//!     let draft = store.write(id).unwrap();
//!     store.end_frame(); // error: `*store` is also borrowed as immutable
//!     store.try_commit(draft).ok();
//! });
//! ```
//!
//! # Readers that outlive a frame
//!
//! A background thread that reads across frames takes a [`Pinned`] version with
//! [`pin`](Store::pin) (the seed's `lock_read`). A pin counts as a reference on the
//! version; `end_frame` frees a retired version only once its count is zero, so a
//! pinned version survives any number of frames until the last pin is dropped. A pin
//! does not borrow the store (that is what lets `end_frame` run), only the scope, so
//! it can never outlive the store's memory:
//!
//! ```compile_fail
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! let escaped = memory.scope("level", |level| {
//!     let store = level.new_store::<u32>(16, 32);
//!     let id = store.create(1).unwrap();
//!     store.pin(id).unwrap() // error: the pin would outlive the scope
//! });
//! ```
//!
//! Taking a pin needs `&Store`, so it happens inside a frame: the version the table
//! names cannot be freed between looking it up and counting the pin, which is the race
//! the seed could not close without a lock.
//!
//! # Memory
//!
//! Everything is carved from the scope when the store is made, and the global heap is
//! never used afterwards:
//! - versions live in a [`Pool`] of `max_versions` slots, each a `T` plus
//!   two 4-byte words (a pin count and a garbage link) plus the pool's 8 bytes;
//! - the ID table is a top-level array of one pointer per block and the blocks
//!   themselves: 1024 objects per block, 12 bytes per object (entry word and link).
//!   A block is written only when its first object is created.
//!
//! [`Store::memory_needed`] gives the total. Each live object needs one version slot,
//! each draft one more, and each commit or destroy keeps the replaced version until
//! the next `end_frame` (longer if pinned): size `max_versions` for the live objects
//! plus the most commits a frame makes.
//!
//! One more 4-byte word holds the table's high-water mark for reports (below).
//!
//! # Reports
//!
//! A [`MemoryMap`](crate::MemoryMap) shows a store as two rows under its scope: its
//! versions pool (kind `"Pool"`, type `Version<T>`) and the store itself (kind
//! `"Store"`): live objects out of `max_objects`, the high-water mark, and the bytes of
//! the ID table. A report may be taken while the caller holds `&mut Store`, so it never
//! reads the store object; the store links a record into its scope that names only
//! the table's memory, which the store reaches through raw pointers and only as
//! atomics:
//!
//! - **Live objects** are counted at report time, O(`max_objects`), from the entry
//!   words of the blocks already published: an object is live while its entry names a
//!   version. [`read`](Store::read) pays nothing for this.
//! - **The high-water mark** is the most object indices in use at once. It is the
//!   table's bump counter of never-used indices, copied (one `Relaxed` `fetch_max`)
//!   into a word in scope memory only when [`create`](Store::create) takes a
//!   never-used index, at most `max_objects` times in the store's life; creates that
//!   reuse an index, commits and destroys pay nothing. A destroyed object keeps its
//!   index until the next [`end_frame`](Store::end_frame), so this is what
//!   `max_objects` must cover; it equals the most objects live at once unless objects
//!   were created in a frame that had destroyed others.
//!
//! If the scope has no room left for the record, the store is made all the same and is
//! only missing from reports ([`Store::memory_needed`] does not count it).
//!
//! # Invariants
//!
//! - An object's entry word packs its generation and its current version slot. It
//!   changes only by compare-exchange (commit, try_commit, destroy) or, while it holds
//!   no version, by the one creator that claimed its index.
//! - A version slot named by an entry word, or retired during the current frame, or
//!   pinned, holds a live `T` that is never mutated. Versions are freed only by
//!   `end_frame` (`&mut self`), and only when retired and not pinned.
//! - Every version is retired at most once: only the thread whose compare-exchange
//!   took it out of its entry retires it.
//! - Entry words are published with Release after the version is filled and read
//!   with Acquire, so a reader sees the whole version. The exchanges that replace a
//!   word also acquire, because the winner goes on to touch the replaced version
//!   (to retire it).
//!
//! Object indices of destroyed objects are reused after `end_frame`, with the next
//! generation: a stale [`Id`] finds nothing (the generation is 32 bits; only after
//! 2^32 reuses of one index could a stale id match again, and it would then name that
//! index's current object, never freed memory). Each store starts its generations from
//! a seed of its own, so an id of another store finds nothing either (see [`Id`]).

mod garbage;
mod table;

use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};

#[cfg(not(loom))]
use core::sync::atomic::AtomicPtr;
#[cfg(loom)]
use loom::sync::atomic::AtomicPtr;

use crate::error::{AllocError, AllocErrorKind};
use crate::pool::{Pool, PoolBox};
use crate::scope::finalizer::ObjectLayout;
use crate::scope::info::{PoolLink, PoolSnapshot};
use crate::scope::ScopeStack;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

use garbage::{Garbage, SHARDS};
use table::{Block, Table, NONE};

pub use crate::limits::MAX_STORE_OBJECTS;

/// Source of the stores' generation seeds. It only names stores; it orders nothing.
static STORE_IDS: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

/// Pins on one version beyond which [`Store::pin`] panics (a leak of pins, like an
/// `Arc` count overflow).
const MAX_PINS: u32 = 1 << 31;

/// One version of an object: the value and the bookkeeping `end_frame` needs.
pub(crate) struct Version<T> {
    value: T,
    /// Live [`Pinned`]s of this version.
    pins: AtomicU32,
    /// Garbage-list link, written once when the version is retired.
    next: AtomicU32,
}

impl<T> Version<T> {
    fn new(value: T) -> Version<T> {
        Version {
            value,
            pins: AtomicU32::new(0),
            next: AtomicU32::new(NONE),
        }
    }
}

/// The name of an object in a [`Store`]: a `u64` holding a 32-bit index and a 32-bit
/// generation.
///
/// When an object is destroyed, its index is reused (after the next
/// [`end_frame`](Store::end_frame)) with a new generation, so the old `Id` goes stale
/// and finds nothing instead of the new object.
///
/// An `Id` has no room for a store tag, so each store starts its generations from a
/// seed of its own: an id of another store, or of an earlier store in the same memory
/// (a level closed and loaded again), finds nothing. The seeds of stores made one after
/// another are far apart, so a match needs the two generations to coincide after an
/// index has been reused millions of times; it cannot be ruled out. As with a stale id,
/// a match could only ever name a live object of the store it is used with.
///
/// ```
/// use scope_stack::{LinearAllocator, store::Id};
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let store = level.new_store::<&str>(16, 32);
///     let old: Id = store.create("crate").unwrap();
///     store.destroy(old);
///     store.end_frame();
///     let new = store.create("barrel").unwrap();
///     assert_eq!(old.index(), new.index()); // same slot...
///     assert_ne!(old.generation(), new.generation()); // ...new generation
///     assert_eq!(store.read(old), None);
///     assert_eq!(store.read(new), Some(&"barrel"));
///     assert_eq!(Id::from_u64(new.to_u64()), new);
/// });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Id(u64);

impl Id {
    fn new(index: u32, generation: u32) -> Id {
        Id((u64::from(generation) << 32) | u64::from(index))
    }

    /// The object's index in the table.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u8>(16, 32);
    ///     assert_eq!(store.create(1).unwrap().index(), 0);
    ///     assert_eq!(store.create(2).unwrap().index(), 1);
    /// });
    /// ```
    pub fn index(self) -> u32 {
        self.0 as u32
    }

    /// The generation of the index when the object was created. Each store starts
    /// its indices at a generation of its own, and each reuse of an index adds one.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u8>(16, 32);
    ///     let first = store.create(1).unwrap();
    ///     store.destroy(first);
    ///     store.end_frame();
    ///     let second = store.create(2).unwrap();
    ///     assert_eq!(second.generation(), first.generation().wrapping_add(1));
    /// });
    /// ```
    pub fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The id as one `u64` (generation in the high half, index in the low half).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u8>(16, 32);
    ///     let id = store.create(1).unwrap();
    ///     assert_eq!(id.to_u64(), u64::from(id.generation()) << 32 | u64::from(id.index()));
    /// });
    /// ```
    pub fn to_u64(self) -> u64 {
        self.0
    }

    /// An id from [`to_u64`](Self::to_u64). Any `u64` is accepted: an id that names
    /// no live object simply finds nothing.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, store::Id};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u8>(16, 32);
    ///     assert_eq!(store.read(Id::from_u64(12345)), None);
    /// });
    /// ```
    pub fn from_u64(raw: u64) -> Id {
        Id(raw)
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({}v{})", self.index(), self.generation())
    }
}

/// A versioned object store carved from a scope; see the [module docs](crate::store).
///
/// Made by [`ScopeStack::new_store`]. Share `&Store` with the threads of a frame; call
/// [`end_frame`](Self::end_frame) with `&mut Store` between frames.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let store = level.new_store::<u32>(16, 32);
///     let id = store.create(1).unwrap();
///     let mut d = store.write(id).unwrap();
///     *d += 1;
///     store.commit(d).ok().unwrap();
///     assert_eq!(store.read(id), Some(&2));
///     assert_eq!(store.end_frame(), 1); // the version holding 1 is freed
/// });
/// ```
pub struct Store<'s, T> {
    versions: &'s Pool<'s, Version<T>>,
    table: Table,
    garbage: Garbage,
    /// Invariant in `'s`, like [`Pool`]: stores of different scopes are different
    /// types, so they cannot be swapped.
    _scope: PhantomData<fn(&'s ()) -> &'s ()>,
}

impl<'s> ScopeStack<'s> {
    /// Carves a [`Store`] for up to `max_objects` objects and `max_versions` versions
    /// out of this scope.
    ///
    /// # Panics
    /// Where [`try_new_store`](Self::try_new_store) returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<[f32; 3]>(100, 200);
    ///     assert_eq!((store.max_objects(), store.max_versions()), (100, 200));
    /// });
    /// ```
    pub fn new_store<T: Clone + 'static>(
        &self,
        max_objects: usize,
        max_versions: usize,
    ) -> &'s mut Store<'s, T> {
        match self.try_new_store(max_objects, max_versions) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Carves a [`Store`] out of this scope, or says why it cannot.
    ///
    /// # Errors
    /// - [`AllocErrorKind::InvalidCapacity`] if either maximum is 0;
    /// - [`AllocErrorKind::TooManySlots`] if `max_versions` is above
    ///   [`MAX_POOL_CAPACITY`](crate::MAX_POOL_CAPACITY), or `max_objects` above
    ///   [`MAX_STORE_OBJECTS`];
    /// - [`AllocErrorKind::OutOfMemory`] when the scope has no room (see
    ///   [`Store::memory_needed`]).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_store::<u32>(0, 8).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     let e = level.try_new_store::<u32>(1 << 20, 8).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
    ///     assert!(level.try_new_store::<u32>(8, 8).is_ok());
    /// });
    /// ```
    pub fn try_new_store<T: Clone + 'static>(
        &self,
        max_objects: usize,
        max_versions: usize,
    ) -> Result<&'s mut Store<'s, T>, AllocError> {
        let error = |kind, size| {
            AllocError::in_scope(
                kind,
                size,
                align_of::<Block>(),
                self.allocator().remaining_to_limit(),
                self.allocator().capacity(),
                self.name(),
            )
        };
        if max_objects == 0 || max_versions == 0 {
            return Err(error(AllocErrorKind::InvalidCapacity, 0));
        }
        if max_objects > MAX_STORE_OBJECTS {
            return Err(error(AllocErrorKind::TooManySlots, usize::MAX));
        }
        let blocks = Table::blocks_for(max_objects);
        let overflow = || error(AllocErrorKind::CapacityOverflow, usize::MAX);
        let top_layout = Layout::array::<AtomicPtr<Block>>(blocks).map_err(|_| overflow())?;
        let block_layout = Layout::array::<Block>(blocks).map_err(|_| overflow())?;

        let versions: &'s Pool<'s, Version<T>> = self.try_new_pool(max_versions)?;
        let top = self.try_alloc_layout(top_layout)?.cast();
        let storage = self.try_alloc_layout(block_layout)?.cast();
        let high_water = self.try_alloc_array_uninit::<AtomicU32>(1)?;
        // A per-store starting generation, far from those of the stores made just
        // before and after, so their ids do not match here (see `Id`).
        let seed = STORE_IDS
            .fetch_add(1, core::sync::atomic::Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9);
        // SAFETY: `top` and `storage` are fresh, aligned arrays of `blocks` elements in
        // this scope, used by this table alone, valid until the scope rewinds, which is
        // after the store is gone; `max_objects <= u32::MAX` was checked.
        // `high_water` is a fresh, aligned word in this scope for this table alone.
        let table = unsafe { Table::new(top, storage, high_water, max_objects, seed) };
        let store = Store {
            versions,
            table,
            garbage: Garbage::new(),
            _scope: PhantomData,
        };
        // SAFETY: the drop contract of `new_object_unchecked`: a store's drop glue only
        // drops its own atomics (and only loom's atomics have drop glue); it follows no
        // borrow. The pool it names was made earlier in this scope, so it is finalized
        // after the store.
        let store = unsafe { self.try_new_object_unchecked(store) }.map_err(|e| e.error)?;
        // Register with the scope for reports (the versions pool registered itself
        // above, as a `Pool` row). The link names the table's memory, which the store
        // reaches through raw pointers, never the store object the caller holds `&mut`
        // to. With no room for the link the store works all the same, unreported.
        let start = top.as_ptr().addr();
        let end = high_water.as_ptr().addr() + size_of::<AtomicU32>();
        let link = PoolLink {
            ptr: top.cast(),
            words: [
                start,
                end - start,
                max_objects,
                blocks,
                high_water.as_ptr().addr(),
            ],
            kind: "Store",
            type_name: core::any::type_name::<T>(),
            snapshot: store_snapshot,
            next: None,
        };
        // SAFETY: `store_snapshot` reads the table's top array, published blocks and
        // high-water word (see `table::report_counts`), all carved above in this scope
        // and valid until it ends.
        unsafe { self.register_pool(link) };
        Ok(store)
    }
}

/// Reads a registered store's statistics for a memory map report: live objects out of
/// `max_objects`, and the most object indices ever in use at once. Reads only atomics
/// in the table's scope memory (see `table::report_counts`), never the store object
/// or a version.
///
/// # Safety
/// `link` was filled in by `try_new_store`, and its store's scope is live.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
unsafe fn store_snapshot(link: &PoolLink) -> PoolSnapshot {
    let [addr, bytes, max_objects, blocks, high_water] = link.words;
    let top = link.ptr.cast::<AtomicPtr<Block>>();
    // The high-water word was carved from the same block as `top`: the block's
    // provenance (carried by `link.ptr`) reaches it.
    let high_water = link.ptr.as_ptr().with_addr(high_water).cast::<AtomicU32>();
    // SAFETY: the words are those `try_new_store` recorded for a table whose scope is
    // live (the caller).
    let (len, high) = unsafe { table::report_counts(top, blocks, max_objects, high_water) };
    PoolSnapshot {
        len,
        capacity: max_objects,
        high_water_len: high.max(len),
        addr,
        bytes,
    }
}

impl<'s, T: Clone + 'static> Store<'s, T> {
    /// An upper bound of the bytes [`ScopeStack::new_store`] takes from the scope,
    /// alignment padding included. `None` if it overflows.
    ///
    /// ```
    /// # use scope_stack::{LinearAllocator, store::Store};
    /// let need = Store::<[u8; 40]>::memory_needed(5000, 8000).unwrap();
    /// let mut memory = LinearAllocator::with_capacity(need).unwrap();
    /// memory.scope("level", |level| {
    ///     level.new_store::<[u8; 40]>(5000, 8000);
    ///     assert!(level.used() <= need);
    /// });
    /// ```
    pub fn memory_needed(max_objects: usize, max_versions: usize) -> Option<usize> {
        let blocks = Table::blocks_for(max_objects);
        let pool = Pool::<Version<T>>::memory_needed(max_versions)?;
        let top = blocks.checked_mul(size_of::<AtomicPtr<Block>>())?;
        let storage = blocks.checked_mul(size_of::<Block>())?;
        let high_water = size_of::<AtomicU32>() + align_of::<AtomicU32>() - 1;
        let record = ObjectLayout::<Self>::SIZE + ObjectLayout::<Self>::ALIGN - 1;
        pool.checked_add(top + align_of::<AtomicPtr<Block>>() - 1)?
            .checked_add(storage)?
            .checked_add(align_of::<Block>() - 1)?
            .checked_add(high_water)?
            .checked_add(record)
    }

    /// The entry of `id` and its word, if `id` names a live object.
    #[inline(always)]
    fn lookup(&self, id: Id) -> Option<(&AtomicU64, u64)> {
        let entry = self.table.entry(id.index())?;
        // Acquire: pairs with the Release that published the word (create, commit), so
        // the version it names is fully visible.
        let word = entry.load(Ordering::Acquire);
        (table::generation(word) == id.generation() && table::version(word) != NONE)
            .then_some((entry, word))
    }

    /// The version in slot `v`.
    ///
    /// # Safety
    /// `v` came from an entry word loaded (with Acquire) during the current `&self`
    /// borrow, or is pinned.
    #[inline(always)]
    unsafe fn version(&self, v: u32) -> &Version<T> {
        // SAFETY: such a slot holds a live version, published before the Acquire load;
        // it is freed only by `end_frame` (`&mut self`) once retired and unpinned.
        unsafe { self.versions.slot_ref(v) }
    }

    /// Adds a new object and returns its id, or gives the value back when every
    /// object index or every version slot is in use. Lock-free; any thread.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<String>(1, 8);
    ///     let id = store.create("tree".to_string()).unwrap();
    ///     assert_eq!(store.read(id).unwrap(), "tree");
    ///     assert_eq!(store.create("rock".to_string()).unwrap_err(), "rock"); // full
    /// });
    /// ```
    pub fn create(&self, value: T) -> Result<Id, T> {
        let boxed = self
            .versions
            .insert(Version::new(value))
            .map_err(|v| v.value)?;
        let Some((index, entry)) = self.table.claim() else {
            return Err(boxed.into_inner().value);
        };
        // Relaxed: nobody else writes an entry that holds no version (commit and
        // destroy fail on it), and the destroy that set its generation happened in an
        // earlier frame, before the `&mut` of `end_frame` recycled the index.
        let generation = table::generation(entry.load(Ordering::Relaxed));
        let v = PoolBox::leak_to_slot_index(boxed);
        // Release: a reader that loads this word (Acquire) sees the version's contents.
        entry.store(table::pack(generation, v), Ordering::Release);
        Ok(Id::new(index, generation))
    }

    /// The current version of an object, or `None` if `id` names no live object.
    ///
    /// Lock-free and wait-free: two loads and a compare, no writes to shared memory.
    /// The reference stays valid for the whole `&self` borrow, even if the object is
    /// committed or destroyed meanwhile (it then shows the version that was current
    /// when it was read); [`end_frame`](Self::end_frame) needs `&mut self`, so it
    /// cannot free the version while the reference lives.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u32>(16, 32);
    ///     let id = store.create(1).unwrap();
    ///     let before = store.read(id).unwrap();
    ///     let mut d = store.write(id).unwrap();
    ///     *d = 2;
    ///     store.commit(d).ok().unwrap();
    ///     assert_eq!((*before, *store.read(id).unwrap()), (1, 2));
    /// });
    /// ```
    #[inline]
    pub fn read(&self, id: Id) -> Option<&T> {
        let (_, word) = self.lookup(id)?;
        // SAFETY: the word was just loaded with Acquire under this `&self` borrow.
        Some(&unsafe { self.version(table::version(word)) }.value)
    }

    /// A private copy of an object's current version to change and then
    /// [`commit`](Self::commit) or [`try_commit`](Self::try_commit). Dropping the draft
    /// discards it. `None` if `id` names no live object, or if every version slot is
    /// in use (see [`versions_in_use`](Self::versions_in_use)).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<Vec<u32>>(16, 32);
    ///     let id = store.create(vec![1]).unwrap();
    ///     let mut d = store.write(id).unwrap();
    ///     d.push(2);
    ///     assert_eq!(store.read(id).unwrap(), &[1]); // not published yet
    ///     store.commit(d).ok().unwrap();
    ///     assert_eq!(store.read(id).unwrap(), &[1, 2]);
    /// });
    /// ```
    pub fn write(&self, id: Id) -> Option<Draft<'_, T>> {
        let (entry, word) = self.lookup(id)?;
        // SAFETY: the word was just loaded with Acquire under this `&self` borrow.
        let copy = unsafe { self.version(table::version(word)) }.value.clone();
        let boxed = self.versions.insert(Version::new(copy)).ok()?;
        Some(Draft {
            boxed,
            entry,
            base: word,
            index: id.index(),
        })
    }

    /// Publishes a draft as the object's new version; the last writer wins. Readers
    /// see the old version or the new one, whole.
    ///
    /// Fails (handing the draft back) only if the object was destroyed since the draft
    /// was taken.
    ///
    /// # Panics
    /// If the draft comes from another store.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u32>(16, 32);
    ///     let id = store.create(0).unwrap();
    ///     let (mut a, mut b) = (store.write(id).unwrap(), store.write(id).unwrap());
    ///     (*a, *b) = (1, 2);
    ///     store.commit(a).ok().unwrap();
    ///     store.commit(b).ok().unwrap(); // overwrites a's commit
    ///     assert_eq!(store.read(id), Some(&2));
    ///     let late = store.write(id).unwrap();
    ///     store.destroy(id);
    ///     assert_eq!(*store.commit(late).unwrap_err(), 2);
    /// });
    /// ```
    pub fn commit<'a>(&'a self, draft: Draft<'a, T>) -> Result<(), Draft<'a, T>> {
        let new = self.check_draft(&draft);
        let mut expected = draft.base;
        loop {
            // Success: Release, so readers that load the new word (Acquire) see the
            // draft's contents; and Acquire, because we then retire the version we
            // replaced, which makes a `&Version` to it: the thread that filled it must
            // happen-before that. Failure: Relaxed, the word seen is only compared (if
            // we adopt it, the successful exchange reads it again with Acquire).
            match draft.entry.compare_exchange_weak(
                expected,
                new,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.published(draft, expected);
                    return Ok(());
                }
                Err(seen) => {
                    if table::generation(seen) != table::generation(draft.base)
                        || table::version(seen) == NONE
                    {
                        return Err(draft);
                    }
                    expected = seen;
                }
            }
        }
    }

    /// Publishes a draft only if nobody has committed (or destroyed) the object since
    /// the draft was taken: one compare-exchange of the object's version. Otherwise
    /// hands the draft back; take a new one with [`write`](Self::write) and try again.
    ///
    /// # Panics
    /// If the draft comes from another store.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u32>(16, 32);
    ///     let id = store.create(0).unwrap();
    ///     let (mut a, mut b) = (store.write(id).unwrap(), store.write(id).unwrap());
    ///     (*a, *b) = (1, 2);
    ///     assert!(store.try_commit(a).is_ok());
    ///     let b = store.try_commit(b).unwrap_err(); // a got there first
    ///     assert_eq!((*b, store.read(id)), (2, Some(&1)));
    /// });
    /// ```
    pub fn try_commit<'a>(&'a self, draft: Draft<'a, T>) -> Result<(), Draft<'a, T>> {
        let new = self.check_draft(&draft);
        // Orderings: as in `commit`.
        match draft
            .entry
            .compare_exchange(draft.base, new, Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(_) => {
                let base = draft.base;
                self.published(draft, base);
                Ok(())
            }
            Err(_) => Err(draft),
        }
    }

    /// The entry word that publishes `draft`. Panics if it is another store's.
    fn check_draft(&self, draft: &Draft<'_, T>) -> u64 {
        assert!(
            self.versions.owns_box(&draft.boxed),
            "scope-stack: a Draft was committed to a store it does not come from"
        );
        let v = Pool::slot_index_of(&draft.boxed);
        table::pack(table::generation(draft.base), v)
    }

    /// After a successful exchange: the draft's box now belongs to the table, and the
    /// version the exchange replaced (in word `old`) is retired.
    fn published(&self, draft: Draft<'_, T>, old: u64) {
        let index = draft.index;
        PoolBox::leak_to_slot_index(draft.boxed);
        self.retire_version(table::version(old), index);
    }

    /// Puts version `v` (just unlinked from its entry by this thread, with an Acquire
    /// exchange, so its contents happen-before us) on this thread's garbage list.
    fn retire_version(&self, v: u32, hint: u32) {
        // SAFETY: `v` was named by the entry word our exchange replaced, so it is live
        // until `end_frame`, which cannot run during this `&self` borrow.
        let version = unsafe { self.version(v) };
        garbage::push(&self.garbage.shard(hint).versions, v, &version.next);
    }

    /// Destroys an object: its id (and every copy of it) goes stale at once, the last
    /// version is freed at the next [`end_frame`](Self::end_frame), and the index is
    /// reused after that. Returns `false` if `id` named no live object.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u32>(16, 32);
    ///     let id = store.create(1).unwrap();
    ///     let seen = store.read(id).unwrap();
    ///     assert!(store.destroy(id));
    ///     assert!(!store.destroy(id));
    ///     assert_eq!(store.read(id), None);
    ///     assert_eq!(*seen, 1); // still valid until end_frame
    /// });
    /// ```
    pub fn destroy(&self, id: Id) -> bool {
        let Some((entry, mut word)) = self.lookup(id) else {
            return false;
        };
        let dead = table::pack(id.generation().wrapping_add(1), NONE);
        loop {
            // Success: Acquire, because we then retire the version we replaced, which
            // makes a `&Version` to it (its filler must happen-before that); nothing
            // to release, as a dead word publishes nothing. Failure: Relaxed, as in
            // `commit`.
            match entry.compare_exchange_weak(word, dead, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => break,
                Err(seen) => {
                    if table::generation(seen) != id.generation() || table::version(seen) == NONE {
                        return false;
                    }
                    word = seen;
                }
            }
        }
        let index = id.index();
        self.retire_version(table::version(word), index);
        let shard = self.garbage.shard(index);
        garbage::push(&shard.objects, index, self.table.link(index));
        true
    }

    /// Pins an object's current version so that it outlives frames: the returned
    /// [`Pinned`] derefs to it and keeps it alive across any number of
    /// [`end_frame`](Self::end_frame)s, until it is dropped. For readers, such as
    /// background threads, that cannot finish within a frame. `None` if `id` names no
    /// live object.
    ///
    /// A pin costs one atomic increment (and one decrement when dropped); plain
    /// [`read`](Self::read) costs none.
    ///
    /// # Panics
    /// If one version has more than 2^31 pins at once.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<String>(16, 32);
    ///     let id = store.create("v1".to_string()).unwrap();
    ///     let pinned = store.pin(id).unwrap();
    ///     for frame in 2..5 {
    ///         let mut d = store.write(id).unwrap();
    ///         *d = format!("v{frame}");
    ///         store.commit(d).ok().unwrap();
    ///         store.end_frame(); // "v1" stays alive: it is pinned
    ///     }
    ///     // A background reader uses the pin across those frames, then drops it.
    ///     let len = std::thread::scope(|s| s.spawn(move || pinned.len()).join().unwrap());
    ///     assert_eq!(len, 2);
    ///     assert_eq!(store.end_frame(), 1); // the pin is gone: "v1" is freed now
    /// });
    /// ```
    pub fn pin(&self, id: Id) -> Option<Pinned<'s, T>> {
        let (_, word) = self.lookup(id)?;
        let v = table::version(word);
        // SAFETY: the word was just loaded with Acquire under this `&self` borrow.
        let version = unsafe { self.version(v) };
        // Relaxed: `end_frame`, the only reader of the count that matters, runs after
        // this `&self` borrow has ended, which orders this increment before it.
        let old = version.pins.fetch_add(1, Ordering::Relaxed);
        if old >= MAX_PINS {
            version.pins.fetch_sub(1, Ordering::Relaxed);
            panic!("scope-stack: too many pins on one version");
        }
        Some(Pinned {
            versions: self.versions,
            slot: v,
        })
    }

    /// Ends a frame: frees every version retired since the last call (replaced by a
    /// commit or destroyed) unless it is pinned, frees versions whose last pin was
    /// dropped, and makes destroyed objects' indices available to
    /// [`create`](Self::create) again. Returns how many versions it freed.
    ///
    /// Taking `&mut self` is what makes this safe: no [`read`](Self::read) reference
    /// or [`Draft`] can be alive. Runs in time proportional to the garbage.
    ///
    /// If a `T`'s destructor panics, the panic propagates; the rest of that garbage
    /// list is then only freed when the store's scope ends.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u32>(16, 32);
    ///     let id = store.create(1).unwrap();
    ///     for i in 0..3 {
    ///         let mut d = store.write(id).unwrap();
    ///         *d = i;
    ///         store.commit(d).ok().unwrap();
    ///     }
    ///     assert_eq!(store.versions_in_use(), 4);
    ///     assert_eq!(store.end_frame(), 3);
    ///     assert_eq!(store.versions_in_use(), 1);
    /// });
    /// ```
    pub fn end_frame(&mut self) -> usize {
        // Relaxed everywhere except the pin counts: `&mut self` orders every push of
        // the frame before us (see `garbage`).
        for shard in 0..SHARDS {
            let (versions, objects) = self.garbage.take(shard);
            self.table.recycle_chain(objects);
            // Put the versions in front of the still-pinned list, then sweep it all.
            if versions != NONE {
                let mut tail = versions;
                loop {
                    // SAFETY: retired versions are live until freed below.
                    let next = unsafe { self.version(tail) }.next.load(Ordering::Relaxed);
                    if next == NONE {
                        break;
                    }
                    tail = next;
                }
                // SAFETY: as above.
                let tail = unsafe { self.version(tail) };
                tail.next.store(self.garbage.pinned, Ordering::Relaxed);
                self.garbage.pinned = versions;
            }
        }
        let mut freed = 0;
        let mut v = core::mem::replace(&mut self.garbage.pinned, NONE);
        while v != NONE {
            // SAFETY: a retired version, live until freed below.
            let version = unsafe { self.version(v) };
            let next = version.next.load(Ordering::Relaxed);
            // Acquire: pairs with the Release decrement of the last pin, so that pin's
            // reads of the value happen-before we drop it.
            if version.pins.load(Ordering::Acquire) == 0 {
                // SAFETY: retired (no entry names it), unpinned, and no reference
                // from `read` or a draft is alive (`&mut self`); each version is
                // retired once, so it is on one list once and freed once.
                unsafe { self.versions.free_index(v) };
                freed += 1;
            } else {
                version.next.store(self.garbage.pinned, Ordering::Relaxed);
                self.garbage.pinned = v;
            }
            v = next;
        }
        freed
    }

    /// Version slots in use now: one per live object and per draft, plus versions
    /// retired but not yet freed. A snapshot while other threads run.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u32>(16, 32);
    ///     let id = store.create(1).unwrap();
    ///     let d = store.write(id).unwrap();
    ///     assert_eq!(store.versions_in_use(), 2);
    ///     drop(d);
    ///     assert_eq!(store.versions_in_use(), 1);
    /// });
    /// ```
    pub fn versions_in_use(&self) -> usize {
        self.versions.len()
    }

    /// The most objects the store can hold.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| assert_eq!(level.new_store::<u8>(10, 20).max_objects(), 10));
    /// ```
    pub fn max_objects(&self) -> usize {
        self.table.max_objects() as usize
    }

    /// The number of version slots.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| assert_eq!(level.new_store::<u8>(10, 20).max_versions(), 20));
    /// ```
    pub fn max_versions(&self) -> usize {
        self.versions.capacity()
    }
}

impl<T> fmt::Debug for Store<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("max_objects", &self.table.max_objects())
            .field("versions", &self.versions)
            .finish_non_exhaustive()
    }
}

/// A private, changeable copy of an object, from [`Store::write`].
///
/// Derefs to the value (`&T` and `&mut T`). Publish it with [`Store::commit`] or
/// [`Store::try_commit`]; drop it to discard it. It borrows the store, so it cannot be
/// kept past [`Store::end_frame`].
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let store = level.new_store::<(u32, u32)>(16, 32);
///     let id = store.create((7, 3)).unwrap();
///     let mut d = store.write(id).unwrap();
///     d.1 = 5;
///     assert_eq!(d.id(), id);
///     assert_eq!(d.into_inner(), (7, 5)); // discarded: nothing was published
///     assert_eq!(store.read(id), Some(&(7, 3)));
/// });
/// ```
pub struct Draft<'a, T> {
    boxed: PoolBox<'a, Version<T>>,
    /// The object's entry in the table.
    entry: &'a AtomicU64,
    /// The entry word when the draft was taken (generation and base version).
    base: u64,
    /// The object's index.
    index: u32,
}

impl<T> Draft<'_, T> {
    /// The id of the object this draft copies.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<u8>(16, 32);
    ///     let id = store.create(1).unwrap();
    ///     assert_eq!(store.write(id).unwrap().id(), id);
    /// });
    /// ```
    pub fn id(&self) -> Id {
        Id::new(self.index, table::generation(self.base))
    }

    /// Discards the draft and returns its value.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let store = level.new_store::<String>(16, 32);
    ///     let id = store.create("a".to_string()).unwrap();
    ///     assert_eq!(store.write(id).unwrap().into_inner(), "a");
    ///     assert_eq!(store.versions_in_use(), 1);
    /// });
    /// ```
    pub fn into_inner(self) -> T {
        self.boxed.into_inner().value
    }
}

impl<T> core::ops::Deref for Draft<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.boxed.value
    }
}

impl<T> core::ops::DerefMut for Draft<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.boxed.value
    }
}

impl<T: fmt::Debug> fmt::Debug for Draft<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Draft")
            .field("id", &self.id())
            .field("value", &**self)
            .finish()
    }
}

/// A version kept alive across frames, from [`Store::pin`].
///
/// Derefs to the value. It does not borrow the store, so [`Store::end_frame`] can run
/// while it lives; the version is freed at the first `end_frame` after it is retired
/// and its last pin is dropped. It carries the scope's lifetime, so it cannot outlive
/// the store. `Clone` adds a pin; any thread may drop it.
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let store = level.new_store::<u32>(16, 32);
///     let id = store.create(1).unwrap();
///     let a = store.pin(id).unwrap();
///     let b = a.clone();
///     store.destroy(id);
///     assert_eq!(store.end_frame(), 0); // pinned twice
///     drop(a);
///     assert_eq!(store.end_frame(), 0); // still pinned by `b`
///     assert_eq!(*b, 1);
///     drop(b);
///     assert_eq!(store.end_frame(), 1);
/// });
/// ```
pub struct Pinned<'s, T> {
    versions: &'s Pool<'s, Version<T>>,
    slot: u32,
}

impl<T> Pinned<'_, T> {
    #[inline(always)]
    fn version(&self) -> &Version<T> {
        // SAFETY: our pin keeps the version from being freed (`end_frame` frees only
        // unpinned versions), and the pool outlives `'s`, which we carry. The version
        // was published to the thread that pinned it; a pin sent to another thread
        // carries that edge with it (sending is a synchronisation).
        unsafe { self.versions.slot_ref(self.slot) }
    }
}

impl<T> core::ops::Deref for Pinned<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.version().value
    }
}

impl<T> Clone for Pinned<'_, T> {
    fn clone(&self) -> Self {
        let pins = &self.version().pins;
        // Relaxed: we hold a pin already, so the count cannot reach zero meanwhile
        // (as in `Arc::clone`).
        if pins.fetch_add(1, Ordering::Relaxed) >= MAX_PINS {
            pins.fetch_sub(1, Ordering::Relaxed);
            panic!("scope-stack: too many pins on one version");
        }
        Pinned {
            versions: self.versions,
            slot: self.slot,
        }
    }
}

impl<T> Drop for Pinned<'_, T> {
    fn drop(&mut self) {
        // Release: pairs with the Acquire load in `end_frame`, so every read made
        // through this pin happens-before the version is dropped.
        self.version().pins.fetch_sub(1, Ordering::Release);
    }
}

impl<T: fmt::Debug> fmt::Debug for Pinned<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pinned").field(&**self).finish()
    }
}
