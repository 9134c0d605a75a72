//! `DensePool<T>`: a single-threaded object pool with O(1) insert and remove, whose live
//! objects sit side by side in one array, so a walk over them is a walk over a slice.
//!
//! Gameplay systems spawn and kill objects hundreds of times a frame and then update
//! every live one. A plain array with an "in use" flag per slot makes the update loop
//! test every slot; a free list makes finding a slot O(1) but leaves the loop the same.
//! This pool keeps the seed's swap-delete *roster*, with the objects stored in roster
//! order. Three arrays:
//!
//! - the **roster**: one 8-byte entry per position, `generation << 32 | slot index`
//!   (the handle of the slot's object, without the pool's tag). Its slot indices are a
//!   permutation of all slots, split by `len` into the live part (`roster[..len]`) and
//!   the free part (`roster[len..]`). A generation is odd while its slot is live;
//! - the **values**: cell `k` holds the object of the slot named by `roster[k]`, so
//!   `values[..len]` are exactly the live objects, with no gaps;
//! - the **slots**, indexed by a handle's slot index: where that slot's entry sits in
//!   the roster (the seed's reverse table), which is also its object's cell.
//!
//! Then:
//! - **Insert** takes the slot named by `roster[len]`, writes the object to `values[len]`
//!   and moves the split one step right.
//! - **Remove** finds the object's position through its slot, moves the last live
//!   object and its roster entry into that position, and moves the split one step
//!   left. O(1).
//! - **Iterate** walks `values[..len]` (a slice: no flag, no branch, no indirection),
//!   and `roster[..len]` beside it when the handles are wanted.
//!
//! Objects therefore **move**: removing one moves the last live object into its cell.
//! This is sound and invisible to safe code, because every reference into the pool
//! borrows it and [`remove`](DensePool::remove) (like every other call that moves an
//! object: [`retain`](DensePool::retain), [`insert_evicting`](DensePool::insert_evicting))
//! takes `&mut self`, so no `&T` can survive a move. A [`DenseHandle`] names a slot, not
//! a cell, and keeps naming the same object for as long as it lives. What moving
//! changes, against a pool whose objects stay put:
//!
//! - An object's address is stable only until the next call that takes `&mut self`;
//!   a raw pointer kept past one may point at another object, or at a free cell.
//! - Moving is a bitwise copy, like `Vec::swap_remove`'s; no `Clone` or `Drop` runs.
//! - The free cells are the tail of the value array, one per free slot (the one at its
//!   roster position): `debug-fill` paints the cell a removal vacates, and its
//!   `DensePool::freed_slot_bytes` shows a free slot's cell.
//! - Nothing else: handles, the iteration order (the roster's, as before), reports
//!   (which never read the values) and the errors are as they were.
//!
//! ```
//! use scope_stack::LinearAllocator;
//!
//! struct Spark { pos: f32, vel: f32 }
//!
//! let mut memory = LinearAllocator::with_capacity(1 << 16)?;
//! memory.scope("level", |level| {
//!     let sparks = level.new_dense_pool::<Spark>(256);
//!     let a = sparks.insert(Spark { pos: 0.0, vel: 1.0 }).ok().unwrap();
//!     let b = sparks.insert(Spark { pos: 5.0, vel: -1.0 }).ok().unwrap();
//!     for s in sparks.values_mut() {
//!         s.pos += s.vel; // visits exactly the two live sparks
//!     }
//!     sparks.remove(a); // `b` moves into `a`'s cell; its handle still finds it
//!     assert_eq!(sparks.get(b).map(|s| s.pos), Some(4.0));
//!     assert!(sparks.get(a).is_none()); // stale
//! }); // live sparks are dropped, the memory rewinds
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! # Invariants
//!
//! With `n = capacity`:
//! - The slot indices of the entries `roster[..n]` are a permutation of `0..n`, and
//!   `slots[index(roster[k])] == k` for every `k < n` (the slots are the roster's
//!   inverse). So slot `i`'s entry is `roster[slots[i]]`, and its generation is that
//!   entry's.
//! - `values[k]` is initialised exactly when `k < len`, and then it is the object of
//!   the slot that `roster[k]` names.
//! - Slot `i` is live exactly when `slots[i] < len`, exactly when its generation is
//!   odd. Every insert and every removal adds one to the slot's generation, so its
//!   parity flips with the slot's state.
//! - A lookup by handle yields a position only if the handle's tag is this pool's, its
//!   index `i` is below `n`, and its generation equals slot `i`'s current, odd
//!   generation (one compare of the entry at `slots[i]` with the handle's bits, tag
//!   taken out); so a lookup can never reach a free cell, whatever bits the handle
//!   holds.
//! - With the `debug-fill` feature, every free cell (`values[len..]`) holds the pattern
//!   [`debug_fill::FREED_SLOT`](crate::block::debug_fill::FREED_SLOT) (`0x1deadb0b`): all
//!   cells are painted when the pool is made, and the cell a removal vacates (the last
//!   live one, whose object moved into the removed object's cell) right after. Stale
//!   data then stands out in a debugger.
//!
//! Bookkeeping is always updated *before* a value is dropped, so a panicking destructor
//! leaves a consistent pool and can never cause a second drop.
//!
//! # Iteration
//!
//! A dense pool iterates like a [`Pool`](crate::Pool) (the method names follow
//! slotmap; the [table](crate::pool#iterating-pools-and-dense-pools-alike) shows both
//! kinds): [`iter`](DensePool::iter) and [`iter_mut`](DensePool::iter_mut) yield each
//! live object with its [`DenseHandle`], [`values`](DensePool::values) and
//! [`values_mut`](DensePool::values_mut) the objects alone, and
//! [`handles`](DensePool::handles) the handles alone. `values` walks `values[..len]`,
//! `handles` walks `roster[..len]` (each entry is a handle but for the pool's tag), and
//! `iter` walks both side by side: each reads memory front to back, costs one step per
//! live object whatever the capacity, knows its exact length, and runs from either end.
//!
//! All five share one **order, the roster's**: objects come in insertion order until
//! something is removed; a removal moves the last live object into the removed one's
//! place, and the next insert goes to the end. So after inserting `a b c d` and
//! removing `b`, the order is `a d c`. Code that needs a stable order sorts, or keeps
//! its own list of handles.
//!
//! ```
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(4096).unwrap();
//! memory.scope("level", |level| {
//!     let pool = level.new_dense_pool::<char>(8);
//!     let hs: Vec<_> = "abcd".chars().map(|c| pool.insert(c).unwrap()).collect();
//!     pool.remove(hs[1]);
//!     assert_eq!(pool.values().collect::<String>(), "adc");
//!     pool.insert('e').unwrap();
//!     assert_eq!(pool.values().rev().collect::<String>(), "ecda");
//!     // `iter` pairs the same objects with their handles.
//!     assert!(pool.iter().all(|(h, c)| pool[h] == *c));
//! });
//! ```
//!
//! # The full pool
//!
//! Robert Nystrom's *Object Pool* chapter lists what to do when every slot is taken. This
//! pool offers two of them:
//! - **Fail**: [`insert`](DensePool::insert) gives the value back (`Err(value)`); the
//!   caller decides (for particles, dropping the new one is usually right).
//! - **Evict**: [`insert_evicting`](DensePool::insert_evicting) drops the live object
//!   with the smallest key (the quietest sound) and puts the new one in its slot.
//!
//! **Growing is deliberately absent.** The pool's arrays are carved out of a scope,
//! which cannot grow them in place; growing would mean a second set of arrays (a second
//! pool, which the caller can make) left behind in the scope until it unwinds. A pool
//! that can run out is sized for the scene, like the rest of the scope.
//!
//! # Memory
//!
//! Three arrays are carved from the scope, values first: `capacity` cells of `T`, the
//! roster (8 bytes per slot, then one 4-byte word), and the slots (4 bytes per slot):
//! **`size_of::<T>() + 12` bytes per slot**, plus at most a few bytes of alignment
//! padding between the arrays. The pool object (`size_of::<DensePool<T>>()`, 40 bytes
//! on 64-bit targets) sits behind a 16-byte finalizer record.
//! [`DensePool::memory_needed`] bounds the total, padding included.
//!
//! Why this split: a walk reads only packed objects (`values`), or packed objects and
//! packed handles (`iter`); and a lookup by handle reads a 4-byte slot (a 16K pool's
//! slot table is 64 KiB, and stays in cache when the objects do not), then the entry
//! and the cell at the position it gives, side by side. A remove also rewrites the
//! last live object's slot, entry and cell (the entry and cell are hot: every insert
//! and remove works at the end), and the next insert reuses the entry and cell the
//! remove just wrote. One 4-byte word follows the roster: the high-water mark that
//! reports read (see below).
//!
//! # Reports
//!
//! A [`MemoryMap`](crate::MemoryMap) lists every dense pool under its scope (kind
//! `"DensePool"`) with its live count, capacity, high-water mark and bytes. A report may
//! be taken while the caller holds `&mut DensePool`, or a `&mut T` from
//! [`get_mut`](DensePool::get_mut) or [`iter_mut`](DensePool::iter_mut), even on
//! another thread, so it never reads the pool object or any value (objects move inside
//! the value array; the report never looks there). When the pool is made it links a
//! record into its scope (as [`Pool`](crate::Pool) does) that names only two places in
//! scope memory the pool itself reaches through raw pointers:
//!
//! - **`len`** is counted at report time, O(capacity), from the roster's generation
//!   words: each slot's generation is in exactly one entry, and a slot is live exactly
//!   when it is odd. Nothing is added to insert or remove for it. The entries are
//!   `AtomicU64`s used with `Relaxed` loads and stores, which compile to plain 8-byte
//!   moves; that only makes a report on another thread a race-free read. A remove
//!   first overwrites the removed object's (odd) entry with the last live one's, then
//!   makes the vacated last entry even, so the number of odd entries goes from `len` to
//!   `len - 1` and never passes through anything else; and since objects only move
//!   towards the front, a report's front-to-back count never meets one twice.
//! - **The high-water mark** is kept, not computed. It could in principle be derived
//!   at report time (the slots ever used are exactly `roster[..max_len]`, and a slot
//!   never used still holds the pool's seed generation), but a slot's generation comes
//!   back to the seed after 2^31 insert/remove cycles, a few seconds of churn on a
//!   one-slot pool, and the count would then be wrong. So the pool keeps `high_water`
//!   in its own struct, on the cache line `insert` already writes for `len`. `insert`
//!   compares `len` with it instead of with the capacity (`len <= high_water <=
//!   capacity`, so the one well-predicted compare also catches a full pool), and only
//!   when `len` passes it (at most `capacity` times in the pool's life, never in steady
//!   churn) stores the new mark, after the new object is live, to the word after the
//!   roster for reports. Remove pays nothing.
//!
//! The record itself (a few words) is allocated after the pool; if the scope has no
//! room left for it, the pool is made all the same and is only missing from reports.
//! [`DensePool::memory_needed`] does not count it.
//!
//! # Why `DensePool<'s, T>` carries the scope's lifetime
//!
//! For the same reason as [`Pool`](crate::Pool): two pools from an outer and an inner
//! scope must not be swappable through their `&mut`, or the outer one would end up
//! pointing into memory the inner scope rewinds. `'s` is invariant, so they are
//! different types:
//!
//! ```compile_fail
//! # use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("systems", |systems| {
//!     let outer = systems.new_dense_pool::<u32>(4);
//!     systems.scope("level", |level| {
//!         let inner = level.new_dense_pool::<u32>(4);
//!         core::mem::swap(outer, inner); // error: lifetime mismatch
//!     });
//! });
//! ```
//!
//! `T: 'static` is required because the pool's destructor runs from the type-erased
//! finalizer chain (see [`crate::rules`], rule 4).

use core::fmt;
use core::marker::PhantomData;
use core::mem::{self, align_of, size_of};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU32, Ordering};

use crate::scope::finalizer::ObjectLayout;

mod access;
pub(crate) mod carve;
mod entry;
mod handle;
mod iter;
#[cfg(feature = "rayon")]
mod par;
mod roster;

pub use handle::DenseHandle;
use handle::INDEX_BITS;
pub use iter::{Handles, Iter, IterMut, Values, ValuesMut};

use entry::{Entry, ONE_GENERATION};

// Three array pointers and four words (and the profiler's pool with `tracy`).
#[cfg(all(target_pointer_width = "64", not(feature = "tracy")))]
static_assertions::const_assert_eq!(size_of::<DensePool<'static, u64>>(), 40);

/// Source of pool tags and generation seeds. It only names pools; it orders nothing.
static DENSE_POOL_IDS: AtomicU32 = AtomicU32::new(0);

/// A fixed-capacity, single-threaded object pool carved out of a scope, with O(1)
/// insert and remove, generational handles, and iteration over exactly the live
/// objects, which it keeps packed in one array. See the [module docs](crate::dense) for
/// how it works.
///
/// Make one with [`ScopeStack::new_dense_pool`](crate::ScopeStack::new_dense_pool).
/// Removing an object moves the last live one into its place (which no reference can
/// observe: removing needs `&mut self`); handles keep naming their objects.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let names = level.new_dense_pool::<String>(8);
///     let frog = names.insert("frog".to_string()).unwrap();
///     names.insert("toad".to_string()).unwrap();
///     assert_eq!(names.len(), 2);
///     assert_eq!(names.remove(frog).as_deref(), Some("frog"));
///     assert_eq!(names.values().collect::<Vec<_>>(), ["toad"]);
/// }); // "toad" is dropped here
/// ```
pub struct DensePool<'s, T> {
    /// `capacity` cells in roster order: cell `k` holds the object of slot
    /// `roster[k].index`, initialised exactly when `k < len`.
    values: NonNull<T>,
    /// `capacity` entries, live ones first (`..len`), then free ones; then one more
    /// 4-byte word, the report's copy of `high_water` (see [`Self::high_water_word`]).
    roster: NonNull<Entry>,
    /// `capacity` roster positions, indexed by a handle's slot index.
    slots: NonNull<u32>,
    len: u32,
    capacity: u32,
    /// The pool's 8-bit tag, shifted to where it sits in its handles' slot word (the
    /// high bits), so one `xor` checks it and extracts the index.
    tag_bits: u32,
    /// The most objects ever live at once (`len <= high_water <= capacity`), on the
    /// cache line `insert` already reads for `len`.
    high_water: u32,
    /// Invariant in `'s`: pools of different scopes are different types.
    _scope: PhantomData<fn(&'s ()) -> &'s ()>,
    /// Owns `T`s.
    _owns: PhantomData<T>,
    /// The pool as the profiler shows it (feature `tracy`).
    #[cfg(feature = "tracy")]
    profiler: crate::profiler::Counted,
}

// SAFETY: the pool owns its `T`s through pointers into scope memory that nothing else
// uses, like a `Vec<T>`; sending it (or its `&mut`) sends the `T`s.
unsafe impl<T: Send> Send for DensePool<'_, T> {}
// SAFETY: `&DensePool` gives out only `&T` and reads the bookkeeping; it writes nothing.
unsafe impl<T: Sync> Sync for DensePool<'_, T> {}

impl<'s, T> DensePool<'s, T> {
    /// An upper bound of the bytes [`ScopeStack::new_dense_pool`](crate::ScopeStack::new_dense_pool) takes from the scope
    /// for `capacity` slots: the three arrays, the pool object and its finalizer record,
    /// and the worst-case alignment padding of each. `None` if it overflows.
    ///
    /// ```
    /// # use scope_stack::{DensePool, LinearAllocator};
    /// let need = DensePool::<[u8; 20]>::memory_needed(1000).unwrap();
    /// assert!(need >= 1000 * (20 + 12));
    /// let mut memory = LinearAllocator::with_capacity(need).unwrap();
    /// memory.scope("level", |level| {
    ///     level.new_dense_pool::<[u8; 20]>(1000);
    ///     assert!(level.used() <= need);
    /// });
    /// ```
    pub fn memory_needed(capacity: usize) -> Option<usize> {
        let values = capacity.checked_mul(size_of::<T>())?;
        let roster = capacity.checked_mul(size_of::<Entry>())?.checked_add(4)?;
        let slots = capacity.checked_mul(size_of::<u32>())?;
        let record = ObjectLayout::<Self>::SIZE + ObjectLayout::<Self>::ALIGN - 1;
        values
            .checked_add(align_of::<T>() - 1)?
            .checked_add(roster)?
            .checked_add(align_of::<Entry>() - 1)?
            .checked_add(slots)?
            .checked_add(align_of::<u32>() - 1)?
            .checked_add(record)
    }

    // ----- raw access (all bounds are the caller's) -----

    /// Cell `position` of the value array (initialised only while `position < len`).
    ///
    /// # Safety
    /// `position < capacity`.
    #[inline(always)]
    unsafe fn value_ptr(&self, position: usize) -> *mut T {
        debug_assert!(position < self.capacity as usize);
        // SAFETY: `position < capacity` (caller), so the result stays inside the array.
        unsafe { self.values.as_ptr().add(position) }
    }

    /// Roster entry `position` (always initialised), only ever used as an atomic, so a
    /// report reading it on another thread never meets a plain access.
    ///
    /// # Safety
    /// `position < capacity`.
    #[inline(always)]
    unsafe fn entry(&self, position: usize) -> &Entry {
        debug_assert!(position < self.capacity as usize);
        // SAFETY: `position < capacity` (caller), so the entry is inside the roster,
        // initialised and valid while the pool lives; shared references to an atomic
        // may coexist, with each other and with a report's.
        unsafe { &*self.roster.as_ptr().add(position) }
    }

    /// Slot `index`: its roster position.
    ///
    /// # Safety
    /// `index < capacity`.
    #[inline(always)]
    unsafe fn slot(&self, index: usize) -> *mut u32 {
        debug_assert!(index < self.capacity as usize);
        // SAFETY: `index < capacity` (caller), so the result stays inside the array.
        unsafe { self.slots.as_ptr().add(index) }
    }

    /// The report's copy of the high-water mark: the word after the roster. Written
    /// (rarely, when `insert` passes the mark) by the pool and read by reports, so it is
    /// atomic; it is only ever reached through the roster pointer.
    #[inline(always)]
    fn high_water_word(&self) -> NonNull<AtomicU32> {
        // SAFETY: the roster is `capacity` entries and one more `u32` (carve).
        unsafe { self.roster.add(self.capacity as usize).cast() }
    }

    /// The live objects, packed.
    #[inline(always)]
    fn live_values(&self) -> &[T] {
        // SAFETY: `values[..len]` are initialised (module invariant); nothing moves or
        // writes them while `&self` is borrowed.
        unsafe { core::slice::from_raw_parts(self.values.as_ptr(), self.len as usize) }
    }

    /// Where the object a handle names sits, if it names a live object of this pool.
    #[inline(always)]
    fn find(&self, handle: DenseHandle<T>) -> Option<usize> {
        // The handle without the pool's tag is the entry it must find. If the tag is
        // another pool's, tag bits remain above the index, which is then at least
        // 2^24 > capacity.
        let wanted = handle.entry_for(self.tag_bits);
        let index = entry::index(wanted);
        if index >= self.capacity as usize {
            return None;
        }
        // SAFETY: `index < capacity`, so the slot is in the array; its position is
        // below `capacity` too (module invariant: the slots are a permutation's
        // inverse).
        let found = unsafe {
            let position = *self.slot(index) as usize;
            (position, self.entry(position).load(Ordering::Relaxed))
        };
        // Equal: the entry names this slot at the handle's generation. Odd: live
        // (module invariant; tested on the handle's copy, known before the loads).
        (entry::is_live(wanted) && found.1 == wanted).then_some(found.0)
    }

    /// Takes the object at live position `position`, whose roster entry is `removed`,
    /// out of the pool: the last live object and its entry move into that position,
    /// the removed slot's entry goes to the vacated last place with its generation made
    /// even, and `len` shrinks; then the vacated last cell is painted (`debug-fill`).
    /// The object is returned, owned by the caller. O(1).
    ///
    /// # Safety
    /// `position < len`, and `removed` is the entry at `position`.
    #[inline(always)]
    unsafe fn swap_remove(&mut self, position: usize, removed: u64) -> T {
        let last = self.len as usize - 1;
        // SAFETY: `position < len`, so `len >= 1`, `last < len <= capacity`, and both
        // cells hold objects. Both are read (bitwise) before the last one is written
        // into the removed one's cell; when they are the same cell, that writes back
        // what was there. Either way cell `last` is then logically uninitialised,
        // matching `len = last` below, and the removed object is ours.
        let value = unsafe {
            let moving = self.value_ptr(last).read();
            let value = self.value_ptr(position).read();
            self.value_ptr(position).write(moving);
            value
        };
        // The entries swap places (the removed one made even), which keeps the roster a
        // permutation; the slots of both follow, keeping `slots[roster[k]] == k`. The
        // removed object's (odd) entry is overwritten by the moved one's (odd) before
        // the vacated last one is made even, so a report never counts more live
        // objects than there are.
        // SAFETY: `position` and `last` are below `capacity`, and entries name slot
        // indices, all below `capacity`.
        unsafe {
            let moved = self.entry(last).load(Ordering::Relaxed);
            self.entry(position).store(moved, Ordering::Relaxed);
            self.entry(last)
                .store(removed.wrapping_add(ONE_GENERATION), Ordering::Relaxed);
            *self.slot(entry::index(moved)) = position as u32;
            *self.slot(entry::index(removed)) = last as u32;
        }
        self.len = last as u32;
        // The last cell's object moved into the hole: the last cell is what ends.
        // SAFETY: `last < capacity`.
        #[cfg(feature = "tracy")]
        self.profiler.free(unsafe { self.value_ptr(last) }.addr());
        #[cfg(feature = "debug-fill")]
        // SAFETY: cell `last` is free now.
        unsafe {
            self.poison(last)
        };
        value
    }

    /// Drops the last live object in place: its generation is made even and `len`
    /// shrinks first, then the object is dropped and its cell painted (also when the
    /// destructor panics). Nothing moves.
    ///
    /// # Safety
    /// `len > 0`.
    unsafe fn drop_last(&mut self) {
        #[cfg(feature = "debug-fill")]
        struct PoisonAfter<'p, 's, T>(&'p DensePool<'s, T>, usize);
        #[cfg(feature = "debug-fill")]
        impl<T> Drop for PoisonAfter<'_, '_, T> {
            fn drop(&mut self) {
                // SAFETY: runs after the object's destructor, returned or unwound; the
                // cell is free.
                unsafe { self.0.poison(self.1) }
            }
        }
        let last = self.len as usize - 1;
        // SAFETY: `last < len <= capacity` (caller).
        let entry = unsafe { self.entry(last) };
        entry.store(
            entry.load(Ordering::Relaxed).wrapping_add(ONE_GENERATION),
            Ordering::Relaxed,
        );
        self.len = last as u32;
        // SAFETY: `last < capacity`.
        #[cfg(feature = "tracy")]
        self.profiler.free(unsafe { self.value_ptr(last) }.addr());
        #[cfg(feature = "debug-fill")]
        let _poison = PoisonAfter(self, last);
        // SAFETY: cell `last` held the last live object (`last < len` before the line
        // above). The bookkeeping says "free" before the destructor runs, so a panic
        // there cannot lead to a second drop.
        unsafe { ptr::drop_in_place(self.value_ptr(last)) };
    }

    /// Paints a free cell with the freed-slot pattern (`debug-fill` feature).
    ///
    /// # Safety
    /// `position < capacity` and the cell holds no object.
    #[cfg(feature = "debug-fill")]
    unsafe fn poison(&self, position: usize) {
        // SAFETY: `position < capacity` (caller). The cell holds no object (caller), so
        // its `size_of::<T>()` bytes may be overwritten with plain bytes.
        let at = NonNull::new(unsafe { self.value_ptr(position) }.cast::<u8>());
        if let Some(at) = at {
            crate::block::debug_fill::freed_slot(at, size_of::<T>());
        }
    }
}

impl<T> Drop for DensePool<'_, T> {
    fn drop(&mut self) {
        // Ends the pool in the profiler after the drops, even if one panics.
        #[cfg(feature = "tracy")]
        let _ending = self.profiler.ending();
        if mem::needs_drop::<T>() {
            self.clear();
        }
    }
}

impl<T> core::ops::Index<DenseHandle<T>> for DensePool<'_, T> {
    type Output = T;

    /// The object a handle names.
    ///
    /// # Panics
    /// When the handle is stale or foreign.
    #[track_caller]
    fn index(&self, handle: DenseHandle<T>) -> &T {
        match self.get(handle) {
            Some(v) => v,
            None => panic!("DensePool: stale or foreign handle {handle:?}"),
        }
    }
}

impl<T> core::ops::IndexMut<DenseHandle<T>> for DensePool<'_, T> {
    /// The object a handle names, mutably.
    ///
    /// # Panics
    /// When the handle is stale or foreign.
    #[track_caller]
    fn index_mut(&mut self, handle: DenseHandle<T>) -> &mut T {
        match self.get_mut(handle) {
            Some(v) => v,
            None => panic!("DensePool: stale or foreign handle {handle:?}"),
        }
    }
}

impl<T> fmt::Debug for DensePool<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DensePool")
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .field("tag", &(self.tag_bits >> INDEX_BITS))
            .finish_non_exhaustive()
    }
}

/// The same walk as [`DensePool::iter`]: each live object with its handle.
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
/// memory.scope("level", |level| {
///     let pool = level.new_dense_pool::<u32>(4);
///     let h = pool.insert(7).unwrap();
///     for (handle, n) in &*pool {
///         assert_eq!((handle, *n), (h, 7));
///     }
/// });
/// ```
impl<'a, T> IntoIterator for &'a DensePool<'_, T> {
    type Item = (DenseHandle<T>, &'a T);
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// The same walk as [`DensePool::iter_mut`]: each live object, mutably, with its handle.
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
/// memory.scope("level", |level| {
///     let pool = level.new_dense_pool::<u32>(4);
///     let h = pool.insert(7).unwrap();
///     for (_, n) in &mut *pool {
///         *n += 1;
///     }
///     assert_eq!(pool[h], 8);
/// });
/// ```
impl<'a, T> IntoIterator for &'a mut DensePool<'_, T> {
    type Item = (DenseHandle<T>, &'a mut T);
    type IntoIter = IterMut<'a, T>;
    fn into_iter(self) -> IterMut<'a, T> {
        self.iter_mut()
    }
}
