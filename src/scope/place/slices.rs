//! Slices of known length, written once for every surface: copies, clones and fills.
//!
//! Invariant: a slice's elements are all written before its one finalizer record is
//! linked; if the code that makes them panics, the ones made so far are dropped,
//! nothing is linked, and the room goes back when it is still the newest allocation.
use core::mem::{align_of, needs_drop};
use core::ptr::{self, NonNull};

use crate::error::{AllocError, AllocErrorWith};
use crate::limits::MAX_ALIGN;
use crate::scope::finalizer::{self, SliceLayout};

use super::core::{bump_checked, overflow, Core, GiveBack};
use super::raw::try_array;

/// `try_alloc_slice_copy`. A short slice of small elements takes the fast bump.
#[inline]
pub(crate) fn try_alloc_slice_copy<'s, C: Core<'s>, T: Copy>(
    c: C,
    src: &[T],
) -> Result<&'s mut [T], AllocError> {
    let bytes = core::mem::size_of_val(src);
    let fast = if align_of::<T>() <= MAX_ALIGN && bytes != 0 && bytes <= MAX_ALIGN {
        c.bump_fast(bytes, align_of::<T>())
    } else {
        None
    };
    let dst = match fast {
        Some(p) => p.cast::<T>(),
        None => try_array::<C, T>(c, src.len())?,
    };
    // SAFETY: `dst` has room for `src.len()` `T`s and does not overlap `src` (it is fresh
    // memory). `T: Copy`, so a bitwise copy is a valid value.
    unsafe {
        ptr::copy_nonoverlapping(src.as_ptr(), dst.as_ptr(), src.len());
        Ok(core::slice::from_raw_parts_mut(dst.as_ptr(), src.len()))
    }
}

/// `try_alloc_slice_fill_copy`: the value comes back with the error.
#[inline]
pub(crate) fn try_alloc_slice_fill_copy<'s, C: Core<'s>, T: Copy>(
    c: C,
    len: usize,
    value: T,
) -> Result<&'s mut [T], AllocErrorWith<T>> {
    let first = match try_array::<C, T>(c, len) {
        Ok(p) => p,
        Err(error) => return Err(AllocErrorWith { error, value }),
    };
    // SAFETY: room for `len` `T`s (or `T` is zero-sized and `first` is aligned); copying
    // a `Copy` value cannot panic.
    unsafe {
        for i in 0..len {
            first.as_ptr().add(i).write(value);
        }
        Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len))
    }
}

/// `try_alloc_slice_fill_with`: one record for the slice when `T` needs drop.
///
/// # Safety
/// As `values::try_new_object`: `T` may be dropped where this surface runs its chain,
/// and its destructor reads no destroyed data.
#[inline]
pub(crate) unsafe fn try_alloc_slice_fill_with<'s, C: Core<'s>, T>(
    c: C,
    len: usize,
    mut f: impl FnMut(usize) -> T,
) -> Result<&'s mut [T], AllocError> {
    let from = c.top();
    if !needs_drop::<T>() || len == 0 {
        let dst = try_array::<C, T>(c, len)?;
        let give_back = GiveBack::new(c, from);
        // SAFETY: `dst` has room for `len` elements (or `T` is zero-sized); `fill`
        // initialises all of them or drops what it built and panics.
        unsafe {
            fill(dst, len, &mut f);
            core::mem::forget(give_back);
            return Ok(core::slice::from_raw_parts_mut(dst.as_ptr(), len));
        }
    }
    let size = SliceLayout::<T>::size(len).ok_or_else(|| overflow(c, align_of::<T>()))?;
    let record = bump_checked(c, size, SliceLayout::<T>::ALIGN)?;
    let give_back = GiveBack::new(c, from);
    // SAFETY: `record` has room for the slice record and `len` elements at the right
    // alignment. The record is linked only once every element is built, so a panic in
    // `f` leaves it unlinked and the guard may release its bytes. The drop rule holds
    // per the caller.
    unsafe {
        let first = finalizer::write_slice_record::<T>(record, len);
        fill(first, len, &mut f);
        core::mem::forget(give_back);
        c.link(record);
        Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len))
    }
}

/// `try_alloc_slice_clone`.
///
/// # Safety
/// As [`try_alloc_slice_fill_with`].
#[inline]
pub(crate) unsafe fn try_alloc_slice_clone<'s, C: Core<'s>, T: Clone>(
    c: C,
    src: &[T],
) -> Result<&'s mut [T], AllocError> {
    // SAFETY: forwarded.
    unsafe { try_alloc_slice_fill_with(c, src.len(), |i| src[i].clone()) }
}

/// `try_alloc_slice_fill_clone`.
///
/// # Safety
/// As [`try_alloc_slice_fill_with`].
#[inline]
pub(crate) unsafe fn try_alloc_slice_fill_clone<'s, C: Core<'s>, T: Clone>(
    c: C,
    len: usize,
    value: &T,
) -> Result<&'s mut [T], AllocError> {
    // SAFETY: forwarded.
    unsafe { try_alloc_slice_fill_with(c, len, |_| value.clone()) }
}

/// `try_alloc_slice_fill_default`.
///
/// # Safety
/// As [`try_alloc_slice_fill_with`].
#[inline]
pub(crate) unsafe fn try_alloc_slice_fill_default<'s, C: Core<'s>, T: Default>(
    c: C,
    len: usize,
) -> Result<&'s mut [T], AllocError> {
    // SAFETY: forwarded.
    unsafe { try_alloc_slice_fill_with(c, len, |_| T::default()) }
}

/// Initialises `len` elements at `first` from `f`; on a panic in `f`, drops the elements
/// already built and lets the panic go on.
///
/// # Safety
/// `first` has room for `len` `T`s (or `T` is zero-sized and `first` is aligned).
pub(crate) unsafe fn fill<T>(first: NonNull<T>, len: usize, f: &mut impl FnMut(usize) -> T) {
    struct Built<T> {
        first: NonNull<T>,
        done: usize,
    }
    impl<T> Drop for Built<T> {
        fn drop(&mut self) {
            // SAFETY: the first `done` elements were initialised and not yet handed out.
            unsafe {
                ptr::drop_in_place(ptr::slice_from_raw_parts_mut(
                    self.first.as_ptr(),
                    self.done,
                ))
            };
        }
    }
    let mut built = Built { first, done: 0 };
    while built.done < len {
        let v = f(built.done);
        // SAFETY: `done < len`, so the slot is inside the room the caller gave us.
        unsafe { first.as_ptr().add(built.done).write(v) };
        built.done += 1;
    }
    core::mem::forget(built);
}
