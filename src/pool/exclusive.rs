//! Exclusive inserts and frees: `insert_mut`, `insert_with_mut`, and the slot release
//! behind `remove` and `retain`, for a caller that holds `&mut Pool`.
//!
//! This module owns the pool's unsynchronized paths (the seed pool's single-threaded
//! `Allocate`/`Free` next to its lock-free ones). Invariant: they run only under
//! `&mut Core`, they leave the slots, stamps and free lists exactly as the shared paths
//! would have (a filled slot's generation advances, a freed slot is `FREE` and on its
//! own shard's stack, never-used slots go out in order and only when no freed slot is
//! left), and they use no atomic read-modify-write: the free lists change with plain
//! loads and stores (see `free_list/exclusive.rs` for why nothing else can be running),
//! and stamps with relaxed stores.
//!
//! Stamps stay atomic stores even here, for one reader that `&mut Pool` does not
//! exclude: a memory-map report reads a pool's stamps from the scope's record, on any
//! thread, without touching the pool object (see `report.rs`). A relaxed store is a
//! plain move on x86-64 and aarch64, so this costs nothing.
//!
//! Nothing here wakes waiters: a thread asleep in `insert_wait` holds `&Pool`, so none
//! can exist while `&mut Pool` does, and the next waiter announces itself afresh.

use core::mem::{self, MaybeUninit};
use core::ptr;

use crate::sync::Ordering;

use super::handle::Handle;
use super::slots::{Core, GENERATION_STEP, POOLED, STATE_MASK};
use super::Pool;

impl<T> Core<T> {
    /// Takes a free slot and marks it pooled with a new generation: the slot and its
    /// new stamp. `None` when every slot is taken.
    #[inline(always)]
    fn claim_mut(&mut self) -> Option<(u32, u32)> {
        let index = self.free.take_mut()?;
        let stamp = self.stamp(index);
        // Relaxed: `&mut self` orders everything before us (see the module docs); the
        // store is atomic only for concurrent report readers.
        let pooled =
            (stamp.load(Ordering::Relaxed) & !STATE_MASK).wrapping_add(GENERATION_STEP) | POOLED;
        stamp.store(pooled, Ordering::Relaxed);
        #[cfg(feature = "tracy")]
        self.profiler.alloc(self.value_ptr(index).addr());
        Some((index, pooled))
    }

    /// See [`Pool::insert_mut`].
    #[inline]
    pub(super) fn insert_mut(&mut self, value: T) -> Result<Handle<T>, T> {
        let Some((index, stamp)) = self.claim_mut() else {
            return Err(value);
        };
        // SAFETY: the slot is ours (just taken from the free lists) and holds no object.
        self.slot(index)
            .with_mut(|p| unsafe { p.write(MaybeUninit::new(value)) });
        Ok(Handle::new(index, self.tag, stamp))
    }

    /// See [`Pool::insert_with_mut`].
    #[inline]
    pub(super) fn insert_with_mut<F: FnOnce() -> T>(&mut self, f: F) -> Result<Handle<T>, F> {
        /// Frees the claimed slot if `f` panics (it holds no object then).
        struct Unclaim<'a, T>(&'a mut Core<T>, u32, u32);
        impl<T> Drop for Unclaim<'_, T> {
            #[cold]
            fn drop(&mut self) {
                // SAFETY: the slot was claimed by `insert_with_mut`, with this stamp, and
                // no object was written to it.
                unsafe { self.0.release_mut(self.1, self.2) }
            }
        }

        let Some((index, stamp)) = self.claim_mut() else {
            return Err(f);
        };
        // The stamp says pooled before the object exists, but nothing can look the slot
        // up meanwhile: `f` cannot reach the pool, which we borrow mutably.
        let unclaim = Unclaim(self, index, stamp);
        // SAFETY: the slot is ours and holds no object; `MaybeUninit<T>` has `T`'s
        // layout, so the pointer is valid and aligned for a `T`.
        unclaim
            .0
            .slot(index)
            .with_mut(|p| unsafe { p.cast::<T>().write(f()) });
        let tag = unclaim.0.tag;
        mem::forget(unclaim);
        Ok(Handle::new(index, tag, stamp))
    }

    /// See [`Pool::remove`]: the exclusive free of the object a handle names.
    #[inline]
    pub(super) fn remove_mut(&mut self, handle: Handle<T>) -> Option<T> {
        let index = self.find(handle)?;
        // SAFETY: `find` checked that the slot holds a pooled object whose stamp is the
        // handle's; `&mut self` owns every pooled object, and nothing borrows it.
        Some(unsafe { self.take_mut(index, handle.stamp()) })
    }

    /// Marks slot `index` free (keeping its generation) and puts it back on its shard's
    /// stack, without a read-modify-write; paints it with `debug-fill`.
    ///
    /// `stamp` is the slot's stamp now, which the caller knows (from a checked handle,
    /// or because it wrote it): the free stamp is made from it rather than from a load,
    /// so that an insert and a remove of the same slot in a loop do not wait on each
    /// other's stamp stores.
    ///
    /// # Safety
    /// The slot was handed out by the free lists and is not on them; its object has been
    /// dropped or moved out (or was never written), and no box owns it. Its stamp is
    /// `stamp`.
    #[inline]
    pub(super) unsafe fn release_mut(&mut self, index: u32, stamp: u32) {
        #[cfg(feature = "debug-fill")]
        self.slot(index).with_mut(|p| {
            if let Some(p) = core::ptr::NonNull::new(p.cast::<u8>()) {
                crate::block::debug_fill::freed_slot(p, core::mem::size_of::<T>());
            }
        });
        debug_assert_eq!(self.stamp(index).load(Ordering::Relaxed), stamp);
        #[cfg(feature = "tracy")]
        self.profiler.free(self.value_ptr(index).addr());
        // Relaxed: as in `claim_mut`.
        self.stamp(index)
            .store(stamp & !STATE_MASK, Ordering::Relaxed);
        // SAFETY: per the caller the slot was handed out and is not on the lists.
        unsafe { self.free.push_mut(index, &self.quiet.stock) };
    }

    /// Moves the object out of slot `index` and releases the slot (exclusively).
    ///
    /// # Safety
    /// The slot holds a live pooled object, which the caller owns through `&mut self`
    /// and a checked handle; no reference to it is alive. Its stamp is `stamp`.
    #[inline]
    pub(super) unsafe fn take_mut(&mut self, index: u32, stamp: u32) -> T {
        // SAFETY: per the caller; the slot is released right after, so the object is
        // never read again.
        let value = self
            .slot(index)
            .with_mut(|p| unsafe { p.cast::<T>().read() });
        // SAFETY: the object is moved out; the slot is pooled, so no box owns it, and
        // a pooled slot is not on the free lists.
        unsafe { self.release_mut(index, stamp) };
        value
    }

    /// Drops the object in slot `index` and releases the slot (exclusively), even if
    /// the drop panics.
    ///
    /// # Safety
    /// As [`take_mut`](Self::take_mut).
    pub(super) unsafe fn drop_and_release_mut(&mut self, index: u32, stamp: u32) {
        struct Release<'a, T>(&'a mut Core<T>, u32, u32);
        impl<T> Drop for Release<'_, T> {
            fn drop(&mut self) {
                // SAFETY: forwarded from `drop_and_release_mut`; the object is gone.
                unsafe { self.0.release_mut(self.1, self.2) }
            }
        }
        let guard = Release(self, index, stamp);
        // SAFETY: the caller owns the live object; it is dropped exactly once here, and
        // the guard releases the slot afterwards, panic or not.
        guard
            .0
            .slot(index)
            .with_mut(|p| unsafe { ptr::drop_in_place(p.cast::<T>()) });
        drop(guard);
    }
}

impl<'s, T> Pool<'s, T> {
    /// Puts `value` in a free slot, hands it to the pool, and returns its [`Handle`];
    /// gives the value back when every slot is taken. For a caller that holds
    /// `&mut Pool`: it takes the slot with plain loads and stores, no atomic
    /// read-modify-write, and fails only when every slot holds an object.
    ///
    /// The object is pooled at once, as after [`PoolBox::into_handle`](crate::PoolBox::into_handle): read it with
    /// [`get`](Self::get), change it with [`get_mut`](Self::get_mut), take it out with
    /// [`remove`](Self::remove) (which frees the slot without a read-modify-write too).
    /// Which insert to use when is in the [module docs](crate::pool#shared-or-exclusive).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let doors = level.new_pool::<&str>(2); // `&mut Pool`: this scope's own pool
    ///     let front = doors.insert_mut("front").unwrap();
    ///     let back = doors.insert_mut("back").unwrap();
    ///     assert_eq!(doors.insert_mut("side"), Err("side")); // full
    ///     assert_eq!(doors.get(front), Some(&"front"));
    ///     assert_eq!(doors.remove(back), Some("back"));
    ///     assert_eq!(doors.len(), 1);
    /// });
    /// ```
    #[inline]
    pub fn insert_mut(&mut self, value: T) -> Result<Handle<T>, T> {
        self.core.insert_mut(value)
    }

    /// Like [`insert_mut`](Self::insert_mut), but takes a slot first and then builds the
    /// object in it from `f`, as [`insert_with`](Self::insert_with) does on the shared
    /// path. When the pool is full, `f` comes back **un-called**. If `f` panics, the slot
    /// goes back to the pool and the panic goes on.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let tiles = level.new_pool::<[u16; 1024]>(1);
    ///     let map = tiles.insert_with_mut(|| [3; 1024]).unwrap_or_else(|_| unreachable!());
    ///     let build = tiles.insert_with_mut(|| [4; 1024]).err().expect("full");
    ///     tiles.remove(map);
    ///     let map = tiles.insert_with_mut(build).ok().unwrap(); // the same closure
    ///     assert_eq!(tiles.get(map).unwrap()[9], 4);
    /// });
    /// ```
    #[inline]
    pub fn insert_with_mut<F: FnOnce() -> T>(&mut self, f: F) -> Result<Handle<T>, F> {
        self.core.insert_with_mut(f)
    }
}
