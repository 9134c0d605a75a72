//! Reading a dense pool: look-ups by handle, counts, the iterators' entry points
//! (`iter`, `iter_mut`, `values`, `values_mut`, `handles`) and the slice views
//! (`as_slice`, `as_mut_slice`).
//!
//! This module owns read access. Invariant: `&self` methods hand out only `&T`, `&mut
//! self` ones `&mut T`, so the borrow checker keeps readers and writers apart; a stale
//! or foreign handle finds nothing.
use core::marker::PhantomData;
#[cfg(feature = "debug-fill")]
use core::sync::atomic::Ordering;

use super::handle::DenseHandle;
use super::iter::{Handles, Iter, IterMut, Values, ValuesMut};
use super::DensePool;

impl<'s, T> DensePool<'s, T> {
    /// The object a handle names, or `None` if it was removed or the handle belongs to
    /// another pool. O(1).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let a = level.new_dense_pool::<u32>(4);
    ///     let b = level.new_dense_pool::<u32>(4);
    ///     let h = a.insert(1).unwrap();
    ///     assert_eq!(a.get(h), Some(&1));
    ///     assert_eq!(b.get(h), None); // a handle from another pool
    /// });
    /// ```
    #[inline]
    pub fn get(&self, handle: DenseHandle<T>) -> Option<&T> {
        let position = self.find(handle)?;
        // SAFETY: `find` only returns live positions; `&self` keeps their objects from
        // being moved, removed or written while the reference lives.
        Some(unsafe { &*self.value_ptr(position) })
    }

    /// The object a handle names, mutably, or `None` (see [`get`](Self::get)). O(1).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(4);
    ///     let h = pool.insert(1).unwrap();
    ///     *pool.get_mut(h).unwrap() += 1;
    ///     assert_eq!(pool[h], 2);
    /// });
    /// ```
    #[inline]
    pub fn get_mut(&mut self, handle: DenseHandle<T>) -> Option<&mut T> {
        let position = self.find(handle)?;
        // SAFETY: as in `get`, and `&mut self` makes the reference unique.
        Some(unsafe { &mut *self.value_ptr(position) })
    }

    /// Whether a handle names a live object of this pool.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(4);
    ///     let h = pool.insert(1).unwrap();
    ///     assert!(pool.contains(h));
    ///     pool.remove(h);
    ///     assert!(!pool.contains(h));
    /// });
    /// ```
    #[inline]
    pub fn contains(&self, handle: DenseHandle<T>) -> bool {
        self.find(handle).is_some()
    }

    /// Number of live objects.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u8>(4);
    ///     pool.insert(1).unwrap();
    ///     assert_eq!(pool.len(), 1);
    /// });
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no object is live.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| assert!(level.new_dense_pool::<u8>(4).is_empty()));
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of slots.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| assert_eq!(level.new_dense_pool::<u8>(4).capacity(), 4));
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity as usize
    }

    /// Whether every slot is live (the next [`insert`](Self::insert) fails).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u8>(1);
    ///     pool.insert(1).unwrap();
    ///     assert!(pool.is_full());
    /// });
    /// ```
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.capacity
    }

    /// Every live object with its handle: exactly `len()` of them, with no per-slot
    /// test. The order is the roster's: insertion order until the first removal, which
    /// moves the last live object's entry into the removed one's place (see
    /// [Iteration](crate::dense#iteration)). [`values`](Self::values) visits the same
    /// objects in the same order without the handles; the iterator also runs backwards.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<&str>(8);
    ///     let frog = pool.insert("frog").unwrap();
    ///     let toad = pool.insert("toad").unwrap();
    ///     let newt = pool.insert("newt").unwrap();
    ///     assert_eq!(pool.iter().collect::<Vec<_>>(), [(frog, &"frog"), (toad, &"toad"), (newt, &"newt")]);
    ///     pool.remove(frog); // the last entry (newt) takes frog's place
    ///     assert_eq!(pool.iter().collect::<Vec<_>>(), [(newt, &"newt"), (toad, &"toad")]);
    ///     // The handles work with `get` and `remove`.
    ///     let (h, _) = pool.iter().find(|(_, name)| **name == "toad").unwrap();
    ///     assert_eq!(pool.remove(h), Some("toad"));
    /// });
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            values: self.live_values().iter(),
            handles: self.handles(),
        }
    }

    /// Every live object with its handle, mutably, in the order of
    /// [`iter`](Self::iter).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     let one = pool.insert(1).unwrap();
    ///     let two = pool.insert(2).unwrap();
    ///     for (h, n) in pool.iter_mut() {
    ///         *n *= if h == two { 100 } else { 10 };
    ///     }
    ///     assert_eq!((pool[one], pool[two]), (10, 200));
    /// });
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        // SAFETY: the pool is borrowed mutably for the iterator's lifetime; the roster
        // is an array apart from the values, which are reached only through the
        // `&mut [T]` below.
        let handles = unsafe { self.handles_unbound() };
        IterMut {
            values: self.live_values_mut().iter_mut(),
            handles,
        }
    }

    /// Every live object, in the order of [`iter`](Self::iter): the pool's fastest walk,
    /// a walk over one packed slice of objects, with no per-slot test and no
    /// indirection.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     let handles: Vec<_> = (1..=4).map(|i| pool.insert(i).unwrap()).collect();
    ///     pool.remove(handles[1]);
    ///     assert_eq!(pool.values().sum::<u32>(), 1 + 3 + 4);
    ///     assert_eq!(pool.values().copied().collect::<Vec<_>>(), [1, 4, 3]); // 4 took 2's place
    /// });
    /// ```
    #[inline]
    pub fn values(&self) -> Values<'_, T> {
        Values {
            values: self.live_values().iter(),
        }
    }

    /// Every live object, mutably, in the order of [`iter`](Self::iter).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     pool.insert(1).unwrap();
    ///     pool.insert(2).unwrap();
    ///     pool.values_mut().for_each(|n| *n *= 10);
    ///     assert_eq!(pool.values().sum::<u32>(), 30);
    /// });
    /// ```
    #[inline]
    pub fn values_mut(&mut self) -> ValuesMut<'_, T> {
        ValuesMut {
            values: self.live_values_mut().iter_mut(),
        }
    }

    /// The live objects as one slice, in the order of [`iter`](Self::iter): exactly
    /// [`len`](Self::len) objects side by side, with no gaps, what
    /// [`values`](Self::values) walks. Split it however a job system likes
    /// (`chunks`, `split_at`, rayon's `par_chunks`).
    ///
    /// Position `k` holds the object whose handle is the `k`-th of
    /// [`handles`](Self::handles). Positions are not stable: a removal moves the last
    /// object into the removed one's place (see the [module docs](crate::dense)), so
    /// keep handles, not positions, across `&mut` calls.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     let hs: Vec<_> = (1..=4).map(|i| pool.insert(i).unwrap()).collect();
    ///     pool.remove(hs[0]);
    ///     assert_eq!(pool.as_slice(), &[4, 2, 3]); // 4 took 1's place
    ///     let (front, back) = pool.as_slice().split_at(1);
    ///     assert_eq!((front.len(), back.len()), (1, 2));
    ///     // Position `k` is the object of the `k`-th handle.
    ///     let third = pool.handles().nth(2).unwrap();
    ///     assert_eq!(pool[third], pool.as_slice()[2]);
    /// });
    /// ```
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        self.live_values()
    }

    /// The live objects as one mutable slice, in the order of [`iter`](Self::iter): what
    /// [`values_mut`](Self::values_mut) walks, as a slice to split among threads
    /// (`chunks_mut`, `split_at_mut`, rayon's `par_chunks_mut`). Objects can be changed in
    /// place, or swapped within the slice (each handle then names whatever object is in
    /// its slot's position, so swapping changes which handle finds which object; the
    /// pool's bookkeeping stays sound, since it never reads the objects).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     let a = pool.insert(1).unwrap();
    ///     let b = pool.insert(2).unwrap();
    ///     let pos = pool.as_mut_slice();
    ///     std::thread::scope(|s| {
    ///         let (left, right) = pos.split_at_mut(1);
    ///         s.spawn(|| left.iter_mut().for_each(|p| *p *= 10));
    ///         s.spawn(|| right.iter_mut().for_each(|p| *p *= 100));
    ///     });
    ///     assert_eq!((pool[a], pool[b]), (10, 200));
    /// });
    /// ```
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.live_values_mut()
    }

    /// The handles of the live objects, in the order of [`iter`](Self::iter).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     let h = pool.insert(5).unwrap();
    ///     assert_eq!(pool.handles().collect::<Vec<_>>(), [h]);
    ///     // Handles can be collected first and used to remove afterwards.
    ///     let all: Vec<_> = pool.handles().collect();
    ///     for h in all {
    ///         pool.remove(h);
    ///     }
    ///     assert!(pool.is_empty());
    /// });
    /// ```
    #[inline]
    pub fn handles(&self) -> Handles<'_, T> {
        // SAFETY: `&self` is borrowed for the result's lifetime.
        unsafe { self.handles_unbound() }
    }

    /// The handles walk, with a lifetime the caller picks.
    ///
    /// # Safety
    /// The pool is borrowed (shared or mutably) for `'a`, so the live roster does not
    /// change.
    #[inline(always)]
    unsafe fn handles_unbound<'a>(&self) -> Handles<'a, T> {
        // SAFETY: the roster has `capacity >= len` initialised entries; nothing writes
        // them for `'a` (caller). A report on another thread may read their generation
        // words meanwhile, through atomics, which a shared slice allows.
        let roster = unsafe { core::slice::from_raw_parts(self.roster.as_ptr(), self.len()) };
        Handles {
            roster: roster.iter(),
            tag_bits: self.tag_bits,
            _type: PhantomData,
        }
    }

    /// The live objects, packed, mutably.
    #[inline(always)]
    fn live_values_mut(&mut self) -> &mut [T] {
        // SAFETY: `values[..len]` are initialised (module invariant), and `&mut self`
        // makes the slice unique: the pool reaches the values only through `self`.
        unsafe { core::slice::from_raw_parts_mut(self.values.as_ptr(), self.len as usize) }
    }

    /// The bytes of the free cell a free slot owns, or `None` when the slot is live or
    /// out of range. A free slot owns the free cell at its roster position: the cells
    /// past `len` are exactly the free ones, one per free slot, and after a removal
    /// the removed object's slot owns the cell the move vacated. With the `debug-fill`
    /// feature every free cell is painted with
    /// [`debug_fill::FREED_SLOT`](crate::block::debug_fill::FREED_SLOT) (`0x1deadb0b`), so
    /// this shows the pattern; it is a debugging aid for tests and tools.
    ///
    /// ```
    /// # use scope_stack::{debug_fill::FREED_SLOT, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u64>(4);
    ///     let h = pool.insert(42).unwrap();
    ///     assert!(pool.freed_slot_bytes(h.index()).is_none()); // live
    ///     pool.remove(h);
    ///     let word = FREED_SLOT.to_ne_bytes();
    ///     assert_eq!(pool.freed_slot_bytes(h.index()).unwrap(), [word, word].concat());
    /// });
    /// ```
    #[cfg(feature = "debug-fill")]
    #[cfg_attr(docsrs, doc(cfg(feature = "debug-fill")))]
    pub fn freed_slot_bytes(&self, index: usize) -> Option<&[u8]> {
        if index >= self.capacity() {
            return None;
        }
        // SAFETY: `index < capacity`, so its position is below `capacity` too.
        let (position, entry) = unsafe {
            let position = *self.slot(index) as usize;
            (position, self.entry(position).load(Ordering::Relaxed))
        };
        if super::entry::is_live(entry) {
            return None;
        }
        // SAFETY: the slot is free, so its position is at least `len` (module
        // invariant) and below `capacity`: the cell is free, and (`debug-fill` feature)
        // all its bytes were painted; nothing writes them while `&self` lives.
        Some(unsafe {
            core::slice::from_raw_parts(self.value_ptr(position).cast::<u8>(), size_of::<T>())
        })
    }
}
