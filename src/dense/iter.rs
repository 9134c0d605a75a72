//! Iterators over a dense pool: values (`iter`, `iter_mut`) and handles (`handles`),
//! all walking the live part of the roster.
//!
//! This module owns the three iterators. Invariant: each visits exactly the objects live
//! when it was made, once each, in roster order, with no "in use" check per slot; the
//! mutable one lives under the pool's `&mut` borrow, so its `&mut T`s never alias.
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::Ordering;

use super::handle::DenseHandle;
use super::slot::{value_ptr, Slot};

/// Iterator over a dense pool's live objects; see [`DensePool::iter`](crate::DensePool::iter).
pub struct Iter<'a, T> {
    pub(super) roster: core::slice::Iter<'a, u32>,
    pub(super) slots: NonNull<Slot<T>>,
    pub(super) _borrow: PhantomData<&'a T>,
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

/// Mutable iterator over a dense pool's live objects; see [`DensePool::iter_mut`](crate::DensePool::iter_mut).
pub struct IterMut<'a, T> {
    pub(super) roster: core::slice::Iter<'a, u32>,
    pub(super) slots: NonNull<Slot<T>>,
    pub(super) _borrow: PhantomData<&'a mut T>,
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
/// [`DensePool::handles`](crate::DensePool::handles).
pub struct Handles<'a, T> {
    pub(super) roster: core::slice::Iter<'a, u32>,
    pub(super) slots: NonNull<Slot<T>>,
    pub(super) tag: u32,
    pub(super) _borrow: PhantomData<&'a DenseHandle<T>>,
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
