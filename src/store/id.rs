//! `Id`: the name of one object of a store, with a generation so that a destroyed
//! object's id finds nothing.
//!
//! This module owns the id's bit layout. Invariant: an id packs the object's index, the
//! index's generation and the store's seed; it matches only while that object lives.

use core::fmt;

/// The name of an object in a [`Store`](crate::store::Store): a `u64` holding a 32-bit index and a 32-bit
/// generation.
///
/// When an object is destroyed, its index is reused (after the next
/// [`end_frame`](crate::store::Store::end_frame)) with a new generation, so the old `Id` goes stale
/// and finds nothing instead of the new object.
///
/// An `Id` has no room for a store tag: its 32 index bits and 32 generation bits are
/// all there is, and no bit of the id says which store made it. Instead each store
/// starts the generations of all its indices at a seed of its own, a 32-bit number
/// mixed from the store's creation number so that any two stores' seeds look
/// unrelated. So an id of another store, or of an earlier store in the same memory (a
/// level closed and loaded again), usually finds nothing, but this is odds, not a
/// guarantee:
///
/// - An id from another store matches only if its index holds a live object here
///   and its 32-bit generation equals that index's generation here: at any one
///   moment, 1 in 2^32.
/// - Each destroy of an index adds one to its generation, so over the stores'
///   lifetimes the odds grow with reuse: if the index was destroyed `a` times in one
///   store and `b` times in the other, some id of the one finds an object of the
///   other with odds of at most `(a + b + 1)` in 2^32 (an index reused a million times in
///   each: about 1 in 2,000).
///
/// As with a stale id, a false match can only ever name a live object of the store the
/// id is used with, never freed memory. Where a wrong match matters, keep ids with the
/// store that made them.
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
    pub(super) fn new(index: u32, generation: u32) -> Id {
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
