//! Single values, written once for every surface: `new_pod`, `new_object` (with runs of
//! one type sharing a record where the chain is this thread's), in-place construction
//! and uninitialised room.
//!
//! Invariant: a value that needs drop is fully written before its record (or its run's
//! count) makes it visible to the chain; values that need no drop get no record.
use core::mem::{align_of, needs_drop, size_of, MaybeUninit};
use core::ptr::NonNull;

use crate::error::{AllocError, AllocErrorWith};
use crate::limits::MAX_ALIGN;
use crate::scope::dangling;
use crate::scope::finalizer::{self, ObjectLayout, RunLayout};

use super::core::{bump_const, Core, GiveBack};

/// Writes `value` at `slot` and returns it with the scope's lifetime.
///
/// # Safety
/// `slot` is valid, aligned and exclusive for a `T` for `'s`.
#[inline(always)]
unsafe fn place<'s, T>(slot: NonNull<T>, value: T) -> &'s mut T {
    // SAFETY: per the caller.
    unsafe {
        slot.as_ptr().write(value);
        &mut *slot.as_ptr()
    }
}

/// Calls `f` and writes its result straight to `slot`, so a large result can be built
/// in place rather than in a stack temporary.
///
/// # Safety
/// As [`place`].
#[inline(always)]
unsafe fn place_with<'s, T>(slot: NonNull<T>, f: impl FnOnce() -> T) -> &'s mut T {
    // SAFETY: per the caller.
    unsafe {
        slot.as_ptr().write(f());
        &mut *slot.as_ptr()
    }
}

/// `new_pod`: one bump and one branch for a small type.
#[inline(always)]
#[track_caller]
pub(crate) fn new_pod<'s, C: Core<'s>, T>(c: C, value: T) -> &'s mut T {
    const {
        assert!(
            !needs_drop::<T>(),
            "new_pod: this type needs drop; use new_object"
        )
    };
    if size_of::<T>() == 0 {
        // SAFETY: any aligned non-null pointer holds a zero-sized value.
        return unsafe { place(dangling(align_of::<T>()).cast(), value) };
    }
    if size_of::<T>() > MAX_ALIGN || align_of::<T>() > MAX_ALIGN {
        return match try_new_pod(c, value) {
            Ok(r) => r,
            Err(e) => c.fail(e.error),
        };
    }
    // Both conditions above are constants: small types come straight here, to one bump
    // and one branch.
    let at = c.bump_fast(size_of::<T>(), align_of::<T>());
    if size_of::<T>() <= 16 {
        // A value that travels in registers: the slow path takes it along, so the fast
        // path keeps nothing alive across a call.
        return match at {
            // SAFETY: fresh room sized and aligned for `T`, valid for `'s`.
            Some(p) => unsafe { place(p.cast(), value) },
            None => new_pod_cold(c, value),
        };
    }
    // A larger value is written once, after the branches meet, so the compiler can
    // build it in place instead of on the stack.
    let p = match at {
        Some(p) => p,
        None => c.bump_cold(size_of::<T>(), align_of::<T>()),
    };
    // SAFETY: as above.
    unsafe { place(p.cast(), value) }
}

/// `new_pod` past the fast path: a new chunk, or the out-of-memory panic.
#[cold]
#[inline(never)]
#[track_caller]
fn new_pod_cold<'s, C: Core<'s>, T>(c: C, value: T) -> &'s mut T {
    let p = c.bump_cold(size_of::<T>(), align_of::<T>());
    // SAFETY: fresh room sized and aligned for `T`, valid for `'s`.
    unsafe { place(p.cast(), value) }
}

/// Room for one `T` (an aligned dangling pointer when it is zero-sized).
#[inline(always)]
fn bump_value<'s, C: Core<'s>, T>(c: C) -> Result<NonNull<T>, AllocError> {
    if size_of::<T>() == 0 {
        return Ok(dangling(align_of::<T>()).cast());
    }
    Ok(bump_const(c, size_of::<T>(), align_of::<T>())?.cast())
}

/// `try_new_pod`: the value comes back with the error.
#[inline(always)]
pub(crate) fn try_new_pod<'s, C: Core<'s>, T>(
    c: C,
    value: T,
) -> Result<&'s mut T, AllocErrorWith<T>> {
    const {
        assert!(
            !needs_drop::<T>(),
            "try_new_pod: this type needs drop; use try_new_object"
        )
    };
    match bump_value::<C, T>(c) {
        // SAFETY: fresh room for a `T` that needs no drop, valid for `'s`.
        Ok(p) => Ok(unsafe { place(p, value) }),
        Err(error) => Err(AllocErrorWith { error, value }),
    }
}

/// `try_new_object`: a record when `T` needs drop (extending the newest run of `T` when
/// it ends at the top of this thread's chain), none otherwise.
///
/// # Safety
/// `T` may be dropped where this surface runs its chain (`Send` on concurrent
/// surfaces). `T: 'static` keeps its destructor from reading destroyed data.
#[inline]
pub(crate) unsafe fn try_new_object<'s, C: Core<'s>, T: 'static>(
    c: C,
    value: T,
) -> Result<&'s mut T, AllocErrorWith<T>> {
    if !needs_drop::<T>()
        || size_of::<T>() == 0
        || size_of::<T>() > MAX_ALIGN
        || align_of::<T>() > MAX_ALIGN
    {
        // No record, or a record of its own (a run is for small values only).
        // SAFETY: forwarded from the caller; `T: 'static`.
        return unsafe { try_new_object_unchecked(c, value) };
    }
    if let Some(slot) = extend_run::<C, T>(c) {
        // SAFETY: `slot` is the fresh room right after the open run; the value is written
        // before the run counts it (per the caller, the drop rule holds).
        unsafe {
            slot.as_ptr().write(value);
            c.chain().unwrap_unchecked().grow_run::<T>();
            return Ok(&mut *slot.as_ptr());
        }
    }
    let record = match bump_const(c, RunLayout::<T>::FIRST_SIZE, RunLayout::<T>::ALIGN) {
        Ok(p) => p,
        Err(error) => return Err(AllocErrorWith { error, value }),
    };
    // SAFETY: `record` has room for a run record and one `T`, aligned; the value is
    // written before the record is linked; the drop rule holds per the caller.
    unsafe {
        let slot = finalizer::write_run_record::<T>(record);
        slot.as_ptr().write(value);
        link_run::<C, T>(c, record);
        Ok(&mut *slot.as_ptr())
    }
}

/// Room for one more `T` right behind the open run of `T` at the top of this thread's
/// chain, when there is one and it fits in the current region.
#[inline(always)]
fn extend_run<'s, C: Core<'s>, T: 'static>(c: C) -> Option<NonNull<T>> {
    let chain = c.chain()?;
    chain.run_end::<T>(c.top())?;
    let slot = c.bump_fast(size_of::<T>(), align_of::<T>())?;
    Some(slot.cast())
}

/// Links a run record: as an open run on this thread's chain, or as a record of one
/// value on a shared chain.
///
/// # Safety
/// As [`Core::link`]; `record` was written by `write_run_record::<T>`.
#[inline(always)]
unsafe fn link_run<'s, C: Core<'s>, T: 'static>(c: C, record: NonNull<u8>) {
    match c.chain() {
        // SAFETY: forwarded.
        Some(chain) => unsafe { chain.link_run::<T>(record) },
        // SAFETY: forwarded; a run record says `len: 1` until it is extended, which
        // only an open run on an exclusive chain is.
        None => unsafe { c.link(record) },
    }
}

/// `try_new_pod_with`: the room first, then `f` builds the value in it.
#[inline(always)]
pub(crate) fn try_new_pod_with<'s, C: Core<'s>, T>(
    c: C,
    f: impl FnOnce() -> T,
) -> Result<&'s mut T, AllocError> {
    const {
        assert!(
            !needs_drop::<T>(),
            "new_pod_with: this type needs drop; use new_object_with"
        )
    };
    let slot = bump_value::<C, T>(c)?;
    // SAFETY: fresh room for a `T` that needs no drop; if `f` panics the guard gives the
    // room back (nothing was written or linked).
    unsafe { Ok(build_in(c, slot, f)) }
}

/// Builds `f()` in `slot`, giving its room back if `f` panics.
///
/// # Safety
/// `slot` is fresh room for a `T`, valid for `'s`, at the top of the region.
#[inline(always)]
unsafe fn build_in<'s, C: Core<'s>, T>(c: C, slot: NonNull<T>, f: impl FnOnce() -> T) -> &'s mut T {
    // A zero-sized `T` took nothing: nothing to give back. Otherwise the room goes back
    // from the slot on (its alignment padding stays taken, as after any hole).
    let at = if size_of::<T>() == 0 {
        c.top()
    } else {
        slot.as_ptr().addr()
    };
    let give_back = GiveBack::new(c, at);
    // SAFETY: per the caller.
    let value = unsafe { place_with(slot, f) };
    core::mem::forget(give_back);
    value
}

/// `try_new_object_with`: as [`try_new_object`], built in place.
///
/// # Safety
/// As [`try_new_object`].
#[inline(always)]
pub(crate) unsafe fn try_new_object_with<'s, C: Core<'s>, T: 'static>(
    c: C,
    f: impl FnOnce() -> T,
) -> Result<&'s mut T, AllocError> {
    let from = c.top();
    if !needs_drop::<T>() {
        let slot = bump_value::<C, T>(c)?;
        // SAFETY: fresh room for a `T` that needs no drop, so no record.
        return Ok(unsafe { build_in(c, slot, f) });
    }
    let record = bump_const(c, RunLayout::<T>::FIRST_SIZE, RunLayout::<T>::ALIGN)?;
    let give_back = GiveBack::new(c, from);
    // SAFETY: `record` has room for a run record and one `T`, aligned. The record is
    // linked only once the value is written, so a panic in `f` leaves it unlinked and
    // the guard may release its bytes. If `f` linked records of its own meanwhile, ours
    // goes on top of them: its value was finished last, so it is destroyed first. The
    // drop rule holds per the caller.
    unsafe {
        let slot = finalizer::write_run_record::<T>(record);
        slot.as_ptr().write(f());
        core::mem::forget(give_back);
        link_run::<C, T>(c, record);
        Ok(&mut *slot.as_ptr())
    }
}

/// `try_new_object_unchecked`: a record of its own for a value that needs drop, with no
/// `'static` bound (so no run, which is keyed by `TypeId`).
///
/// # Safety
/// The drop rule holds for `value` by the caller's proof (see
/// `ScopeStack::new_object_unchecked`), and as for [`try_new_object`].
#[inline]
pub(crate) unsafe fn try_new_object_unchecked<'s, C: Core<'s>, T>(
    c: C,
    value: T,
) -> Result<&'s mut T, AllocErrorWith<T>> {
    if !needs_drop::<T>() {
        return match bump_value::<C, T>(c) {
            // SAFETY: fresh room for a `T` that needs no drop: no record.
            Ok(p) => Ok(unsafe { place(p, value) }),
            Err(error) => Err(AllocErrorWith { error, value }),
        };
    }
    let record = match bump_const(c, ObjectLayout::<T>::SIZE, ObjectLayout::<T>::ALIGN) {
        Ok(p) => p,
        Err(error) => return Err(AllocErrorWith { error, value }),
    };
    // SAFETY: `record` has `ObjectLayout::<T>::SIZE` bytes at `ALIGN`. The value is
    // written before the record is linked; the caller vouches for the drop rule.
    unsafe {
        let slot = finalizer::write_object_record::<T>(record);
        slot.as_ptr().write(value);
        c.link(record);
        Ok(&mut *slot.as_ptr())
    }
}

/// `try_alloc_uninit`: room for one `T`, never dropped by the scope.
#[inline]
pub(crate) fn try_alloc_uninit<'s, C: Core<'s>, T>(
    c: C,
) -> Result<&'s mut MaybeUninit<T>, AllocError> {
    let slot = bump_value::<C, T>(c)?;
    #[cfg(feature = "debug-fill")]
    crate::block::debug_fill::fresh(slot.cast::<u8>(), size_of::<T>());
    // SAFETY: fresh, exclusive, aligned room for a `T` for `'s`; a `MaybeUninit` needs no
    // initialisation.
    Ok(unsafe { &mut *slot.as_ptr().cast::<MaybeUninit<T>>() })
}
