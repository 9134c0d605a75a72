//! `allocator_api2::alloc::Allocator` for `&ScopeStack`, so `allocator_api2::vec::Vec`,
//! `hashbrown::HashMap` and friends can live in scope memory.
//!
//! Invariants this module keeps:
//! - The impl is for `&'a ScopeStack<'s>` only, never for an owned type: a collection
//!   can hold a shared borrow of the scope, which cannot rewind it (the scope rewinds
//!   only when its closure ends, and the borrow cannot outlive that), so memory handed
//!   to a collection stays valid as long as the collection can reach it. This is the
//!   lesson of bump-scope issue #137: an allocator whose reset is safe must not be the
//!   `Allocator` itself.
//! - While a collection holds `&ScopeStack`, the scope cannot open a child (that needs
//!   `&mut`), so "the block's last allocation" is always this scope's own.
//! - `deallocate`, `grow` and `shrink` act in place only on the most recent allocation
//!   (the one ending at the bump pointer); anything else is left where it is until the
//!   scope unwinds. Collections never get finalizer records: they drop themselves.

use core::alloc::Layout;
use core::ptr::NonNull;

use allocator_api2::alloc::{AllocError as ApiAllocError, Allocator};

use crate::scope::place;
use crate::scope::{Scope, ScopeStack};

// SAFETY: memory returned by `allocate` comes from the scope's bump region, is exclusive
// to the caller, and stays valid until the scope unwinds, which cannot happen while a
// `&ScopeStack` (and so any copy of this allocator) is alive. Moving the bump pointer back
// in `deallocate`/`shrink` only releases bytes the caller has just given up, and only
// when they are the last bytes handed out (nothing live lies above them); see
// `place::alloc_api`.
unsafe impl Allocator for &ScopeStack<'_> {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, ApiAllocError> {
        place::api_allocate(*self, layout)
    }

    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { place::api_deallocate(*self, ptr, layout) }
    }

    #[inline]
    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded from the caller.
        unsafe { place::api_grow(*self, ptr, old, new) }
    }

    #[inline]
    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded from the caller.
        unsafe { place::api_shrink(*self, ptr, old, new) }
    }
}

// SAFETY: forwards every call to the `&ScopeStack` impl above, for the same scope.
unsafe impl Allocator for &Scope<'_, '_> {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, ApiAllocError> {
        (&***self).allocate(layout)
    }

    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { (&***self).deallocate(ptr, layout) }
    }

    #[inline]
    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded from the caller.
        unsafe { (&***self).grow(ptr, old, new) }
    }

    #[inline]
    unsafe fn grow_zeroed(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded from the caller.
        unsafe { (&***self).grow_zeroed(ptr, old, new) }
    }

    #[inline]
    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded from the caller.
        unsafe { (&***self).shrink(ptr, old, new) }
    }
}
