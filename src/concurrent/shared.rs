//! What a concurrent scope's threads share: the region, the slot table and the
//! scope's fixed facts (name, budget, chunk size), in the frame of the opening call.
//!
//! This module owns [`Inner`]. Invariant: after the scope opens, every field is either
//! read-only or an atomic (in the region and the slots), so threads share it through
//! `&Inner` without a lock; the record pointer `info` is set once, before any thread
//! sees the scope.

use core::cell::Cell;
use core::ptr::NonNull;

use crate::error::{AllocError, AllocErrorKind};
use crate::scope::info::ScopeInfo;
use crate::thread_index;

use super::region::{Region, Slot};

/// Everything a concurrent scope's threads share; it lives in the frame of the call
/// that opened the scope.
pub(crate) struct Inner {
    /// A pointer with the block's provenance.
    pub(crate) base: NonNull<u8>,
    /// The slot table (in the region).
    pub(crate) slots: NonNull<Slot>,
    /// Slots in the table.
    pub(crate) slot_count: usize,
    /// The claimable memory.
    pub(crate) region: Region,
    /// The slot of threads that have none: never written, so every bump through it
    /// fails and goes to the shared path.
    pub(crate) idle: Slot,
    /// Bytes a slot claims at a time.
    pub(crate) chunk_size: usize,
    /// Requests with `size + align` above this go straight to the region.
    pub(crate) large: usize,
    /// The scope's name (outlives the scope).
    pub(crate) name: NonNull<str>,
    /// The budget it was opened with.
    pub(crate) budget: Option<usize>,
    /// Whether the budget, not the block, set the region's end.
    pub(crate) budget_binds: bool,
    /// When the budget does not bind: the budgeted parent scope whose budget set the
    /// region's end (its name, which outlives the scope, and its budget), if any.
    pub(crate) limit_by: Option<(NonNull<str>, usize)>,
    /// The block's capacity, for errors.
    pub(crate) capacity: usize,
    /// Where the scope began (its rewind point, before the slot table's alignment).
    pub(crate) start: usize,
    /// Address of the block's first byte, for report offsets.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) block_start: usize,
    /// The block's high-water mark when the scope opened (reports on any thread read
    /// this instead of the block, whose counters belong to the opening thread).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) high_water_at_open: usize,
    /// The scope's record in the block's list of live scopes.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) info: Cell<NonNull<ScopeInfo>>,
    /// Set by the first out-of-memory panic that printed the memory map, so the other
    /// threads' panics (one per job) refer to it instead of printing it again.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) map_printed: core::sync::atomic::AtomicBool,
}

impl Inner {
    /// The scope's name.
    pub(crate) fn name(&self) -> &str {
        // SAFETY: the name was borrowed for longer than the scope call.
        unsafe { self.name.as_ref() }
    }

    /// The error for a request of `size` bytes at `align` that found no room.
    #[cold]
    pub(crate) fn oom(&self, size: usize, align: usize, remaining: usize) -> AllocError {
        let err = self.oom_error(size, align, remaining);
        #[cfg(feature = "tracy")]
        crate::profiler::out_of_memory(&err, &self.report());
        err
    }

    /// The error for [`oom`](Self::oom).
    #[cold]
    fn oom_error(&self, size: usize, align: usize, remaining: usize) -> AllocError {
        let kind = if self.budget_binds {
            AllocErrorKind::BudgetExceeded
        } else {
            AllocErrorKind::OutOfMemory
        };
        if let (false, Some((name, budget))) = (self.budget_binds, self.limit_by) {
            // A parent's budget ends the region: it is the scope that is full.
            // SAFETY: the parent's name outlives the parent's scope call, which
            // outlives this one.
            let name = unsafe { name.as_ref() };
            let err = AllocError::in_scope(
                AllocErrorKind::BudgetExceeded,
                size,
                align,
                remaining,
                self.capacity,
                name,
            );
            return err.with_budget(budget);
        }
        let err = self.error(kind, size, align, remaining);
        match self.budget {
            Some(b) if self.budget_binds => err.with_budget(b),
            _ => err,
        }
    }

    /// An error of `kind` in this scope.
    #[cold]
    pub(crate) fn error(
        &self,
        kind: AllocErrorKind,
        size: usize,
        align: usize,
        remaining: usize,
    ) -> AllocError {
        AllocError::in_scope(kind, size, align, remaining, self.capacity, self.name())
    }

    /// The calling thread's slot, if it holds its index exclusively and the table has
    /// one for it; and the index.
    #[inline(always)]
    pub(crate) fn slot_here(&self) -> (Option<NonNull<Slot>>, u32) {
        let index = thread_index::current_exclusive();
        if (index as usize) < self.slot_count {
            // SAFETY: `index < slot_count`, inside the table.
            (Some(unsafe { self.slots.add(index as usize) }), index)
        } else {
            (None, index)
        }
    }

    /// A pointer to `addr`, an address in the region.
    #[inline(always)]
    pub(crate) fn ptr(&self, addr: usize) -> NonNull<u8> {
        // SAFETY: `addr` lies in the region, inside the block, whose addresses are
        // non-zero; `base` carries the block's provenance.
        unsafe { NonNull::new_unchecked(self.base.as_ptr().with_addr(addr)) }
    }

    /// Each slot of the table.
    pub(crate) fn slots(&self) -> impl Iterator<Item = &Slot> + '_ {
        // SAFETY: the table holds `slot_count` initialised slots while the scope lives.
        (0..self.slot_count).map(move |i| unsafe { &*self.slots.add(i).as_ptr() })
    }
}
