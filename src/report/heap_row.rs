//! What a heap's row in a memory map adds: [`HeapReport`].
//!
//! Invariant: it holds copies of what the heap's report record read, under the heap's
//! lock, when the report was taken.

/// A [`Heap`](crate::Heap)'s own figures, in its [`PoolReport`](crate::PoolReport)
/// row (whose `kind` is `"Heap"`, `len` the bytes in use, `capacity` the heap's bytes
/// and `high_water_len` the most bytes ever in use). All exact when the report was
/// taken.
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("level", |level| {
///     let heap = level.new_heap(4096);
///     let a = allocator_api2::boxed::Box::new_in([0u8; 100], heap);
///     let _b = allocator_api2::boxed::Box::new_in([0u8; 100], heap);
///     drop(a); // a hole before `_b`
///     let map = level.report();
///     let row = &map.scopes[0].pools[0];
///     assert_eq!((row.kind, row.len, row.capacity, row.high_water_len), ("Heap", 100, 4096, 200));
///     let h = row.heap.unwrap();
///     assert_eq!((h.live, h.free_blocks), (1, 2));
///     assert_eq!(h.free, heap.free());
///     assert!(map.to_string().contains("- Heap"));
/// });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub struct HeapReport {
    /// Live allocations ([`Heap::live`](crate::Heap::live)).
    pub live: usize,
    /// Bytes in free blocks, headers included ([`Heap::free`](crate::Heap::free)).
    pub free: usize,
    /// How many free blocks those bytes are in: 1 when nothing is fragmented (0 when
    /// the heap is full).
    pub free_blocks: usize,
    /// The payload of the largest free block ([`Heap::largest_free`](crate::Heap::largest_free)).
    pub largest_free: usize,
}
