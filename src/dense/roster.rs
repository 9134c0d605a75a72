//! Changing a dense pool: insert, insert with eviction, remove, retain and clear, each
//! O(1) per object by swap-delete on the roster and the value array together.
//!
//! This module owns the roster's and the values' updates. Invariant: the first `len`
//! roster entries are exactly the live slots, each once, and the first `len` cells hold
//! their objects in the same order; a remove moves the last live entry and the last
//! live object into the hole, so both live parts stay dense.
use core::mem::{self};
use core::sync::atomic::Ordering;

use super::entry::ONE_GENERATION;
use super::handle::DenseHandle;
use super::DensePool;

impl<'s, T> DensePool<'s, T> {
    /// Puts `value` in a free slot and returns its handle, or gives the value back when
    /// every slot is taken (the *fail* strategy; see
    /// [`insert_evicting`](Self::insert_evicting) for *evict*). O(1).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<&str>(1);
    ///     let boss = pool.insert("boss").unwrap();
    ///     assert_eq!(pool.insert("minion"), Err("minion")); // full: the value comes back
    ///     assert_eq!(pool[boss], "boss");
    /// });
    /// ```
    #[inline]
    pub fn insert(&mut self, value: T) -> Result<DenseHandle<T>, T> {
        // `len <= high_water <= capacity`, so one compare catches both rare cases, a
        // full pool and a new high-water mark; steady churn never gets past it.
        if self.len == self.high_water {
            if self.len == self.capacity {
                return Err(value);
            }
            // SAFETY: `len < capacity`.
            let handle = unsafe { self.push(value) };
            self.raise_high_water();
            return Ok(handle);
        }
        // SAFETY: `len < high_water <= capacity`.
        Ok(unsafe { self.push(value) })
    }

    /// `insert` has just taken `len` past the high-water mark: records it, in the pool
    /// and (after the object is live, so that a report never sees the mark ahead of the
    /// objects) for reports. Runs at most `capacity` times in the pool's life.
    #[cold]
    #[inline(never)]
    fn raise_high_water(&mut self) {
        self.high_water = self.len;
        // SAFETY: the word is initialised and lives as long as the pool; it is only
        // ever accessed as an atomic.
        unsafe { self.high_water_word().as_ref() }.store(self.len, Ordering::Relaxed);
    }

    /// Makes the first free slot live with `value`, and returns its handle.
    ///
    /// # Safety
    /// `len < capacity`.
    #[inline(always)]
    unsafe fn push(&mut self, value: T) -> DenseHandle<T> {
        let position = self.len as usize;
        // SAFETY: `position = len < capacity` (caller), so `roster[len]` names the first
        // free slot (module invariant: its position is `len`) and cell `len` is free.
        // Writing the value there, making the slot's generation odd and growing `len`
        // by one makes it live and keeps every invariant.
        unsafe {
            self.value_ptr(position).write(value);
            let entry = self.entry(position);
            let live = entry.load(Ordering::Relaxed).wrapping_add(ONE_GENERATION);
            entry.store(live, Ordering::Relaxed);
            self.len += 1;
            #[cfg(feature = "tracy")]
            self.profiler.alloc(self.value_ptr(position).addr());
            DenseHandle::from_entry(live, self.tag_bits)
        }
    }

    /// Puts `value` in the pool; when it is full, first drops the live object whose
    /// `key` is smallest (the first one found, on ties) and reuses its slot (the *evict*
    /// strategy: replace the quietest sound). Returns the new object's handle. Finding
    /// the victim is O(len): one `key` call per live object, only when the pool is full.
    ///
    /// If `key` panics, the pool is unchanged and `value` is dropped. If the evicted
    /// object's destructor panics, the new object is already in the pool (it stays there
    /// and can be found by iteration) and the panic goes on.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// struct Sound { name: &'static str, volume: f32 }
    ///
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("audio", |audio| {
    ///     let playing = audio.new_dense_pool::<Sound>(2);
    ///     let by_volume = |s: &Sound| (s.volume * 1000.0) as i32;
    ///     playing.insert_evicting(Sound { name: "wind", volume: 0.1 }, by_volume);
    ///     playing.insert_evicting(Sound { name: "music", volume: 0.8 }, by_volume);
    ///     let swish = playing.insert_evicting(Sound { name: "swish", volume: 1.0 }, by_volume);
    ///     assert_eq!(playing[swish].name, "swish");
    ///     let mut names: Vec<_> = playing.values().map(|s| s.name).collect();
    ///     names.sort();
    ///     assert_eq!(names, ["music", "swish"]); // the quiet wind made room
    /// });
    /// ```
    pub fn insert_evicting<K: Ord>(
        &mut self,
        value: T,
        mut key: impl FnMut(&T) -> K,
    ) -> DenseHandle<T> {
        let value = match self.insert(value) {
            Ok(handle) => return handle,
            Err(value) => value,
        };
        // Full, and the capacity is at least one: there is a victim.
        let mut best: Option<(K, usize)> = None;
        for (position, object) in self.live_values().iter().enumerate() {
            let k = key(object);
            if best.as_ref().is_none_or(|(b, _)| k < *b) {
                best = Some((k, position));
            }
        }
        let victim = match best {
            Some((_, position)) => position,
            None => unreachable!("a full pool has a live object"),
        };
        // SAFETY: `victim < len`, and its entry is read right here; `swap_remove` gives
        // us its object, no longer reachable from the pool, and frees its slot for the
        // insert below.
        let old = unsafe {
            let entry = self.entry(victim).load(Ordering::Relaxed);
            self.swap_remove(victim, entry)
        };
        let handle = match self.insert(value) {
            Ok(handle) => handle,
            Err(_) => unreachable!("a slot was just freed"),
        };
        drop(old);
        handle
    }

    /// Removes the object a handle names and gives it back, or `None` if the handle is
    /// stale or foreign. O(1): the last live object (and its roster entry) moves into
    /// the removed one's place; its handle still finds it.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<String>(4);
    ///     let h = pool.insert("frog".into()).unwrap();
    ///     assert_eq!(pool.remove(h).as_deref(), Some("frog"));
    ///     assert_eq!(pool.remove(h), None); // already gone
    /// });
    /// ```
    #[inline]
    pub fn remove(&mut self, handle: DenseHandle<T>) -> Option<T> {
        let position = self.find(handle)?;
        // SAFETY: `find` only returns live positions, whose entry is the handle's
        // without the tag.
        Some(unsafe { self.swap_remove(position, handle.entry_for(self.tag_bits)) })
    }

    /// Keeps only the objects for which `keep` returns `true`; the others are dropped.
    /// Every live object is visited once, in unspecified order.
    ///
    /// If `keep` or a destructor panics, the objects not yet visited stay in the pool,
    /// and the pool stays consistent.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<u32>(8);
    ///     for i in 0..8 {
    ///         pool.insert(i).unwrap();
    ///     }
    ///     pool.retain(|_, n| *n % 2 == 0);
    ///     assert_eq!(pool.len(), 4);
    ///     assert!(pool.values().all(|n| n % 2 == 0));
    /// });
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(DenseHandle<T>, &mut T) -> bool) {
        // Walk the live part backwards: a removal moves the last live object, which was
        // already visited, into the current position.
        let mut position = self.len as usize;
        while position > 0 {
            position -= 1;
            // SAFETY: `position < len`, so the entry names a live slot and the cell
            // holds its object. The `&mut T` is unique (`&mut self`) and ends before
            // the pool is touched. `swap_remove` updates the bookkeeping before the
            // object it returns is dropped.
            unsafe {
                let entry = self.entry(position).load(Ordering::Relaxed);
                let handle = DenseHandle::from_entry(entry, self.tag_bits);
                if !keep(handle, &mut *self.value_ptr(position)) {
                    drop(self.swap_remove(position, entry));
                }
            }
        }
    }

    /// Drops every live object; all handles go stale. O(len).
    ///
    /// If a destructor panics, the remaining objects are still dropped and the pool is
    /// empty afterwards; the panic goes on (a second panic aborts, as everywhere in
    /// Rust).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let pool = level.new_dense_pool::<String>(4);
    ///     let h = pool.insert("frog".into()).unwrap();
    ///     pool.clear();
    ///     assert!(pool.is_empty());
    ///     assert_eq!(pool.get(h), None);
    /// });
    /// ```
    pub fn clear(&mut self) {
        /// Finishes the clear if a destructor panics.
        struct Finish<'p, 's, T>(&'p mut DensePool<'s, T>);
        impl<T> Drop for Finish<'_, '_, T> {
            fn drop(&mut self) {
                self.0.clear();
            }
        }
        let guard = Finish(self);
        let pool = &mut *guard.0;
        while pool.len > 0 {
            // SAFETY: `len > 0`. The last object is dropped in place: nothing moves.
            unsafe { pool.drop_last() };
        }
        mem::forget(guard);
    }
}
