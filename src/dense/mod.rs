//! `DensePool<T>`: a single-threaded object pool with O(1) insert and remove and a
//! branch-free walk over exactly the live objects.
//!
//! Gameplay systems spawn and kill objects hundreds of times a frame and then update
//! every live one. A plain array with an "in use" flag per slot makes the update loop
//! test every slot; a free list makes finding a slot O(1) but leaves the loop the same.
//! This pool keeps a *roster*: a permutation of all slot indices, split by `len` into the
//! live part (`roster[..len]`) and the free part (`roster[len..]`).
//!
//! - **Insert** takes the slot named by `roster[len]` and moves the split one step right.
//! - **Remove** swaps the removed slot's roster entry with the last live entry, then
//!   moves the split one step left. A reverse table (slot → roster position) finds the
//!   entry to swap in O(1).
//! - **Iterate** walks `roster[..len]` and visits each named slot: no flag, no branch.
//!
//! Only the roster's *indices* move. The objects stay where they were placed until they
//! are removed, so a `&T` taken from [`DensePool::get`] and a [`DenseHandle`] both keep
//! naming the same object for as long as it lives.
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
//!     sparks.remove(a);
//!     assert_eq!(sparks.get(b).map(|s| s.pos), Some(4.0));
//!     assert!(sparks.get(a).is_none()); // stale
//! }); // live sparks are dropped, the memory rewinds
//! # Ok::<(), scope_stack::AllocError>(())
//! ```
//!
//! # Invariants
//!
//! With `n = capacity`:
//! - `roster[..n]` is a permutation of `0..n`, and `slots[roster[k]].position == k` for
//!   every `k < n` (the slots' position fields are the roster's inverse).
//! - Slot `i` holds an initialised `T` exactly when `slots[i].position < len`, exactly
//!   when `slots[i].generation` is odd. Every insert and every removal adds one to the slot's
//!   generation, so its parity flips with the slot's state.
//! - A lookup by handle yields a slot only if the handle's tag is this pool's, its index
//!   is below `n`, and its generation equals the slot's current, odd generation; so a
//!   lookup can never reach a free slot, whatever bits the handle holds.
//! - With the `debug-fill` feature, every free slot's bytes are the pattern
//!   [`debug_fill::FREED_SLOT`](crate::block::debug_fill::FREED_SLOT) (`0x1deadb0b`): fresh
//!   slots are painted when the pool is made, removed slots right after their value is
//!   moved out or dropped. Stale data then stands out in a debugger.
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
//! [`handles`](DensePool::handles) the handles alone. Each walks `roster[..len]`, so it
//! costs one step per live object whatever the capacity, knows its exact length, and
//! runs from either end.
//!
//! All five share one **order, the roster's**: objects come in insertion order until
//! something is removed; a removal moves the last live object's entry into the removed
//! one's place, and the next insert goes to the end. So after inserting `a b c d` and
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
//! **Growing is deliberately absent.** The pool's slots are an array carved out of a
//! scope, and objects never move; growing would mean a second array (a second pool, which
//! the caller can make) or moving every object (which breaks the fixed addresses). A pool
//! that can run out is sized for the scene, like the rest of the scope.
//!
//! # Memory
//!
//! Two arrays are carved from the scope: the slots and the roster. Each slot is
//! `{generation: u32, position: u32, value: T}`, so a slot costs `size_of::<T>() + 8`
//! bytes (plus padding when `T` is aligned to more than 8 bytes), and the roster 4 more:
//! **`size_of::<T>() + 12` bytes per slot** for the usual alignments. The pool object
//! (`size_of::<DensePool<T>>()`, 32 bytes on 64-bit targets) sits behind a 16-byte
//! finalizer record. [`DensePool::memory_needed`] bounds the total, padding included.
//!
//! The seed describes three separate arrays (objects, roster, reverse table). Here the
//! reverse table and the generations live *inside* the slots instead: a lookup reads the
//! generation and then the value, and a remove reads the generation, the roster position
//! and the value, so keeping them on one cache line saves a miss per operation. The
//! roster stays separate, since iteration walks it alone. One 4-byte word follows the
//! roster: the high-water mark that reports read (see below).
//!
//! # Reports
//!
//! A [`MemoryMap`](crate::MemoryMap) lists every dense pool under its scope (kind
//! `"DensePool"`) with its live count, capacity, high-water mark and bytes. A report may
//! be taken while the caller holds `&mut DensePool`, or a `&mut T` from
//! [`get_mut`](DensePool::get_mut) or [`iter_mut`](DensePool::iter_mut), even on
//! another thread, so it never reads the pool object or any value. When the pool is
//! made it links a record into its scope (as [`Pool`](crate::Pool) does) that names
//! only two places in scope memory the pool itself reaches through raw pointers:
//!
//! - **`len`** is counted at report time, O(capacity), from the slots' generation
//!   words: a slot is live exactly when its generation is odd. Nothing is added to
//!   insert or remove for it. The generation words are `AtomicU32`s used with
//!   `Relaxed` loads and stores, which compile to the same plain moves as before; that
//!   only makes a report on another thread a race-free read.
//! - **The high-water mark** is kept, not computed. It could in principle be derived
//!   at report time (the slots ever used are exactly `roster[..max_len]`, and a slot
//!   never used still holds the pool's seed generation), but a slot's generation comes
//!   back to the seed after 2^31 insert/remove cycles, a few seconds of churn on a
//!   one-slot pool, and the count would then be wrong. So the pool keeps `high_water`
//!   in its own struct, in what was padding, on the cache line `insert` already
//!   writes for `len`; `insert` makes one well-predicted compare against it, and only
//!   when `len` passes it (at most `capacity` times in the pool's life, never in steady
//!   churn) stores the new mark to the word after the roster for reports. Remove pays
//!   nothing.
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
mod handle;
mod iter;
mod roster;
mod slot;

pub use handle::DenseHandle;
use handle::{INDEX_BITS, INDEX_MASK};
pub use iter::{Handles, Iter, IterMut, Values, ValuesMut};
use slot::{value_ptr, Slot};

// The report's high-water field fits in the struct's padding: 32 bytes, as before.
#[cfg(target_pointer_width = "64")]
static_assertions::const_assert_eq!(size_of::<DensePool<'static, u64>>(), 32);

/// Source of pool tags and generation seeds. It only names pools; it orders nothing.
static DENSE_POOL_IDS: AtomicU32 = AtomicU32::new(0);

/// A fixed-capacity, single-threaded object pool carved out of a scope, with O(1)
/// insert and remove, generational handles, and iteration over exactly the live
/// objects. See the [module docs](crate::dense) for how it works.
///
/// Make one with [`ScopeStack::new_dense_pool`](crate::ScopeStack::new_dense_pool). Objects never move while they live.
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
    /// `capacity` slots; slot `i`'s value is initialised exactly when it is live.
    slots: NonNull<Slot<T>>,
    /// `capacity` slot indices: live ones first (`..len`), then free ones; then one
    /// more word, the report's copy of `high_water` (see [`Self::high_water_word`]).
    roster: NonNull<u32>,
    len: u32,
    capacity: u32,
    /// The pool's 8-bit tag, stored in the high bits of its handles' slot word.
    tag: u32,
    /// The most objects ever live at once. It sits in what would otherwise be the
    /// struct's padding, on the cache line `insert` already touches for `len`.
    high_water: u32,
    /// Invariant in `'s`: pools of different scopes are different types.
    _scope: PhantomData<fn(&'s ()) -> &'s ()>,
    /// Owns `T`s.
    _owns: PhantomData<T>,
}

// SAFETY: the pool owns its `T`s through pointers into scope memory that nothing else
// uses, like a `Vec<T>`; sending it (or its `&mut`) sends the `T`s.
unsafe impl<T: Send> Send for DensePool<'_, T> {}
// SAFETY: `&DensePool` gives out only `&T` and reads the bookkeeping; it writes nothing.
unsafe impl<T: Sync> Sync for DensePool<'_, T> {}

impl<'s, T> DensePool<'s, T> {
    /// An upper bound of the bytes [`ScopeStack::new_dense_pool`](crate::ScopeStack::new_dense_pool) takes from the scope
    /// for `capacity` slots: the two arrays, the pool object and its finalizer record,
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
        let slots = capacity.checked_mul(size_of::<Slot<T>>())?;
        let roster = capacity.checked_add(1)?.checked_mul(size_of::<u32>())?;
        let record = ObjectLayout::<Self>::SIZE + ObjectLayout::<Self>::ALIGN - 1;
        slots
            .checked_add(align_of::<Slot<T>>() - 1)?
            .checked_add(roster + 3)?
            .checked_add(record)
    }

    // ----- raw access (all bounds are the caller's) -----

    /// The value of slot `index` (initialised only while the slot is live).
    #[inline(always)]
    fn slot_ptr(&self, index: usize) -> *mut T {
        // SAFETY: `entry` returns a slot inside the array.
        unsafe { value_ptr(self.entry(index)) }
    }

    /// Slot `index` as a whole; its bookkeeping fields are always initialised. Fields
    /// are reached by raw place projection, never through a `&Slot`, so a `&T` or
    /// `&mut T` handed out for the value does not overlap them.
    #[inline(always)]
    fn entry(&self, index: usize) -> *mut Slot<T> {
        debug_assert!(index < self.capacity as usize);
        // SAFETY: `index < capacity`, so the result stays inside the slot array.
        unsafe { self.slots.as_ptr().add(index) }
    }

    /// The report's copy of the high-water mark: the word after the roster. Written
    /// (rarely, see [`note_high_water`](Self::note_high_water)) by the pool and read by
    /// reports, so it is atomic; it is only ever reached through the roster pointer.
    #[inline(always)]
    fn high_water_word(&self) -> NonNull<AtomicU32> {
        // SAFETY: the roster has `capacity + 1` elements.
        unsafe { self.roster.add(self.capacity as usize).cast() }
    }

    /// `len` has just passed the high-water mark: records it, in the pool and for
    /// reports. Runs at most `capacity` times in the pool's life.
    #[cold]
    #[inline(never)]
    fn note_high_water(&mut self) {
        self.high_water = self.len;
        // SAFETY: the word is initialised and lives as long as the pool; nothing holds
        // a non-atomic reference to it.
        unsafe { self.high_water_word().as_ref() }.store(self.len, Ordering::Relaxed);
    }

    #[inline(always)]
    fn roster_ptr(&self, position: usize) -> *mut u32 {
        debug_assert!(position < self.capacity as usize);
        // SAFETY: as in `slot_ptr`, for the roster.
        unsafe { self.roster.as_ptr().add(position) }
    }

    /// The live part of the roster.
    #[inline(always)]
    fn live_roster(&self) -> &[u32] {
        // SAFETY: the roster has `capacity >= len` initialised `u32`s, nothing writes it
        // while `&self` is borrowed.
        unsafe { core::slice::from_raw_parts(self.roster.as_ptr(), self.len as usize) }
    }

    /// The slot a handle names, if it names a live object of this pool.
    #[inline(always)]
    fn find(&self, handle: DenseHandle<T>) -> Option<usize> {
        let index = (handle.slot & INDEX_MASK) as usize;
        if handle.slot >> INDEX_BITS != self.tag || index >= self.capacity as usize {
            return None;
        }
        // SAFETY: `index < capacity`; bookkeeping fields are always initialised.
        let generation = unsafe { (*self.entry(index)).generation.load(Ordering::Relaxed) };
        // Odd generation: live (module invariant). Equal: the same object.
        (generation == handle.generation && generation & 1 == 1).then_some(index)
    }

    /// Takes a live slot out of the live part of the roster (swap with the last live
    /// entry, shrink `len`) and flips its generation to free. The value stays in the
    /// slot, now owned by the caller.
    ///
    /// # Safety
    /// Slot `index` is live.
    #[inline(always)]
    unsafe fn unlink(&mut self, index: usize) {
        // SAFETY: slot `index` is live, so `len >= 1` and its position is below `len`;
        // `last < len <= capacity`; `moved` is a slot index from the roster, so it is
        // below `capacity`. Each write keeps `slots[roster[k]].position == k`.
        unsafe {
            let entry = self.entry(index);
            let position = (*entry).position as usize;
            let last = self.len as usize - 1;
            let moved = *self.roster_ptr(last);
            *self.roster_ptr(position) = moved;
            (*self.entry(moved as usize)).position = position as u32;
            *self.roster_ptr(last) = index as u32;
            (*entry).position = last as u32;
            let generation = (*entry).generation.load(Ordering::Relaxed);
            (*entry)
                .generation
                .store(generation.wrapping_add(1), Ordering::Relaxed);
            self.len = last as u32;
        }
    }

    /// Moves the value out of a slot that was just unlinked, and poisons the slot.
    ///
    /// # Safety
    /// Slot `index` holds a value that nobody else owns, and is not live.
    #[inline(always)]
    unsafe fn take(&mut self, index: usize) -> T {
        // SAFETY: per the caller, the value is initialised and ours to move.
        let value = unsafe { self.slot_ptr(index).read() };
        #[cfg(feature = "debug-fill")]
        {
            // SAFETY: the value was moved out; the slot is free.
            unsafe { self.poison(index) };
        }
        value
    }

    /// Drops the value in a slot that was just unlinked, then poisons the slot (also
    /// when the destructor panics).
    ///
    /// # Safety
    /// As for [`take`](Self::take).
    unsafe fn drop_unlinked(&mut self, index: usize) {
        #[cfg(feature = "debug-fill")]
        struct PoisonAfter<'p, 's, T>(&'p DensePool<'s, T>, usize);
        #[cfg(feature = "debug-fill")]
        impl<T> Drop for PoisonAfter<'_, '_, T> {
            fn drop(&mut self) {
                // SAFETY: runs after the value's destructor, returned or unwound; the
                // slot is free.
                unsafe { self.0.poison(self.1) }
            }
        }
        #[cfg(feature = "debug-fill")]
        let _poison = PoisonAfter(self, index);
        // SAFETY: per the caller; the bookkeeping already says "free", so a panic here
        // cannot lead to a second drop.
        unsafe { ptr::drop_in_place(self.slot_ptr(index)) };
    }

    /// Paints a free slot with the freed-slot pattern (`debug-fill` feature).
    ///
    /// # Safety
    /// `index < capacity` and the slot holds no value.
    #[cfg(feature = "debug-fill")]
    unsafe fn poison(&self, index: usize) {
        // The slot holds no value (caller contract): its `size_of::<T>()` bytes may be
        // overwritten with plain bytes.
        let at = NonNull::new(self.slot_ptr(index).cast::<u8>());
        if let Some(at) = at {
            crate::block::debug_fill::freed_slot(at, size_of::<T>());
        }
    }
}

impl<T> Drop for DensePool<'_, T> {
    fn drop(&mut self) {
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
            .field("tag", &self.tag)
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
