//! Debug fill patterns (the `debug-fill` feature).
//!
//! With the feature on, memory is painted so that stale or uninitialised reads stand out
//! in a debugger or a test:
//! - [`FRESH`] (0xCD): raw memory just handed out by `alloc_layout`, `alloc_raw` and the
//!   `Allocator` impl;
//! - [`RELEASED`] (0xDD): memory given back by a scope's rewind (after its finalizers
//!   ran), by an in-place free of the most recent allocation, or to a heap (a freed
//!   block's payload, the tail a shrink gives up, the old block of a move to another
//!   alignment; not the old block of a same-alignment grow the TLSF moves, which it
//!   frees inside the call);
//! - [`FREED_SLOT`] (0x1deadb0b, the Object Pool chapter's pattern): the storage of a
//!   pool slot whose object was removed.
//!
//! Invariant: painting only ever touches memory that no live value occupies, so it
//! changes no behaviour; with the feature off, none of this code is compiled in.

/// Byte written over freshly allocated raw memory.
///
/// ```
/// assert_eq!(scope_stack::debug_fill::FRESH, 0xCD);
/// ```
pub const FRESH: u8 = 0xCD;

/// Byte written over memory released by a rewind.
///
/// ```
/// assert_eq!(scope_stack::debug_fill::RELEASED, 0xDD);
/// ```
pub const RELEASED: u8 = 0xDD;

/// Word (native byte order) repeated over a freed pool slot's storage.
///
/// ```
/// assert_eq!(scope_stack::debug_fill::FREED_SLOT, 0x1deadb0b);
/// ```
pub const FREED_SLOT: u32 = 0x1dea_db0b;

#[cfg(feature = "debug-fill")]
pub(crate) use imp::*;

#[cfg(feature = "debug-fill")]
mod imp {
    use core::ptr::NonNull;

    use crate::block::cursor::Cursor;

    /// Paints `size` fresh bytes at `ptr` with [`FRESH`](super::FRESH).
    pub(crate) fn fresh(ptr: NonNull<u8>, size: usize) {
        // SAFETY: callers pass memory they just allocated: `size` writable bytes.
        unsafe { ptr.as_ptr().write_bytes(super::FRESH, size) };
    }

    /// Paints `[from, cursor.cur())` with [`RELEASED`](super::RELEASED) before it is
    /// given back.
    pub(crate) fn released(cursor: &Cursor, from: usize) {
        let to = cursor.cur();
        if to > from {
            // SAFETY: `[from, to)` lies in the block below the bump pointer and belongs
            // to the scope (or allocation) being released; nothing live is in it.
            unsafe {
                cursor
                    .ptr_at(from)
                    .as_ptr()
                    .write_bytes(super::RELEASED, to - from)
            };
        }
    }

    /// Paints `size` bytes at `ptr` that go back to a heap with
    /// [`RELEASED`](super::RELEASED).
    pub(crate) fn released_bytes(ptr: NonNull<u8>, size: usize) {
        // SAFETY: callers pass payload bytes a heap caller just gave up, through a
        // pointer with the region's provenance, before the TLSF takes them back.
        unsafe { ptr.as_ptr().write_bytes(super::RELEASED, size) };
    }

    /// Paints a freed slot's `size` bytes at `ptr` with [`FREED_SLOT`](super::FREED_SLOT).
    pub(crate) fn freed_slot(ptr: NonNull<u8>, size: usize) {
        let pattern = super::FREED_SLOT.to_ne_bytes();
        for i in 0..size {
            // SAFETY: callers pass a freed slot: `size` writable bytes, nothing live.
            unsafe { ptr.as_ptr().add(i).write(pattern[i % 4]) };
        }
    }
}
