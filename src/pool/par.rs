//! Parallel walks of a pool's pooled objects with rayon (feature `rayon`): `par_iter`,
//! `par_iter_mut`, `par_values` and `par_values_mut`, the parallel forms of `iter`,
//! `iter_mut`, `values` and `values_mut`.
//!
//! This module owns the pool's rayon walks. Invariant: each walk splits the slot range
//! `0..capacity` among rayon's jobs, so every slot is looked at by exactly one job, once;
//! a job yields a slot's object only if its stamp says `POOLED`, exactly as the
//! sequential iterators do. So the parallel walks visit what the sequential ones visit
//! (in no particular order), and the mutable ones hand out each `&mut T` once.
//!
//! # Why `&self` for the shared walks and `&mut self` for the others
//!
//! A pooled object leaves the pool only through `&mut Pool` (`remove`, `retain`, the
//! pool's drop), so while `par_iter` borrows the pool shared, every object it saw
//! pooled stays alive and unchanged for as long as the `&T` it yields (which borrows
//! the pool): the argument of `Pool::get`, made once per slot. Other threads may insert
//! and free boxes meanwhile: a boxed object is never yielded (its stamp is not
//! `POOLED`), and an object pooled during the walk may or may not be seen. The stamp is
//! loaded with `Acquire`, pairing with the `Release` of `PoolBox::into_handle`, so the
//! object's contents written through its box are visible to the job that reads it.
//!
//! `par_iter_mut` hands out `&mut T`, which must not alias anything: it takes
//! `&mut self`, so no `&T` from `get` or `par_iter`, no other walk and no removal can
//! run meanwhile, and no box can exist (a box borrows the pool). Rayon's split of a
//! range gives each index to one job only, so two `&mut T` never name one object.

use core::marker::PhantomData;
use core::ptr::NonNull;

use rayon::prelude::*;

use crate::sync::Ordering;

use super::handle::Handle;
use super::slots::{Core, POOLED, STATE_MASK};
use super::Pool;

/// The fewest slots one rayon job looks at: a slot costs one stamp load, so smaller
/// pieces would spend more on the split than on the walk.
const MIN_SLOTS_PER_JOB: usize = 64;

/// The pool's core, lent to rayon's jobs for a mutable walk.
struct Lent<'a, T> {
    core: NonNull<Core<T>>,
    _borrow: PhantomData<&'a mut Core<T>>,
}

// SAFETY: a `Lent` is the pool's `&mut` borrow split among threads, which only ever
// turn it into `&mut T`s of distinct slots (see the module docs): sending or sharing it
// sends `T`s to other threads, so `T: Send` is what it needs, as for `&mut [T]`.
unsafe impl<T: Send> Send for Lent<'_, T> {}
// SAFETY: as for `Send`: through `&Lent` a job reaches only the slots rayon gave it.
unsafe impl<T: Send> Sync for Lent<'_, T> {}

impl<'a, T> Lent<'a, T> {
    /// The object in slot `index` with its handle, if the slot holds a pooled object.
    ///
    /// # Safety
    /// `index < capacity`, and no other call for this `index` is made on this `Lent`
    /// while the result lives.
    unsafe fn pooled_mut(&self, index: u32) -> Option<(Handle<T>, &'a mut T)> {
        // SAFETY: the core outlives `'a`, for which the pool is borrowed mutably; the
        // `&Core` covers the pool object, not the slot storage it points to.
        let core = unsafe { self.core.as_ref() };
        // Relaxed: `&mut` orders everything before the walk; a report on another thread
        // may read stamps, never write them.
        let stamp = core.stamp(index).load(Ordering::Relaxed);
        if stamp & STATE_MASK != POOLED {
            return None;
        }
        // SAFETY: a pooled object under the pool's `&mut` borrow, reached through this
        // slot only once (the caller), so the `&mut T` aliases nothing.
        let value = unsafe { &mut *core.value_ptr(index) };
        Some((Handle::new(index, core.tag, stamp), value))
    }
}

impl<'s, T> Pool<'s, T> {
    /// Every pooled object with its handle, walked by rayon's jobs: the parallel form
    /// of [`iter`](Self::iter), visiting the same objects (those behind handles, not
    /// those a [`PoolBox`](crate::PoolBox) holds), in no particular order.
    ///
    /// It takes `&self`, like `iter`: the pool stays shared, so `get` works inside the
    /// jobs, and other threads may insert and free meanwhile (an object pooled during
    /// the walk may or may not be seen). Every object it yields stays alive and
    /// unchanged while the `&T` lives, since pooled objects leave only through
    /// `&mut Pool`. The slots are split among the jobs in runs of at least 64; the cost
    /// is a stamp test per slot, as for `iter`.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u32>(256);
    ///     let handles: Vec<_> = (0..200).map(|i| pool.insert_mut(i).unwrap()).collect();
    ///     let total: u32 = pool.par_iter().map(|(_, v)| *v).sum();
    ///     assert_eq!(total, (0..200).sum());
    ///     // Each handle is the one `iter` gives, and `get` finds its object.
    ///     assert!(pool.par_iter().all(|(h, v)| pool.get(h) == Some(v)));
    ///     assert_eq!(pool.par_iter().count(), handles.len());
    /// });
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_iter(&self) -> impl ParallelIterator<Item = (Handle<T>, &T)> + '_
    where
        T: Send + Sync,
    {
        let core = &self.core;
        (0..core.capacity)
            .into_par_iter()
            .with_min_len(MIN_SLOTS_PER_JOB)
            .filter_map(move |index| {
                // Acquire: as in `Core::find`, so the object's contents written through
                // its box are visible here.
                let stamp = core.stamp(index).load(Ordering::Acquire);
                if stamp & STATE_MASK != POOLED {
                    return None;
                }
                // SAFETY: as in `Pool::get`: a pooled object leaves the pool only through
                // `&mut self`, which cannot exist while this `&self` borrow lives.
                let value = unsafe { &*core.value_ptr(index) };
                Some((Handle::new(index, core.tag, stamp), value))
            })
    }

    /// Every pooled object with its handle, mutably, walked by rayon's jobs: the
    /// parallel form of [`iter_mut`](Self::iter_mut), in no particular order. Each
    /// object is handed to exactly one job, once.
    ///
    /// It takes `&mut self`: nothing else can read or remove an object while a job
    /// changes it.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<(u32, u32)>(256);
    ///     let handles: Vec<_> = (0..200).map(|i| pool.insert_mut((i, 0)).unwrap()).collect();
    ///     pool.par_iter_mut().for_each(|(h, v)| v.1 = h.index() as u32 + 1);
    ///     for h in handles {
    ///         assert_eq!(pool.get(h).unwrap().1, h.index() as u32 + 1);
    ///     }
    /// });
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_iter_mut(&mut self) -> impl ParallelIterator<Item = (Handle<T>, &mut T)> + '_
    where
        T: Send,
    {
        let capacity = self.core.capacity;
        let lent = Lent {
            core: NonNull::from(&mut self.core),
            _borrow: PhantomData,
        };
        (0..capacity)
            .into_par_iter()
            .with_min_len(MIN_SLOTS_PER_JOB)
            // SAFETY: the index is below the capacity, and rayon hands each index of the
            // range to one job, once.
            .filter_map(move |index| unsafe { lent.pooled_mut(index) })
    }

    /// Every pooled object, walked by rayon's jobs: [`par_iter`](Self::par_iter)
    /// without the handles, the parallel form of [`values`](Self::values).
    ///
    /// ```
    /// use rayon::prelude::*;
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u64>(256);
    ///     for i in 1..=100 {
    ///         pool.insert_mut(i).unwrap();
    ///     }
    ///     let _boxed = pool.insert(1000).unwrap(); // a box's object is not visited
    ///     assert_eq!(pool.par_values().sum::<u64>(), 5050);
    /// });
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_values(&self) -> impl ParallelIterator<Item = &T> + '_
    where
        T: Send + Sync,
    {
        self.par_iter().map(|(_, value)| value)
    }

    /// Every pooled object, mutably, walked by rayon's jobs:
    /// [`par_iter_mut`](Self::par_iter_mut) without the handles, the parallel form of
    /// [`values_mut`](Self::values_mut).
    ///
    /// ```
    /// use rayon::prelude::*;
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_pool::<u64>(256);
    ///     for i in 1..=100 {
    ///         pool.insert_mut(i).unwrap();
    ///     }
    ///     pool.par_values_mut().for_each(|v| *v *= 2);
    ///     assert_eq!(pool.values().sum::<u64>(), 10100);
    /// });
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_values_mut(&mut self) -> impl ParallelIterator<Item = &mut T> + '_
    where
        T: Send,
    {
        self.par_iter_mut().map(|(_, value)| value)
    }
}
