//! allocator-api2's `Allocator` for `&Heap`: 0.2's, and 0.3's and 0.4's through it (features).
//!
//! Invariant: every non-empty block this impl hands out came from this heap's TLSF,
//! and the counters (`used`, `live`, `high_water`) change under the same lock hold as
//! the TLSF call they account for, so they are always exact. Zero-sized requests get a
//! dangling, aligned pointer and never reach the TLSF; freeing one does nothing.
//!
//! A block goes back to the TLSF (freed or resized) through a pointer with the
//! region's provenance and the block's address, never the caller's pointer: the TLSF
//! reads the block's header just below the payload, and a caller's pointer may only
//! be valid for the payload (a `Box` retags its pointer to its contents, which Miri's
//! Stacked Borrows model enforces).
//!
//! With `tracy`, each event goes to the heap's profiler pool under the same lock hold
//! as its TLSF call (a grow or shrink as a free and an allocation, even in place), so
//! the profiler sees a block freed before anyone takes it again.
//!
//! The impl is for the shared reference only: a heap is never handed out by value or
//! as `&mut`, so no safe code can reset or move it while a collection holds it, and a
//! block can only be grown, shrunk or freed through the `&Heap` its collection keeps,
//! which is the heap that made it (the `Allocator` contract; see rule 12).
use core::alloc::Layout;
use core::ptr::{self, NonNull};

use allocator_api2::alloc::{AllocError, Allocator};

use super::{Heap, State};

/// A dangling, aligned, non-null pointer for a zero-sized block.
#[inline]
fn dangling(layout: Layout) -> NonNull<[u8]> {
    // SAFETY: an alignment is a power of two, never zero.
    let p = unsafe { NonNull::new_unchecked(ptr::without_provenance_mut::<u8>(layout.align())) };
    NonNull::slice_from_raw_parts(p, 0)
}

impl State {
    /// Counts a new block of `size` bytes.
    #[inline]
    fn took(&mut self, size: usize) {
        self.used += size;
        self.live += 1;
        self.high_water = self.high_water.max(self.used);
    }

    /// Counts a block of `size` bytes given back.
    #[inline]
    fn gave(&mut self, size: usize) {
        self.used -= size;
        self.live -= 1;
    }
}

impl Heap {
    /// The block at `ptr`'s address, with the region's provenance (see the module
    /// docs).
    #[inline]
    fn own(&self, ptr: NonNull<u8>) -> NonNull<u8> {
        self.pool.with_addr(ptr.addr())
    }

    /// Resizes a non-empty block to a non-empty `new` layout (grow or shrink).
    ///
    /// # Safety
    /// `ptr` is a live block of this heap allocated with `old`, and `old.size() != 0`,
    /// `new.size() != 0`.
    unsafe fn resize(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if old.align() == new.align() {
            return self.with(|s| {
                // `debug-fill`: a shrink's tail is painted before the TLSF takes it
                // (rlsf 0.2.3, pinned, always shrinks in place, so the tail is never
                // the caller's again). A grow the TLSF moves is not painted: it frees
                // the old block in the same call, and painting it afterwards would
                // write over its free-list links (it may even move the block down into
                // a free neighbour, overlapping the old one). Moving grows here instead
                // would stop blocks growing in place, which changes what fits.
                #[cfg(feature = "debug-fill")]
                if new.size() < old.size() {
                    // SAFETY: the tail `[new.size(), old.size())` lies in the caller's
                    // block, which it gives up; `own` has the region's provenance.
                    let tail = unsafe { self.own(ptr).add(new.size()) };
                    crate::block::debug_fill::released_bytes(tail, old.size() - new.size());
                }
                // SAFETY: `ptr` was allocated by this TLSF with `old.align()`, which is
                // `new.align()` (rlsf's contract for `reallocate`); it copies the
                // contents when it moves the block and leaves it intact on failure.
                match unsafe { s.tlsf.reallocate(self.own(ptr), new) } {
                    Some(p) => {
                        #[cfg(feature = "tracy")]
                        crate::profiler::realloc(
                            self.profiler,
                            ptr.as_ptr().addr(),
                            p.as_ptr().addr(),
                            new.size(),
                        );
                        s.used = s.used - old.size() + new.size();
                        s.high_water = s.high_water.max(s.used);
                        Ok(NonNull::slice_from_raw_parts(p, new.size()))
                    }
                    None => Err(AllocError),
                }
            });
        }
        // Another alignment: a new block, a copy, then the old block goes.
        let fresh = Allocator::allocate(&self, new)?;
        // SAFETY: the first `min(old, new)` bytes of `ptr` are the caller's, `fresh` is a
        // different block of `new.size()` bytes.
        unsafe {
            ptr::copy_nonoverlapping(
                ptr.as_ptr(),
                fresh.cast::<u8>().as_ptr(),
                old.size().min(new.size()),
            );
            Allocator::deallocate(&self, ptr, old);
        }
        Ok(fresh)
    }
}

// SAFETY: blocks come from the heap's own region (scope memory that lives as long as
// the `Heap`, so as long as any `&Heap`), and the TLSF hands each out to one caller
// until it is freed; every call runs under the heap's lock, so threads sharing a heap
// never see its TLSF half-updated. A copy of `&Heap` is the same heap, so a block may
// be freed through any copy. Sizes and alignments are what the caller asked: rlsf
// accepts any power-of-two alignment.
unsafe impl Allocator for &Heap {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.size() == 0 {
            return Ok(dangling(layout));
        }
        self.with(|s| {
            let p = s.tlsf.allocate(layout).ok_or(AllocError)?;
            s.took(layout.size());
            #[cfg(feature = "tracy")]
            crate::profiler::alloc(self.profiler, p.as_ptr().addr(), layout.size());
            Ok(NonNull::slice_from_raw_parts(p, layout.size()))
        })
    }

    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() == 0 {
            return;
        }
        self.with(|s| {
            // The payload the caller gives up, painted before the TLSF writes its links.
            #[cfg(feature = "debug-fill")]
            crate::block::debug_fill::released_bytes(self.own(ptr), layout.size());
            // SAFETY: the caller's contract: `ptr` is a live block of this heap (the
            // only heap a `&Heap` reaches) allocated with `layout`.
            unsafe { s.tlsf.deallocate(self.own(ptr), layout.align()) };
            s.gave(layout.size());
            #[cfg(feature = "tracy")]
            crate::profiler::free(self.profiler, ptr.as_ptr().addr());
        })
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if old.size() == 0 {
            return self.allocate(new);
        }
        // SAFETY: forwarded from the caller; `new.size() >= old.size() > 0`.
        unsafe { self.resize(ptr, old, new) }
    }

    unsafe fn grow_zeroed(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: forwarded from the caller.
        let grown = unsafe { self.grow(ptr, old, new) }?;
        // SAFETY: `grown` has `new.size() >= old.size()` bytes, the caller's alone; the
        // bytes past `old.size()` are the new tail, which nobody reads yet.
        unsafe {
            grown
                .cast::<u8>()
                .as_ptr()
                .add(old.size())
                .write_bytes(0, new.size() - old.size());
        }
        Ok(grown)
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if new.size() == 0 {
            // SAFETY: forwarded from the caller (the whole block is given up).
            unsafe { self.deallocate(ptr, old) };
            return Ok(dangling(new));
        }
        // SAFETY: forwarded from the caller; `old.size() >= new.size() > 0`.
        unsafe { self.resize(ptr, old, new) }
    }
}

/// allocator-api2 0.3's or 0.4's `Allocator` for `&Heap` (features `allocator-api2-03`,
/// `allocator-api2-04`): each call goes to the 0.2 impl above, so the heap has one
/// allocator and every version sees the same blocks and counters.
#[cfg(any(feature = "allocator-api2-03", feature = "allocator-api2-04"))]
macro_rules! allocator_of_version {
    ($api:ident) => {
        // SAFETY: every method is the 0.2 impl's, whose contract is the same trait's
        // (the versions differ in their crate, not in what `Allocator` promises).
        unsafe impl $api::alloc::Allocator for &Heap {
            #[inline]
            fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, $api::alloc::AllocError> {
                Allocator::allocate(self, layout).map_err(|_| $api::alloc::AllocError)
            }

            #[inline]
            unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
                // SAFETY: forwarded from the caller.
                unsafe { Allocator::deallocate(self, ptr, layout) }
            }

            unsafe fn grow(
                &self,
                ptr: NonNull<u8>,
                old: Layout,
                new: Layout,
            ) -> Result<NonNull<[u8]>, $api::alloc::AllocError> {
                // SAFETY: forwarded from the caller.
                unsafe { Allocator::grow(self, ptr, old, new) }.map_err(|_| $api::alloc::AllocError)
            }

            unsafe fn grow_zeroed(
                &self,
                ptr: NonNull<u8>,
                old: Layout,
                new: Layout,
            ) -> Result<NonNull<[u8]>, $api::alloc::AllocError> {
                // SAFETY: forwarded from the caller.
                unsafe { Allocator::grow_zeroed(self, ptr, old, new) }
                    .map_err(|_| $api::alloc::AllocError)
            }

            unsafe fn shrink(
                &self,
                ptr: NonNull<u8>,
                old: Layout,
                new: Layout,
            ) -> Result<NonNull<[u8]>, $api::alloc::AllocError> {
                // SAFETY: forwarded from the caller.
                unsafe { Allocator::shrink(self, ptr, old, new) }
                    .map_err(|_| $api::alloc::AllocError)
            }
        }
    };
}

#[cfg(feature = "allocator-api2-03")]
allocator_of_version!(allocator_api2_03);
#[cfg(feature = "allocator-api2-04")]
allocator_of_version!(allocator_api2_04);
