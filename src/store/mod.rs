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

pub(crate) mod carve;
mod draft;
mod garbage;
mod id;
mod pinned;
mod table;
mod version;
mod write;

use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};

#[cfg(not(loom))]
use core::sync::atomic::AtomicPtr;
#[cfg(loom)]
use loom::sync::atomic::AtomicPtr;

use crate::pool::{Pool, PoolBox};
use crate::scope::finalizer::ObjectLayout;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

use garbage::{Garbage, SHARDS};
use table::{Block, Table, NONE};

pub use draft::Draft;
pub use id::Id;
pub use pinned::Pinned;
pub(crate) use version::Version;

pub use crate::limits::MAX_STORE_OBJECTS;

/// Source of the stores' generation seeds. It only names stores; it orders nothing.
static STORE_IDS: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

/// A versioned object store carved from a scope; see the [module docs](crate::store).
///
/// Made by [`ScopeStack::new_store`](crate::ScopeStack::new_store). Share `&Store` with the threads of a frame; call
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

impl<'s, T: Clone + 'static> Store<'s, T> {
    /// Puts version `v` (just unlinked from its entry by this thread, with an Acquire
    /// exchange, so its contents happen-before us) on this thread's garbage list.
    fn retire_version(&self, v: u32, hint: u32) {
        // SAFETY: `v` was named by the entry word our exchange replaced, so it is live
        // until `end_frame`, which cannot run during this `&self` borrow.
        let version = unsafe { self.version(v) };
        garbage::push(&self.garbage.shard(hint).versions, v, &version.next);
    }

    /// An upper bound of the bytes [`ScopeStack::new_store`](crate::ScopeStack::new_store) takes from the scope,
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
