//! Generational handles: 8-byte names for objects the pool owns.
//!
//! A handle is two 32-bit words:
//! - `slot`: the slot index in the low 24 bits and the pool's 8-bit tag in the high 8;
//! - `stamp`: a copy of the slot's stamp word taken when the object was handed to the
//!   pool ([`PoolBox::into_handle`](super::PoolBox::into_handle)).
//!
//! A slot's stamp is a 30-bit generation (high bits) and a 2-bit state (free, boxed,
//! pooled). The generation goes up by one each time the slot is filled, so a handle
//! matches its slot only while that very object is in the pool.
//!
//! Invariant: a handle carries no authority. Every lookup re-checks the tag, the index
//! bound and the stamp, and soundness never depends on the check being unforgeable:
//! a stamp can only match a slot in the *pooled* state, and pooled objects are only
//! ever shared through `&Pool` or changed through `&mut Pool`.

use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;

/// Bits of the slot word that hold the index.
pub(crate) const INDEX_BITS: u32 = 24;
/// Mask of the index bits.
pub(crate) const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

/// A copyable name for an object that a [`Pool`](super::Pool) owns.
///
/// Get one from [`PoolBox::into_handle`](super::PoolBox::into_handle) or while
/// iterating; use it with [`Pool::get`](super::Pool::get),
/// [`Pool::get_mut`](super::Pool::get_mut) and [`Pool::remove`](super::Pool::remove).
/// It is 8 bytes, `Copy`, `Eq`, `Hash` and `Debug`, whatever `T` is.
///
/// A handle goes stale when its object is removed; a stale handle, or one from another
/// pool, finds nothing (`None`). The generation is 30 bits wide: only after the same
/// slot has been filled 2^30 more times can a stale handle match again, and it then
/// names the slot's current pooled object, never freed or borrowed memory. A handle
/// from another pool is rejected for sure when the two pools' 8-bit tags differ (any
/// 256 pools created one after another have different tags); otherwise the pools'
/// generations start from different seeds, so a match needs a coincidence.
///
/// ```
/// use scope_stack::{Handle, LinearAllocator};
///
/// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
/// memory.scope("level", |level| {
///     let pool = level.new_pool::<&'static str>(4);
///     let frog: Handle<&str> = pool.insert("frog").unwrap().into_handle();
///     assert_eq!(pool.get(frog), Some(&"frog"));
///     assert_eq!(pool.remove(frog), Some("frog"));
///     assert_eq!(pool.get(frog), None); // stale
///     assert_eq!(core::mem::size_of::<Handle<String>>(), 8);
/// });
/// ```
#[repr(C)]
pub struct Handle<T> {
    slot: u32,
    stamp: u32,
    _type: PhantomData<fn() -> T>,
}

static_assertions::assert_eq_size!(Handle<[u64; 16]>, u64);

impl<T> Handle<T> {
    pub(crate) fn new(index: u32, tag: u32, stamp: u32) -> Handle<T> {
        debug_assert!(index <= INDEX_MASK && tag <= 0xFF);
        Handle {
            slot: index | (tag << INDEX_BITS),
            stamp,
            _type: PhantomData,
        }
    }

    /// The slot index.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(4);
    ///     let h = pool.insert(7).unwrap().into_handle();
    ///     assert!(h.index() < 4);
    /// });
    /// ```
    pub fn index(self) -> usize {
        (self.slot & INDEX_MASK) as usize
    }

    /// The 8-bit tag of the pool that made it.
    pub(crate) fn tag(self) -> u32 {
        self.slot >> INDEX_BITS
    }

    /// The slot's stamp when the handle was made.
    pub(crate) fn stamp(self) -> u32 {
        self.stamp
    }

    /// The slot's generation when the handle was made (30 bits; it wraps).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(1);
    ///     let a = pool.insert(1).unwrap().into_handle();
    ///     pool.remove(a);
    ///     let b = pool.insert(2).unwrap().into_handle();
    ///     assert_eq!(a.index(), b.index()); // same slot...
    ///     assert_ne!(a.generation(), b.generation()); // ...new generation
    ///     assert_ne!(a, b);
    /// });
    /// ```
    pub fn generation(self) -> u32 {
        self.stamp >> 2
    }

    /// The handle as one `u64` (for storing it in plain data, or as a map key).
    ///
    /// ```
    /// # use scope_stack::{Handle, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(4);
    ///     let h = pool.insert(7).unwrap().into_handle();
    ///     assert_eq!(Handle::<u32>::from_bits(h.to_bits()), h);
    /// });
    /// ```
    pub fn to_bits(self) -> u64 {
        (self.stamp as u64) << 32 | self.slot as u64
    }

    /// Rebuilds a handle from [`to_bits`](Self::to_bits). Any `u64` is accepted: a
    /// value that names no pooled object simply finds nothing.
    ///
    /// ```
    /// # use scope_stack::{Handle, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(4);
    ///     pool.insert(7).unwrap().into_handle();
    ///     assert_eq!(pool.get(Handle::from_bits(12345)), None);
    /// });
    /// ```
    pub fn from_bits(bits: u64) -> Handle<T> {
        Handle {
            slot: bits as u32,
            stamp: (bits >> 32) as u32,
            _type: PhantomData,
        }
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Handle<T> {}

impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.slot == other.slot && self.stamp == other.stamp
    }
}

impl<T> Eq for Handle<T> {}

impl<T> Hash for Handle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.to_bits().hash(state);
    }
}

impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("index", &self.index())
            .field("generation", &self.generation())
            .field("pool_tag", &self.tag())
            .finish()
    }
}
