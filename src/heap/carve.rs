//! Carving a heap out of a scope: `new_heap` and `try_new_heap`, written once for
//! every surface (`try_new_heap_in`), with the inherent methods of [`ScopeStack`].
//!
//! Invariant: a heap's region is fresh scope memory, given whole to a new TLSF before
//! anything can allocate from it, and the `Heap` that runs it is placed in the same
//! scope right after it, so region and heap live exactly as long as the scope. The
//! scope's own cursor is never touched by the heap again, so frames (child scopes)
//! bump above it while the heap's collections grow and free.
use core::ptr::NonNull;

use crate::error::{AllocError, AllocErrorKind, Subject};
use crate::limits::MAX_HEAP_BYTES;
use crate::scope::place::{self, Core as Surface};
use crate::scope::ScopeStack;

use super::lock::SpinLock;
use super::{Heap, State, Tlsf, GRANULARITY};

impl<'s> ScopeStack<'s> {
    /// Carves a [`Heap`] of `bytes` bytes out of this scope: a TLSF allocator for
    /// collections that grow, shrink and free while frames open and close above them.
    /// It goes, whatever it still holds, when the scope ends. See the
    /// [`heap`](crate::heap) module docs.
    ///
    /// `bytes` is rounded up to a multiple of the TLSF granule (32 bytes on 64-bit
    /// targets, at least two of them); the `Heap` itself (about 3.7 KiB of free lists)
    /// is placed beside it.
    ///
    /// # Panics
    /// Where [`try_new_heap`](Self::try_new_heap) returns an error.
    ///
    /// ```
    /// use allocator_api2::vec::Vec;
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let heap = level.new_heap(8 << 10);
    ///     let mut path: Vec<[f32; 2], _> = Vec::new_in(heap);
    ///     path.push([0.0, 1.0]);
    ///     level.scope("frame", |frame| {
    ///         path.push(*frame.new_pod([2.0, 3.0])); // the heap is not the scope handle
    ///     });
    ///     assert_eq!(path.len(), 2);
    /// });
    /// ```
    #[track_caller]
    pub fn new_heap(&self, bytes: usize) -> &'s Heap {
        place::or_fail(self, self.try_new_heap(bytes))
    }

    /// The `try_` form of [`new_heap`](Self::new_heap).
    ///
    /// # Errors
    /// - [`AllocErrorKind::InvalidCapacity`](crate::AllocErrorKind::InvalidCapacity)
    ///   for 0 bytes;
    /// - [`AllocErrorKind::CapacityOverflow`](crate::AllocErrorKind::CapacityOverflow)
    ///   above [`MAX_HEAP_BYTES`](crate::heap::MAX_HEAP_BYTES);
    /// - [`AllocErrorKind::OutOfMemory`](crate::AllocErrorKind::OutOfMemory) when the
    ///   scope has no room for the region and the heap (a region already taken stays
    ///   taken until the scope ends).
    ///
    /// Each names the scope.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("level", |level| {
    ///     let e = level.try_new_heap(0).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    ///     assert!(e.to_string().contains("\"level\""));
    ///     assert!(e.to_string().ends_with("a heap needs at least one byte (bytes 0)"));
    ///     let e = level.try_new_heap(usize::MAX).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::CapacityOverflow);
    ///     assert!(e.to_string().contains("is more than MAX_HEAP_BYTES"));
    ///     let e = level.try_new_heap(1 << 20).unwrap_err();
    ///     assert_eq!(e.kind(), AllocErrorKind::OutOfMemory);
    ///     assert!(level.try_new_heap(4096).is_ok());
    /// });
    /// ```
    pub fn try_new_heap(&self, bytes: usize) -> Result<&'s Heap, AllocError> {
        try_new_heap_in(self, bytes)
    }
}

/// The one body of `try_new_heap`, for every surface.
///
/// A `Heap` holds no value of the caller's and drops nothing of theirs, so it is sound
/// on every surface without a bound (on a concurrent scope whichever thread closes the
/// scope may drop it: it is `Send`).
pub(crate) fn try_new_heap_in<'s, C: Surface<'s>>(
    c: C,
    bytes: usize,
) -> Result<&'s Heap, AllocError> {
    let kind = if bytes == 0 {
        AllocErrorKind::InvalidCapacity
    } else if bytes > MAX_HEAP_BYTES {
        AllocErrorKind::CapacityOverflow
    } else {
        // Whole granules, at least one free block and the end marker.
        let size = bytes.next_multiple_of(GRANULARITY).max(2 * GRANULARITY);
        let region = c.bump(size, GRANULARITY)?;
        return place_heap(c, region, size);
    };
    Err(c
        .error(kind, bytes, GRANULARITY)
        .with_subject(Subject::heap(bytes)))
}

/// Gives `region` to a new TLSF and places the heap that runs it.
fn place_heap<'s, C: Surface<'s>>(
    c: C,
    region: NonNull<u8>,
    size: usize,
) -> Result<&'s Heap, AllocError> {
    let mut tlsf = Tlsf::new();
    // SAFETY: `region` is `size` bytes of fresh scope memory, exclusive to this heap and
    // valid until the scope ends, which is after the last use of the heap (its `&'s`
    // borrow); it is aligned to and a multiple of the granule, so the TLSF takes all of
    // it as one pool (`size <= MAX_HEAP_BYTES` is below its largest pool).
    let taken = unsafe { tlsf.insert_free_block_ptr(NonNull::slice_from_raw_parts(region, size)) };
    debug_assert_eq!(taken.map(|n| n.get()), Some(size));
    let capacity = taken.map_or(0, |n| n.get());
    let heap = Heap {
        lock: SpinLock::new(),
        state: crate::sync::UnsafeCell::new(State {
            tlsf,
            used: 0,
            live: 0,
            high_water: 0,
        }),
        pool: region,
        capacity,
        #[cfg(feature = "tracy")]
        profiler: crate::profiler::name_for(|text| {
            c.profiler_path(text);
            let _ = core::fmt::Write::write_str(text, "/Heap");
        }),
    };
    // SAFETY: `new_object_unchecked`'s drop contract: a `Heap` needs no drop (under
    // loom its lock's atomic and its state's cell do, and with `tracy` its drop only
    // discards its profiler pool; neither reads anything but the `Heap`, which is
    // `Send`); `'s` is only the lifetime of the returned reference.
    match unsafe { place::try_new_object_unchecked(c, heap) } {
        Ok(h) => {
            let h: &'s Heap = h;
            #[cfg(feature = "alloc")]
            super::report::register(c, h);
            Ok(h)
        }
        Err(e) => Err(e.error),
    }
}
