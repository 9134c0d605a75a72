//! Heaps carved from a concurrent scope: `new_heap` and `try_new_heap` on
//! [`LocalScope`] and `&`[`ConcurrentScope`], with the names, signatures and errors
//! they have on [`ScopeStack`](crate::ScopeStack).
//!
//! Invariant: each wrapper calls the one body every surface shares
//! (`crate::heap::carve::try_new_heap_in`). No bound is added: a `Heap` holds no value
//! of the caller's and is `Send + Sync`, so a concurrent scope (or a slot built through
//! one, handed to another thread) may hold it and drop it anywhere.
use crate::concurrent::{ConcurrentScope, LocalScope};
use crate::error::AllocError;
use crate::heap::carve::try_new_heap_in;
use crate::heap::Heap;
use crate::scope::place::or_fail;

impl<'a> LocalScope<'a> {
    /// Carves a [`Heap`] of `bytes` bytes, as [`ScopeStack::new_heap`](crate::ScopeStack::new_heap).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let heap = load.local().new_heap(4096);
    ///         let v = allocator_api2::vec::Vec::<u32, _>::with_capacity_in(8, heap);
    ///         assert_eq!((v.capacity(), heap.used()), (8, 32));
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_heap(&self, bytes: usize) -> &'a Heap {
        or_fail(self, self.try_new_heap(bytes))
    }

    /// The `try_` form of [`new_heap`](Self::new_heap): errors instead of panicking
    /// (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.local().try_new_heap(0).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     });
    /// });
    /// ```
    pub fn try_new_heap(&self, bytes: usize) -> Result<&'a Heap, AllocError> {
        try_new_heap_in(self, bytes)
    }
}

impl<'c> ConcurrentScope<'_> {
    /// Carves a [`Heap`] of `bytes` bytes ([`LocalScope::new_heap`] on this thread's
    /// view). Any thread may then use it: `Heap` is `Sync`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let heap = load.new_heap(4096);
    ///         std::thread::scope(|t| {
    ///             t.spawn(|| allocator_api2::vec::Vec::<u8, _>::with_capacity_in(10, heap).capacity());
    ///         });
    ///         assert_eq!((heap.used(), heap.high_water()), (0, 10));
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn new_heap(&'c self, bytes: usize) -> &'c Heap {
        self.local().new_heap(bytes)
    }

    /// The `try_` form of [`new_heap`](Self::new_heap): errors instead of panicking
    /// (the same errors as on a plain scope).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         let e = load.try_new_heap(usize::MAX).unwrap_err();
    ///         assert_eq!(e.kind(), AllocErrorKind::CapacityOverflow);
    ///     });
    /// });
    /// ```
    pub fn try_new_heap(&'c self, bytes: usize) -> Result<&'c Heap, AllocError> {
        self.local().try_new_heap(bytes)
    }
}
