//! Raw and uninitialised memory, written once for every surface: `alloc_layout`,
//! `alloc_raw`, `alloc_uninit_slice`, and room for arrays.
//!
//! Invariant: the memory handed out is fresh, exclusive to the caller and aligned as
//! asked, lives as long as the scope, and gets no finalizer (the scope never reads or
//! drops it).
use core::alloc::Layout;
use core::mem::{align_of, MaybeUninit};
use core::ptr::NonNull;

use crate::error::AllocError;

use super::core::{bump_checked, overflow, Core};

/// Uninitialised room for `len` `T`s (an aligned dangling pointer when it is empty).
#[inline]
pub(crate) fn try_array<'s, C: Core<'s>, T>(c: C, len: usize) -> Result<NonNull<T>, AllocError> {
    let layout = Layout::array::<T>(len).map_err(|_| overflow(c, align_of::<T>()))?;
    Ok(bump_checked(c, layout.size(), layout.align())?.cast())
}

/// `try_alloc_raw`: `size` bytes at `align`, checked.
#[inline]
pub(crate) fn try_alloc_raw<'s, C: Core<'s>>(
    c: C,
    size: usize,
    align: usize,
) -> Result<NonNull<u8>, AllocError> {
    let p = bump_checked(c, size, align)?;
    #[cfg(feature = "debug-fill")]
    crate::block::debug_fill::fresh(p, size);
    Ok(p)
}

/// `try_alloc_layout`.
#[inline]
pub(crate) fn try_alloc_layout<'s, C: Core<'s>>(
    c: C,
    layout: Layout,
) -> Result<NonNull<u8>, AllocError> {
    try_alloc_raw(c, layout.size(), layout.align())
}

/// `try_alloc_uninit_slice`: room for `len` `T`s, never dropped by the scope.
#[inline]
pub(crate) fn try_alloc_uninit_slice<'s, C: Core<'s>, T>(
    c: C,
    len: usize,
) -> Result<&'s mut [MaybeUninit<T>], AllocError> {
    let first = try_array::<C, T>(c, len)?;
    // SAFETY: room for `len` `T`s (or `T` is zero-sized and `first` is aligned),
    // exclusive for `'s`; `MaybeUninit` needs no initialisation.
    Ok(unsafe { core::slice::from_raw_parts_mut(first.as_ptr().cast::<MaybeUninit<T>>(), len) })
}
