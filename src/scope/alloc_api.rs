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

use crate::error::AllocErrorKind;
use crate::scope::{dangling, Scope, ScopeStack};

impl ScopeStack<'_> {
    /// Whether `[ptr, ptr + size)` is the most recent allocation (ends at the bump
    /// pointer).
    fn is_last(&self, ptr: NonNull<u8>, size: usize) -> bool {
        size != 0 && ptr.as_ptr().addr() + size == self.cursor().cur()
    }
}

// SAFETY: memory returned by `allocate` comes from the scope's bump region, is exclusive
// to the caller, and stays valid until the scope unwinds, which cannot happen while a
// `&ScopeStack` (and so any copy of this allocator) is alive. Moving the bump pointer back
// in `deallocate`/`shrink` only releases bytes the caller has just given up, and only
// when they are the last bytes handed out (nothing live lies above them).
unsafe impl Allocator for &ScopeStack<'_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, ApiAllocError> {
        if layout.size() == 0 {
            return Ok(NonNull::slice_from_raw_parts(dangling(layout.align()), 0));
        }
        match self.try_alloc_layout(layout) {
            Ok(p) => Ok(NonNull::slice_from_raw_parts(p, layout.size())),
            // Misuse, not a lack of memory: say so plainly instead of letting the
            // collection report (or abort on) an out-of-memory condition.
            Err(e) if e.kind() == AllocErrorKind::NotInnermost => panic!("{e}"),
            Err(_) => Err(ApiAllocError),
        }
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if self.is_last(ptr, layout.size()) {
            #[cfg(feature = "debug-fill")]
            crate::block::debug_fill::released(self.cursor(), ptr.as_ptr().addr());
            self.allocator().rewind(self.cursor(), ptr.as_ptr().addr());
        }
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        let cursor = self.cursor();
        let addr = ptr.as_ptr().addr();
        if self.is_last(ptr, old.size()) && addr % new.align() == 0 {
            // A suspended cursor has limit 0, so this also refuses to grow there.
            let limit = cursor.limit();
            if addr <= limit && new.size() <= limit - addr {
                cursor.set_cur(addr + new.size());
                return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
            }
        }
        let fresh = self.allocate(new)?;
        // SAFETY: `ptr` holds `old.size()` initialised bytes (caller contract), `fresh`
        // has at least `new.size() >= old.size()` bytes and is a different, fresh block.
        unsafe {
            core::ptr::copy_nonoverlapping(ptr.as_ptr(), fresh.cast::<u8>().as_ptr(), old.size())
        };
        Ok(fresh)
    }

    unsafe fn grow_zeroed(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        // SAFETY: forwarded from the caller.
        let grown = unsafe { self.grow(ptr, old, new)? };
        // SAFETY: `grown` has `new.size()` bytes; zero the part past the old contents.
        unsafe {
            grown
                .cast::<u8>()
                .as_ptr()
                .add(old.size())
                .write_bytes(0, new.size() - old.size())
        };
        Ok(grown)
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, ApiAllocError> {
        let addr = ptr.as_ptr().addr();
        if addr % new.align() == 0 {
            if self.is_last(ptr, old.size()) {
                self.allocator().rewind(self.cursor(), addr + new.size());
            }
            return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
        }
        let fresh = self.allocate(new)?;
        // SAFETY: the first `new.size()` bytes of `ptr` are initialised (caller contract)
        // and `fresh` is a different block of that size.
        unsafe {
            core::ptr::copy_nonoverlapping(ptr.as_ptr(), fresh.cast::<u8>().as_ptr(), new.size())
        };
        Ok(fresh)
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
