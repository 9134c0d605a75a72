//! Reaching pooled objects by handle and in bulk: `get`, `get_mut`, `remove`, `retain`,
//! `iter`, `iter_mut`, `values` and `values_mut`.
//!
//! This module owns handle-based access. Invariant: shared access (`get`, `iter`,
//! `values`) goes through `&Pool` and hands out `&T`; anything that moves or drops an
//! object (`get_mut`, `remove`, `retain`, `iter_mut`, `values_mut`) needs `&mut Pool`, so the borrow checker keeps readers
//! and writers apart; a handle whose generation no longer matches its slot finds
//! nothing.
use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::sync::Ordering;

use super::handle::Handle;
use super::iter::{Iter, IterMut, Values, ValuesMut};
use super::slots::{POOLED, STATE_MASK};
use super::Pool;
impl<'s, T> Pool<'s, T> {
    /// The object a handle names, if it is still in this pool.
    ///
    /// Safe to call while other threads insert and erase: it only ever returns pooled
    /// objects (see [`PoolBox::into_handle`](crate::PoolBox::into_handle)), which can leave the pool only through
    /// `&mut self`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<&str>(4);
    ///     let h = pool.insert("door").unwrap().into_handle();
    ///     assert_eq!(pool.get(h), Some(&"door"));
    ///     pool.remove(h);
    ///     assert_eq!(pool.get(h), None);
    /// });
    /// ```
    #[inline]
    pub fn get(&self, handle: Handle<T>) -> Option<&T> {
        let index = self.core.find(handle)?;
        // SAFETY: the slot holds a pooled object (checked with Acquire, so its contents
        // are visible). It stays in the pool while `&self` is borrowed, and pooled
        // objects are only mutated through `&mut self`.
        Some(unsafe { &*self.core.value_ptr(index) })
    }

    /// The object a handle names, mutably, if it is still in this pool.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(4);
    ///     let h = pool.insert(1).unwrap().into_handle();
    ///     *pool.get_mut(h).unwrap() += 1;
    ///     assert_eq!(pool.get(h), Some(&2));
    /// });
    /// ```
    #[inline]
    pub fn get_mut(&mut self, handle: Handle<T>) -> Option<&mut T> {
        let index = self.core.find(handle)?;
        // SAFETY: a pooled object, and `&mut self` excludes every other access to it
        // (boxes never own pooled slots).
        Some(unsafe { &mut *self.core.value_ptr(index) })
    }

    /// Takes the object a handle names out of the pool and frees its slot. `None` if
    /// the handle is stale or from another pool. Frees with plain loads and stores, no
    /// atomic read-modify-write: `&mut self` rules out every other user.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<String>(4);
    ///     let h = pool.insert("crate".to_string()).unwrap().into_handle();
    ///     assert_eq!(pool.remove(h).as_deref(), Some("crate"));
    ///     assert_eq!(pool.remove(h), None);
    ///     assert!(pool.is_empty());
    /// });
    /// ```
    pub fn remove(&mut self, handle: Handle<T>) -> Option<T> {
        // The exclusive path: see `exclusive.rs`.
        self.core.remove_mut(handle)
    }

    /// Keeps only the pooled objects for which `keep` returns `true`; drops the rest
    /// and frees their slots. Objects owned by boxes are not visited.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     for i in 0..8 {
    ///         pool.insert(i).unwrap().into_handle();
    ///     }
    ///     pool.retain(|_, v| *v % 2 == 0);
    ///     assert_eq!(pool.len(), 4);
    /// });
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(Handle<T>, &mut T) -> bool) {
        for index in 0..self.core.capacity {
            let stamp = self.core.stamp(index).load(Ordering::Relaxed);
            if stamp & STATE_MASK != POOLED {
                continue;
            }
            // SAFETY: a pooled object under `&mut self`.
            let value = unsafe { &mut *self.core.value_ptr(index) };
            if !keep(Handle::new(index, self.core.tag, stamp), value) {
                // SAFETY: `&mut self` owns the pooled object; `keep` has returned, so
                // no reference to it remains.
                unsafe { self.core.drop_and_release_mut(index, stamp) };
            }
        }
    }

    /// Every pooled object with its handle, in slot order (see
    /// [Iterating](crate::pool#iterating-pools-and-dense-pools-alike)). Objects owned by
    /// boxes are not visited (their boxes have exclusive access). Takes time in
    /// proportion to the capacity. [`values`](Self::values) visits the same objects in
    /// the same order without the handles.
    ///
    /// Safe while other threads insert and erase; objects they hand to the pool
    /// meanwhile may or may not be seen.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     let h = pool.insert(5).unwrap().into_handle();
    ///     let boxed = pool.insert(6).unwrap();
    ///     let seen: Vec<_> = pool.iter().collect();
    ///     assert_eq!(seen, [(h, &5)]); // the boxed 6 is not visited
    ///     drop(boxed);
    ///     // The handles work with `get` and `remove`.
    ///     let (first, _) = pool.iter().next().unwrap();
    ///     assert_eq!(pool.get(first), Some(&5));
    ///     assert_eq!(pool.remove(first), Some(5));
    /// });
    /// ```
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            core: &self.core,
            next: 0,
        }
    }

    /// Every pooled object with its handle, mutably, in slot order.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     let h = pool.insert(5).unwrap().into_handle();
    ///     for (_, v) in pool.iter_mut() {
    ///         *v *= 10;
    ///     }
    ///     assert_eq!(pool.get(h), Some(&50));
    /// });
    /// ```
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        IterMut {
            core: NonNull::from(&self.core),
            next: 0,
            _borrow: PhantomData,
        }
    }

    /// Every pooled object, in slot order: [`iter`](Self::iter) without the handles.
    /// Objects owned by boxes are not visited.
    ///
    /// Slot order is not insertion order: a freed slot is reused by the next insert
    /// (on its thread's shard), wherever it lies. A pool loaded from a file and saved
    /// again ([`PoolIn`](crate::serde::PoolIn), feature `serde`) keeps the file's
    /// order instead: the values read from the file come first, in the file's order,
    /// then the values pooled since, in this slot order.
    ///
    /// Safe while other threads insert and erase; objects they hand to the pool
    /// meanwhile may or may not be seen.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     for i in 1..=3 {
    ///         pool.insert(i).unwrap().into_handle();
    ///     }
    ///     let _boxed = pool.insert(100).unwrap(); // not pooled: not visited
    ///     assert_eq!(pool.values().sum::<u32>(), 6);
    /// });
    /// ```
    pub fn values(&self) -> Values<'_, T> {
        Values { inner: self.iter() }
    }

    /// Every pooled object, mutably, in slot order: [`iter_mut`](Self::iter_mut)
    /// without the handles.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(8);
    ///     let h = pool.insert(5).unwrap().into_handle();
    ///     pool.values_mut().for_each(|v| *v += 1);
    ///     assert_eq!(pool.get(h), Some(&6));
    /// });
    /// ```
    pub fn values_mut(&mut self) -> ValuesMut<'_, T> {
        ValuesMut {
            inner: self.iter_mut(),
        }
    }
}
