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
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
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
pub struct DenseHandle<T> {
    /// One word, so that a handle moves and compares as one: the slot's generation when
    /// the object was inserted (odd) in the high 32 bits, the pool's tag in bits 24..32,
    /// the slot index in bits 0..24.
    bits: u64,
    _type: PhantomData<fn() -> T>,
}

static_assertions::assert_eq_size!(DenseHandle<[u64; 16]>, u64);

impl<T> DenseHandle<T> {
    /// The handle for a roster entry (`generation << 32 | index`) of the pool whose
    /// tag bits (`tag << INDEX_BITS`) are `tag_bits`. An entry's index is below 2^24,
    /// so the tag lands in the bits above it.
    #[inline(always)]
    pub(super) fn from_entry(entry: u64, tag_bits: u32) -> Self {
        Self::from_bits(entry | tag_bits as u64)
    }

    /// The roster entry this handle would match in the pool whose tag bits are
    /// `tag_bits`: its bits with the tag taken out. If the tag is not the pool's, tag
    /// bits are left above the index, which then reads as at least 2^24.
    #[inline(always)]
    pub(super) fn entry_for(self, tag_bits: u32) -> u64 {
        self.to_bits() ^ tag_bits as u64
    }

    /// The slot index: which entry of the pool's slot table names the object. It stays
    /// the same for as long as the object lives, although the object itself may move
    /// within the pool when others are removed.
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
        (self.bits as u32 & INDEX_MASK) as usize
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
        (self.bits >> 33) as u32
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
    #[inline]
    pub fn to_bits(self) -> u64 {
        self.bits
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
    #[inline]
    pub fn from_bits(bits: u64) -> Self {
        DenseHandle {
            bits,
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
        self.bits == other.bits
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
            .field("pool_tag", &(self.bits as u32 >> INDEX_BITS))
            .finish()
    }
}
