//! A scope as a placement surface: the [`Core`](super::place::Core) of `&ScopeStack`.
//!
//! Invariant: a scope bumps through its cursor, which only the innermost live scope on
//! that cursor may move (rule 2), links into its own finalizer chain, and names itself
//! in errors; its out-of-memory panic prints the memory map.
use core::ptr::NonNull;

use crate::block::reservation::SavedGaps;
use crate::error::{AllocError, AllocErrorKind};

use super::finalizer::Chain;
use super::place::Core;
use super::ScopeStack;

// SAFETY: the cursor hands out fresh room below its limit, which only this (innermost)
// scope moves while it lives and which rewinds only when the scope ends (`'s`); the
// chain is this scope's own and runs when it ends, on the thread that owns the scope.
unsafe impl<'s> Core<'s> for &ScopeStack<'s> {
    type Gaps = SavedGaps;

    #[inline(always)]
    fn bump_fast(self, size: usize, align: usize) -> Option<NonNull<u8>> {
        let at = self.cursor.bump_small(size, align);
        #[cfg(feature = "tracy")]
        if let Some(at) = at {
            super::place::placed(self, at, size);
        }
        at
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn bump_cold(self, size: usize, align: usize) -> NonNull<u8> {
        // The fast bump is the whole of a scope's room: there is no slow path.
        self.fail(self.oom(size, align))
    }

    #[inline]
    fn bump(self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        let at = self
            .cursor
            .bump_any(size, align)
            .ok_or_else(|| self.oom(size, align));
        #[cfg(feature = "tracy")]
        if let Ok(at) = at {
            super::place::placed(self, at, size);
        }
        at
    }

    #[inline(always)]
    fn chain(self) -> Option<&'s Chain> {
        Some(&self.info.chain)
    }

    #[inline(always)]
    unsafe fn link(self, record: NonNull<u8>) {
        // SAFETY: forwarded from the caller.
        unsafe { self.info.chain.link(record) }
    }

    #[cold]
    fn error(self, kind: AllocErrorKind, size: usize, align: usize) -> AllocError {
        ScopeStack::error(self, kind, size, align)
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn fail(self, e: AllocError) -> ! {
        ScopeStack::fail(self, e)
    }

    #[inline(always)]
    fn top(self) -> usize {
        self.cursor.cur()
    }

    #[inline(always)]
    fn region_start(self) -> usize {
        self.info.start
    }

    #[inline(always)]
    fn limit(self) -> usize {
        self.cursor.limit()
    }

    #[inline(always)]
    fn fits_new_region(self, _size: usize, _align: usize) -> bool {
        false // a scope has one region: its cursor's
    }

    #[inline(always)]
    fn one_region(self) -> bool {
        true
    }

    #[inline(always)]
    unsafe fn set_top(self, to: usize) {
        self.cursor.set_cur(to);
    }

    #[inline]
    unsafe fn give_back(self, from: usize, to: usize) {
        if self.cursor.cur() == to && from <= to && from >= self.info.start {
            #[cfg(feature = "debug-fill")]
            crate::block::debug_fill::released(self.cursor, from);
            self.alloc().rewind(self.cursor, from);
        }
    }

    #[inline(always)]
    fn ptr_at(self, addr: usize) -> NonNull<u8> {
        self.cursor.ptr_at(addr)
    }

    #[inline]
    fn gaps_save(self) -> SavedGaps {
        self.alloc().save_gaps()
    }

    #[inline]
    fn gaps_set(self, saved: &SavedGaps, from: usize, to: usize) {
        self.alloc().set_gap(saved, from, to);
    }

    #[inline(always)]
    fn gaps_raise(self, from: usize) {
        self.alloc().raise_gap_start(from);
    }

    #[inline]
    fn gaps_restore(self, saved: &SavedGaps) {
        self.alloc().restore_gaps(saved);
    }

    #[inline]
    unsafe fn end_reservation(self, claimed: usize, keep: usize, saved: SavedGaps) {
        self.alloc()
            .end_reservation(self.cursor, claimed, keep, saved);
    }

    #[inline]
    unsafe fn register_pool(self, link: crate::scope::info::PoolLink) {
        // SAFETY: forwarded from the caller.
        unsafe { ScopeStack::register_pool(self, link) }
    }

    #[cfg(feature = "tracy")]
    #[inline(always)]
    fn profiler_pool(self) -> Option<&'static crate::profiler::Name> {
        self.info.profiler.pool
    }

    #[cfg(feature = "tracy")]
    fn profiler_path(self, text: &mut crate::profiler::names::Text) {
        self.info.write_profiler_path(text);
    }
}
