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
use core::ptr::{self, NonNull};

use allocator_api2::alloc::{AllocError as ApiAllocError, Allocator};

use super::local::LocalScope;
use super::ConcurrentScope;

impl LocalScope<'_> {
    fn api_allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, ApiAllocError> {
        match self.try_alloc_layout(layout) {
            Ok(p) => Ok(NonNull::slice_from_raw_parts(p, layout.size())),
            Err(_) => Err(ApiAllocError),
        }
    }

    /// # Safety
    /// As `Allocator::deallocate`.
    unsafe fn api_deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        self.give_back_if_last(ptr.as_ptr().addr(), layout.size());
    }

    /// # Safety
    /// As `Allocator::grow`.
    unsafe fn api_grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        let addr = ptr.as_ptr().addr();
        if new.align() <= old.align() && self.resize_if_last(addr, old.size(), new.size()) {
            return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
        }
        let fresh = self.api_allocate(new)?;
        // SAFETY: the old block holds `old.size()` readable bytes (caller contract), the
        // new one is fresh and at least as large.
        unsafe {
            ptr::copy_nonoverlapping(ptr.as_ptr(), fresh.cast::<u8>().as_ptr(), old.size());
            self.api_deallocate(ptr, old);
        }
        Ok(fresh)
    }

    /// # Safety
    /// As `Allocator::shrink`.
    unsafe fn api_shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        let addr = ptr.as_ptr().addr();
        if addr % new.align() == 0 {
            self.resize_if_last(addr, old.size(), new.size());
            return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
        }
        let fresh = self.api_allocate(new)?;
        // SAFETY: `new.size() <= old.size()` readable bytes; the new block is fresh.
        unsafe {
            ptr::copy_nonoverlapping(ptr.as_ptr(), fresh.cast::<u8>().as_ptr(), new.size());
            self.api_deallocate(ptr, old);
        }
        Ok(fresh)
    }
}

// SAFETY: memory from `allocate` is fresh and exclusive to the caller, and stays valid
// until the scope closes, which cannot happen while a `&LocalScope` (or any copy of this
// allocator) lives. Bytes move back only when they are the newest of this thread's own
// chunk and the caller gave them up (module invariant).
unsafe impl Allocator for &LocalScope<'_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, ApiAllocError> {
        self.api_allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { self.api_deallocate(ptr, layout) }
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded.
        unsafe { self.api_grow(ptr, old, new) }
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded.
        unsafe { self.api_shrink(ptr, old, new) }
    }
}

// SAFETY: as for `&LocalScope`: each call acts through the calling thread's own
// `LocalScope`, so memory another thread allocated is never moved back here.
unsafe impl Allocator for &ConcurrentScope<'_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, ApiAllocError> {
        self.local().api_allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { self.local().api_deallocate(ptr, layout) }
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded.
        unsafe { self.local().api_grow(ptr, old, new) }
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded.
        unsafe { self.local().api_shrink(ptr, old, new) }
    }
}
