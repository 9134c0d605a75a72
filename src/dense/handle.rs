//! `DenseHandle`: an 8-byte generational name for one object of a dense pool.
//!
//! This module owns the handle's bit layout. Invariant: a handle packs a 24-bit slot
//! index, the pool's tag and the slot's generation at insert time; it finds its object
//! only in the pool that made it, and only until that object is removed.
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;

/// Bits of a handle's slot word that hold the slot index.
pub(super) const INDEX_BITS: u32 = 24;
/// Mask of the index bits.
pub(super) const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
/// The largest capacity a dense pool accepts (2^24 slots).
pub(super) const MAX_CAPACITY: usize = 1 << INDEX_BITS;

/// A copyable name for an object in a [`DensePool`](crate::DensePool).
///
/// [`DensePool::insert`](crate::DensePool::insert) returns one; use it with [`get`](crate::DensePool::get),
/// [`get_mut`](crate::DensePool::get_mut) and [`remove`](crate::DensePool::remove). It is 8 bytes,
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
    pub(super) slot: u32,
    /// The slot's generation when the object was inserted (odd).
    pub(super) generation: u32,
    _type: PhantomData<fn() -> T>,
}

static_assertions::assert_eq_size!(DenseHandle<[u64; 16]>, u64);

impl<T> DenseHandle<T> {
    #[inline(always)]
    pub(super) fn new(index: u32, tag: u32, generation: u32) -> Self {
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
