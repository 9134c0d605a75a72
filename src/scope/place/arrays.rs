//! What carving a container needs from any surface, written once: a check of a
//! container's slot count, and uninitialised arrays.
//!
//! Invariant: every error names the surface's scope (through [`Core::error`]), and an
//! array is fresh, aligned room for `len` elements that lives as long as the scope.
use core::alloc::Layout;
use core::mem::align_of;
use core::ptr::NonNull;

use crate::error::{AllocError, AllocErrorKind, Subject};

use super::core::Core;
use super::raw::try_alloc_layout;

/// Checks a container's slot count: not 0, at most `max` (the index width), and small
/// enough that `per_slot` bytes for each slot fit in `isize`. Errors name `subject`.
pub(crate) fn check_capacity<'s, C: Core<'s>, T>(
    c: C,
    capacity: usize,
    max: usize,
    per_slot: usize,
    subject: Subject,
) -> Result<(), AllocError> {
    let bytes = capacity.saturating_mul(per_slot);
    let kind = if capacity == 0 {
        AllocErrorKind::InvalidCapacity
    } else if capacity > max {
        AllocErrorKind::TooManySlots
    } else if bytes > isize::MAX as usize {
        AllocErrorKind::CapacityOverflow
    } else {
        return Ok(());
    };
    Err(c.error(kind, bytes, align_of::<T>()).with_subject(subject))
}

/// Room for `len` elements of `E`, uninitialised.
pub(crate) fn try_alloc_array_uninit<'s, C: Core<'s>, E>(
    c: C,
    len: usize,
) -> Result<NonNull<E>, AllocError> {
    let layout = Layout::array::<E>(len).map_err(|_| {
        c.error(
            AllocErrorKind::CapacityOverflow,
            usize::MAX,
            align_of::<E>(),
        )
    })?;
    Ok(try_alloc_layout(c, layout)?.cast::<E>())
}
