//! Iterators over a dense pool: objects alone (`values`, `values_mut`, a walk over the
//! packed live cells), handles alone (`handles`, a walk over the live roster entries,
//! each a handle but for the pool's tag), and objects with their handles (`iter`,
//! `iter_mut`, both walks side by side). Every walk reads memory front to back.
//!
//! This module owns the five iterators. Invariant: each visits exactly the objects live
//! when it was made, once each, in roster order (cell `k` belongs to roster entry `k`),
//! with no "in use" check per slot; the mutable ones live under the pool's `&mut`
//! borrow, so their `&mut T`s never alias, and the paired walks always have the same
//! length, so they end together.
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::slice;
use core::sync::atomic::Ordering;

use super::entry::Entry;
use super::handle::DenseHandle;

/// Implements `ExactSizeIterator`, `FusedIterator` and `Debug` for one of the walks
/// below, whose `Iterator` reports an exact `size_hint`.
macro_rules! exact_walk {
    ($name:ident) => {
        impl<T> ExactSizeIterator for $name<'_, T> {}
        impl<T> FusedIterator for $name<'_, T> {}

        impl<T> fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("remaining", &self.len())
                    .finish()
            }
        }
    };
}

/// Iterator over a dense pool's live objects; see
/// [`DensePool::values`](crate::DensePool::values).
pub struct Values<'a, T> {
    pub(super) values: slice::Iter<'a, T>,
}

impl<'a, T> Iterator for Values<'a, T> {
    type Item = &'a T;

    #[inline(always)]
    fn next(&mut self) -> Option<&'a T> {
        self.values.next()
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.values.size_hint()
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a T) -> B>(self, init: B, f: F) -> B {
        self.values.fold(init, f)
    }
}

impl<T> DoubleEndedIterator for Values<'_, T> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.values.next_back()
    }
}

exact_walk!(Values);

impl<T> Clone for Values<'_, T> {
    fn clone(&self) -> Self {
        Values {
            values: self.values.clone(),
        }
    }
}

/// Mutable iterator over a dense pool's live objects; see
/// [`DensePool::values_mut`](crate::DensePool::values_mut).
pub struct ValuesMut<'a, T> {
    pub(super) values: slice::IterMut<'a, T>,
}

impl<'a, T> Iterator for ValuesMut<'a, T> {
    type Item = &'a mut T;

    #[inline(always)]
    fn next(&mut self) -> Option<&'a mut T> {
        self.values.next()
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.values.size_hint()
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a mut T) -> B>(self, init: B, f: F) -> B {
        self.values.fold(init, f)
    }
}

impl<T> DoubleEndedIterator for ValuesMut<'_, T> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.values.next_back()
    }
}

exact_walk!(ValuesMut);

/// Iterator over the handles of a dense pool's live objects; see
/// [`DensePool::handles`](crate::DensePool::handles).
pub struct Handles<'a, T> {
    /// The live roster entries not yet visited.
    pub(super) roster: slice::Iter<'a, Entry>,
    /// The pool's tag, in place in the handle's slot word.
    pub(super) tag_bits: u32,
    pub(super) _type: PhantomData<fn() -> T>,
}

impl<T> Handles<'_, T> {
    /// The handle an entry stands for.
    #[inline(always)]
    fn handle(&self, entry: &Entry) -> DenseHandle<T> {
        DenseHandle::from_entry(entry.load(Ordering::Relaxed), self.tag_bits)
    }
}

impl<T> Iterator for Handles<'_, T> {
    type Item = DenseHandle<T>;

    #[inline(always)]
    fn next(&mut self) -> Option<DenseHandle<T>> {
        let entry = self.roster.next()?;
        Some(self.handle(entry))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.roster.size_hint()
    }
}

impl<T> DoubleEndedIterator for Handles<'_, T> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<DenseHandle<T>> {
        let entry = self.roster.next_back()?;
        Some(self.handle(entry))
    }
}

exact_walk!(Handles);

impl<T> Clone for Handles<'_, T> {
    fn clone(&self) -> Self {
        Handles {
            roster: self.roster.clone(),
            tag_bits: self.tag_bits,
            _type: PhantomData,
        }
    }
}

/// Implements `Iterator` (both ends, exact size) for a walk of objects paired with
/// their handles: `values` (a slice walk over the live cells) leads, and `handles`
/// (over the live roster, the same length) follows step for step.
macro_rules! paired_walk {
    ($name:ident<$a:lifetime, $t:ident>, $value:ty) => {
        impl<$a, $t> Iterator for $name<$a, $t> {
            type Item = (DenseHandle<$t>, $value);

            #[inline(always)]
            fn next(&mut self) -> Option<Self::Item> {
                let value = self.values.next()?;
                // SAFETY: the two walks started with the same length (`len`) and move
                // together, so the handles walk has an entry wherever the values do.
                let handle = unsafe { self.handles.next().unwrap_unchecked() };
                Some((handle, value))
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.values.size_hint()
            }
        }

        impl<$a, $t> DoubleEndedIterator for $name<$a, $t> {
            #[inline(always)]
            fn next_back(&mut self) -> Option<Self::Item> {
                let value = self.values.next_back()?;
                // SAFETY: as in `next`, from the back.
                let handle = unsafe { self.handles.next_back().unwrap_unchecked() };
                Some((handle, value))
            }
        }

        exact_walk!($name);
    };
}

/// Iterator over a dense pool's live objects and their handles; see
/// [`DensePool::iter`](crate::DensePool::iter).
pub struct Iter<'a, T> {
    pub(super) values: slice::Iter<'a, T>,
    pub(super) handles: Handles<'a, T>,
}

paired_walk!(Iter<'a, T>, &'a T);

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            values: self.values.clone(),
            handles: self.handles.clone(),
        }
    }
}

/// Mutable iterator over a dense pool's live objects and their handles; see
/// [`DensePool::iter_mut`](crate::DensePool::iter_mut).
pub struct IterMut<'a, T> {
    pub(super) values: slice::IterMut<'a, T>,
    pub(super) handles: Handles<'a, T>,
}

paired_walk!(IterMut<'a, T>, &'a mut T);
