//! Slices collected from iterators, written once for every surface: `alloc_iter` (any
//! length, grown in place at the top of the surface's region) and `alloc_iter_exact`.
//!
//! Invariants: every element is written before the slice's one finalizer record is
//! linked; a slice that has to move while it grows (the iterator allocated above it, or
//! the region ran out) leaves its old room unused, never reused while live; while room
//! is claimed ahead of the elements, statistics leave the claimed tail out; on an error
//! or a panic the elements built so far are dropped once each and the room goes back
//! when it is still the newest allocation.
use core::marker::PhantomData;
use core::mem::{align_of, needs_drop, size_of};
use core::ptr::{self, NonNull};

use crate::error::AllocError;
use crate::limits::MAX_ALIGN;
use crate::scope::dangling;
use crate::scope::finalizer::{self, SliceLayout};

use super::core::{bump_checked, overflow, Core};
use super::slices::try_alloc_slice_fill_with;

/// Claim at least this many bytes ahead of the elements, so that short slices of small
/// elements claim once.
const MIN_AHEAD: usize = 256;

/// `try_alloc_iter`: collects any iterator; the slice grows in place while it is the
/// newest allocation of this surface's region.
///
/// # Safety
/// As `values::try_new_object` when `T` needs drop; nothing when it does not.
#[inline]
pub(crate) unsafe fn try_alloc_iter<'s, C: Core<'s>, T>(
    c: C,
    iter: impl IntoIterator<Item = T>,
) -> Result<&'s mut [T], AllocError> {
    let mut iter = iter.into_iter();
    // The iterator's lower bound is claimed at once (so a long slice whose new room is
    // apart from any region, a concurrent scope's direct claim, is not moved again and
    // again on its way there).
    let hint = iter.size_hint().0;
    // Room before the first element: a slice record when `T` needs drop.
    let (head, align) = if needs_drop::<T>() {
        (SliceLayout::<T>::VALUE_OFFSET, SliceLayout::<T>::ALIGN)
    } else {
        (0, align_of::<T>())
    };
    if align > MAX_ALIGN {
        return Err(bump_checked(c, size_of::<T>(), align).unwrap_err());
    }
    // Nothing is claimed until the first element comes: an empty iterator takes no
    // memory and links no record. Until then `end == claimed == usize::MAX`, which sends
    // the first element to `claim_more`.
    let mut grow = Growing::<C, T> {
        core: c,
        from: 0,
        first: dangling(align_of::<T>()).cast::<T>(),
        len: 0,
        end: usize::MAX,
        claimed: usize::MAX,
        outer: c.gaps_save(),
        hint,
        #[cfg(feature = "tracy")]
        shown: (0, 0),
        _s: PhantomData,
    };
    for value in iter.by_ref() {
        if size_of::<T>() == 0 {
            // Zero-sized elements take no room; a slice record does.
            if needs_drop::<T>() && grow.len == 0 {
                if let Err(e) = claim_more(&mut grow, head, align) {
                    drop(value);
                    return Err(e);
                }
            }
            // SAFETY: any aligned pointer is valid for a zero-sized write; `first` is
            // aligned. The value is forgotten into the slice and counted.
            unsafe { grow.first.as_ptr().write(value) };
            grow.len += 1;
            continue;
        }
        if grow.claimed - grow.end < size_of::<T>() {
            if let Err(e) = claim_more(&mut grow, head, align) {
                drop(value);
                return Err(e);
            }
        }
        // SAFETY: `[end, end + size)` lies in the room this call claimed (`end + size <=
        // claimed`, and nothing else is handed out below `claimed`); `end` is aligned for
        // `T` (elements are contiguous from the aligned `first`).
        unsafe { grow.first.as_ptr().add(grow.len).write(value) };
        grow.len += 1;
        grow.end += size_of::<T>();
        // The element is in use now: the statistics' gap starts after it, so memory the
        // iterator takes above the claim is counted on top of it.
        c.gaps_raise(grow.end);
    }
    // The iterator's own drop may run user code; the elements stay guarded until then.
    drop(iter);
    let len = grow.len;
    let first = grow.first;
    if len != 0 && size_of::<T>() != 0 {
        // Give back the room claimed ahead (if it is still the newest allocation) and
        // count only what was kept.
        // SAFETY: `[end, claimed)` was claimed by this call and holds nothing.
        unsafe { c.end_reservation(grow.claimed, grow.end, grow.outer) };
        // The profiler saw the latest claim's size; show what the slice kept.
        #[cfg(feature = "tracy")]
        {
            let (at, size) = grow.shown;
            if size != 0 && grow.end - at != size {
                crate::profiler::realloc(c.profiler_pool(), at, at, grow.end - at);
            }
        }
    } else {
        c.gaps_restore(&grow.outer);
    }
    core::mem::forget(grow);
    // SAFETY: `len` initialised elements from `first`; when `T` needs drop and `len` is
    // not 0, a slice record's room lies right before them (`head` bytes at `align`,
    // carved by `claim_more`). The record is linked now that every element is built
    // (records the iterator linked meanwhile were finished first, so they are destroyed
    // after the slice). The drop rule holds per the caller.
    unsafe {
        if needs_drop::<T>() && len != 0 {
            let record = first.cast::<u8>().sub(head);
            let slot = finalizer::write_slice_record::<T>(record, len);
            debug_assert_eq!(slot, first);
            c.link(record);
        }
        Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len))
    }
}

/// `try_alloc_iter_pod`: collects items that need no drop, with no `'static` bound
/// (no record is linked, so no destructor can see a dead borrow).
#[inline]
pub(crate) fn try_alloc_iter_pod<'s, C: Core<'s>, T>(
    c: C,
    iter: impl IntoIterator<Item = T>,
) -> Result<&'s mut [T], AllocError> {
    const {
        assert!(
            !needs_drop::<T>(),
            "alloc_iter_pod: this type needs drop; use alloc_iter"
        )
    };
    // SAFETY: `T` needs no drop, so no finalizer is linked and the drop rule is moot.
    unsafe { try_alloc_iter(c, iter) }
}

/// Claims room for at least one more element of a slice being collected. If the claimed
/// room is still the top of the region and the region has the room, it grows in place
/// (doubling). Otherwise (the first element, the iterator allocated since the last
/// claim, or this thread's chunk is full) it carves new room and moves the elements
/// built so far there, leaving their old bytes as a hole.
#[cold]
#[inline(never)]
fn claim_more<'s, C: Core<'s>, T>(
    grow: &mut Growing<'s, C, T>,
    head: usize,
    align: usize,
) -> Result<(), AllocError> {
    let c = grow.core;
    let size = size_of::<T>();
    let built = grow.len * size;
    // Claim ahead as much as is built so far, like a `Vec` doubling, so collecting `n`
    // elements takes O(log n) claims. Zero-sized elements need room for the record alone.
    let hinted = grow.hint.saturating_sub(grow.len).saturating_mul(size);
    let ahead = if size == 0 {
        0
    } else {
        built.max(MIN_AHEAD).max(size).max(hinted)
    };
    let cur = c.top();
    let limit = c.limit();
    if cur == grow.claimed {
        let need = grow.end + size - grow.claimed;
        let room = limit.saturating_sub(cur);
        if room >= need {
            // Grow in place: the elements stay where they are.
            grow.claimed = cur + ahead.max(need).min(room);
            // SAFETY: `[cur, claimed)` is free room of this region below its limit.
            unsafe { c.set_top(grow.claimed) };
            c.gaps_set(&grow.outer, grow.end, grow.claimed);
            return Ok(());
        }
    }
    let bytes = head
        .checked_add(built)
        .and_then(|b| b.checked_add(size))
        .ok_or_else(|| overflow(c, align))?;
    // When the slice fits at the top of the current region (or of a fresh one, such as a
    // thread's next chunk), bump the minimum there and claim ahead in place below. Otherwise ask for the room ahead at once (new room
    // elsewhere, such as a concurrent scope's direct claim, has no top to grow into
    // later), and for the bare minimum only when that does not fit.
    let top = c.top();
    let aligned = top.checked_add(align - 1).map(|t| t & !(align - 1));
    let fits_here = aligned.is_some_and(|a| a <= c.limit() && bytes <= c.limit() - a);
    let ahead_at_once = if fits_here || c.fits_new_region(bytes, align) {
        None
    } else {
        // Room apart from any region: claim ahead what the iterator promises beyond this
        // element, or as much as is built (doubling), but no fixed minimum. The tail is
        // given back at the end when no other claim followed it (`end_reservation`);
        // when one did, what stays unused is at most what the slice holds.
        let direct_ahead = built.max(hinted_after(grow, size));
        bytes
            .checked_add(direct_ahead)
            .filter(|&more| more > bytes)
            .and_then(|more| Some((bump_checked(c, more, align).ok()?, more)))
    };
    let (start, got) = match ahead_at_once {
        Some(claimed) => claimed,
        None => (bump_checked(c, bytes, align)?, bytes),
    };
    let start_addr = start.as_ptr().addr();
    let bumped_to = start_addr + got;
    // SAFETY: `start` has room for `head` bytes and `len + 1` elements (and `got` bytes
    // in all), is fresh (so it does not overlap the old elements) and aligned. The elements are moved bitwise;
    // their old copies are never used again.
    unsafe {
        let first = start.add(head).cast::<T>();
        ptr::copy_nonoverlapping(grow.first.as_ptr(), first.as_ptr(), grow.len);
        grow.first = first;
    }
    grow.end = start_addr + head + built;
    grow.claimed = bumped_to;
    #[cfg(feature = "tracy")]
    {
        grow.shown = (start_addr, got);
    }
    if got == bytes && c.top() == bumped_to {
        // The new room is the top of the region: claim some more ahead where it fits.
        let extra = c.limit().saturating_sub(bumped_to).min(ahead);
        grow.claimed = bumped_to + extra;
        // SAFETY: `[bumped_to, claimed)` is free room of this region below its limit.
        unsafe { c.set_top(grow.claimed) };
    }
    // If collection fails now, the new place (and its padding, when it followed the old
    // top in the same region) is what goes back.
    grow.from = if cur <= start_addr && start_addr - cur < align {
        cur
    } else {
        start_addr
    };
    c.gaps_set(&grow.outer, grow.end, grow.claimed);
    Ok(())
}

/// Bytes of the elements the iterator still promises after the one being placed.
#[inline]
fn hinted_after<'s, C: Core<'s>, T>(grow: &Growing<'s, C, T>, size: usize) -> usize {
    grow.hint
        .saturating_sub(grow.len.saturating_add(1))
        .saturating_mul(size)
}

/// A slice being collected: `len` elements built from `first`, ending at `end`, in room
/// claimed up to `claimed`. If dropped (an error or a panic), it drops those elements
/// and, if the claimed room is still the newest allocation, gives it back down to
/// `from`; either way it restores the statistics saved in `outer`.
struct Growing<'s, C: Core<'s>, T> {
    core: C,
    /// The bump pointer before the slice's room (at its latest place) was carved.
    from: usize,
    first: NonNull<T>,
    len: usize,
    /// Address one past the last built element (for a zero-sized `T`, past the head).
    end: usize,
    /// Address one past the room claimed.
    claimed: usize,
    outer: C::Gaps,
    /// The iterator's lower bound on its length, claimed ahead at the first claim.
    hint: usize,
    /// The latest claim as the profiler saw it (address and size; size 0 for none).
    #[cfg(feature = "tracy")]
    shown: (usize, usize),
    _s: PhantomData<&'s ()>,
}

impl<'s, C: Core<'s>, T> Drop for Growing<'s, C, T> {
    #[cold]
    fn drop(&mut self) {
        /// Gives the bytes back after the drops, even if one of them panics.
        struct Rewind<'s, C: Core<'s>> {
            core: C,
            from: usize,
            end: usize,
            claimed: usize,
            outer: C::Gaps,
            #[cfg(feature = "tracy")]
            shown: (usize, usize),
            _s: PhantomData<&'s ()>,
        }
        impl<'s, C: Core<'s>> Drop for Rewind<'s, C> {
            fn drop(&mut self) {
                // Only if nothing was allocated above the room. The claimed tail goes
                // first, uncounted; the built elements were real use, so the high-water
                // mark sees them.
                let c = self.core;
                let at_top = self.claimed != usize::MAX && c.top() == self.claimed;
                if at_top {
                    // SAFETY: `[end, claimed)` was claimed ahead and holds nothing.
                    unsafe { c.set_top(self.end) };
                }
                c.gaps_restore(&self.outer);
                if at_top && self.end != self.from {
                    // SAFETY: the elements in `[from, end)` were dropped; no record
                    // points into the room.
                    unsafe { c.give_back(self.from, self.end) };
                    #[cfg(feature = "tracy")]
                    if self.shown.1 != 0 {
                        crate::profiler::free(c.profiler_pool(), self.shown.0);
                    }
                }
            }
        }
        let _rewind = Rewind {
            core: self.core,
            from: self.from,
            end: self.end,
            claimed: self.claimed,
            outer: self.outer,
            #[cfg(feature = "tracy")]
            shown: self.shown,
            _s: PhantomData,
        };
        // SAFETY: the first `len` elements were initialised and never handed out; this
        // drops each once (`drop_in_place` on a slice goes on past a panicking one).
        unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.first.as_ptr(), self.len)) };
    }
}

/// `try_alloc_iter_exact`: the room is reserved once, from the iterator's `len`.
///
/// # Safety
/// As [`try_alloc_iter`].
#[inline]
#[track_caller]
pub(crate) unsafe fn try_alloc_iter_exact<'s, C: Core<'s>, T, I>(
    c: C,
    iter: I,
) -> Result<&'s mut [T], AllocError>
where
    I: IntoIterator<Item = T>,
    I::IntoIter: ExactSizeIterator,
{
    let mut iter = iter.into_iter();
    let len = iter.len();
    // SAFETY: forwarded.
    unsafe {
        try_alloc_slice_fill_with(c, len, |i| match iter.next() {
            Some(v) => v,
            None => short_iterator(len, i),
        })
    }
}

/// The panic for an `ExactSizeIterator` that ended before its `len`.
#[cold]
#[inline(never)]
#[track_caller]
fn short_iterator(len: usize, got: usize) -> ! {
    panic!("alloc_iter_exact: the iterator said it had {len} items but ended after {got}")
}
