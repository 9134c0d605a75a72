//! Every limit the crate publishes, in one place at the bottom of the layers.
//!
//! This module owns the `MAX_*` constants; everything else (errors, the block, the pools,
//! the store) reads them from here, so no layer has to import another one to know a
//! limit. Invariant: each constant is the one value its users check against, and each
//! is re-exported where users look for it (the crate root, `pool`, `store`).

/// The largest alignment a scope hands out, in bytes. Larger requests are an
/// [`AllocErrorKind::AlignmentTooLarge`](crate::AllocErrorKind::AlignmentTooLarge)
/// error.
///
/// Heap-backed blocks are themselves aligned to `MAX_ALIGN`; a buffer passed to
/// [`LinearAllocator::from_static`](crate::LinearAllocator::from_static) may have any
/// alignment (padding is added per allocation as needed).
///
/// ```
/// assert_eq!(scope_stack::MAX_ALIGN, 4096);
/// ```
pub const MAX_ALIGN: usize = 4096;

/// The longest scope name, in bytes, that an [`AllocError`](crate::AllocError) keeps.
/// Longer names are cut at a character boundary.
///
/// ```
/// assert_eq!(scope_stack::MAX_ERROR_NAME_LEN, 24);
/// ```
pub const MAX_ERROR_NAME_LEN: usize = 24;

/// The largest capacity a [`Pool`](crate::Pool) accepts: its slot index has 24 bits.
///
/// ```
/// assert_eq!(scope_stack::MAX_POOL_CAPACITY, 1 << 24);
/// ```
pub const MAX_POOL_CAPACITY: usize = 1 << 24;

/// The most shards
/// [`ScopeStack::new_pool_with_shards`](crate::ScopeStack::new_pool_with_shards)
/// accepts.
///
/// ```
/// assert_eq!(scope_stack::MAX_POOL_SHARDS, 256);
/// ```
pub const MAX_POOL_SHARDS: usize = 256;

/// The most objects a [`Store`](crate::store::Store) can hold (object indices are 32
/// bits, one value reserved).
///
/// ```
/// assert_eq!(scope_stack::store::MAX_STORE_OBJECTS, u32::MAX as usize);
/// ```
pub const MAX_STORE_OBJECTS: usize = u32::MAX as usize;

/// The most bytes a [`Heap`](crate::heap::Heap) accepts: 4 GiB on 64-bit targets, 1 GiB
/// on smaller ones. The heap's TLSF tables cover blocks of up to this size in one piece,
/// so one allocation may use (almost) all of it. Larger requests are an
/// [`AllocErrorKind::CapacityOverflow`](crate::AllocErrorKind::CapacityOverflow) error
/// that names the heap.
///
/// ```
/// # #[cfg(target_pointer_width = "64")]
/// assert_eq!(scope_stack::heap::MAX_HEAP_BYTES, 1 << 32);
/// ```
pub const MAX_HEAP_BYTES: usize = if usize::BITS >= 64 { 1 << 32 } else { 1 << 30 };
