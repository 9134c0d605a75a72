//! Carving a dense pool out of a scope, and what it tells a memory map.
//!
//! This module owns construction and the report hook. Invariants: the slots and the
//! roster are carved from the scope (no global heap), every slot starts free; the
//! report reads only the slots' generation words and the high-water word it was
//! registered with, never the pool object.
use core::marker::PhantomData;
use core::mem::size_of;
use core::ptr::{self};
use core::sync::atomic::{AtomicU32, Ordering};

use crate::error::AllocError;
use crate::scope::info::{PoolLink, PoolSnapshot};
use crate::scope::place::{self, check_capacity, try_alloc_array_uninit, Core as Surface};
use crate::scope::ScopeStack;

use super::handle::MAX_CAPACITY;
use super::slot::Slot;
use super::{DensePool, DENSE_POOL_IDS};

impl<'s> ScopeStack<'s> {
    /// Carves a [`DensePool`] of `capacity` slots out of this scope.
    ///
    /// The slots, roster and bookkeeping arrays are allocated first, then the pool object
    /// with a finalizer: when the scope unwinds, the live objects are dropped, then the
    /// memory rewinds.
    ///
    /// # Panics
    /// Where [`try_new_dense_pool`](Self::try_new_dense_pool) returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let bullets = level.new_dense_pool::<[f32; 4]>(500);
    ///     assert_eq!(bullets.capacity(), 500);
    ///     assert!(bullets.is_empty());
    /// });
    /// ```
    #[track_caller]
    pub fn new_dense_pool<T: 'static>(&self, capacity: usize) -> &'s mut DensePool<'s, T> {
        match self.try_new_dense_pool(capacity) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Carves a [`DensePool`] out of this scope, or says why it cannot.
    ///
    /// # Errors
    /// - [`AllocErrorKind::InvalidCapacity`](crate::AllocErrorKind::InvalidCapacity) for a capacity of 0;
    /// - [`AllocErrorKind::TooManySlots`](crate::AllocErrorKind::TooManySlots) above 2^24 slots (the handle's index width);
    /// - [`AllocErrorKind::CapacityOverflow`](crate::AllocErrorKind::CapacityOverflow) when the arrays' size overflows;
    /// - [`AllocErrorKind::OutOfMemory`](crate::AllocErrorKind::OutOfMemory) when the scope has no room. Arrays already
    ///   carved stay taken until the scope unwinds.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_dense_pool::<u64>(0).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     let e = level.try_new_dense_pool::<u8>((1 << 24) + 1).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::TooManySlots);
    ///     let e = level.try_new_dense_pool::<u64>(1 << 20).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
    ///     assert!(level.try_new_dense_pool::<u64>(64).is_ok());
    /// });
    /// ```
    pub fn try_new_dense_pool<T: 'static>(
        &self,
        capacity: usize,
    ) -> Result<&'s mut DensePool<'s, T>, AllocError> {
        // SAFETY: `T: 'static` on a plain scope (its finalizer runs on this thread).
        unsafe { try_new_dense_pool_in(self, capacity) }
    }

    /// Carves a [`DensePool`] for items that need no drop, with no `'static` bound
    /// (they may borrow this scope), as [`new_pool_pod`](Self::new_pool_pod) does for
    /// [`Pool`](crate::Pool).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let tags = level.new_dense_pool_pod::<&str>(8);
    ///     let h = tags.insert(level.alloc_str("boss")).unwrap();
    ///     assert_eq!(tags[h], "boss");
    /// });
    /// ```
    ///
    /// ```compile_fail,E0080
    /// # use scope_stack::LinearAllocator;
    /// # let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// # memory.scope("level", |level| {
    /// level.new_dense_pool_pod::<Vec<u8>>(4); // error: this type needs drop
    /// # });
    /// ```
    #[track_caller]
    pub fn new_dense_pool_pod<T>(&self, capacity: usize) -> &'s mut DensePool<'s, T> {
        crate::scope::place::or_fail(self, self.try_new_dense_pool_pod(capacity))
    }

    /// The `try_` form of [`new_dense_pool_pod`](Self::new_dense_pool_pod).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_dense_pool_pod::<&str>(0).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    /// });
    /// ```
    pub fn try_new_dense_pool_pod<T>(
        &self,
        capacity: usize,
    ) -> Result<&'s mut DensePool<'s, T>, AllocError> {
        try_new_dense_pool_pod_in(self, capacity)
    }
}

/// The one body of `try_new_dense_pool_pod`, for every surface: a dense pool of items
/// that need no drop, with no `'static` bound.
pub(crate) fn try_new_dense_pool_pod_in<'s, C: Surface<'s>, T>(
    c: C,
    capacity: usize,
) -> Result<&'s mut DensePool<'s, T>, AllocError> {
    const {
        assert!(
            !core::mem::needs_drop::<T>(),
            "new_dense_pool_pod: this type needs drop; use new_dense_pool"
        )
    };
    // SAFETY: `T` needs no drop, so the pool's finalizer drops no item and reads no
    // borrow an item holds; on a concurrent scope no item is dropped on another thread.
    unsafe { try_new_dense_pool_in(c, capacity) }
}

/// The one body of `try_new_dense_pool`, for every surface.
///
/// # Safety
/// As `place::try_new_object` for `DensePool<'s, T>` (whose finalizer drops the `T`s
/// still in it): `T: 'static`, and `Send` where the surface is concurrent.
pub(crate) unsafe fn try_new_dense_pool_in<'s, C: Surface<'s>, T>(
    c: C,
    capacity: usize,
) -> Result<&'s mut DensePool<'s, T>, AllocError> {
    check_capacity::<C, T>(
        c,
        capacity,
        MAX_CAPACITY,
        size_of::<T>() + 12,
        crate::error::Subject::dense_pool::<T>(capacity),
    )?;
    let slots = try_alloc_array_uninit::<C, Slot<T>>(c, capacity)?;
    // One more word after the roster: the high-water mark that reports read.
    let roster = try_alloc_array_uninit::<C, u32>(c, capacity + 1)?;

    let id = DENSE_POOL_IDS.fetch_add(1, Ordering::Relaxed);
    // Even (free) starting generations, different for every pool, so pools that
    // share a tag rarely accept each other's handles (see `DenseHandle`).
    let seed = id.wrapping_mul(0x9E37_79B9) & !1;
    for i in 0..capacity {
        // SAFETY: `i < capacity`, and both arrays have `capacity` elements of fresh,
        // aligned memory that lives until this scope rewinds. Only the bookkeeping
        // fields are written; the values stay uninitialised (free).
        unsafe {
            roster.add(i).write(i as u32);
            let slot = slots.add(i).as_ptr();
            ptr::addr_of_mut!((*slot).generation).write(AtomicU32::new(seed));
            ptr::addr_of_mut!((*slot).position).write(i as u32);
        }
    }
    // SAFETY: the roster has `capacity + 1` elements; the last one is the report's
    // high-water word, only ever accessed as an `AtomicU32` (same size and alignment
    // as `u32`).
    unsafe {
        roster
            .add(capacity)
            .cast::<AtomicU32>()
            .write(AtomicU32::new(0))
    };
    let pool = DensePool {
        slots,
        roster,
        len: 0,
        capacity: capacity as u32,
        tag: id & 0xFF,
        high_water: 0,
        _scope: PhantomData,
        _owns: PhantomData,
    };
    #[cfg(feature = "debug-fill")]
    for i in 0..capacity {
        // SAFETY: `i < capacity`; every slot is free.
        unsafe { pool.poison(i) };
    }
    // SAFETY: `new_object_unchecked`'s drop contract: the destructor drops `'static`
    // `T`s and reads the pool's own arrays, carved in this scope before its record and
    // valid until the rewind, which follows all finalizers. `'s` is only a marker.
    let pool = match unsafe { place::try_new_object_unchecked(c, pool) } {
        Ok(p) => p,
        Err(e) => return Err(e.error),
    };
    // Register with the scope for reports. The link names only the slot array and
    // the high-water word (scope memory the pool reaches through raw pointers), never
    // the pool object, which the caller holds `&mut` to. When the link finds no room
    // the pool works all the same, it is only left out of reports.
    // The two arrays' bytes, counted by size: on a concurrent scope the roster may lie
    // in another chunk than the slots, so the distance between them means nothing.
    let start = slots.as_ptr().addr();
    let bytes = capacity * size_of::<Slot<T>>() + (capacity + 1) * size_of::<u32>();
    let link = PoolLink {
        ptr: slots.cast(),
        words: [
            start,
            bytes,
            capacity,
            pool.high_water_word().as_ptr().addr(),
            0,
        ],
        kind: "DensePool",
        type_name: core::any::type_name::<T>(),
        snapshot: dense_snapshot::<T>,
        next: None,
    };
    // SAFETY: `dense_snapshot::<T>` reads the slot array's generation words and the
    // high-water word (see its contract), both carved above in this scope and valid
    // until it ends.
    unsafe { c.register_pool(link) };
    Ok(pool)
}

/// Reads a registered dense pool's statistics for a memory map report: `len` by
/// counting the slots whose generation is odd (O(capacity)), the high-water mark from
/// the word after the roster, which `insert` keeps.
///
/// Only the slots' generation words and the high-water word are read, with `Relaxed`
/// atomic loads and through the block's provenance (`link.ptr`). They never overlap a
/// value (`&T` and `&mut T` handed out by the pool cover a slot's `value` field alone),
/// no `&Slot<T>` or `&mut Slot<T>` is ever made, and the pool only reaches them
/// through raw pointers; so the caller may hold `&mut DensePool` or `&mut T` into a
/// slot, even on another thread, while this runs. A report taken while another thread
/// uses the pool sees each word either before or after a change.
///
/// # Safety
/// `link` was filled in by `try_new_dense_pool::<T>`, and its pool's scope is live.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
unsafe fn dense_snapshot<T>(link: &PoolLink) -> PoolSnapshot {
    let [addr, bytes, capacity, high_water, _] = link.words;
    let slots = link.ptr.cast::<Slot<T>>().as_ptr();
    let mut len = 0;
    for i in 0..capacity {
        // SAFETY: `i < capacity`, the slot array's length; its generation words are
        // initialised from the start and stay valid while the scope lives (caller).
        // Only the field is borrowed, as an atomic (see above).
        let generation = unsafe { (*slots.add(i)).generation.load(Ordering::Relaxed) };
        len += (generation & 1) as usize;
    }
    // SAFETY: `high_water` is the address of the `AtomicU32` after the roster, carved
    // in the same block as the slots, so the block's provenance reaches it; it was
    // initialised before the link was registered.
    let high_water = unsafe { &*link.ptr.as_ptr().with_addr(high_water).cast::<AtomicU32>() };
    PoolSnapshot {
        len,
        capacity,
        // A racing insert may show in `len` before it shows here.
        high_water_len: (high_water.load(Ordering::Relaxed) as usize).max(len),
        high_water_exact: true,
        addr,
        bytes,
        owns: None,
    }
}
