//! Collecting a sequence of unknown or known length into a slice of the scope: the
//! three strategies of the module docs (grow at the top, carve a known length, stage
//! and move), written once for sequences and maps.
//!
//! Invariants: every element is owned by exactly one place at any time (the source's
//! caller, the staging vector, or the slice being built), so an error or a panic drops
//! each element built so far exactly once; a slice whose elements need drop gets its
//! finalizer record only after its last element is in place; the staging room is given
//! back when the sequence ends, whatever the outcome.
use core::mem::{needs_drop, size_of, MaybeUninit};

use serde::de::Error;

use crate::scope::place::{Handle, Place};
#[cfg(feature = "std")]
use crate::scope::ScopeStack;

use super::trait_in::{alloc_error, assert_placeable, DeserializeIn};

/// Where elements come from: a serde sequence or map, one element at a time.
pub(crate) trait Source<T> {
    /// The deserializer's error.
    type Error: Error;
    /// The next element, or `None` at the end.
    fn next(&mut self) -> Result<Option<T>, Self::Error>;
    /// How many elements the format says are left, if it says.
    fn hint(&self) -> Option<usize>;
}

/// Collects every element of `src` into a slice of `scope`.
pub(crate) fn collect<'s, P, T, S>(scope: P, mut src: S) -> Result<&'s mut [T], S::Error>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s>,
    S: Source<T>,
{
    assert_placeable::<T>();
    // A length the format gives is carved at once, for elements that need no drop
    // (an error part-way then leaves nothing to drop): a tight fill, no growth checks.
    // A length that claims more than the scope holds is an allocation error; one that
    // lies the other way is handled by `known_length`.
    if !needs_drop::<T>() && size_of::<T>() != 0 {
        if let Some(n) = src.hint().filter(|&n| n != 0) {
            return known_length(scope, n, &mut src);
        }
    }
    if !T::PLACES || size_of::<T>() == 0 {
        // Nothing lands above the slice while it grows: it grows in place.
        return grow_at_top(scope, core::iter::empty(), &mut src);
    }
    stage(scope, core::iter::empty(), &mut src)
}

/// Carves `n` elements at once and fills them; what the elements place follows the
/// slice. A format that said too few goes on through staging (the carved room stays
/// taken); one that said too many leaves the tail of the room unused.
fn known_length<'s, P, T, S>(scope: P, n: usize, src: &mut S) -> Result<&'s mut [T], S::Error>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s>,
    S: Source<T>,
{
    debug_assert!(!needs_drop::<T>());
    let room: &'s mut [MaybeUninit<T>] =
        scope.try_alloc_uninit_slice::<T>(n).map_err(alloc_error)?;
    // The room's own length (it is `n`) bounds the loop, so the compiler sees that
    // `room[len]` is in bounds and drops the check from every element.
    let n = room.len();
    let mut len = 0;
    while len < n {
        // `T` needs no drop, so an error here leaves nothing to drop.
        match src.next()? {
            Some(v) => {
                room[len].write(v);
                len += 1;
            }
            None => break,
        }
    }
    let built = &mut room[..len];
    // SAFETY: the first `len` elements are initialised, and `MaybeUninit<T>` has the
    // layout of `T`.
    let built: &'s mut [T] = unsafe { &mut *(built as *mut [MaybeUninit<T>] as *mut [T]) };
    if len < n {
        return Ok(built);
    }
    match src.next()? {
        None => Ok(built),
        Some(extra) => {
            // The elements move on to the staged copy; `T` needs no drop, so the old
            // copies are plain bytes that nothing reads again.
            let moved = built.iter().map(|v| {
                // SAFETY: each initialised element is read once, and never used again
                // where it was.
                unsafe { core::ptr::read(v) }
            });
            stage(scope, moved.chain(core::iter::once(extra)), src)
        }
    }
}

/// Collects at the top of the scope with `alloc_iter`: `prefix` first, then the
/// source. On an error of the source, the elements built so far stay in the slice that
/// `alloc_iter` finished (dropped when the scope ends) and the error comes back.
pub(crate) fn grow_at_top<'s, P, T, S>(
    scope: P,
    prefix: impl Iterator<Item = T>,
    src: &mut S,
) -> Result<&'s mut [T], S::Error>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s>,
    S: Source<T>,
{
    assert_placeable::<T>();
    let mut failed = None;
    let hint = src.hint().unwrap_or(0);
    let pull = Pull {
        src,
        failed: &mut failed,
        hint,
    };
    let handle = scope.handle();
    // SAFETY: a `T` that needs drop has a rule that allows a finalizer, which only
    // `Send + 'static` types have (see `DropRule`): the drop rule holds on every surface.
    let r = unsafe { crate::scope::place::try_alloc_iter(handle.as_core(), prefix.chain(pull)) };
    if let Some(e) = failed {
        return Err(e);
    }
    r.map_err(alloc_error)
}

/// The source as an iterator for `alloc_iter`: the first error ends it, kept aside.
struct Pull<'a, S: Source<T>, T> {
    src: &'a mut S,
    failed: &'a mut Option<S::Error>,
    hint: usize,
}

impl<S: Source<T>, T> Iterator for Pull<'_, S, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.failed.is_some() {
            return None;
        }
        match self.src.next() {
            Ok(v) => {
                self.hint = self.hint.saturating_sub(1);
                v
            }
            Err(e) => {
                *self.failed = Some(e);
                None
            }
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.hint, None)
    }
}

/// Stages the elements in this thread's staging blocks and moves them into the scope
/// in one piece. A sequence that outgrows its block moves to a larger one
/// ([`super::staging::with_larger_staging`]); only when none can be reserved does the
/// rest grow at the top of the scope.
#[cfg(feature = "std")]
fn stage<'s, P, T, S>(
    scope: P,
    mut prefix: impl Iterator<Item = T>,
    src: &mut S,
) -> Result<&'s mut [T], S::Error>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s>,
    S: Source<T>,
{
    use allocator_api2::vec::Vec;
    super::staging::with_staging(|staging| {
        let Some(staging) = staging else {
            return grow_at_top(scope, prefix, src);
        };
        let mut staged: Vec<T, _> = Vec::new_in(staging);
        match fill(&mut staged, &mut prefix, src)? {
            None => finish(scope, staged).map_err(alloc_error),
            Some(v) => restage(scope, staged, v, prefix, src),
        }
    })
}

/// Pushes elements (`prefix`, then `src`) onto `staged` until the source ends
/// (`None`) or the block has no room for the next one, which comes back unplaced.
#[cfg(feature = "std")]
fn fill<T, S: Source<T>>(
    staged: &mut allocator_api2::vec::Vec<T, &ScopeStack<'_>>,
    prefix: &mut impl Iterator<Item = T>,
    src: &mut S,
) -> Result<Option<T>, S::Error> {
    let hint = src.hint().unwrap_or(0);
    loop {
        let next = match prefix.next() {
            Some(v) => Some(v),
            None => src.next()?,
        };
        let Some(v) = next else { return Ok(None) };
        if staged.len() == staged.capacity() {
            let more = if staged.is_empty() {
                hint.max(4)
            } else {
                staged.len()
            };
            if staged.try_reserve(more).is_err() && staged.try_reserve(1).is_err() {
                return Ok(Some(v));
            }
        }
        staged.push(v);
    }
}

/// Moves `staged` and `next` to a larger staging block and goes on filling there;
/// without one, the rest grows at the top of the scope.
#[cfg(feature = "std")]
fn restage<'s, P, T, S>(
    scope: P,
    mut staged: allocator_api2::vec::Vec<T, &ScopeStack<'_>>,
    next: T,
    mut prefix: impl Iterator<Item = T>,
    src: &mut S,
) -> Result<&'s mut [T], S::Error>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s>,
    S: Source<T>,
{
    use allocator_api2::vec::Vec;
    // Room for twice the elements, and for the vector to double once more in place or
    // beside itself: four times what is staged, so a block is not outgrown at once.
    let want = (staged.len() + 1).saturating_mul(2);
    let bytes = want.saturating_mul(size_of::<T>()).saturating_mul(2);
    super::staging::with_larger_staging(bytes, |larger| {
        let Some(larger) = larger else {
            let rest = staged.drain(..).chain(core::iter::once(next)).chain(prefix);
            return grow_at_top(scope, rest, src);
        };
        let mut moved: Vec<T, _> = Vec::new_in(larger);
        if moved.try_reserve_exact(want).is_err() {
            let rest = staged.drain(..).chain(core::iter::once(next)).chain(prefix);
            return grow_at_top(scope, rest, src);
        }
        moved.extend(staged.drain(..));
        moved.push(next);
        drop(staged);
        match fill(&mut moved, &mut prefix, src)? {
            None => finish(scope, moved).map_err(alloc_error),
            Some(v) => restage(scope, moved, v, prefix, src),
        }
    })
}

/// Moves the staged elements into one slice of the scope.
#[cfg(feature = "std")]
fn finish<'s, P, T>(
    scope: P,
    mut staged: allocator_api2::vec::Vec<T, &ScopeStack<'_>>,
) -> Result<&'s mut [T], crate::error::AllocError>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s>,
{
    let handle = scope.handle();
    // SAFETY: as in `grow_at_top`: the drop rule holds by `T`'s `DropRule`. The
    // elements move out of the staging vector one by one; those not taken (on an
    // error) are dropped by the vector.
    unsafe { crate::scope::place::try_alloc_iter_exact(handle.as_core(), staged.drain(..)) }
}

/// Without `std` there is no staging block: the slice grows at the top of the scope.
#[cfg(not(feature = "std"))]
fn stage<'s, P, T, S>(
    scope: P,
    prefix: impl Iterator<Item = T>,
    src: &mut S,
) -> Result<&'s mut [T], S::Error>
where
    P: Place<'s> + Copy,
    T: DeserializeIn<'s>,
    S: Source<T>,
{
    grow_at_top(scope, prefix, src)
}
