//! The bump cursor: where the next allocation goes and where allocation must stop.
//!
//! A block's scopes that nest by borrowing (`parent.scope(..)`) all share one cursor: the
//! borrow checker already guarantees only the innermost of them allocates. A scope opened
//! on a block that is reached through a shared reference (the per-thread scratch pads)
//! gets a cursor of its own, and the cursor it interrupted is *suspended*: its limit drops
//! to zero, so any allocation through it fails on the existing limit check. That is how
//! rule 2 ("only the innermost live scope allocates") is checked at run time for scratch
//! scopes without adding a single instruction to the allocation fast path.
//!
//! Invariants this module keeps:
//! - `cur <= limit <= block end` while the cursor is active; a suspended cursor has
//!   `limit == 0` (which no real limit is: the block's addresses are non-zero), and its
//!   `cur` is where the interrupting scope began (so nothing it handed out is above that
//!   point).
//! - Pointers are made from `base` (the block's provenance) with `with_addr`.
//! - With `align <= MAX_ALIGN` and `size <= MAX_ALIGN`, `cur + (align - 1) + size` cannot
//!   overflow, because the block ends at least `2 * MAX_ALIGN` below `usize::MAX`.
//! - `cur` has one writer: the thread that holds the cursor (see [`Cursor::own_cur`]),
//!   which stores it with relaxed stores and may read it with plain loads. Any other
//!   thread (a [`MapHandle`](crate::MapHandle)) only loads it, atomically
//!   ([`Cursor::cur`]).

use core::cell::Cell;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use crate::limits::MAX_ALIGN;

/// One bump pointer with its limit.
pub(crate) struct Cursor {
    /// Pointer with the provenance of the whole block.
    base: NonNull<u8>,
    /// The block this cursor belongs to, for the slow paths of the scopes that allocate
    /// through it (errors, reports). Set from a shared borrow of the block when the
    /// cursor's outermost scope opens; valid while any scope on the cursor lives.
    owner: Cell<NonNull<()>>,
    /// Address of the next free byte. An atomic, so a [`MapHandle`] on another thread
    /// may load it as a snapshot; only the thread holding the cursor writes it, with
    /// relaxed stores, and it reads it with plain loads (see [`own_cur`](Self::own_cur)),
    /// which the compiler may keep in a register and fold as it did for a `Cell`.
    ///
    /// [`MapHandle`]: crate::MapHandle
    cur: AtomicUsize,
    /// Address past which allocation fails; 0 while suspended (a real limit is an
    /// address inside or at the end of the block, never 0).
    limit: Cell<usize>,
}

impl Cursor {
    pub(crate) fn new(base: NonNull<u8>, owner: NonNull<()>, cur: usize, limit: usize) -> Cursor {
        Cursor {
            base,
            owner: Cell::new(owner),
            cur: AtomicUsize::new(cur),
            limit: Cell::new(limit),
        }
    }

    /// The block this cursor belongs to, as last set (see [`set_owner`](Self::set_owner)),
    /// untyped: `crate::block::linear` gives it its type (`Cursor::block`), so this file
    /// needs nothing from there.
    #[inline]
    pub(crate) fn owner(&self) -> NonNull<()> {
        self.owner.get()
    }

    /// Records the block that owns this cursor (the root cursor, on each outermost
    /// scope: the block may have moved since the last one).
    #[inline]
    pub(crate) fn set_owner(&self, owner: NonNull<()>) {
        self.owner.set(owner);
    }

    /// Address of the next free byte, loaded atomically: any thread may call this (a
    /// [`MapHandle`](crate::MapHandle) does). The thread holding the cursor may use
    /// [`own_cur`](Self::own_cur) instead.
    #[inline(always)]
    pub(crate) fn cur(&self) -> usize {
        self.cur.load(Relaxed)
    }

    /// Address of the next free byte, for the thread that holds the cursor only: the
    /// thread whose scopes allocate through it (and open and close scopes on it).
    ///
    /// A plain load, so the compiler may keep the pointer in a register across an open,
    /// the bumps and the rewind, and merge loads, where an atomic load would be
    /// repeated each time. Every write is still a relaxed store, so readers on other
    /// threads see each value whole.
    #[inline(always)]
    pub(crate) fn own_cur(&self) -> usize {
        // SAFETY: callers hold the cursor, and only the holder writes `cur`. A cursor
        // is moved only by its block's scopes, and every way to reach one is tied to
        // one thread at a time: `ScopeStack` and `LinearAllocator` are not `Sync`, a
        // scratch block belongs to its thread, and a slot's sub-block moves to another
        // thread only with its `Loaded` or `TaskScope`, a move that orders the two
        // threads, so every earlier write (this thread's, or a previous holder's)
        // happens before this load. The same argument covers the `Cell`s beside it
        // (`limit`, `owner`). Other threads only load `cur`, atomically (`cur()`), and
        // a plain load that overlaps only loads is not a data race.
        unsafe { *self.cur.as_ptr() }
    }

    /// Address past which allocation fails.
    #[inline(always)]
    pub(crate) fn limit(&self) -> usize {
        self.limit.get()
    }

    /// Bytes left before the limit (0 while suspended).
    pub(crate) fn remaining(&self) -> usize {
        self.limit.get().saturating_sub(self.cur.load(Relaxed))
    }

    /// Whether a nested scope on a shared block has interrupted this cursor.
    pub(crate) fn is_suspended(&self) -> bool {
        self.limit.get() == 0
    }

    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    /// Stops all allocation through this cursor; returns the limit to restore.
    pub(crate) fn suspend(&self) -> usize {
        debug_assert!(!self.is_suspended());
        self.limit.replace(0)
    }

    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    /// Undoes [`suspend`](Self::suspend).
    pub(crate) fn resume(&self, limit: usize) {
        debug_assert!(limit != 0);
        self.limit.set(limit);
    }

    /// Sets the allocation limit (budgets; see `ScopeStack::scope_with_budget`).
    pub(crate) fn set_limit(&self, limit: usize) {
        self.limit.set(limit);
    }

    /// Moves the bump pointer to `addr` (either way; callers keep the invariants).
    #[inline(always)]
    pub(crate) fn set_cur(&self, addr: usize) {
        self.cur.store(addr, Relaxed);
    }

    /// Turns an address inside the block into a pointer with the block's provenance.
    #[inline(always)]
    pub(crate) fn ptr_at(&self, addr: usize) -> NonNull<u8> {
        // SAFETY: callers pass addresses inside (or one past) the block, whose base is
        // non-null; such an address is non-zero.
        unsafe { NonNull::new_unchecked(self.base.as_ptr().with_addr(addr)) }
    }

    /// Bump-allocates `size` bytes aligned to `align` when both are at most [`MAX_ALIGN`]
    /// (the caller guarantees that; `align` is a power of two). This is the hot path: one
    /// comparison, no overflow checks (see the module docs). The caller holds the
    /// cursor (see [`own_cur`](Self::own_cur)).
    #[inline(always)]
    pub(crate) fn bump_small(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        debug_assert!(align.is_power_of_two() && align <= MAX_ALIGN && size <= MAX_ALIGN);
        let aligned = (self.own_cur() + (align - 1)) & !(align - 1);
        let new = aligned + size;
        if new > self.limit.get() {
            return None;
        }
        self.cur.store(new, Relaxed);
        Some(self.ptr_at(aligned))
    }

    /// Bump-allocates `size` bytes (any size) aligned to `align` (a power of two at most
    /// [`MAX_ALIGN`]).
    #[inline]
    pub(crate) fn bump_any(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        debug_assert!(align.is_power_of_two() && align <= MAX_ALIGN);
        let aligned = (self.cur.load(Relaxed) + (align - 1)) & !(align - 1);
        let limit = self.limit.get();
        if aligned > limit || size > limit - aligned {
            return None;
        }
        self.cur.store(aligned + size, Relaxed);
        Some(self.ptr_at(aligned))
    }
}
