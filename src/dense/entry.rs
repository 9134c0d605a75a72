//! One slot of a dense pool: the value's room and its generation word (odd while live),
//! plus the slot's place in the roster.
//!
//! This module owns the slot layout. Invariant: a slot's value is initialised exactly
//! while its generation is odd; the generation changes on every insert and remove, so a
//! handle made before a remove never matches again.
use core::mem::MaybeUninit;
use core::ptr::{self};
use core::sync::atomic::AtomicU32;

/// One slot: its bookkeeping next to its storage, so that a lookup or a remove finds the
/// generation, the roster position and the value on the same cache line.
#[repr(C)]
pub(super) struct Slot<T> {
    /// Odd while the slot is live. Atomic (always `Relaxed`, which compiles to plain
    /// loads and stores) only because a memory map report may read it from another
    /// thread while this pool is in use; see [Reports](crate::dense#reports).
    pub(super) generation: AtomicU32,
    /// Where the slot's index sits in the roster (the reverse table).
    pub(super) position: u32,
    /// Initialised exactly while the slot is live.
    pub(super) value: MaybeUninit<T>,
}

/// The value field of a slot, by raw place projection (no reference is made).
///
/// # Safety
/// `slot` points to a slot inside a pool's slot array.
#[inline(always)]
pub(super) unsafe fn value_ptr<T>(slot: *mut Slot<T>) -> *mut T {
    // SAFETY: per the caller, `slot` is in bounds, so the field projection is too; it
    // only computes an address.
    unsafe { ptr::addr_of_mut!((*slot).value).cast::<T>() }
}
