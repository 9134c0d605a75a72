//! The one body every in-place load runs in its slot: take aligned room for the archive
//! in the slot's scope, fill it from the [`Source`], and check it (or, for the
//! `unsafe` loads, vouch for it) before any `&Archived<T>` exists.
//!
//! Invariant: the room is taken from the slot's own scope, so it lives exactly as long
//! as the slot stays loaded; it is aligned to [`archive_align`]; nothing reads it until
//! the source wrote every byte; the only reference made from it that outlives the load
//! is shared, so the bytes never change while the level is held. When any step fails,
//! the failure is kept in a [`Catch`] and the build returns an error, so `try_load`
//! rewinds and frees the slot before the caller sees it.

use core::mem::MaybeUninit;

use rkyv::api::high::HighValidator;
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor;
use rkyv::{Archive, Archived};

use crate::error::{AllocError, AllocErrorKind};
use crate::scope::place::Place;
use crate::slots::SlotError;

use super::error::LoadError;
use super::source::{FillError, Source};

/// The alignment the archive's room gets: rkyv's own buffer alignment (its
/// `AlignedVec`'s 16), or the archived root's, if that is larger. Archived values
/// nested inside keep their own alignment relative to the start of the buffer, and
/// rkyv's writer aligns each one, so the buffer's start must be aligned at least as
/// the writer's was.
pub(crate) fn archive_align<T: Archive>() -> usize {
    core::mem::align_of::<Archived<T>>().max(16)
}

/// What one in-place load keeps aside while `try_load` runs its build: why the bytes
/// were refused, when they were.
pub(crate) struct Catch {
    failed: Option<Failed>,
}

/// Why the bytes were refused.
enum Failed {
    Invalid(rancor::Error),
    #[cfg(feature = "std")]
    Read(std::io::Error),
}

impl From<FillError> for Failed {
    fn from(e: FillError) -> Self {
        match e {
            #[cfg(feature = "std")]
            FillError::Read(e) => Failed::Read(e),
        }
    }
}

/// The placeholder error that tells `try_load` the build failed for a reason of the
/// bytes' own (kept in the [`Catch`]).
pub(crate) fn refused() -> AllocError {
    AllocError::in_scope(AllocErrorKind::Format, 0, 1, 0, 0, "")
}

impl Catch {
    pub(crate) fn new() -> Self {
        Catch { failed: None }
    }

    /// The load's error from `try_load`'s (which carries the set's and the load's
    /// names either way).
    pub(crate) fn finish(self, slot: SlotError, len: usize) -> LoadError {
        match self.failed {
            None => LoadError::slot(slot, len),
            Some(Failed::Invalid(e)) => LoadError::invalid(slot, e, len),
            #[cfg(feature = "std")]
            Some(Failed::Read(e)) => LoadError::read(slot, e, len),
        }
    }

    /// Takes aligned room for `source` in `scope` and fills it: the archive's bytes,
    /// in the slot, for the slot's lifetime.
    pub(crate) fn place<'x, P: Place<'x>>(
        &mut self,
        scope: P,
        source: impl Source,
        align: usize,
    ) -> Result<&'x [u8], AllocError> {
        let len = source.len();
        let at = scope.try_alloc_raw(len, align)?;
        // SAFETY: `try_alloc_raw` gave `len` bytes of fresh room (an aligned dangling
        // pointer for `len == 0`), in the slot's scope for `'x`, that nothing else
        // points at; `MaybeUninit<u8>` asks nothing of their contents.
        let room =
            unsafe { core::slice::from_raw_parts_mut(at.as_ptr().cast::<MaybeUninit<u8>>(), len) };
        if let Err(e) = source.fill(room) {
            self.failed = Some(Failed::from(e));
            return Err(refused());
        }
        // SAFETY: `fill` returned `Ok`, so it wrote all `len` bytes (the `Source`
        // contract, sealed in this crate); the mutable borrow `room` has ended, and
        // from here on the bytes are only read, for `'x`.
        Ok(unsafe { core::slice::from_raw_parts(at.as_ptr(), len) })
    }

    /// Validates `bytes` as an archived `T` with bytecheck: the `&Archived<T>` exists
    /// only when every pointer, length, discriminant and character in it checked out.
    pub(crate) fn check<'x, T>(&mut self, bytes: &'x [u8]) -> Result<&'x Archived<T>, AllocError>
    where
        T: Archive,
        Archived<T>: for<'a> CheckBytes<HighValidator<'a, rancor::Error>>,
    {
        rkyv::access::<Archived<T>, rancor::Error>(bytes).map_err(|e| {
            self.failed = Some(Failed::Invalid(e));
            refused()
        })
    }
}
