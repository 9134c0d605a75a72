//! allocator-api2's `Allocator` for `&ConcurrentScope` and `&LocalScope`, so each
//! thread can grow its own `allocator_api2::vec::Vec` or `hashbrown::HashMap` in a
//! concurrent scope.
//!
//! Invariant: memory is moved back (freed, or shrunk or grown in place) only when it is
//! the newest allocation in the calling thread's own chunk; anything else, including
//! every call from a thread that did not make the allocation, leaves the bytes where
//! they are until the scope closes. The borrow of the scope keeps every collection
//! inside the closure, so its memory stays valid as long as it can be reached.

use core::alloc::Layout;
use core::ptr::NonNull;

use allocator_api2::alloc::{AllocError as ApiAllocError, Allocator};

use crate::scope::place;

use super::local::LocalScope;
use super::ConcurrentScope;

// SAFETY: memory from `allocate` is fresh and exclusive to the caller, and stays valid
// until the scope closes, which cannot happen while a `&LocalScope` (or any copy of this
// allocator) lives. Bytes move back only when they are the newest of this thread's own
// chunk and the caller gave them up (`place::alloc_api`).
unsafe impl Allocator for &LocalScope<'_> {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, ApiAllocError> {
        place::api_allocate(**self, layout)
    }

    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { place::api_deallocate(**self, ptr, layout) }
    }

    #[inline]
    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded.
        unsafe { place::api_grow(**self, ptr, old, new) }
    }

    #[inline]
    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded.
        unsafe { place::api_shrink(**self, ptr, old, new) }
    }
}

// SAFETY: as for `&LocalScope`: each call acts through the calling thread's own
// `LocalScope`, so memory another thread allocated is never moved back here (it is not
// the newest allocation of this thread's chunk).
unsafe impl Allocator for &ConcurrentScope<'_> {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, ApiAllocError> {
        place::api_allocate(self.local(), layout)
    }

    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { place::api_deallocate(self.local(), ptr, layout) }
    }

    #[inline]
    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded.
        unsafe { place::api_grow(self.local(), ptr, old, new) }
    }

    #[inline]
    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded.
        unsafe { place::api_shrink(self.local(), ptr, old, new) }
    }
}
