//! `Draft`: a private copy of an object that a writer changes before committing it.
//!
//! This module owns the draft. Invariant: a draft is a new version that no reader can
//! see until `commit` publishes it; dropping or `into_inner` discards it, leaving the
//! object as it was.

use core::fmt;

use crate::pool::PoolBox;
use crate::sync::AtomicU64;

use super::id::Id;
use super::version::Version;

/// A private, changeable copy of an object, from [`Store::write`](crate::store::Store::write).
///
/// Derefs to the value (`&T` and `&mut T`). Publish it with [`Store::commit`](crate::store::Store::commit) or
/// [`Store::try_commit`](crate::store::Store::try_commit); drop it to discard it. It borrows the store, so it cannot be
/// kept past [`Store::end_frame`](crate::store::Store::end_frame).
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
    pub(super) boxed: PoolBox<'a, Version<T>>,
    /// The object's entry in the table.
    pub(super) entry: &'a AtomicU64,
    /// The entry word when the draft was taken (generation and base version).
    pub(super) base: u64,
    /// The object's index.
    pub(super) index: u32,
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
        Id::new(self.index, super::table::generation(self.base))
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
