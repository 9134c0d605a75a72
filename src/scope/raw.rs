//! Raw memory from a scope: `alloc_layout` and `alloc_raw`, any size and any
//! power-of-two alignment up to `MAX_ALIGN`.
//!
//! This module owns the raw-memory face of a scope. Invariant: the memory it hands out
//! is fresh, exclusive to the caller and aligned as asked, lives until the scope
//! unwinds, and gets no finalizer (the scope never reads or drops it).
use core::alloc::Layout;
use core::ptr::NonNull;

use crate::error::AllocError;

use super::{place, ScopeStack};

impl<'s> ScopeStack<'s> {
    /// Allocates uninitialised memory for `layout` (zero-sized layouts get an aligned
    /// dangling pointer and use no memory).
    ///
    /// # Panics
    /// When the scope is out of memory or the alignment is above [`MAX_ALIGN`](crate::MAX_ALIGN); see
    /// [`try_alloc_layout`](Self::try_alloc_layout).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// use core::alloc::Layout;
    /// let mut memory = LinearAllocator::with_capacity(8192).unwrap();
    /// memory.scope("a", |a| {
    ///     let p = a.alloc_layout(Layout::from_size_align(100, 64).unwrap());
    ///     assert_eq!(p.as_ptr() as usize % 64, 0);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        match self.try_alloc_layout(layout) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Allocates uninitialised memory for `layout`, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// use core::alloc::Layout;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let err = a.try_alloc_layout(Layout::from_size_align(65, 1).unwrap()).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    /// });
    /// ```
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        place::try_alloc_layout(self, layout)
    }

    /// Allocates `size` uninitialised bytes aligned to `align`.
    ///
    /// # Panics
    /// When `align` is not a power of two or is above [`MAX_ALIGN`](crate::MAX_ALIGN), when `size` exceeds
    /// `isize::MAX`, or when the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8192).unwrap();
    /// memory.scope("a", |a| {
    ///     let page = a.alloc_raw(4096, 4096);
    ///     assert_eq!(page.as_ptr() as usize % 4096, 0);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_raw(&self, size: usize, align: usize) -> NonNull<u8> {
        match self.try_alloc_raw(size, align) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Allocates `size` uninitialised bytes aligned to `align`, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     assert_eq!(a.try_alloc_raw(8, 3).unwrap_err().kind(), AllocErrorKind::InvalidAlignment);
    ///     assert_eq!(a.try_alloc_raw(8, 8192).unwrap_err().kind(), AllocErrorKind::AlignmentTooLarge);
    ///     assert!(a.try_alloc_raw(64, 1).is_ok());
    /// });
    /// ```
    pub fn try_alloc_raw(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        place::try_alloc_raw(self, size, align)
    }
}
