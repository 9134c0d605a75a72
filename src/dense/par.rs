//! Parallel walks of a dense pool's live objects with rayon (feature `rayon`):
//! `par_iter`, `par_iter_mut`, `par_values` and `par_values_mut`, the parallel forms of
//! `iter`, `iter_mut`, `values` and `values_mut`.
//!
//! This module owns the dense pool's rayon walks. Invariant: each is rayon's walk of the
//! packed slice of live objects ([`DensePool::as_slice`], or `as_mut_slice`), zipped
//! for `par_iter`/`par_iter_mut` with the live roster beside it, so it visits exactly
//! the `len` live objects, each once, and pairs each with the handle of its position,
//! as the sequential walks do. They are indexed (`IndexedParallelIterator`): they know
//! their length, and `enumerate`, `zip`, `chunks` and `collect_into_vec` keep the
//! roster order.
//!
//! The shared walks take `&self` and the mutable ones `&mut self`, as the sequential
//! ones do: every call that moves or drops an object takes `&mut self`, so nothing can
//! move an object while a job holds a reference to it.

use core::sync::atomic::Ordering;

use rayon::prelude::*;

use super::entry::Entry;
use super::handle::DenseHandle;
use super::DensePool;

impl<'s, T> DensePool<'s, T> {
    /// The live roster entries, side by side with the live objects.
    ///
    /// # Safety
    /// The pool is borrowed (shared or mutably) for `'a`, so the live roster does not
    /// change meanwhile.
    #[inline]
    unsafe fn live_roster<'a>(&self) -> &'a [Entry] {
        // SAFETY: the roster has `capacity >= len` initialised entries, apart from the
        // values; nothing writes them for `'a` (the caller). A report on another thread
        // may read them meanwhile through the atomics, which a shared slice allows.
        unsafe { core::slice::from_raw_parts(self.roster.as_ptr(), self.len as usize) }
    }

    /// Every live object with its handle, walked by rayon's jobs: the parallel form of
    /// [`iter`](Self::iter). Indexed: it splits the packed objects and their roster
    /// entries at the same positions, and keeps the roster order where rayon keeps
    /// order (`collect`, `enumerate`).
    ///
    /// ```
    /// use rayon::prelude::*;
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(256);
    ///     for i in 0..200 {
    ///         pool.insert(i).unwrap();
    ///     }
    ///     assert!(pool.par_iter().all(|(h, v)| pool.get(h) == Some(v)));
    ///     let pairs: Vec<_> = pool.par_iter().collect();
    ///     assert_eq!(pairs, pool.iter().collect::<Vec<_>>());
    /// });
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_iter(&self) -> impl IndexedParallelIterator<Item = (DenseHandle<T>, &T)> + '_
    where
        T: Sync,
    {
        let tag_bits = self.tag_bits;
        // SAFETY: the result borrows `&self`.
        let roster = unsafe { self.live_roster() };
        self.as_slice()
            .par_iter()
            .zip(roster.par_iter())
            .map(move |(value, entry)| {
                // Relaxed: as in `Handles` (reports read these words, never write them).
                let handle = DenseHandle::from_entry(entry.load(Ordering::Relaxed), tag_bits);
                (handle, value)
            })
    }

    /// Every live object with its handle, mutably, walked by rayon's jobs: the parallel
    /// form of [`iter_mut`](Self::iter_mut). Each object goes to exactly one job, once.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<(u32, usize)>(256);
    ///     let handles: Vec<_> = (0..200).map(|i| pool.insert((i, 0)).unwrap()).collect();
    ///     pool.par_iter_mut().for_each(|(h, v)| v.1 = h.index() + 1);
    ///     for h in handles {
    ///         assert_eq!(pool[h].1, h.index() + 1);
    ///     }
    /// });
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_iter_mut(
        &mut self,
    ) -> impl IndexedParallelIterator<Item = (DenseHandle<T>, &mut T)> + '_
    where
        T: Send,
    {
        let tag_bits = self.tag_bits;
        // SAFETY: the result borrows `&mut self`; the roster is an array apart from the
        // values, which are reached only through the `&mut [T]` below.
        let roster = unsafe { self.live_roster() };
        self.as_mut_slice()
            .par_iter_mut()
            .zip(roster.par_iter())
            .map(move |(value, entry)| {
                // Relaxed: as in `par_iter`.
                let handle = DenseHandle::from_entry(entry.load(Ordering::Relaxed), tag_bits);
                (handle, value)
            })
    }

    /// Every live object, walked by rayon's jobs: rayon's walk of
    /// [`as_slice`](Self::as_slice), the parallel form of [`values`](Self::values).
    ///
    /// ```
    /// use rayon::prelude::*;
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u64>(256);
    ///     for i in 1..=100 {
    ///         pool.insert(i).unwrap();
    ///     }
    ///     assert_eq!(pool.par_values().sum::<u64>(), 5050);
    ///     // Chunks for jobs that want a run of objects each.
    ///     assert_eq!(pool.as_slice().par_chunks(32).count(), 4);
    /// });
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_values(&self) -> impl IndexedParallelIterator<Item = &T> + '_
    where
        T: Sync,
    {
        self.as_slice().par_iter()
    }

    /// Every live object, mutably, walked by rayon's jobs: rayon's walk of
    /// [`as_mut_slice`](Self::as_mut_slice), the parallel form of
    /// [`values_mut`](Self::values_mut).
    ///
    /// ```
    /// use rayon::prelude::*;
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u64>(256);
    ///     for i in 1..=100 {
    ///         pool.insert(i).unwrap();
    ///     }
    ///     pool.par_values_mut().for_each(|v| *v *= 2);
    ///     assert_eq!(pool.values().sum::<u64>(), 10100);
    /// });
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_values_mut(&mut self) -> impl IndexedParallelIterator<Item = &mut T> + '_
    where
        T: Send,
    {
        self.as_mut_slice().par_iter_mut()
    }
}
