//! Iterators over a dense pool, all walking the live part of the roster: objects with
//! their handles (`iter`, `iter_mut`), objects alone (`values`, `values_mut`), and
//! handles alone (`handles`).
//!
//! This module owns the five iterators. Invariant: each visits exactly the objects live
//! when it was made, once each, in roster order, with no "in use" check per slot; the
//! mutable ones live under the pool's `&mut` borrow, so their `&mut T`s never alias.
//! Each iterator says how it turns a roster entry into an item (`item`); the walk itself
//! (front, back, length) is written once, in `walks_the_roster!`.
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::Ordering;

use super::handle::DenseHandle;
use super::slot::{value_ptr, Slot};

/// Implements `Iterator` (both ends, exact size, fused) and `Debug` for one of the
/// roster walks below, through its `unsafe fn item(&self, index: u32) -> Item`.
///
/// Every walk has a `roster: core::slice::Iter<'a, u32>` field holding the live roster
/// entries it has yet to visit.
macro_rules! walks_the_roster {
    ($name:ident<$a:lifetime, $t:ident>, $item:ty) => {
        impl<$a, $t> Iterator for $name<$a, $t> {
            type Item = $item;

            #[inline(always)]
            fn next(&mut self) -> Option<$item> {
                let &index = self.roster.next()?;
                // SAFETY: `index` comes from the live roster this iterator walks, and
                // each entry is taken from it once.
                Some(unsafe { self.item(index) })
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.roster.size_hint()
            }
        }

        impl<$a, $t> DoubleEndedIterator for $name<$a, $t> {
            #[inline(always)]
            fn next_back(&mut self) -> Option<$item> {
                let &index = self.roster.next_back()?;
                // SAFETY: as in `next`.
                Some(unsafe { self.item(index) })
            }
        }

        impl<$t> ExactSizeIterator for $name<'_, $t> {}
        impl<$t> FusedIterator for $name<'_, $t> {}

        impl<$t> fmt::Debug for $name<'_, $t> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("remaining", &self.roster.len())
                    .finish()
            }
        }
    };
}

/// The handle of live slot `index`.
///
/// # Safety
/// `index` is a live roster entry of the pool whose slot array is `slots`, and the
/// pool is borrowed (shared or mutably) for as long as the caller walks it.
#[inline(always)]
unsafe fn handle_at<T>(slots: NonNull<Slot<T>>, tag: u32, index: u32) -> DenseHandle<T> {
    // SAFETY: a live roster entry is below `capacity`, so the slot is in the array; the
    // pool's borrow keeps its bookkeeping unwritten. Only the generation field is read,
    // by place projection: no reference to the slot (or to its value, which a
    // `&mut T` from the same walk may hold) is made.
    let generation = unsafe {
        (*slots.as_ptr().add(index as usize))
            .generation
            .load(Ordering::Relaxed)
    };
    DenseHandle::new(index, tag, generation)
}

/// Iterator over a dense pool's live objects and their handles; see
/// [`DensePool::iter`](crate::DensePool::iter).
pub struct Iter<'a, T> {
    pub(super) roster: core::slice::Iter<'a, u32>,
    pub(super) slots: NonNull<Slot<T>>,
    pub(super) tag: u32,
    pub(super) _borrow: PhantomData<&'a T>,
}

impl<'a, T> Iter<'a, T> {
    /// # Safety
    /// `index` is a live roster entry of the walked pool.
    #[inline(always)]
    unsafe fn item(&self, index: u32) -> (DenseHandle<T>, &'a T) {
        // SAFETY: the live roster names live slots (below `capacity`); the pool is
        // borrowed shared for `'a`, so they stay live and unwritten.
        unsafe {
            (
                handle_at(self.slots, self.tag, index),
                &*value_ptr(self.slots.as_ptr().add(index as usize)),
            )
        }
    }
}
walks_the_roster!(Iter<'a, T>, (DenseHandle<T>, &'a T));

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            roster: self.roster.clone(),
            slots: self.slots,
            tag: self.tag,
            _borrow: PhantomData,
        }
    }
}

// SAFETY: an `Iter` is a `&DensePool` in disguise: it hands out `&T`s.
unsafe impl<T: Sync> Send for Iter<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Iter<'_, T> {}

/// Mutable iterator over a dense pool's live objects and their handles; see
/// [`DensePool::iter_mut`](crate::DensePool::iter_mut).
pub struct IterMut<'a, T> {
    pub(super) roster: core::slice::Iter<'a, u32>,
    pub(super) slots: NonNull<Slot<T>>,
    pub(super) tag: u32,
    pub(super) _borrow: PhantomData<&'a mut T>,
}

impl<'a, T> IterMut<'a, T> {
    /// # Safety
    /// `index` is a live roster entry of the walked pool, not given to `item` before.
    #[inline(always)]
    unsafe fn item(&self, index: u32) -> (DenseHandle<T>, &'a mut T) {
        // SAFETY: the live roster names live slots, each exactly once (it is part of a
        // permutation) and each taken once, so the `&mut T`s never alias; the pool is
        // borrowed mutably for `'a`. The handle reads only the generation field.
        unsafe {
            (
                handle_at(self.slots, self.tag, index),
                &mut *value_ptr(self.slots.as_ptr().add(index as usize)),
            )
        }
    }
}
walks_the_roster!(IterMut<'a, T>, (DenseHandle<T>, &'a mut T));

// SAFETY: an `IterMut` is a `&mut DensePool` in disguise: it hands out `&mut T`s.
unsafe impl<T: Send> Send for IterMut<'_, T> {}
// SAFETY: `&IterMut` gives nothing out.
unsafe impl<T: Sync> Sync for IterMut<'_, T> {}

/// Iterator over a dense pool's live objects; see
/// [`DensePool::values`](crate::DensePool::values).
pub struct Values<'a, T> {
    pub(super) roster: core::slice::Iter<'a, u32>,
    pub(super) slots: NonNull<Slot<T>>,
    pub(super) _borrow: PhantomData<&'a T>,
}

impl<'a, T> Values<'a, T> {
    /// # Safety
    /// `index` is a live roster entry of the walked pool.
    #[inline(always)]
    unsafe fn item(&self, index: u32) -> &'a T {
        // SAFETY: as in `Iter::item`.
        unsafe { &*value_ptr(self.slots.as_ptr().add(index as usize)) }
    }
}
walks_the_roster!(Values<'a, T>, &'a T);

impl<T> Clone for Values<'_, T> {
    fn clone(&self) -> Self {
        Values {
            roster: self.roster.clone(),
            slots: self.slots,
            _borrow: PhantomData,
        }
    }
}

// SAFETY: a `Values` is a `&DensePool` in disguise: it hands out `&T`s.
unsafe impl<T: Sync> Send for Values<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Values<'_, T> {}

/// Mutable iterator over a dense pool's live objects; see
/// [`DensePool::values_mut`](crate::DensePool::values_mut).
pub struct ValuesMut<'a, T> {
    pub(super) roster: core::slice::Iter<'a, u32>,
    pub(super) slots: NonNull<Slot<T>>,
    pub(super) _borrow: PhantomData<&'a mut T>,
}

impl<'a, T> ValuesMut<'a, T> {
    /// # Safety
    /// `index` is a live roster entry of the walked pool, not given to `item` before.
    #[inline(always)]
    unsafe fn item(&self, index: u32) -> &'a mut T {
        // SAFETY: as in `IterMut::item`.
        unsafe { &mut *value_ptr(self.slots.as_ptr().add(index as usize)) }
    }
}
walks_the_roster!(ValuesMut<'a, T>, &'a mut T);

// SAFETY: a `ValuesMut` is a `&mut DensePool` in disguise: it hands out `&mut T`s.
unsafe impl<T: Send> Send for ValuesMut<'_, T> {}
// SAFETY: `&ValuesMut` gives nothing out.
unsafe impl<T: Sync> Sync for ValuesMut<'_, T> {}

/// Iterator over the handles of a dense pool's live objects; see
/// [`DensePool::handles`](crate::DensePool::handles).
pub struct Handles<'a, T> {
    pub(super) roster: core::slice::Iter<'a, u32>,
    pub(super) slots: NonNull<Slot<T>>,
    pub(super) tag: u32,
    pub(super) _borrow: PhantomData<&'a DenseHandle<T>>,
}

impl<T> Handles<'_, T> {
    /// # Safety
    /// `index` is a live roster entry of the walked pool.
    #[inline(always)]
    unsafe fn item(&self, index: u32) -> DenseHandle<T> {
        // SAFETY: forwarded; the pool is borrowed shared for the walk.
        unsafe { handle_at(self.slots, self.tag, index) }
    }
}
walks_the_roster!(Handles<'a, T>, DenseHandle<T>);

impl<T> Clone for Handles<'_, T> {
    fn clone(&self) -> Self {
        Handles {
            roster: self.roster.clone(),
            slots: self.slots,
            tag: self.tag,
            _borrow: PhantomData,
        }
    }
}

// SAFETY: `Handles` reads only the bookkeeping (plain `u32`s) under a shared borrow.
unsafe impl<T> Send for Handles<'_, T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Handles<'_, T> {}
