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
//!     for s in sparks.iter_mut() {
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
use core::hash::{Hash, Hasher};
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem::{self, align_of, size_of, MaybeUninit};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU32, Ordering};

use crate::error::AllocError;
use crate::scope::finalizer::ObjectLayout;
use crate::scope::info::{PoolLink, PoolSnapshot};
use crate::scope::ScopeStack;

/// Bits of a handle's slot word that hold the slot index.
const INDEX_BITS: u32 = 24;
/// Mask of the index bits.
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
/// The largest capacity a dense pool accepts (2^24 slots).
const MAX_CAPACITY: usize = 1 << INDEX_BITS;

// The report's high-water field fits in the struct's padding: 32 bytes, as before.
#[cfg(target_pointer_width = "64")]
static_assertions::const_assert_eq!(size_of::<DensePool<'static, u64>>(), 32);

/// Source of pool tags and generation seeds. It only names pools; it orders nothing.
static DENSE_POOL_IDS: AtomicU32 = AtomicU32::new(0);

/// One slot: its bookkeeping next to its storage, so that a lookup or a remove finds the
/// generation, the roster position and the value on the same cache line.
#[repr(C)]
struct Slot<T> {
    /// Odd while the slot is live. Atomic (always `Relaxed`, which compiles to plain
    /// loads and stores) only because a memory map report may read it from another
    /// thread while this pool is in use; see [Reports](crate::dense#reports).
    generation: AtomicU32,
    /// Where the slot's index sits in the roster (the reverse table).
    position: u32,
    /// Initialised exactly while the slot is live.
    value: MaybeUninit<T>,
}

/// A fixed-capacity, single-threaded object pool carved out of a scope, with O(1)
/// insert and remove, generational handles, and iteration over exactly the live
/// objects. See the [module docs](crate::dense) for how it works.
///
/// Make one with [`ScopeStack::new_dense_pool`]. Objects never move while they live.
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
///     assert_eq!(names.iter().collect::<Vec<_>>(), ["toad"]);
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

/// A copyable name for an object in a [`DensePool`].
///
/// [`DensePool::insert`] returns one; use it with [`get`](DensePool::get),
/// [`get_mut`](DensePool::get_mut) and [`remove`](DensePool::remove). It is 8 bytes,
/// `Copy`, `Eq`, `Hash` and `Debug`, whatever `T` is: a 24-bit slot index, the pool's
/// 8-bit tag, and a 32-bit generation.
///
/// How strong the checks are:
/// - **Stale handles** (the object was removed) find nothing. A slot's generation goes
///   up by two per insert/remove cycle, so a stale handle could only match again after
///   its slot has been reused 2^31 more times; it would then name that slot's current
///   live object, never a free slot.
/// - **Foreign handles** (from another dense pool of the same `T`) find nothing for sure
///   when the two pools' 8-bit tags differ, which holds for any 256 pools made one after
///   another. Pools that share a tag start their generations from different seeds, so a
///   match then needs the two slots' generations to coincide; it cannot be ruled out.
///
/// A handle carries no authority: soundness never depends on it, a forged handle can at
/// worst name some live object of the pool it is used with.
///
/// ```
/// use scope_stack::{DenseHandle, LinearAllocator};
///
/// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
/// memory.scope("level", |level| {
///     let pool = level.new_dense_pool::<u32>(4);
///     let h: DenseHandle<u32> = pool.insert(7).unwrap();
///     assert_eq!(pool.get(h), Some(&7));
///     assert_eq!(pool.remove(h), Some(7));
///     assert_eq!(pool.get(h), None); // stale
///     assert_eq!(core::mem::size_of::<DenseHandle<String>>(), 8);
/// });
/// ```
#[repr(C)]
pub struct DenseHandle<T> {
    /// Slot index (low 24 bits) and pool tag (high 8 bits).
    slot: u32,
    /// The slot's generation when the object was inserted (odd).
    generation: u32,
    _type: PhantomData<fn() -> T>,
}

static_assertions::assert_eq_size!(DenseHandle<[u64; 16]>, u64);

impl<T> DenseHandle<T> {
    #[inline(always)]
    fn new(index: u32, tag: u32, generation: u32) -> Self {
        DenseHandle {
            slot: index | (tag << INDEX_BITS),
            generation,
            _type: PhantomData,
        }
    }

    /// The slot index: where the object lives in the pool's slot array.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(4);
    ///     assert!(pool.insert(7).unwrap().index() < 4);
    /// });
    /// ```
    pub fn index(self) -> usize {
        (self.slot & INDEX_MASK) as usize
    }

    /// How many times the slot had been filled before this object, counting from the
    /// pool's seed (31 bits; it wraps).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(1);
    ///     let a = pool.insert(1).unwrap();
    ///     pool.remove(a);
    ///     let b = pool.insert(2).unwrap();
    ///     assert_eq!(a.index(), b.index()); // same slot...
    ///     assert_eq!(b.generation(), a.generation().wrapping_add(1) & (u32::MAX >> 1));
    ///     assert_ne!(a, b); // ...new generation
    /// });
    /// ```
    pub fn generation(self) -> u32 {
        self.generation >> 1
    }

    /// The handle as one `u64`, for storing it in plain data.
    ///
    /// ```
    /// # use scope_stack::{DenseHandle, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(4);
    ///     let h = pool.insert(7).unwrap();
    ///     assert_eq!(DenseHandle::<u32>::from_bits(h.to_bits()), h);
    /// });
    /// ```
    pub fn to_bits(self) -> u64 {
        (self.generation as u64) << 32 | self.slot as u64
    }

    /// Rebuilds a handle from [`to_bits`](Self::to_bits). Any `u64` is accepted; one that
    /// names no live object finds nothing.
    ///
    /// ```
    /// # use scope_stack::{DenseHandle, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(4);
    ///     pool.insert(7).unwrap();
    ///     assert_eq!(pool.get(DenseHandle::from_bits(0)), None);
    /// });
    /// ```
    pub fn from_bits(bits: u64) -> Self {
        DenseHandle {
            slot: bits as u32,
            generation: (bits >> 32) as u32,
            _type: PhantomData,
        }
    }
}

impl<T> Clone for DenseHandle<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DenseHandle<T> {}

impl<T> PartialEq for DenseHandle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.slot == other.slot && self.generation == other.generation
    }
}

impl<T> Eq for DenseHandle<T> {}

impl<T> Hash for DenseHandle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.to_bits().hash(state);
    }
}

impl<T> fmt::Debug for DenseHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DenseHandle")
            .field("index", &self.index())
            .field("generation", &self.generation())
            .field("pool_tag", &(self.slot >> INDEX_BITS))
            .finish()
    }
}

impl<'s> ScopeStack<'s> {
    /// Carves a [`DensePool`] of `capacity` slots out of this scope.
    ///
    /// The slots, roster and bookkeeping arrays are allocated first, then the pool object
    /// with a finalizer: when the scope unwinds, the live objects are dropped, then the
    /// memory rewinds.
    ///
    /// # Panics
    /// Where [`try_new_dense_pool`](Self::try_new_dense_pool) returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let bullets = level.new_dense_pool::<[f32; 4]>(500);
    ///     assert_eq!(bullets.capacity(), 500);
    ///     assert!(bullets.is_empty());
    /// });
    /// ```
    pub fn new_dense_pool<T: 'static>(&self, capacity: usize) -> &'s mut DensePool<'s, T> {
        match self.try_new_dense_pool(capacity) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Carves a [`DensePool`] out of this scope, or says why it cannot.
    ///
    /// # Errors
    /// - [`AllocErrorKind::InvalidCapacity`](crate::AllocErrorKind::InvalidCapacity) for a capacity of 0;
    /// - [`AllocErrorKind::TooManySlots`](crate::AllocErrorKind::TooManySlots) above 2^24 slots (the handle's index width);
    /// - [`AllocErrorKind::CapacityOverflow`](crate::AllocErrorKind::CapacityOverflow) when the arrays' size overflows;
    /// - [`AllocErrorKind::OutOfMemory`](crate::AllocErrorKind::OutOfMemory) when the scope has no room. Arrays already
    ///   carved stay taken until the scope unwinds.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_dense_pool::<u64>(0).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     let e = level.try_new_dense_pool::<u8>((1 << 24) + 1).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::TooManySlots);
    ///     let e = level.try_new_dense_pool::<u64>(1 << 20).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
    ///     assert!(level.try_new_dense_pool::<u64>(64).is_ok());
    /// });
    /// ```
    pub fn try_new_dense_pool<T: 'static>(
        &self,
        capacity: usize,
    ) -> Result<&'s mut DensePool<'s, T>, AllocError> {
        self.check_pool_capacity::<T>(capacity, MAX_CAPACITY, size_of::<T>() + 12)?;
        let slots = self.try_alloc_array_uninit::<Slot<T>>(capacity)?;
        // One more word after the roster: the high-water mark that reports read.
        let roster = self.try_alloc_array_uninit::<u32>(capacity + 1)?;

        let id = DENSE_POOL_IDS.fetch_add(1, Ordering::Relaxed);
        // Even (free) starting generations, different for every pool, so pools that
        // share a tag rarely accept each other's handles (see `DenseHandle`).
        let seed = id.wrapping_mul(0x9E37_79B9) & !1;
        for i in 0..capacity {
            // SAFETY: `i < capacity`, and both arrays have `capacity` elements of fresh,
            // aligned memory that lives until this scope rewinds. Only the bookkeeping
            // fields are written; the values stay uninitialised (free).
            unsafe {
                roster.add(i).write(i as u32);
                let slot = slots.add(i).as_ptr();
                ptr::addr_of_mut!((*slot).generation).write(AtomicU32::new(seed));
                ptr::addr_of_mut!((*slot).position).write(i as u32);
            }
        }
        // SAFETY: the roster has `capacity + 1` elements; the last one is the report's
        // high-water word, only ever accessed as an `AtomicU32` (same size and alignment
        // as `u32`).
        unsafe {
            roster
                .add(capacity)
                .cast::<AtomicU32>()
                .write(AtomicU32::new(0))
        };
        let pool = DensePool {
            slots,
            roster,
            len: 0,
            capacity: capacity as u32,
            tag: id & 0xFF,
            high_water: 0,
            _scope: PhantomData,
            _owns: PhantomData,
        };
        #[cfg(feature = "debug-fill")]
        for i in 0..capacity {
            // SAFETY: `i < capacity`; every slot is free.
            unsafe { pool.poison(i) };
        }
        // SAFETY: `new_object_unchecked`'s drop contract: the destructor drops `'static`
        // `T`s and reads the pool's own arrays, carved in this scope before its record and
        // valid until the rewind, which follows all finalizers. `'s` is only a marker.
        let pool = match unsafe { self.try_new_object_unchecked(pool) } {
            Ok(p) => p,
            Err(e) => return Err(e.error),
        };
        // Register with the scope for reports. The link names only the slot array and
        // the high-water word (scope memory the pool reaches through raw pointers), never
        // the pool object, which the caller holds `&mut` to. When the link finds no room
        // the pool works all the same, it is only left out of reports.
        let start = slots.as_ptr().addr();
        let end = pool.high_water_word().as_ptr().addr() + size_of::<AtomicU32>();
        let link = PoolLink {
            ptr: slots.cast(),
            words: [
                start,
                end - start,
                capacity,
                pool.high_water_word().as_ptr().addr(),
                0,
            ],
            kind: "DensePool",
            type_name: core::any::type_name::<T>(),
            snapshot: dense_snapshot::<T>,
            next: None,
        };
        // SAFETY: `dense_snapshot::<T>` reads the slot array's generation words and the
        // high-water word (see its contract), both carved above in this scope and valid
        // until it ends.
        unsafe { self.register_pool(link) };
        Ok(pool)
    }
}

/// Reads a registered dense pool's statistics for a memory map report: `len` by
/// counting the slots whose generation is odd (O(capacity)), the high-water mark from
/// the word after the roster, which `insert` keeps.
///
/// Only the slots' generation words and the high-water word are read, with `Relaxed`
/// atomic loads and through the block's provenance (`link.ptr`). They never overlap a
/// value (`&T` and `&mut T` handed out by the pool cover a slot's `value` field alone),
/// no `&Slot<T>` or `&mut Slot<T>` is ever made, and the pool only reaches them
/// through raw pointers; so the caller may hold `&mut DensePool` or `&mut T` into a
/// slot, even on another thread, while this runs. A report taken while another thread
/// uses the pool sees each word either before or after a change.
///
/// # Safety
/// `link` was filled in by `try_new_dense_pool::<T>`, and its pool's scope is live.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
unsafe fn dense_snapshot<T>(link: &PoolLink) -> PoolSnapshot {
    let [addr, bytes, capacity, high_water, _] = link.words;
    let slots = link.ptr.cast::<Slot<T>>().as_ptr();
    let mut len = 0;
    for i in 0..capacity {
        // SAFETY: `i < capacity`, the slot array's length; its generation words are
        // initialised from the start and stay valid while the scope lives (caller).
        // Only the field is borrowed, as an atomic (see above).
        let generation = unsafe { (*slots.add(i)).generation.load(Ordering::Relaxed) };
        len += (generation & 1) as usize;
    }
    // SAFETY: `high_water` is the address of the `AtomicU32` after the roster, carved
    // in the same block as the slots, so the block's provenance reaches it; it was
    // initialised before the link was registered.
    let high_water = unsafe { &*link.ptr.as_ptr().with_addr(high_water).cast::<AtomicU32>() };
    PoolSnapshot {
        len,
        capacity,
        // A racing insert may show in `len` before it shows here.
        high_water_len: (high_water.load(Ordering::Relaxed) as usize).max(len),
        addr,
        bytes,
    }
}

/// The value field of a slot, by raw place projection (no reference is made).
///
/// # Safety
/// `slot` points to a slot inside a pool's slot array.
#[inline(always)]
unsafe fn value_ptr<T>(slot: *mut Slot<T>) -> *mut T {
    // SAFETY: per the caller, `slot` is in bounds, so the field projection is too; it
    // only computes an address.
    unsafe { ptr::addr_of_mut!((*slot).value).cast::<T>() }
}

impl<'s, T> DensePool<'s, T> {
    /// An upper bound of the bytes [`ScopeStack::new_dense_pool`] takes from the scope
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

    // ----- public API -----

    /// Puts `value` in a free slot and returns its handle, or gives the value back when
    /// every slot is taken (the *fail* strategy; see
    /// [`insert_evicting`](Self::insert_evicting) for *evict*). O(1).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<&str>(1);
    ///     let boss = pool.insert("boss").unwrap();
    ///     assert_eq!(pool.insert("minion"), Err("minion")); // full: the value comes back
    ///     assert_eq!(pool[boss], "boss");
    /// });
    /// ```
    #[inline]
    pub fn insert(&mut self, value: T) -> Result<DenseHandle<T>, T> {
        if self.len == self.capacity {
            return Err(value);
        }
        // SAFETY: `len < capacity`, so `roster[len]` is the first free slot (module
        // invariant: its position is `len`). Writing the value, flipping the generation
        // to odd and growing `len` by one makes it live and keeps every invariant.
        unsafe {
            let index = *self.roster_ptr(self.len as usize) as usize;
            self.slot_ptr(index).write(value);
            let entry = self.entry(index);
            let generation = (*entry).generation.load(Ordering::Relaxed).wrapping_add(1);
            (*entry).generation.store(generation, Ordering::Relaxed);
            self.len += 1;
            if self.len > self.high_water {
                self.note_high_water();
            }
            Ok(DenseHandle::new(index as u32, self.tag, generation))
        }
    }

    /// Puts `value` in the pool; when it is full, first drops the live object whose
    /// `key` is smallest (the first one found, on ties) and reuses its slot (the *evict*
    /// strategy: replace the quietest sound). Returns the new object's handle. Finding
    /// the victim is O(len): one `key` call per live object, only when the pool is full.
    ///
    /// If `key` panics, the pool is unchanged and `value` is dropped. If the evicted
    /// object's destructor panics, the new object is already in the pool (it stays there
    /// and can be found by iteration) and the panic goes on.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// struct Sound { name: &'static str, volume: f32 }
    ///
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("audio", |audio| {
    ///     let playing = audio.new_dense_pool::<Sound>(2);
    ///     let by_volume = |s: &Sound| (s.volume * 1000.0) as i32;
    ///     playing.insert_evicting(Sound { name: "wind", volume: 0.1 }, by_volume);
    ///     playing.insert_evicting(Sound { name: "music", volume: 0.8 }, by_volume);
    ///     let swish = playing.insert_evicting(Sound { name: "swish", volume: 1.0 }, by_volume);
    ///     assert_eq!(playing[swish].name, "swish");
    ///     let mut names: Vec<_> = playing.iter().map(|s| s.name).collect();
    ///     names.sort();
    ///     assert_eq!(names, ["music", "swish"]); // the quiet wind made room
    /// });
    /// ```
    pub fn insert_evicting<K: Ord>(
        &mut self,
        value: T,
        mut key: impl FnMut(&T) -> K,
    ) -> DenseHandle<T> {
        let value = match self.insert(value) {
            Ok(handle) => return handle,
            Err(value) => value,
        };
        // Full, and the capacity is at least one: there is a victim.
        let mut best: Option<(K, usize)> = None;
        for &index in self.live_roster() {
            // SAFETY: slots named by the live roster hold values.
            let k = key(unsafe { &*self.slot_ptr(index as usize) });
            if best.as_ref().is_none_or(|(b, _)| k < *b) {
                best = Some((k, index as usize));
            }
        }
        let victim = match best {
            Some((_, index)) => index,
            None => unreachable!("a full pool has a live object"),
        };
        // SAFETY: `victim` is live. After `unlink` its value belongs to us and is not
        // reachable from the pool; we move it out before reusing the slot.
        let old = unsafe {
            self.unlink(victim);
            self.slot_ptr(victim).read()
        };
        let handle = match self.insert(value) {
            Ok(handle) => handle,
            Err(_) => unreachable!("a slot was just freed"),
        };
        drop(old);
        handle
    }

    /// The object a handle names, or `None` if it was removed or the handle belongs to
    /// another pool. O(1).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let a = level.new_dense_pool::<u32>(4);
    ///     let b = level.new_dense_pool::<u32>(4);
    ///     let h = a.insert(1).unwrap();
    ///     assert_eq!(a.get(h), Some(&1));
    ///     assert_eq!(b.get(h), None); // a handle from another pool
    /// });
    /// ```
    #[inline]
    pub fn get(&self, handle: DenseHandle<T>) -> Option<&T> {
        let index = self.find(handle)?;
        // SAFETY: `find` only returns live slots; `&self` keeps them from being removed
        // or written while the reference lives.
        Some(unsafe { &*self.slot_ptr(index) })
    }

    /// The object a handle names, mutably, or `None` (see [`get`](Self::get)). O(1).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(4);
    ///     let h = pool.insert(1).unwrap();
    ///     *pool.get_mut(h).unwrap() += 1;
    ///     assert_eq!(pool[h], 2);
    /// });
    /// ```
    #[inline]
    pub fn get_mut(&mut self, handle: DenseHandle<T>) -> Option<&mut T> {
        let index = self.find(handle)?;
        // SAFETY: as in `get`, and `&mut self` makes the reference unique.
        Some(unsafe { &mut *self.slot_ptr(index) })
    }

    /// Whether a handle names a live object of this pool.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(4);
    ///     let h = pool.insert(1).unwrap();
    ///     assert!(pool.contains(h));
    ///     pool.remove(h);
    ///     assert!(!pool.contains(h));
    /// });
    /// ```
    #[inline]
    pub fn contains(&self, handle: DenseHandle<T>) -> bool {
        self.find(handle).is_some()
    }

    /// Removes the object a handle names and gives it back, or `None` if the handle is
    /// stale or foreign. O(1): the last live roster entry moves into the removed one's
    /// place; no object moves.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<String>(4);
    ///     let h = pool.insert("frog".into()).unwrap();
    ///     assert_eq!(pool.remove(h).as_deref(), Some("frog"));
    ///     assert_eq!(pool.remove(h), None); // already gone
    /// });
    /// ```
    #[inline]
    pub fn remove(&mut self, handle: DenseHandle<T>) -> Option<T> {
        let index = self.find(handle)?;
        // SAFETY: `index` is live; after `unlink` the value is ours to move out.
        unsafe {
            self.unlink(index);
            Some(self.take(index))
        }
    }

    /// Keeps only the objects for which `keep` returns `true`; the others are dropped.
    /// Every live object is visited once, in unspecified order.
    ///
    /// If `keep` or a destructor panics, the objects not yet visited stay in the pool,
    /// and the pool stays consistent.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     for i in 0..8 {
    ///         pool.insert(i).unwrap();
    ///     }
    ///     pool.retain(|_, n| *n % 2 == 0);
    ///     assert_eq!(pool.len(), 4);
    ///     assert!(pool.iter().all(|n| n % 2 == 0));
    /// });
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(DenseHandle<T>, &mut T) -> bool) {
        // Walk the live roster backwards: a removal moves the last live entry, which was
        // already visited, into the current position.
        let mut position = self.len as usize;
        while position > 0 {
            position -= 1;
            // SAFETY: `position < len`, so the roster entry names a live slot. The
            // `&mut T` is unique (`&mut self`) and ends before the pool is touched.
            unsafe {
                let index = *self.roster_ptr(position) as usize;
                let generation = (*self.entry(index)).generation.load(Ordering::Relaxed);
                let handle = DenseHandle::new(index as u32, self.tag, generation);
                if !keep(handle, &mut *self.slot_ptr(index)) {
                    self.unlink(index);
                    self.drop_unlinked(index);
                }
            }
        }
    }

    /// Drops every live object; all handles go stale. O(len).
    ///
    /// If a destructor panics, the remaining objects are still dropped and the pool is
    /// empty afterwards; the panic goes on (a second panic aborts, as everywhere in
    /// Rust).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<String>(4);
    ///     let h = pool.insert("frog".into()).unwrap();
    ///     pool.clear();
    ///     assert!(pool.is_empty());
    ///     assert_eq!(pool.get(h), None);
    /// });
    /// ```
    pub fn clear(&mut self) {
        /// Finishes the clear if a destructor panics.
        struct Finish<'p, 's, T>(&'p mut DensePool<'s, T>);
        impl<T> Drop for Finish<'_, '_, T> {
            fn drop(&mut self) {
                self.0.clear();
            }
        }
        let guard = Finish(self);
        let pool = &mut *guard.0;
        while pool.len > 0 {
            // SAFETY: `len - 1 < len`, so the last live roster entry names a live slot.
            // Unlinking the last entry swaps it with itself and shrinks `len`; then the
            // value is ours to drop.
            unsafe {
                let index = *pool.roster_ptr(pool.len as usize - 1) as usize;
                pool.unlink(index);
                pool.drop_unlinked(index);
            }
        }
        mem::forget(guard);
    }

    /// Number of live objects.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u8>(4);
    ///     pool.insert(1).unwrap();
    ///     assert_eq!(pool.len(), 1);
    /// });
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no object is live.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| assert!(level.new_dense_pool::<u8>(4).is_empty()));
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of slots.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| assert_eq!(level.new_dense_pool::<u8>(4).capacity(), 4));
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity as usize
    }

    /// Whether every slot is live (the next [`insert`](Self::insert) fails).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u8>(1);
    ///     pool.insert(1).unwrap();
    ///     assert!(pool.is_full());
    /// });
    /// ```
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.capacity
    }

    /// Iterates over the live objects: exactly `len()` of them, with no per-slot test.
    /// The order is the roster's, which removals permute.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     let handles: Vec<_> = (1..=4).map(|i| pool.insert(i).unwrap()).collect();
    ///     pool.remove(handles[1]);
    ///     assert_eq!(pool.iter().sum::<u32>(), 1 + 3 + 4);
    /// });
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            roster: self.live_roster().iter(),
            slots: self.slots,
            _borrow: PhantomData,
        }
    }

    /// Iterates mutably over the live objects (see [`iter`](Self::iter)).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     pool.insert(1).unwrap();
    ///     pool.insert(2).unwrap();
    ///     pool.iter_mut().for_each(|n| *n *= 10);
    ///     assert_eq!(pool.iter().sum::<u32>(), 30);
    /// });
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        // SAFETY: as in `live_roster`; the slice borrows `self` mutably through the
        // iterator's lifetime, and the roster is a different array from the slots.
        let roster = unsafe { core::slice::from_raw_parts(self.roster.as_ptr(), self.len()) };
        IterMut {
            roster: roster.iter(),
            slots: self.slots,
            _borrow: PhantomData,
        }
    }

    /// Iterates over the handles of the live objects, in the same order as
    /// [`iter`](Self::iter).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     let h = pool.insert(5).unwrap();
    ///     assert_eq!(pool.handles().collect::<Vec<_>>(), [h]);
    ///     // Handles can be collected first and used to remove afterwards.
    ///     let all: Vec<_> = pool.handles().collect();
    ///     for h in all {
    ///         pool.remove(h);
    ///     }
    ///     assert!(pool.is_empty());
    /// });
    /// ```
    #[inline]
    pub fn handles(&self) -> Handles<'_, T> {
        Handles {
            roster: self.live_roster().iter(),
            slots: self.slots,
            tag: self.tag,
            _borrow: PhantomData,
        }
    }

    /// The bytes of a free slot, or `None` when the slot is live or out of range. With
    /// the `debug-fill` feature every free slot is painted with
    /// [`debug_fill::FREED_SLOT`](crate::block::debug_fill::FREED_SLOT) (`0x1deadb0b`), so
    /// this shows the pattern; it is a debugging aid for tests and tools.
    ///
    /// ```
    /// # use scope_stack::{debug_fill::FREED_SLOT, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u64>(4);
    ///     let h = pool.insert(42).unwrap();
    ///     assert!(pool.freed_slot_bytes(h.index()).is_none()); // live
    ///     pool.remove(h);
    ///     let word = FREED_SLOT.to_ne_bytes();
    ///     assert_eq!(pool.freed_slot_bytes(h.index()).unwrap(), [word, word].concat());
    /// });
    /// ```
    #[cfg(feature = "debug-fill")]
    pub fn freed_slot_bytes(&self, index: usize) -> Option<&[u8]> {
        if index >= self.capacity() {
            return None;
        }
        // SAFETY: `index < capacity`.
        let generation = unsafe { (*self.entry(index)).generation.load(Ordering::Relaxed) };
        if generation & 1 == 1 {
            return None;
        }
        // SAFETY: the slot is free, so (module invariant, `debug-fill` feature) all its
        // bytes were painted; nothing writes them while `&self` lives.
        Some(unsafe {
            core::slice::from_raw_parts(self.slot_ptr(index).cast::<u8>(), size_of::<T>())
        })
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

impl<'a, T> IntoIterator for &'a DensePool<'_, T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut DensePool<'_, T> {
    type Item = &'a mut T;
    type IntoIter = IterMut<'a, T>;
    fn into_iter(self) -> IterMut<'a, T> {
        self.iter_mut()
    }
}

/// Iterator over a dense pool's live objects; see [`DensePool::iter`].
pub struct Iter<'a, T> {
    roster: core::slice::Iter<'a, u32>,
    slots: NonNull<Slot<T>>,
    _borrow: PhantomData<&'a T>,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    #[inline(always)]
    fn next(&mut self) -> Option<&'a T> {
        let &index = self.roster.next()?;
        // SAFETY: the live roster names live slots (below `capacity`); the pool is
        // borrowed shared for `'a`, so they stay live and unwritten.
        Some(unsafe { &*value_ptr(self.slots.as_ptr().add(index as usize)) })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.roster.size_hint()
    }
}

impl<'a, T> DoubleEndedIterator for Iter<'a, T> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<&'a T> {
        let &index = self.roster.next_back()?;
        // SAFETY: as in `next`.
        Some(unsafe { &*value_ptr(self.slots.as_ptr().add(index as usize)) })
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}
impl<T> FusedIterator for Iter<'_, T> {}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            roster: self.roster.clone(),
            slots: self.slots,
            _borrow: PhantomData,
        }
    }
}

// SAFETY: an `Iter` is a `&DensePool` in disguise: it hands out `&T`s.
unsafe impl<T: Sync> Send for Iter<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Iter<'_, T> {}

impl<T> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter")
            .field("remaining", &self.roster.len())
            .finish()
    }
}

/// Mutable iterator over a dense pool's live objects; see [`DensePool::iter_mut`].
pub struct IterMut<'a, T> {
    roster: core::slice::Iter<'a, u32>,
    slots: NonNull<Slot<T>>,
    _borrow: PhantomData<&'a mut T>,
}

impl<'a, T> Iterator for IterMut<'a, T> {
    type Item = &'a mut T;

    #[inline(always)]
    fn next(&mut self) -> Option<&'a mut T> {
        let &index = self.roster.next()?;
        // SAFETY: the live roster names live slots, each exactly once (it is part of a
        // permutation), so the `&mut T`s never alias; the pool is borrowed mutably for
        // `'a`.
        Some(unsafe { &mut *value_ptr(self.slots.as_ptr().add(index as usize)) })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.roster.size_hint()
    }
}

impl<'a, T> DoubleEndedIterator for IterMut<'a, T> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<&'a mut T> {
        let &index = self.roster.next_back()?;
        // SAFETY: as in `next`.
        Some(unsafe { &mut *value_ptr(self.slots.as_ptr().add(index as usize)) })
    }
}

impl<T> ExactSizeIterator for IterMut<'_, T> {}
impl<T> FusedIterator for IterMut<'_, T> {}

// SAFETY: an `IterMut` is a `&mut DensePool` in disguise: it hands out `&mut T`s.
unsafe impl<T: Send> Send for IterMut<'_, T> {}
// SAFETY: `&IterMut` gives nothing out.
unsafe impl<T: Sync> Sync for IterMut<'_, T> {}

impl<T> fmt::Debug for IterMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IterMut")
            .field("remaining", &self.roster.len())
            .finish()
    }
}

/// Iterator over the handles of a dense pool's live objects; see
/// [`DensePool::handles`].
pub struct Handles<'a, T> {
    roster: core::slice::Iter<'a, u32>,
    slots: NonNull<Slot<T>>,
    tag: u32,
    _borrow: PhantomData<&'a DenseHandle<T>>,
}

impl<T> Handles<'_, T> {
    #[inline(always)]
    fn handle(&self, index: u32) -> DenseHandle<T> {
        // SAFETY: `index` comes from the live roster, so it is below `capacity`; the
        // pool is borrowed shared, so nothing writes the bookkeeping meanwhile. Only the
        // generation field is read (no reference to the slot is made).
        let generation = unsafe {
            (*self.slots.as_ptr().add(index as usize))
                .generation
                .load(Ordering::Relaxed)
        };
        DenseHandle::new(index, self.tag, generation)
    }
}

impl<T> Iterator for Handles<'_, T> {
    type Item = DenseHandle<T>;

    #[inline]
    fn next(&mut self) -> Option<DenseHandle<T>> {
        let &index = self.roster.next()?;
        Some(self.handle(index))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.roster.size_hint()
    }
}

impl<T> DoubleEndedIterator for Handles<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<DenseHandle<T>> {
        let &index = self.roster.next_back()?;
        Some(self.handle(index))
    }
}

impl<T> ExactSizeIterator for Handles<'_, T> {}
impl<T> FusedIterator for Handles<'_, T> {}

// SAFETY: `Handles` reads only the bookkeeping (plain `u32`s) under a shared borrow.
unsafe impl<T> Send for Handles<'_, T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Handles<'_, T> {}

impl<T> fmt::Debug for Handles<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handles")
            .field("remaining", &self.roster.len())
            .finish()
    }
}
