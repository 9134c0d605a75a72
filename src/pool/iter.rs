//! Iterators over a pool's pooled objects (those behind handles): with their handles
//! for `Pool::iter` and `Pool::iter_mut`, alone for `Pool::values` and
//! `Pool::values_mut`.
//!
//! This module owns the four iterators. Invariant: each yields only slots whose stamp
//! says `POOLED`, each slot at most once, in slot order, with the handle that names it
//! now; the mutable ones live under the pool's `&mut` borrow, so their `&mut T`s never
//! alias. The value iterators are the handle iterators with the handle dropped, so the
//! two kinds visit the same objects in the same order.

use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::sync::Ordering;

use super::handle::Handle;
use super::slots::{Core, POOLED, STATE_MASK};

/// Iterator over a pool's pooled objects and their handles; see [`Pool::iter`](crate::Pool::iter).
pub struct Iter<'a, T> {
    pub(super) core: &'a Core<T>,
    pub(super) next: u32,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = (Handle<T>, &'a T);

    fn next(&mut self) -> Option<Self::Item> {
        while self.next < self.core.capacity {
            let index = self.next;
            self.next += 1;
            // Acquire: as in `Core::find`.
            let stamp = self.core.stamp(index).load(Ordering::Acquire);
            if stamp & STATE_MASK == POOLED {
                // SAFETY: as in `Pool::get`.
                let value = unsafe { &*self.core.value_ptr(index) };
                return Some((Handle::new(index, self.core.tag, stamp), value));
            }
        }
        None
    }
}

// Past the last slot, `next` stays there.
impl<T> FusedIterator for Iter<'_, T> {}

/// Mutable iterator over a pool's pooled objects; see [`Pool::iter_mut`](crate::Pool::iter_mut).
pub struct IterMut<'a, T> {
    pub(super) core: NonNull<Core<T>>,
    pub(super) next: u32,
    pub(super) _borrow: PhantomData<&'a mut Core<T>>,
}

// SAFETY: the iterator is a `&mut Pool` in disguise: sending it sends `&mut T`s.
unsafe impl<T: Send> Send for IterMut<'_, T> {}
// SAFETY: `&IterMut` gives nothing.
unsafe impl<T: Sync> Sync for IterMut<'_, T> {}

impl<'a, T> Iterator for IterMut<'a, T> {
    type Item = (Handle<T>, &'a mut T);

    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: the iterator borrows the pool mutably for `'a`.
        let core = unsafe { self.core.as_ref() };
        while self.next < core.capacity {
            let index = self.next;
            self.next += 1;
            let stamp = core.stamp(index).load(Ordering::Relaxed);
            if stamp & STATE_MASK == POOLED {
                // SAFETY: a pooled object under the pool's `&mut` borrow; each slot
                // is yielded once, so the `&mut T`s never alias.
                let value = unsafe { &mut *core.value_ptr(index) };
                return Some((Handle::new(index, core.tag, stamp), value));
            }
        }
        None
    }
}

// Past the last slot, `next` stays there.
impl<T> FusedIterator for IterMut<'_, T> {}

/// Iterator over a pool's pooled objects; see [`Pool::values`](crate::Pool::values).
pub struct Values<'a, T> {
    pub(super) inner: Iter<'a, T>,
}

impl<'a, T> Iterator for Values<'a, T> {
    type Item = &'a T;

    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        self.inner.next().map(|(_, value)| value)
    }
}

impl<T> FusedIterator for Values<'_, T> {}

/// Mutable iterator over a pool's pooled objects; see
/// [`Pool::values_mut`](crate::Pool::values_mut).
pub struct ValuesMut<'a, T> {
    pub(super) inner: IterMut<'a, T>,
}

impl<'a, T> Iterator for ValuesMut<'a, T> {
    type Item = &'a mut T;

    #[inline]
    fn next(&mut self) -> Option<&'a mut T> {
        self.inner.next().map(|(_, value)| value)
    }
}

impl<T> FusedIterator for ValuesMut<'_, T> {}
