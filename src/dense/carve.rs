//! Carving a dense pool out of a scope, and what it tells a memory map.
//!
//! This module owns construction and the report hook. Invariants: the values, the slots
//! and the roster are carved from the scope (no global heap), every slot starts free;
//! the report reads only the roster's entries (their generations) and the high-water
//! word it was registered with, never the pool object and never a value (values move inside their
//! array; the report does not look there).
use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::size_of;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::error::{AllocError, AllocErrorKind};
use crate::scope::info::{PoolLink, PoolSnapshot};
use crate::scope::place::{self, check_capacity, try_alloc_array_uninit, Core as Surface};
use crate::scope::ScopeStack;

use super::entry::{self, Entry};
use super::handle::{INDEX_BITS, MAX_CAPACITY};
use super::{DensePool, DENSE_POOL_IDS};

impl<'s> ScopeStack<'s> {
    /// Carves a [`DensePool`] of `capacity` slots out of this scope.
    ///
    /// The value, slot and roster arrays are allocated first, then the pool object
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
    // Values first: they have the largest alignment (as a rule), and the word arrays
    // after them then need no padding. The roster is `capacity` 8-byte entries and one
    // 4-byte word after them, the high-water mark that reports read: `2 * capacity + 1`
    // `u32`s, aligned for an `Entry`.
    let values = try_alloc_array_uninit::<C, T>(c, capacity)?;
    let roster_layout = Layout::from_size_align(
        (2 * capacity + 1) * size_of::<u32>(),
        core::mem::align_of::<Entry>(),
    )
    .map_err(|_| c.error(AllocErrorKind::CapacityOverflow, usize::MAX, 8))?;
    let roster = place::try_alloc_layout(c, roster_layout)?.cast::<Entry>();
    let slots = try_alloc_array_uninit::<C, u32>(c, capacity)?;

    let id = DENSE_POOL_IDS.fetch_add(1, Ordering::Relaxed);
    // Even (free) starting generations, different for every pool, so pools that
    // share a tag rarely accept each other's handles (see `DenseHandle`).
    let seed = id.wrapping_mul(0x9E37_79B9) & !1;
    for i in 0..capacity {
        // SAFETY: `i < capacity`; the roster has room for `capacity` entries and the
        // slots for `capacity` words, all fresh, aligned memory that lives until this
        // scope rewinds. Slot `i` starts at position `i`, free. The values stay
        // uninitialised (free).
        unsafe {
            roster
                .add(i)
                .write(Entry::new(entry::entry(i as u32, seed)));
            slots.add(i).write(i as u32);
        }
    }
    // SAFETY: the roster's last word, after the `capacity` entries, is the report's
    // high-water word, only ever accessed as an `AtomicU32` (4-byte aligned there).
    unsafe {
        roster
            .add(capacity)
            .cast::<AtomicU32>()
            .write(AtomicU32::new(0))
    };
    let pool = DensePool {
        values,
        slots,
        roster,
        len: 0,
        capacity: capacity as u32,
        tag_bits: (id & 0xFF) << INDEX_BITS,
        high_water: 0,
        _scope: PhantomData,
        _owns: PhantomData,
        #[cfg(feature = "tracy")]
        profiler: crate::profiler::Counted::new(
            |text| c.profiler_path(text),
            "DensePool",
            core::any::type_name::<T>(),
            size_of::<T>(),
        ),
    };
    #[cfg(feature = "debug-fill")]
    for i in 0..capacity {
        // SAFETY: `i < capacity`; every cell is free.
        unsafe { pool.poison(i) };
    }
    // SAFETY: `new_object_unchecked`'s drop contract: the destructor drops `'static`
    // `T`s and reads the pool's own arrays, carved in this scope before its record and
    // valid until the rewind, which follows all finalizers. `'s` is only a marker.
    let pool = match unsafe { place::try_new_object_unchecked(c, pool) } {
        Ok(p) => p,
        Err(e) => return Err(e.error),
    };
    // Register with the scope for reports. The link names only the roster and
    // the high-water word (scope memory the pool reaches through raw pointers), never
    // the pool object, which the caller holds `&mut` to, nor the values. When the link
    // finds no room the pool works all the same, it is only left out of reports.
    // The three arrays' bytes, counted by size: on a concurrent scope they may lie in
    // different chunks, so the distance between them means nothing. The pool is shown
    // where its first array, the values, starts.
    let start = values.as_ptr().addr();
    let bytes = capacity * size_of::<T>()
        + capacity * size_of::<Entry>()
        + (capacity + 1) * size_of::<u32>();
    let link = PoolLink {
        ptr: roster.cast(),
        words: [
            start,
            bytes,
            capacity,
            pool.high_water_word().as_ptr().addr(),
            0,
        ],
        kind: "DensePool",
        type_name: core::any::type_name::<T>(),
        snapshot: dense_snapshot,
        next: None,
    };
    // SAFETY: `dense_snapshot` reads the roster's generation words and the
    // high-water word (see its contract), both carved above in this scope and valid
    // until it ends.
    unsafe { c.register_pool(link) };
    Ok(pool)
}

/// Reads a registered dense pool's statistics for a memory map report: `len` by
/// counting the roster entries whose generation is odd (O(capacity); each slot's
/// generation is in exactly one entry), the high-water mark from the word after the
/// roster, which `insert` keeps.
///
/// Only the roster's generation words and the high-water word are read, with `Relaxed`
/// atomic loads and through the block's provenance (`link.ptr`). They never overlap a
/// value (values live in an array of their own, which this never reads: objects move
/// there, and `&T` and `&mut T` handed out by the pool point there), no `&Entry` or
/// `&mut Entry` is made here, and the pool writes entries only through raw pointers
/// (its iterators hold shared slices of them, which allow atomic reads); so the caller
/// may hold `&mut DensePool` or `&mut T` into the pool, even on another thread, while
/// this runs. A report taken while another thread uses the pool sees each word either
/// before or after a change; a remove never makes more words odd than there are live
/// objects (see [Reports](crate::dense#reports)).
///
/// # Safety
/// `link` was filled in by `try_new_dense_pool`, and its pool's scope is live.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
unsafe fn dense_snapshot(link: &PoolLink) -> PoolSnapshot {
    let [addr, bytes, capacity, high_water, _] = link.words;
    let roster = link.ptr.cast::<Entry>().as_ptr();
    let mut len = 0;
    for i in 0..capacity {
        // SAFETY: `i < capacity`, the roster's length; its generation words are
        // initialised from the start and stay valid while the scope lives (caller).
        // It is only ever accessed as an atomic (see above).
        let word = unsafe { (*roster.add(i)).load(Ordering::Relaxed) };
        len += entry::is_live(word) as usize;
    }
    // SAFETY: `high_water` is the address of the `AtomicU32` after the roster's
    // entries, in the same allocation, so `link.ptr`'s provenance reaches it; it was
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
        heap: None,
    }
}
