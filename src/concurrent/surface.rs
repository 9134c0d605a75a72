//! One thread's view of a concurrent scope as a placement surface: the
//! [`Core`](crate::scope::place::Core) of [`LocalScope`].
//!
//! Invariant: the region at the top is this thread's current chunk, which only this
//! thread moves while the scope is open (a dense thread index belongs to one live
//! thread); a thread without a slot of its own has no such region (its `top` and
//! `limit` are 0), so everything it places is claimed from the shared region and every
//! record goes on the shared overflow chain. Runs of one type may share a record only on
//! the thread's own chain.
use core::ptr::NonNull;

use crate::error::{AllocError, AllocErrorKind};
use crate::scope::finalizer::Chain;
use crate::scope::place::{Core, Handle, Place, Sealed};

use super::local::LocalScope;
use super::ConcurrentScope;

// SAFETY: bumps come from this thread's chunk (its alone while the scope is open) or
// are claimed from the region by compare-exchange, and the region rewinds only when the
// scope closes (`'s`). Records go on this thread's chain or the shared overflow chain,
// both run by the closing thread; the wrappers admit only `Send` values with
// destructors (rule 8), so that thread may drop them.
unsafe impl<'s> Core<'s> for &LocalScope<'s> {
    type Gaps = ();

    #[inline(always)]
    fn bump_fast(self, size: usize, align: usize) -> Option<NonNull<u8>> {
        let at = self.any_slot().bump(size, align).map(|at| self.ptr(at));
        #[cfg(feature = "tracy")]
        if let Some(at) = at {
            crate::scope::place::placed(self, at, size);
        }
        at
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn bump_cold(self, size: usize, align: usize) -> NonNull<u8> {
        let at = self.bump_or_fail(size, align);
        #[cfg(feature = "tracy")]
        crate::scope::place::placed(self, at, size);
        at
    }

    #[inline]
    fn bump(self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        let at = LocalScope::bump(self, size, align);
        #[cfg(feature = "tracy")]
        if let Ok(at) = at {
            crate::scope::place::placed(self, at, size);
        }
        at
    }

    #[inline(always)]
    fn chain(self) -> Option<&'s Chain> {
        self.own_slot().map(|slot| &slot.chain)
    }

    #[inline]
    unsafe fn link(self, record: NonNull<u8>) {
        // SAFETY: forwarded from the caller.
        unsafe { LocalScope::link(self, record) }
    }

    #[cold]
    fn error(self, kind: AllocErrorKind, size: usize, align: usize) -> AllocError {
        LocalScope::error(self, kind, size, align)
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn fail(self, e: AllocError) -> ! {
        LocalScope::fail(self, e)
    }

    #[inline(always)]
    fn top(self) -> usize {
        self.own_slot().map_or(0, |slot| slot.cur())
    }

    #[inline(always)]
    fn region_start(self) -> usize {
        self.own_slot().map_or(usize::MAX, |slot| slot.data_start())
    }

    #[inline(always)]
    fn limit(self) -> usize {
        self.own_slot().map_or(0, |slot| slot.end())
    }

    #[inline(always)]
    fn one_region(self) -> bool {
        false // new chunks and direct claims come from the shared region
    }

    #[inline]
    fn fits_new_region(self, size: usize, align: usize) -> bool {
        // As `bump_slow` decides: a thread with its own slot starts a new chunk for a
        // request small enough, and bumps it at the chunk's top.
        self.own_slot().is_some() && size.saturating_add(align) <= self.inner_large()
    }

    #[inline(always)]
    unsafe fn set_top(self, to: usize) {
        if let Some(slot) = self.own_slot() {
            slot.set_cur(to);
        }
    }

    #[inline]
    unsafe fn give_back(self, from: usize, to: usize) {
        if let Some(slot) = self.own_slot() {
            if slot.cur() == to && from <= to && from >= slot.data_start() {
                slot.set_cur(from);
            }
        }
    }

    #[inline(always)]
    fn ptr_at(self, addr: usize) -> NonNull<u8> {
        self.ptr(addr)
    }

    // Concurrent statistics are read per chunk (claimed room shows as used until the
    // collection ends), so a reservation has nothing to save.
    #[inline(always)]
    fn gaps_save(self) {}

    #[inline(always)]
    fn gaps_set(self, _saved: &(), _from: usize, _to: usize) {}

    #[inline(always)]
    fn gaps_raise(self, _from: usize) {}

    #[inline(always)]
    fn gaps_restore(self, _saved: &()) {}

    #[inline]
    unsafe fn end_reservation(self, claimed: usize, keep: usize, _saved: ()) {
        if let Some(slot) = self.own_slot() {
            let in_chunk = keep >= slot.data_start() && claimed <= slot.end();
            if in_chunk {
                if slot.cur() == claimed && keep <= claimed {
                    slot.set_cur(keep);
                }
                return;
            }
        }
        // Not the top of this thread's chunk: the room is a direct claim (a thread
        // without a slot of its own, or a request too large for a chunk). Chunks are
        // claimed whole and a chunk's owner trims only at its cursor (above), so if the
        // region's next byte is still `claimed`, `[keep, claimed)` is this call's
        // direct claim and nobody else's.
        // SAFETY: per the caller, nothing in `[keep, claimed)` is in use.
        unsafe { self.region().give_back_direct(keep, claimed) };
    }

    #[inline]
    unsafe fn register_pool(self, link: crate::scope::info::PoolLink) {
        if let Ok(placed) = self.try_new_pod(link) {
            // SAFETY: the link now lives in the region, until the scope closes; the
            // caller vouches for what its snapshot reads. The scope's record has
            // extras (the concurrent detail), and `add_pool` pushes atomically, so
            // workers may register at once.
            unsafe { self.scope_info().add_pool(NonNull::from(placed)) };
        }
    }

    #[cfg(feature = "tracy")]
    #[inline(always)]
    fn profiler_pool(self) -> Option<&'static crate::profiler::Name> {
        self.scope_info().profiler.pool
    }

    #[cfg(feature = "tracy")]
    fn profiler_path(self, text: &mut crate::profiler::names::Text) {
        self.scope_info().write_profiler_path(text);
    }
}

impl<'s> Handle<'s> for LocalScope<'s> {
    type Core<'h>
        = &'h LocalScope<'s>
    where
        Self: 'h;
    #[inline(always)]
    fn as_core(&self) -> &LocalScope<'s> {
        self
    }
}

impl Sealed for LocalScope<'_> {}
impl Sealed for &ConcurrentScope<'_> {}

impl<'s> Place<'s> for LocalScope<'s> {
    type Handle = LocalScope<'s>;
    #[inline(always)]
    fn handle(&self) -> LocalScope<'s> {
        *self
    }
}

impl<'s> Place<'s> for &'s ConcurrentScope<'_> {
    type Handle = LocalScope<'s>;
    #[inline(always)]
    fn handle(&self) -> LocalScope<'s> {
        self.local()
    }
}
