//! Changing a dense pool: insert, insert with eviction, remove, retain and clear, each
//! O(1) per object by swap-delete on the roster.
//!
//! This module owns the roster's updates. Invariant: the first `len` roster entries are
//! exactly the live slots, each once; a remove moves the last live entry into the hole,
//! so the live part stays dense and objects themselves never move.
use core::mem::{self};
use core::sync::atomic::Ordering;

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
        if self.len == self.capacity {
            return Err(value);
        }
        // SAFETY: `len < capacity`, so `roster[len]` is the first free slot (module
        // invariant: its position is `len`). Writing the value, flipping the generation
        // to odd and growing `len` by one makes it live and keeps every invariant.
        unsafe {
            let index = *self.roster_ptr(self.len as usize) as usize;
            self.slot_ptr(index).write(value);
            let entry = self.entry(index);
            let generation = (*entry).generation.load(Ordering::Relaxed).wrapping_add(1);
            (*entry).generation.store(generation, Ordering::Relaxed);
            self.len += 1;
            if self.len > self.high_water {
                self.note_high_water();
            }
            Ok(DenseHandle::new(index as u32, self.tag, generation))
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
        for &index in self.live_roster() {
            // SAFETY: slots named by the live roster hold values.
            let k = key(unsafe { &*self.slot_ptr(index as usize) });
            if best.as_ref().is_none_or(|(b, _)| k < *b) {
                best = Some((k, index as usize));
            }
        }
        let victim = match best {
            Some((_, index)) => index,
            None => unreachable!("a full pool has a live object"),
        };
        // SAFETY: `victim` is live. After `unlink` its value belongs to us and is not
        // reachable from the pool; we move it out before reusing the slot.
        let old = unsafe {
            self.unlink(victim);
            self.slot_ptr(victim).read()
        };
        let handle = match self.insert(value) {
            Ok(handle) => handle,
            Err(_) => unreachable!("a slot was just freed"),
        };
        drop(old);
        handle
    }

    /// Removes the object a handle names and gives it back, or `None` if the handle is
    /// stale or foreign. O(1): the last live roster entry moves into the removed one's
    /// place; no object moves.
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
        let index = self.find(handle)?;
        // SAFETY: `index` is live; after `unlink` the value is ours to move out.
        unsafe {
            self.unlink(index);
            Some(self.take(index))
        }
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
        // Walk the live roster backwards: a removal moves the last live entry, which was
        // already visited, into the current position.
        let mut position = self.len as usize;
        while position > 0 {
            position -= 1;
            // SAFETY: `position < len`, so the roster entry names a live slot. The
            // `&mut T` is unique (`&mut self`) and ends before the pool is touched.
            unsafe {
                let index = *self.roster_ptr(position) as usize;
                let generation = (*self.entry(index)).generation.load(Ordering::Relaxed);
                let handle = DenseHandle::new(index as u32, self.tag, generation);
                if !keep(handle, &mut *self.slot_ptr(index)) {
                    self.unlink(index);
                    self.drop_unlinked(index);
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
            // SAFETY: `len - 1 < len`, so the last live roster entry names a live slot.
            // Unlinking the last entry swaps it with itself and shrinks `len`; then the
            // value is ours to drop.
            unsafe {
                let index = *pool.roster_ptr(pool.len as usize - 1) as usize;
                pool.unlink(index);
                pool.drop_unlinked(index);
            }
        }
        mem::forget(guard);
    }
}
