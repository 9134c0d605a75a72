//! allocator-api2's `Allocator`, written once for every surface: the newest allocation
//! of a region grows (zeroed or not), shrinks and frees in place; anything else moves
//! or stays taken until the scope ends. Every method the trait defaults through
//! `allocate` and a copy (`grow_zeroed` among them) is written here, so none of them
//! leaves the newest block behind.
//!
//! Invariant: bytes move back only when they are the newest of this surface's own
//! region and the caller gave them up, so nothing live is ever handed out twice.
use core::alloc::Layout;
use core::ptr::{self, NonNull};

/// A refusal of the allocator API (out of memory): each version's `Allocator` impl
/// turns it into that version's `AllocError`.
pub(crate) struct Refused;

use crate::error::AllocErrorKind;

use super::core::Core;
use super::raw::try_alloc_layout;

/// Implements allocator-api2's `Allocator` for a handle type by handing each call to the
/// generic functions below through the handle's [`Core`] (`|this| core` names it):
/// 0.2's always, and 0.3's and 0.4's (each version has a trait of its own) with the
/// features `allocator-api2-03` and `allocator-api2-04`. One forwarding body for every
/// surface and version, so the handle types and the versions cannot drift.
///
/// Each use site states, in a `// SAFETY:` comment, why that handle's memory stays
/// valid while a copy of it lives: the generic functions keep the rest of the contract.
macro_rules! allocator_through_core {
    ($api:ident, $handle:ty, |$this:ident| $core:expr) => {
        // SAFETY: see the use site; every method hands the caller's contract on to
        // `place::alloc_api`, which gives bytes back only when they are the newest of
        // the surface's own region and were given up.
        unsafe impl $api::alloc::Allocator for $handle {
            #[inline]
            fn allocate(
                &self,
                layout: core::alloc::Layout,
            ) -> Result<core::ptr::NonNull<[u8]>, $api::alloc::AllocError> {
                let $this = self;
                $crate::scope::place::alloc_api::api_allocate($core, layout)
                    .map_err(|_| $api::alloc::AllocError)
            }

            #[inline]
            unsafe fn deallocate(&self, ptr: core::ptr::NonNull<u8>, layout: core::alloc::Layout) {
                let $this = self;
                // SAFETY: forwarded from the caller.
                unsafe { $crate::scope::place::alloc_api::api_deallocate($core, ptr, layout) }
            }

            #[inline]
            unsafe fn grow(
                &self,
                ptr: core::ptr::NonNull<u8>,
                old: core::alloc::Layout,
                new: core::alloc::Layout,
            ) -> Result<core::ptr::NonNull<[u8]>, $api::alloc::AllocError> {
                let $this = self;
                // SAFETY: forwarded from the caller.
                unsafe { $crate::scope::place::alloc_api::api_grow($core, ptr, old, new) }
                    .map_err(|_| $api::alloc::AllocError)
            }

            #[inline]
            unsafe fn grow_zeroed(
                &self,
                ptr: core::ptr::NonNull<u8>,
                old: core::alloc::Layout,
                new: core::alloc::Layout,
            ) -> Result<core::ptr::NonNull<[u8]>, $api::alloc::AllocError> {
                let $this = self;
                // SAFETY: forwarded from the caller.
                unsafe { $crate::scope::place::alloc_api::api_grow_zeroed($core, ptr, old, new) }
                    .map_err(|_| $api::alloc::AllocError)
            }

            #[inline]
            unsafe fn shrink(
                &self,
                ptr: core::ptr::NonNull<u8>,
                old: core::alloc::Layout,
                new: core::alloc::Layout,
            ) -> Result<core::ptr::NonNull<[u8]>, $api::alloc::AllocError> {
                let $this = self;
                // SAFETY: forwarded from the caller.
                unsafe { $crate::scope::place::alloc_api::api_shrink($core, ptr, old, new) }
                    .map_err(|_| $api::alloc::AllocError)
            }
        }
    };
    ($handle:ty, |$this:ident| $core:expr) => {
        $crate::scope::place::alloc_api::allocator_through_core!(
            allocator_api2,
            $handle,
            |$this| $core
        );
        #[cfg(feature = "allocator-api2-03")]
        $crate::scope::place::alloc_api::allocator_through_core!(
            allocator_api2_03,
            $handle,
            |$this| $core
        );
        #[cfg(feature = "allocator-api2-04")]
        $crate::scope::place::alloc_api::allocator_through_core!(
            allocator_api2_04,
            $handle,
            |$this| $core
        );
    };
}
pub(crate) use allocator_through_core;

/// Whether `[addr, addr + size)` is the newest allocation of the surface's region.
#[inline]
fn is_last<'s, C: Core<'s>>(c: C, addr: usize, size: usize) -> bool {
    size != 0 && addr >= c.region_start() && addr + size == c.top()
}

/// `Allocator::allocate`.
#[inline]
pub(crate) fn api_allocate<'s, C: Core<'s>>(
    c: C,
    layout: Layout,
) -> Result<NonNull<[u8]>, Refused> {
    match try_alloc_layout(c, layout) {
        Ok(p) => Ok(NonNull::slice_from_raw_parts(p, layout.size())),
        // Misuse, not a lack of memory: say so plainly instead of letting the collection
        // report (or abort on) an out-of-memory condition.
        Err(e) if e.kind() == AllocErrorKind::NotInnermost => panic!("{e}"),
        Err(_) => Err(Refused),
    }
}

/// `Allocator::deallocate`.
///
/// # Safety
/// As `Allocator::deallocate`: `ptr` was allocated here with `layout` and is given up.
#[inline]
pub(crate) unsafe fn api_deallocate<'s, C: Core<'s>>(c: C, ptr: NonNull<u8>, layout: Layout) {
    let addr = ptr.as_ptr().addr();
    #[cfg(feature = "tracy")]
    if layout.size() != 0 {
        crate::profiler::free(c.profiler_pool(), addr);
    }
    if is_last(c, addr, layout.size()) {
        // SAFETY: the caller gave the block up; it is the newest of the region.
        unsafe { c.give_back(addr, addr + layout.size()) };
    }
}

/// Shows the end of `old` (given up by a move) in the profiler (feature `tracy`).
#[inline(always)]
#[cfg_attr(not(feature = "tracy"), allow(unused_variables))]
fn moved_from<'s, C: Core<'s>>(c: C, old: NonNull<u8>, old_size: usize) {
    #[cfg(feature = "tracy")]
    if old_size != 0 {
        crate::profiler::free(c.profiler_pool(), old.as_ptr().addr());
    }
}

/// Shows a block resized in place in the profiler (feature `tracy`).
#[inline(always)]
#[cfg_attr(not(feature = "tracy"), allow(unused_variables))]
fn resized<'s, C: Core<'s>>(c: C, at: NonNull<u8>, old_size: usize, new_size: usize) {
    #[cfg(feature = "tracy")]
    {
        let addr = at.as_ptr().addr();
        if old_size != 0 {
            crate::profiler::free(c.profiler_pool(), addr);
        }
        crate::profiler::alloc(c.profiler_pool(), addr, new_size);
    }
}

/// `Allocator::grow`.
///
/// # Safety
/// As `Allocator::grow`.
pub(crate) unsafe fn api_grow<'s, C: Core<'s>>(
    c: C,
    ptr: NonNull<u8>,
    old: Layout,
    new: Layout,
) -> Result<NonNull<[u8]>, Refused> {
    let addr = ptr.as_ptr().addr();
    if is_last(c, addr, old.size()) && addr % new.align() == 0 {
        let limit = c.limit();
        if addr <= limit && new.size() <= limit - addr {
            // SAFETY: the block is the newest of the region; the room above it up to the
            // limit is free.
            unsafe { c.set_top(addr + new.size()) };
            resized(c, ptr, old.size(), new.size());
            return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
        }
    }
    let fresh = api_allocate(c, new)?;
    // SAFETY: `ptr` holds `old.size()` initialised bytes (caller contract), `fresh` has at
    // least `new.size() >= old.size()` bytes and is a different, fresh block.
    unsafe { ptr::copy_nonoverlapping(ptr.as_ptr(), fresh.cast::<u8>().as_ptr(), old.size()) };
    moved_from(c, ptr, old.size());
    Ok(fresh)
}

/// `Allocator::grow_zeroed`: [`api_grow`], then zeroes the new tail, so the newest
/// allocation grows in place here too. (The trait's default would allocate a zeroed
/// block and copy, leaving the old bytes taken until the scope ends.)
///
/// # Safety
/// As `Allocator::grow_zeroed`.
#[inline]
pub(crate) unsafe fn api_grow_zeroed<'s, C: Core<'s>>(
    c: C,
    ptr: NonNull<u8>,
    old: Layout,
    new: Layout,
) -> Result<NonNull<[u8]>, Refused> {
    // SAFETY: forwarded from the caller.
    let grown = unsafe { api_grow(c, ptr, old, new) }?;
    // SAFETY: `grown` is `grown.len() >= new.size() >= old.size()` bytes, exclusive to
    // the caller; the bytes from `old.size()` on are the new tail, which nobody reads yet.
    unsafe {
        grown
            .cast::<u8>()
            .as_ptr()
            .add(old.size())
            .write_bytes(0, grown.len() - old.size());
    }
    Ok(grown)
}

/// `Allocator::shrink`.
///
/// # Safety
/// As `Allocator::shrink`.
pub(crate) unsafe fn api_shrink<'s, C: Core<'s>>(
    c: C,
    ptr: NonNull<u8>,
    old: Layout,
    new: Layout,
) -> Result<NonNull<[u8]>, Refused> {
    let addr = ptr.as_ptr().addr();
    if addr % new.align() == 0 {
        if is_last(c, addr, old.size()) && new.size() < old.size() {
            // SAFETY: the caller gave up the tail past `new.size()`; the block is the
            // newest of the region.
            unsafe { c.give_back(addr + new.size(), addr + old.size()) };
        }
        if new.size() != old.size() {
            resized(c, ptr, old.size(), new.size());
        }
        return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
    }
    let fresh = api_allocate(c, new)?;
    // SAFETY: the first `new.size()` bytes of `ptr` are initialised (caller contract) and
    // `fresh` is a different block of that size.
    unsafe { ptr::copy_nonoverlapping(ptr.as_ptr(), fresh.cast::<u8>().as_ptr(), new.size()) };
    moved_from(c, ptr, old.size());
    Ok(fresh)
}
