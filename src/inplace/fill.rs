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
use core::ptr::NonNull;

use rkyv::api::high::HighValidator;
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor;
use rkyv::{Archive, Archived};

use crate::error::{AllocError, AllocErrorKind};
use crate::scope::info::{PoolLink, PoolSnapshot, ARCHIVE_KIND};
use crate::scope::place::{Core, Handle, Place};
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

    /// Takes room for `source` in `scope`, aligned to [`archive_align::<T>`], and fills
    /// it: the archive's bytes, in the slot, for the slot's lifetime. Once they are
    /// there the region is listed in the slot's map as an archive of `T` (see
    /// [`register`]).
    pub(crate) fn place<'x, T: Archive, P: Place<'x>>(
        &mut self,
        scope: P,
        source: impl Source,
    ) -> Result<&'x [u8], AllocError> {
        let len = source.len();
        let at = scope.try_alloc_raw(len, archive_align::<T>())?;
        // SAFETY: `try_alloc_raw` gave `len` bytes of fresh room (an aligned dangling
        // pointer for `len == 0`), in the slot's scope for `'x`, that nothing else
        // points at; `MaybeUninit<u8>` asks nothing of their contents.
        let room =
            unsafe { core::slice::from_raw_parts_mut(at.as_ptr().cast::<MaybeUninit<u8>>(), len) };
        if let Err(e) = source.fill(room) {
            self.failed = Some(Failed::from(e));
            return Err(refused());
        }
        let handle = scope.handle();
        register::<T, _>(handle.as_core(), at, len);
        #[cfg(feature = "tracy")]
        show::<T, _>(handle.as_core(), at, len);
        // SAFETY: `fill` returned `Ok`, so it wrote all `len` bytes (the `Source`
        // contract, sealed in this crate); the mutable borrow `room` has ended, and
        // from here on the bytes are only read, for `'x`.
        Ok(unsafe { core::slice::from_raw_parts(at.as_ptr(), len) })
    }

    /// [`place`](Self::place), then the bytes taken as an archived `T` as they lie,
    /// with no validation: the `unsafe` loads' build.
    ///
    /// # Safety
    /// What `source` gives must be exactly the bytes an rkyv serializer wrote for a `T`
    /// with this build's rkyv format features, unaltered (the contract of
    /// [`Slots::load_archived_unchecked`](crate::Slots::load_archived_unchecked)).
    pub(crate) unsafe fn place_trusted<'x, T: Archive, P: Place<'x>>(
        &mut self,
        scope: P,
        source: impl Source,
    ) -> Result<&'x Archived<T>, AllocError> {
        let bytes = self.place::<T, P>(scope, source)?;
        // SAFETY: the caller vouches that `bytes` (a copy of their archive, aligned as
        // rkyv's writer aligned it) hold a valid archived `T` at the root position;
        // they live in the slot for `'x` and are never written again.
        Ok(unsafe { rkyv::access_unchecked::<Archived<T>>(bytes) })
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

/// Lists the archive's `len` bytes at `at` in the map of `core`'s scope (the slot's):
/// a row of kind [`ARCHIVE_KIND`] named after `T`, before the rows of what a build step
/// carves after it. The link (and, for a scope with no containers yet, its extras) is
/// placed in the slot after the archive: a few words of the slot's own, as any
/// container's. With no room for it the level loads all the same, unlisted.
fn register<'x, T: Archive, C: Core<'x>>(core: C, at: NonNull<u8>, len: usize) {
    if len == 0 {
        return;
    }
    let link = PoolLink {
        ptr: at,
        words: [at.as_ptr().addr(), len, 0, 0, 0],
        kind: ARCHIVE_KIND,
        type_name: core::any::type_name::<T>(),
        snapshot: archive_snapshot,
        next: None,
    };
    // SAFETY: `archive_snapshot` reads only the link's own words, never the archive's
    // bytes, so nothing it reads can change or go before the scope ends.
    unsafe { core.register_pool(link) };
}

/// Shows the archive's `len` bytes at `at` in the profiler (feature `tracy`) as a pool
/// of its own, named as its row in the memory map: `"<slot's path>/Archive <Level>"`
/// (the type without module paths), whose one allocation is the whole archive. A
/// [`Shown`] placed in the slot after the archive ends that pool when the slot unloads
/// (or a refused load rewinds it). While no profiler is connected nothing is named and
/// nothing placed; with no room for the `Shown` the archive is not shown.
#[cfg(feature = "tracy")]
fn show<'x, T, C: Core<'x>>(c: C, at: NonNull<u8>, len: usize) {
    use crate::profiler::names;
    if len == 0 {
        return;
    }
    let Some(name) = crate::profiler::name_for(|text| {
        c.profiler_path(text);
        let mut buf = [0; names::MAX_NAME];
        let short = names::short_type(&mut buf, core::any::type_name::<T>());
        let _ = core::fmt::Write::write_fmt(text, format_args!("/{ARCHIVE_KIND} {short}"));
    }) else {
        return;
    };
    // SAFETY: `try_new_object`'s contract: a `Shown` is `'static` and `Send` (a
    // `&'static Name`, and `Name` is `Sync`), so it may be dropped wherever the slot's
    // chain runs, and its drop reads nothing but its own name.
    match unsafe { crate::scope::place::try_new_object(c, Shown(name)) } {
        Ok(_) => crate::profiler::alloc(Some(name), at.as_ptr().addr(), len),
        // Dropping the `Shown` releases the name (it showed nothing, so no discard).
        Err(e) => drop(e.value),
    }
}

/// Ends an archive's own pool in the profiler when its slot unloads (feature `tracy`;
/// see [`show`]).
#[cfg(feature = "tracy")]
struct Shown(&'static crate::profiler::Name);

#[cfg(feature = "tracy")]
impl Drop for Shown {
    fn drop(&mut self) {
        crate::profiler::discard(Some(self.0));
    }
}

/// An archive's row: its bytes, archived (`len`, `capacity` and the high-water mark are
/// all its length in bytes: it never grows).
///
/// # Safety
/// `link` was filled in by [`register`] (it reads only the link's words).
unsafe fn archive_snapshot(link: &PoolLink) -> PoolSnapshot {
    let [addr, bytes, ..] = link.words;
    PoolSnapshot {
        len: bytes,
        capacity: bytes,
        high_water_len: bytes,
        high_water_exact: true,
        addr,
        bytes,
        owns: None,
        heap: None,
    }
}
