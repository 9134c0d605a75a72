//! Loading a slot through a plain scope ([`Slots::load`], [`Slots::try_load`]) and
//! unloading any slot: the open and close of a slot's scope.
//!
//! This module owns a slot scope's lifecycle. Invariants:
//! - A slot's scope is opened only by the thread that claimed the slot, as the one
//!   live scope on the slot's own sub-block (its record lives in the table, never in a
//!   stack frame, and is never linked into the parent block's list).
//! - Unloading drops the root first (so its destructor still sees every value it may
//!   borrow), then closes the concurrent scope if there is one, then runs the slot
//!   scope's chain, then rewinds the sub-block and frees the slot; each step runs even
//!   when an earlier one panics.
//! - The holder's fields are reached through raw pointers, one field at a time, so the
//!   references lent to `build` (the handle, the record, the sub-block) stay valid while
//!   the root is stored and read back.

// A `SlotError` keeps its names inline (no heap, so it works without `alloc`): it is
// large, but built only on the cold path, and a `Result` of it costs nothing more on
// the success path than the `Loaded` it holds.
#![allow(clippy::result_large_err)]

use core::alloc::Layout;
use core::ptr::{self, NonNull};

use crate::error::AllocError;
use crate::scope::info::ScopeInfo;
use crate::scope::place::Place;
use crate::scope::ScopeStack;
use crate::sync::Ordering;

use super::carve::Slots;
use super::error::{SlotError, SlotErrorKind};
use super::loaded::{Loaded, LoadedKind, Plain};
use super::root::SlotRoot;
use super::table::{DropRoot, Holder};

impl Slots {
    /// Takes a free slot, opens a scope on it, lets `build` place the root there, and
    /// returns the [`Loaded`] slot. `build` receives a full [`ScopeStack`] (pools,
    /// dense pools, stores, strings, collections); the root it returns may borrow from
    /// it. Dropping the `Loaded` drops the root, runs the slot's finalizers newest
    /// first and frees the slot.
    ///
    /// The slot is free again if `build` panics (what it placed is dropped). A value
    /// that does not fit in the slot makes the placing method panic inside `build`
    /// (use its `try_` form, or [`try_load`](Self::try_load), to get an error).
    ///
    /// # Errors
    /// [`SlotErrorKind::Full`] when every slot is held, naming their holders;
    /// [`SlotErrorKind::Alloc`] when the root itself does not fit.
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator, Pool};
    ///
    /// struct Enemy { hp: u32 }
    /// struct Level<'s> { enemies: &'s Pool<'s, Enemy>, title: &'s str }
    /// slot_root!(struct LevelRoot = for<'s> Level<'s>);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("game", |game| {
    ///     let levels = game.new_slots("levels", 2, 64 << 10);
    ///     let mut level = levels
    ///         .load::<LevelRoot>("forest", |scope| {
    ///             let enemies = scope.new_pool(64);
    ///             let _ = enemies.insert(Enemy { hp: 10 }).ok().unwrap().into_handle();
    ///             Level { enemies, title: scope.alloc_str("The Forest") }
    ///         })
    ///         .unwrap();
    ///     level.with(|l| assert_eq!((l.enemies.len(), l.title), (1, "The Forest")));
    ///     // While it plays, the level may keep allocating into its slot.
    ///     level.with_mut(|l, scope| l.title = scope.alloc_str("The Forest (night)"));
    ///     assert_eq!(level.name(), "forest");
    /// });
    /// ```
    #[inline]
    pub fn load<R: SlotRoot>(
        &self,
        name: &str,
        build: impl for<'x> FnOnce(&'x ScopeStack<'x>) -> R::Of<'x>,
    ) -> Result<Loaded<'_, R>, SlotError> {
        let Some(index) = self.claim() else {
            return Err(SlotError::busy(SlotErrorKind::Full, self, name));
        };
        // SAFETY: this thread just claimed slot `index`.
        unsafe { self.build_plain::<R, Plain>(index, name, |s| Ok(build(s))) }
    }

    /// Like [`load`](Self::load), with a `build` that may fail: its error (a slot too
    /// small for what it placed) comes back as a [`SlotErrorKind::Alloc`] error, and
    /// the slot is free again, with what `build` placed dropped.
    ///
    /// ```
    /// use scope_stack::{slot_root, AllocErrorKind, LinearAllocator, SlotErrorKind};
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("game", |game| {
    ///     let slots = game.new_slots("chunks", 1, 1024);
    ///     let err = slots
    ///         .try_load::<Bytes>("big", |s| Ok(&*s.try_alloc_slice_copy(&[0u8; 4096])?))
    ///         .unwrap_err();
    ///     assert_eq!(err.kind(), SlotErrorKind::Alloc);
    ///     assert_eq!(err.alloc_error().unwrap().kind(), AllocErrorKind::OutOfMemory);
    ///     assert_eq!(slots.loaded(), 0);
    ///     let ok = slots.try_load::<Bytes>("small", |s| Ok(&*s.try_alloc_slice_copy(&[1u8; 100])?));
    ///     assert_eq!(ok.unwrap().with(|b| b.len()), 100);
    /// });
    /// ```
    pub fn try_load<R: SlotRoot>(
        &self,
        name: &str,
        build: impl for<'x> FnOnce(&'x ScopeStack<'x>) -> Result<R::Of<'x>, AllocError>,
    ) -> Result<Loaded<'_, R>, SlotError> {
        let Some(index) = self.claim() else {
            return Err(SlotError::busy(SlotErrorKind::Full, self, name));
        };
        // SAFETY: this thread just claimed slot `index`.
        unsafe { self.build_plain::<R, Plain>(index, name, build) }
    }

    /// Opens the scope on claimed slot `index`, builds the root, and hands out the
    /// `Loaded`; on an error or a panic, unloads the slot.
    ///
    /// # Safety
    /// This thread has just claimed slot `index`.
    /// The `Loaded` is of kind `K`: [`Plain`](super::loaded::Plain), or
    /// [`Task`](super::loaded::Task) when `build` places only through a
    /// [`TaskScope`](super::task_scope::TaskScope) over the handle.
    #[inline(always)]
    pub(crate) unsafe fn build_plain<R: SlotRoot, K: LoadedKind>(
        &self,
        index: usize,
        name: &str,
        build: impl for<'x> FnOnce(&'x ScopeStack<'x>) -> Result<R::Of<'x>, AllocError>,
    ) -> Result<Loaded<'_, R, K>, SlotError> {
        // SAFETY: per the caller. Reports may then read the slot's containers while
        // `build` carves them.
        unsafe { self.open::<true>(index, name) };
        let unload = Unload { slots: self, index };
        // SAFETY: the slot is open; the handle lives in the table until it unloads.
        let handle = unsafe { self.handle(index) };
        let placed = match build(handle) {
            Ok(root) => place_root(handle, root),
            Err(e) => Err(e),
        };
        match placed {
            Ok(root) => {
                let at = root.at;
                // SAFETY: we hold the slot; the root was placed in its memory.
                unsafe { self.finish_load(index, root) };
                core::mem::forget(unload);
                Ok(Loaded::new(self, index, at))
            }
            // `unload` frees the slot (the root, if built, was dropped by `place_root`).
            Err(e) => Err(SlotError::alloc(self, name, e)),
        }
    }

    /// Records the root (when it needs dropping) and publishes the slot as loaded.
    ///
    /// # Safety
    /// This thread holds slot `index`, and `root` was placed in its memory.
    #[inline]
    pub(crate) unsafe fn finish_load(&self, index: usize, root: PlacedRoot) {
        let rec = self.record(index);
        let h = rec.holder_ptr();
        if let Some(drop_root) = root.drop {
            // SAFETY: we hold the slot; one field, through the raw pointer.
            unsafe { ptr::addr_of_mut!((*h).root).write(Some((root.at, drop_root))) };
        }
        self.publish(index);
        rec.mark_loaded();
    }

    /// Publishes slot `index`'s use for reports (holder only).
    #[inline]
    pub(crate) fn publish(&self, index: usize) {
        let rec = self.record(index);
        // SAFETY: only the holder calls this; a shared borrow of one field.
        let block = unsafe { &(*rec.holder_ptr()).block };
        // SAFETY: as above.
        let concurrent = unsafe { (*rec.holder_ptr()).concurrent };
        // The sub-block starts where the slot does.
        let start = block.start_addr();
        debug_assert_eq!(start, self.start_of(index));
        if let Some(c) = concurrent {
            // SAFETY: the concurrent scope lives in the slot until it unloads.
            let top = unsafe { c.as_ref() }.scope.inner.region.top();
            let used = top - start;
            rec.publish_use(used, used);
            #[cfg(feature = "tracy")]
            self.plot_use(index, used);
            return;
        }
        // No reservation is live between calls, so the bump pointer is the use; the
        // sub-block's own high-water mark is folded in when the slot unloads.
        let used = block.root().cur() - start;
        rec.publish_use(used, used);
        #[cfg(feature = "tracy")]
        self.plot_use(index, used);
    }

    /// Publishes a shared slot's use from any thread that shares its `Loaded`
    /// (`Loaded::with_scope`). The concurrent scope's top only grows while the slot is
    /// loaded, so both figures are maxima, and threads that publish at once keep the
    /// largest.
    pub(crate) fn publish_shared(&self, index: usize) {
        let rec = self.record(index);
        // SAFETY: the slot is loaded and its `Loaded` is borrowed by the caller, so
        // the holder's fields are set and only read until it drops.
        let (start, concurrent) = unsafe {
            let h = rec.holder_ptr();
            (
                (*ptr::addr_of!((*h).block)).start_addr(),
                *ptr::addr_of!((*h).concurrent),
            )
        };
        let Some(c) = concurrent else { return };
        // SAFETY: the concurrent scope lives in the slot until it unloads.
        let used = unsafe { c.as_ref() }.scope.inner.region.top() - start;
        rec.publish_use_max(used);
        #[cfg(feature = "tracy")]
        self.plot_use(index, rec.used.load(Ordering::Relaxed));
    }

    /// Plots slot `index`'s use under its profiler name (holder only).
    #[cfg(feature = "tracy")]
    fn plot_use(&self, index: usize, used: usize) {
        let h = self.record(index).holder_ptr();
        // SAFETY: only the holder calls this, while the slot is open (its record is
        // initialised).
        let names = unsafe { &*ptr::addr_of!((*h).info).cast::<ScopeInfo>() }.profiler;
        if let Some(top) = names.top {
            crate::profiler::plot(crate::profiler::Plot::Used(top), used);
        }
    }

    /// Address where slot `index`'s sub-block begins.
    #[inline]
    pub(crate) fn start_of(&self, index: usize) -> usize {
        self.region + index * self.stride
    }

    /// Opens the slot scope on claimed slot `index`: names it, writes its record and
    /// handle into the table, and links the record as its sub-block's only live scope.
    /// With `PUBLISH`, it then lets reports read the slot while it is being built
    /// ([`Record::publish_open`](super::table::Record::publish_open)); a caller that
    /// writes more of the holder's fields first (a concurrent load) publishes itself.
    ///
    /// # Safety
    /// This thread has just claimed slot `index`.
    #[inline]
    pub(crate) unsafe fn open<const PUBLISH: bool>(&self, index: usize, name: &str) {
        let rec = self.record(index);
        let h: *mut Holder = rec.holder_ptr();
        // Only the holder writes `loads`.
        rec.loads
            .store(rec.loads.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        // SAFETY: we hold the slot (caller), so nobody else touches the holder; every
        // reference lent by the previous holder is gone (its `Loaded` was dropped).
        // Fields are reached one at a time through the raw pointer.
        unsafe {
            rec.set_name(name);
            let name: &str = rec.holder_name();
            let block = &*ptr::addr_of!((*h).block);
            let cursor = block.root();
            let info = ptr::addr_of_mut!((*h).info).cast::<ScopeInfo>();
            info.write(ScopeInfo::new_slot(name, cursor.cur(), self.name(), index));
            block.set_innermost(Some(NonNull::new_unchecked(info)));
            let handle = ScopeStack::from_parts(&*ptr::from_ref(cursor), &*info);
            ptr::addr_of_mut!((*h).handle)
                .cast::<ScopeStack<'static>>()
                .write(handle);
        }
        if PUBLISH {
            rec.publish_open();
        }
    }

    /// The handle of open slot `index`, with a lifetime the caller picks.
    ///
    /// # Safety
    /// Slot `index` is open and held by the caller's `Loaded` (or build); the caller
    /// lends the handle only for as long as the slot stays open.
    #[inline]
    pub(crate) unsafe fn handle<'x>(&self, index: usize) -> &'x ScopeStack<'x> {
        let h = self.record(index).holder_ptr();
        // SAFETY: per the caller the handle is initialised and stays put while the slot
        // is open (the table lives in the carving scope's memory).
        unsafe { &*ptr::addr_of!((*h).handle).cast::<ScopeStack<'x>>() }
    }

    /// Unloads slot `index`: drops the root, closes the concurrent scope if any, runs
    /// the slot scope's chain, rewinds the sub-block and frees the slot. Each step runs
    /// even if an earlier destructor panics.
    ///
    /// A slot with nothing to drop (a root without drop glue, no concurrent scope, an
    /// empty chain: a frame of plain data) runs no user code, so nothing can panic and
    /// it goes straight to the last step, inline; the rest take the guarded path.
    ///
    /// # Safety
    /// The caller holds slot `index` (it is open) and nothing will use its values
    /// again.
    #[inline(always)]
    pub(crate) unsafe fn unload(&self, index: usize) {
        // Reports reading the slot's contents finish first, and no new one starts:
        // what follows drops the containers they read, and the next holder rewrites
        // the scope record they read through.
        self.record(index).close_for_readers();
        let h = self.record(index).holder_ptr();
        // SAFETY: we hold the slot; fields one at a time, read by value. The record is
        // initialised while the slot is open.
        let nothing_to_drop = unsafe {
            (*ptr::addr_of!((*h).root)).is_none()
                && (*ptr::addr_of!((*h).concurrent)).is_none()
                && (*ptr::addr_of!((*h).info).cast::<ScopeInfo>())
                    .chain
                    .is_empty()
        };
        if nothing_to_drop {
            // SAFETY: per the caller; nothing is left to drop.
            unsafe { self.release(index) }
        } else {
            // SAFETY: per the caller.
            unsafe { self.unload_dropping(index) }
        }
    }

    /// The last step of an unload: rewinds the sub-block, publishes the slot's
    /// high-water mark, frees the slot and wakes a waiting load.
    ///
    /// # Safety
    /// The caller holds slot `index`, whose root, concurrent scope and chain have been
    /// dropped, closed and run (or had nothing to drop).
    #[inline]
    unsafe fn release(&self, index: usize) {
        let rec = self.record(index);
        let h = rec.holder_ptr();
        // SAFETY: we hold the slot; fields one at a time.
        let block = unsafe { &*ptr::addr_of!((*h).block) };
        let cursor = block.root();
        // The sub-block starts where the slot does.
        let start = block.start_addr();
        debug_assert_eq!(start, self.start_of(index));
        #[cfg(feature = "debug-fill")]
        crate::block::debug_fill::released(cursor, start);
        block.rewind(cursor, start);
        block.set_innermost(None);
        // SAFETY: the record is initialised while the slot is open (until `free`).
        #[cfg(feature = "tracy")]
        unsafe { &*ptr::addr_of!((*h).info).cast::<ScopeInfo>() }
            .profiler
            .close(block);
        // The rewind has folded the bump pointer into the sub-block's mark, and no
        // reservation or shared-block scope is live, so the mark is its peak address.
        rec.publish_use(0, block.high_water_addr() - start);
        // Before the free, so the count never says more slots are held than are (see
        // `Slots::claim`).
        self.held.fetch_sub(1, Ordering::SeqCst);
        rec.free();
        #[cfg(feature = "std")]
        self.wake();
    }

    /// The unload of a slot that has something to drop: each step in a guard, so each
    /// runs even if an earlier destructor panics.
    ///
    /// # Safety
    /// As [`unload`](Self::unload).
    #[inline(never)]
    unsafe fn unload_dropping(&self, index: usize) {
        /// Rewinds and frees the slot (the last step).
        struct Finish<'a>(&'a Slots, usize);
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                // SAFETY: the unload's caller holds the slot; the steps before this
                // one have run (or unwound past their values).
                unsafe { self.0.release(self.1) }
            }
        }
        /// Runs the slot scope's own chain (after the concurrent scope's).
        struct RunChain<'a>(&'a Slots, usize);
        impl Drop for RunChain<'_> {
            fn drop(&mut self) {
                let h = self.0.record(self.1).holder_ptr();
                // SAFETY: the record is initialised while the slot is open; nothing
                // uses the chain's values again (caller of `unload`).
                unsafe {
                    (*ptr::addr_of!((*h).info).cast::<ScopeInfo>())
                        .chain
                        .run_all()
                };
            }
        }
        /// Closes the concurrent scope, then (through `RunChain`) the slot scope.
        struct Chains<'a>(&'a Slots, usize);
        impl Drop for Chains<'_> {
            fn drop(&mut self) {
                let _chain = RunChain(self.0, self.1);
                {
                    let h = self.0.record(self.1).holder_ptr();
                    // SAFETY: we hold the slot; fields one at a time. The concurrent
                    // scope was opened on this sub-block's root cursor and is closed
                    // once (the field is cleared first).
                    unsafe {
                        if let Some(c) = ptr::addr_of_mut!((*h).concurrent).replace(None) {
                            let block = &*ptr::addr_of!((*h).block);
                            c.as_ref().close(block, block.root());
                        }
                    }
                }
            }
        }
        let _finish = Finish(self, index);
        let _chains = Chains(self, index);
        let h = self.record(index).holder_ptr();
        // SAFETY: we hold the slot; the root was placed by `finish_load` and is dropped
        // once (the field is cleared first).
        unsafe {
            if let Some((root, drop_root)) = ptr::addr_of_mut!((*h).root).replace(None) {
                drop_root(root);
            }
        }
    }
}

/// Unloads a slot when dropped: a `build` that panicked or failed.
pub(crate) struct Unload<'a> {
    pub(crate) slots: &'a Slots,
    pub(crate) index: usize,
}

impl Drop for Unload<'_> {
    fn drop(&mut self) {
        // SAFETY: the guard is made right after the slot opened, by its holder, and
        // forgotten once a `Loaded` owns the slot; `build` has returned or unwound, so
        // nothing uses the values again.
        unsafe { self.slots.unload(self.index) }
    }
}

/// Drops the `T` at `p`.
///
/// # Safety
/// `p` holds a live `T`, dropped once.
unsafe fn drop_root<T>(p: NonNull<u8>) {
    // SAFETY: per the caller.
    unsafe { ptr::drop_in_place(p.cast::<T>().as_ptr()) }
}

/// A root placed in its slot: where it is, and how to drop it (`None` when it has no
/// drop glue, so an unload has nothing to call).
pub(crate) struct PlacedRoot {
    pub(crate) at: NonNull<u8>,
    pub(crate) drop: Option<DropRoot>,
}

/// Places the root in the slot's scope (plain or concurrent: one `Place` call; a
/// zero-sized root takes no room), handing back where it is and how to drop it. On an
/// error the root is dropped here.
#[inline]
pub(crate) fn place_root<'s, T>(into: impl Place<'s>, root: T) -> Result<PlacedRoot, AllocError> {
    match into.try_alloc_layout(Layout::new::<T>()) {
        Ok(at) => {
            // SAFETY: fresh room for a `T` in the slot's scope (an aligned dangling
            // address when `T` is zero-sized).
            unsafe { at.cast::<T>().as_ptr().write(root) };
            let drop = core::mem::needs_drop::<T>().then_some(drop_root::<T> as DropRoot);
            Ok(PlacedRoot { at, drop })
        }
        Err(e) => {
            drop(root);
            Err(e)
        }
    }
}
