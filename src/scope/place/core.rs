//! The private core every placement method is written over: the [`Core`] trait (raw
//! bump, finalizer record, error context), checked bumps, and the guard that gives
//! room back when the code filling it panics.
//!
//! Invariant: the generic code moves a region's top only through [`Core::set_top`],
//! [`Core::give_back`] and [`Core::end_reservation`], and only over room it claimed.
use core::ptr::NonNull;

use crate::error::{AllocError, AllocErrorKind};
use crate::limits::MAX_ALIGN;

use crate::scope::finalizer::Chain;

/// The three things a surface supplies to the shared placement code: raw bumps, the
/// finalizer record, and the error context.
///
/// Public in name only: it lives in a private module, so no user can name, implement or
/// call it (the sealed-trait pattern); [`Place`] uses it as a hidden supertrait.
///
/// # Safety
/// An implementation promises what the generic code relies on:
/// - every pointer a `bump*` method returns is fresh room of the requested size and
///   alignment, exclusive to the caller, valid for `'s`, in memory the surface's owner
///   rewinds only when `'s` ends;
/// - [`top`](Self::top)`..`[`limit`](Self::limit) is room nobody else hands out while the
///   surface is used from this thread, and `top` is where the next bump in it begins;
/// - [`link`](Self::link) and [`chain`](Self::chain) lead to a chain that runs when `'s`
///   ends, on a thread allowed to drop what the wrapper admitted.
pub unsafe trait Core<'s>: Copy {
    /// Saved reservation statistics (see [`gaps_save`](Self::gaps_save)).
    type Gaps: Copy;

    /// Fast bump of `0 < size <= MAX_ALIGN` bytes at a power-of-two `align <= MAX_ALIGN`
    /// in the current region, or `None` when it does not fit there.
    fn bump_fast(self, size: usize, align: usize) -> Option<NonNull<u8>>;

    /// After [`bump_fast`](Self::bump_fast) failed: the slow path (a new chunk), or a
    /// panic that says why there is no room.
    fn bump_cold(self, size: usize, align: usize) -> NonNull<u8>;

    /// Bump of `0 < size <= isize::MAX` bytes at a power-of-two `align <= MAX_ALIGN`.
    fn bump(self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError>;

    /// The chain this surface links into when only this thread links there, which lets
    /// runs of one type share a record; `None` for a shared chain.
    fn chain(self) -> Option<&'s Chain>;

    /// Links a finalizer record.
    ///
    /// # Safety
    /// As `Chain::link`: the record was written by `finalizer`, its value is complete,
    /// it lies in this surface's memory, and the drop rule holds for its value.
    unsafe fn link(self, record: NonNull<u8>);

    /// An error of `kind` for a request of `size` bytes at `align`, naming this scope.
    fn error(self, kind: AllocErrorKind, size: usize, align: usize) -> AllocError;

    /// Panics with `e` (and whatever this surface prints with it).
    fn fail(self, e: AllocError) -> !;

    /// The bump pointer of this surface's own region (an address).
    fn top(self) -> usize;

    /// Where this surface's current region begins: nothing below it may be given back
    /// or grown through [`top`](Self::top).
    fn region_start(self) -> usize;

    /// The end of the room above [`top`](Self::top) (at most `top` when there is none).
    fn limit(self) -> usize;

    /// Whether a bump of `size` bytes at `align` that does not fit above
    /// [`top`](Self::top) would start a fresh region and land at its top (a thread's
    /// next chunk), rather than fail or be placed apart from any region.
    fn fits_new_region(self, size: usize, align: usize) -> bool;

    /// Whether the room above [`top`](Self::top) is all this surface can ever hand out
    /// (a plain scope), so what does not fit there fits nowhere.
    fn one_region(self) -> bool;

    /// Moves the bump pointer of this surface's region to `to`.
    ///
    /// # Safety
    /// `to` lies in the current region (between the region's start and
    /// [`limit`](Self::limit)) and no byte at or above `to` below the old top is in use.
    unsafe fn set_top(self, to: usize);

    /// Gives `[from, to)` back when it is the newest allocation of this region (the top
    /// is `to` and `from` lies in the current region); otherwise does nothing.
    ///
    /// # Safety
    /// Nothing in `[from, to)` is in use any more.
    unsafe fn give_back(self, from: usize, to: usize);

    /// A pointer to `addr` with the block's provenance.
    fn ptr_at(self, addr: usize) -> NonNull<u8>;

    /// Saves the block's reservation statistics before claiming room ahead of use.
    fn gaps_save(self) -> Self::Gaps;
    /// Marks `[from, to)` as claimed but unused (left out of statistics).
    fn gaps_set(self, saved: &Self::Gaps, from: usize, to: usize);
    /// Raises the start of the claimed-but-unused room to `from`.
    fn gaps_raise(self, from: usize);
    /// Restores the statistics saved by [`gaps_save`](Self::gaps_save).
    fn gaps_restore(self, saved: &Self::Gaps);

    /// Ends room claimed ahead up to `claimed`: restores the statistics and, when the
    /// room is still the top of the region, keeps `[.., keep)` and gives the rest back.
    ///
    /// # Safety
    /// Nothing in `[keep, claimed)` is in use.
    unsafe fn end_reservation(self, claimed: usize, keep: usize, saved: Self::Gaps);

    /// Lists a container carved from this surface in its scope's reports (a copy of
    /// `link` is placed in the scope's memory). With no room for it the container
    /// works all the same, unreported.
    ///
    /// # Safety
    /// `link.snapshot` reads only memory of this scope that stays valid (and
    /// initialised) until the scope ends.
    unsafe fn register_pool(self, link: crate::scope::info::PoolLink);

    /// The profiler pool this surface's allocations are shown in (feature `tracy`):
    /// `None` while it is hidden (it opened with no profiler connected).
    #[cfg(feature = "tracy")]
    fn profiler_pool(self) -> Option<&'static crate::profiler::Name>;

    /// Writes the path of this surface's scope as the profiler names it (feature
    /// `tracy`), to name the containers carved from it.
    #[cfg(feature = "tracy")]
    fn profiler_path(self, text: &mut crate::profiler::names::Text);
}

/// Shows `size` bytes placed at `at` through `c` in the profiler (feature `tracy`).
#[cfg(feature = "tracy")]
#[inline]
pub(crate) fn placed<'s, C: Core<'s>>(c: C, at: NonNull<u8>, size: usize) {
    crate::profiler::alloc(c.profiler_pool(), at.as_ptr().addr(), size);
}

/// A value that lends a [`Core`]: a surface's handle as the `Place` trait holds it
/// (by value), lending the core by reference where the surface's core is a reference to
/// a handle, so hot paths pass one pointer.
pub trait Handle<'s> {
    /// The core lent for one call.
    type Core<'h>: Core<'s>
    where
        Self: 'h;
    /// Lends the core.
    fn as_core(&self) -> Self::Core<'_>;
}

/// Checks a runtime (size, align) request and bumps it: zero bytes get an aligned
/// dangling pointer, bad alignments and sizes an error.
#[inline]
pub(crate) fn bump_checked<'s, C: Core<'s>>(
    c: C,
    size: usize,
    align: usize,
) -> Result<NonNull<u8>, AllocError> {
    if !align.is_power_of_two() {
        return Err(c.error(AllocErrorKind::InvalidAlignment, size, align));
    }
    if align > MAX_ALIGN {
        return Err(c.error(AllocErrorKind::AlignmentTooLarge, size, align));
    }
    if size > isize::MAX as usize {
        return Err(c.error(AllocErrorKind::CapacityOverflow, size, align));
    }
    if size == 0 {
        return Ok(crate::scope::dangling(align));
    }
    c.bump(size, align)
}

/// Bumps one block whose size and alignment are compile-time constants; the branches
/// on them fold away.
#[inline(always)]
pub(crate) fn bump_const<'s, C: Core<'s>>(
    c: C,
    size: usize,
    align: usize,
) -> Result<NonNull<u8>, AllocError> {
    if align > MAX_ALIGN {
        return Err(too_aligned(c, size, align));
    }
    if size <= MAX_ALIGN {
        if let Some(p) = c.bump_fast(size, align) {
            return Ok(p);
        }
    }
    c.bump(size, align)
}

#[cold]
#[inline(never)]
fn too_aligned<'s, C: Core<'s>>(c: C, size: usize, align: usize) -> AllocError {
    c.error(AllocErrorKind::AlignmentTooLarge, size, align)
}

/// The error for a length whose bytes overflow.
#[cold]
#[inline(never)]
pub(crate) fn overflow<'s, C: Core<'s>>(c: C, align: usize) -> AllocError {
    c.error(AllocErrorKind::CapacityOverflow, usize::MAX, align)
}

/// Unwraps a placement's result, or panics through the surface.
#[inline(always)]
#[track_caller]
pub(crate) fn or_fail<'s, C: Core<'s>, R>(c: C, r: Result<R, AllocError>) -> R {
    match r {
        Ok(v) => v,
        Err(e) => c.fail(e),
    }
}

/// Releases room that was bumped for user code to fill, if that code panics (the guard
/// is dropped rather than forgotten) and the room is still the newest allocation.
pub(crate) struct GiveBack<'s, C: Core<'s>> {
    pub(crate) core: C,
    pub(crate) from: usize,
    pub(crate) to: usize,
    pub(crate) _s: core::marker::PhantomData<&'s ()>,
}

impl<'s, C: Core<'s>> GiveBack<'s, C> {
    /// A guard for `[from, top)`, the room just bumped.
    #[inline(always)]
    pub(crate) fn new(core: C, from: usize) -> Self {
        GiveBack {
            core,
            from,
            to: core.top(),
            _s: core::marker::PhantomData,
        }
    }
}

impl<'s, C: Core<'s>> Drop for GiveBack<'s, C> {
    #[cold]
    fn drop(&mut self) {
        if self.to != self.from {
            // SAFETY: the user code that would have filled the room panicked; what it
            // built there was dropped by `fill`, and no record points into it.
            unsafe { self.core.give_back(self.from, self.to) };
        }
    }
}
