//! `PoolBox`: an object in a pool slot, owned by the box; dropping the box drops the
//! object and frees its slot.
//!
//! This module owns the box's life. Invariant: a box is the only owner of its slot while
//! it lives; `into_handle` hands the slot over to the pool (state `POOLED`) and
//! `into_inner` moves the value out and frees the slot, each exactly once.
use core::fmt;
use core::mem::{self};

use crate::sync::Ordering;

use super::handle::Handle;
use super::slots::{Core, POOLED, STATE_MASK};
use super::PoolBox;
impl<'a, T> PoolBox<'a, T> {
    #[inline(always)]
    fn core(&self) -> &'a Core<T> {
        // SAFETY: the box borrows the pool for `'a`.
        unsafe { self.core.as_ref() }
    }

    /// Hands the object to the pool and returns a [`Handle`] to it. The object stays in
    /// its slot; it is now reached through [`Pool::get`](crate::Pool::get) (any thread with `&Pool`) and
    /// changed or removed through `&mut Pool`. If never removed, it is dropped when the
    /// pool's scope unwinds.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<String>(4);
    ///     let h = pool.insert("boss".to_string()).unwrap().into_handle();
    ///     assert_eq!(pool.len(), 1);
    ///     assert_eq!(pool.get(h).map(String::as_str), Some("boss"));
    /// }); // the String is dropped here
    /// ```
    pub fn into_handle(self) -> Handle<T> {
        let core = self.core();
        let index = self.index;
        mem::forget(self);
        let stamp = core.stamp(index);
        let pooled = (stamp.load(Ordering::Relaxed) & !STATE_MASK) | POOLED;
        // Release: pairs with the Acquire in `find`, so readers on other threads see
        // everything written to the object through the box.
        stamp.store(pooled, Ordering::Release);
        Handle::new(index, core.tag, pooled)
    }

    /// Crate-internal (an associated function, not a method, so that it never shadows a
    /// method of `T` reached through `Deref`): gives up the box but leaves the object
    /// alive in its slot (still in the boxed state, so handles never reach it) and
    /// returns the slot index. The object is then owned by whoever keeps the index: it is read with
    /// [`Pool::slot_ref`] and freed with [`Pool::free_index`], or, if never freed,
    /// dropped with the pool (the pool drops every occupied slot).
    pub(crate) fn leak_to_slot_index(this: Self) -> u32 {
        let index = this.index;
        mem::forget(this);
        index
    }

    /// Moves the object out and frees its slot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<String>(4);
    ///     let b = pool.insert("note".to_string()).unwrap();
    ///     assert_eq!(b.into_inner(), "note");
    ///     assert!(pool.is_empty());
    /// });
    /// ```
    pub fn into_inner(self) -> T {
        let core = self.core();
        let index = self.index;
        mem::forget(self);
        // SAFETY: the box owned the live object; it is forgotten, so it will not be
        // released again.
        unsafe { core.take(index) }
    }
}

impl<T> core::ops::Deref for PoolBox<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: the box owns a live object in this slot.
        unsafe { &*self.core().value_ptr(self.index) }
    }
}

impl<T> core::ops::DerefMut for PoolBox<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the box owns a live object in this slot, exclusively.
        unsafe { &mut *self.core().value_ptr(self.index) }
    }
}

impl<T> Drop for PoolBox<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the box owns the live object and is being dropped, so the slot is
        // released exactly once.
        unsafe { self.core().drop_and_release(self.index) }
    }
}

impl<T: fmt::Debug> fmt::Debug for PoolBox<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
