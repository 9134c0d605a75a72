//! Loading a slot through a concurrent scope ([`Slots::load_concurrent`]): many threads
//! build the root, and the [`Loaded`] may be handed to another thread.
//!
//! This module owns the concurrent open of a slot. Invariant: the concurrent scope,
//! its record and what its close needs live at the start of the slot's own memory
//! (never in a stack frame), on the slot's sub-block, with the slot scope's record as
//! its parent; it stays open until the `Loaded` drops, and its finalizers run then, on
//! the dropping thread (which is why only `Send` values that need drop are taken).

// A `SlotError` keeps its names inline (no heap, so it works without `alloc`): it is
// large, but built only on the cold path, and a `Result` of it costs nothing more on
// the success path than the `Loaded` it holds.
#![allow(clippy::result_large_err)]

use core::alloc::Layout;
use core::ptr::{self, NonNull};

use crate::concurrent::{ConcurrentConfig, ConcurrentScope, Detached};
use crate::error::AllocError;

use super::carve::Slots;
use super::error::{SlotError, SlotErrorKind};
use super::load::{place_root, Unload};
use super::loaded::{Loaded, Shared};
use super::root::SlotRoot;

impl Slots {
    /// Takes a free slot, opens a [`ConcurrentScope`] on it, lets `build` fill it (with
    /// worker threads: rayon, `std::thread::scope`) and place the root, and returns the
    /// [`Loaded`] slot. The result is `Send` when the root is, so it can be handed to a
    /// render thread and dropped there; the scope's finalizers then run on that thread
    /// (a concurrent scope only takes `Send` values that need drop).
    ///
    /// The concurrent scope's state takes about 1 KiB of the slot, and its per-thread
    /// table (128 bytes per thread, up to 32) up to a quarter of the rest.
    ///
    /// # Errors
    /// As [`load`](Self::load).
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator};
    ///
    /// struct Frame<'s> { draws: &'s [u32], label: &'s str }
    /// slot_root!(struct FrameRoot = for<'s> Frame<'s>);
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("renderer", |renderer| {
    ///     let frames = renderer.new_slots("frames", 3, 64 << 10);
    ///     let frame = frames
    ///         .load_concurrent::<FrameRoot>("frame 1", |jobs| {
    ///             let parts: Vec<&[u32]> = std::thread::scope(|t| {
    ///                 let hs: Vec<_> = (0..2)
    ///                     .map(|w| t.spawn(move || &*jobs.alloc_slice_fill_with(10, |i| w * 10 + i as u32)))
    ///                     .collect();
    ///                 hs.into_iter().map(|h| h.join().unwrap()).collect()
    ///             });
    ///             Frame {
    ///                 draws: jobs.alloc_iter(parts.iter().flat_map(|p| p.iter().copied())),
    ///                 label: jobs.alloc_str("frame 1"),
    ///             }
    ///         })
    ///         .unwrap();
    ///     let render = std::thread::scope(|t| {
    ///         t.spawn(move || frame.with(|f| (f.draws.len(), f.label.len()))).join().unwrap()
    ///     });
    ///     assert_eq!(render, (20, 7));
    ///     assert_eq!(frames.loaded(), 0); // dropped on the render thread
    /// });
    /// ```
    ///
    /// A value whose destructor must stay on its thread cannot be placed, so the frame
    /// can cross threads:
    ///
    /// ```compile_fail,E0277
    /// use scope_stack::{slot_root, LinearAllocator};
    /// slot_root!(struct Unit = for<'s> ());
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("renderer", |renderer| {
    ///     let frames = renderer.new_slots("frames", 1, 64 << 10);
    ///     let _ = frames.load_concurrent::<Unit>("f", |jobs| {
    ///         jobs.new_object(std::rc::Rc::new(1)); // error: `Rc` is not `Send`
    ///     });
    /// });
    /// ```
    pub fn load_concurrent<R: SlotRoot>(
        &self,
        name: &str,
        build: impl for<'x> FnOnce(&'x ConcurrentScope<'x>) -> R::Of<'x>,
    ) -> Result<Loaded<'_, R, Shared>, SlotError> {
        let Some(index) = self.claim() else {
            return Err(SlotError::busy(SlotErrorKind::Full, self, name));
        };
        // SAFETY: this thread just claimed slot `index`.
        unsafe { self.build_shared::<R>(index, name, |s| Ok(build(s))) }
    }

    /// Like [`load_concurrent`](Self::load_concurrent), with a `build` that may fail;
    /// see [`try_load`](Self::try_load).
    ///
    /// ```
    /// use scope_stack::{slot_root, LinearAllocator, SlotErrorKind};
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("renderer", |renderer| {
    ///     let frames = renderer.new_slots("frames", 1, 8 << 10);
    ///     let err = frames
    ///         .try_load_concurrent::<Bytes>("f", |jobs| Ok(&*jobs.try_alloc_slice_copy(&[0u8; 64 << 10])?))
    ///         .unwrap_err();
    ///     assert_eq!(err.kind(), SlotErrorKind::Alloc);
    ///     assert_eq!(frames.loaded(), 0);
    /// });
    /// ```
    pub fn try_load_concurrent<R: SlotRoot>(
        &self,
        name: &str,
        build: impl for<'x> FnOnce(&'x ConcurrentScope<'x>) -> Result<R::Of<'x>, AllocError>,
    ) -> Result<Loaded<'_, R, Shared>, SlotError> {
        let Some(index) = self.claim() else {
            return Err(SlotError::busy(SlotErrorKind::Full, self, name));
        };
        // SAFETY: this thread just claimed slot `index`.
        unsafe { self.build_shared::<R>(index, name, build) }
    }

    /// Opens slot `index` with a concurrent scope, builds the root, and hands out the
    /// `Loaded`; on an error or a panic, unloads the slot.
    ///
    /// # Safety
    /// This thread has just claimed slot `index`.
    pub(crate) unsafe fn build_shared<R: SlotRoot>(
        &self,
        index: usize,
        name: &str,
        build: impl for<'x> FnOnce(&'x ConcurrentScope<'x>) -> Result<R::Of<'x>, AllocError>,
    ) -> Result<Loaded<'_, R, Shared>, SlotError> {
        // SAFETY: per the caller.
        // The concurrent scope is not open yet: the slot's fields are published below.
        unsafe { self.open::<false>(index, name) };
        let unload = Unload { slots: self, index };
        // SAFETY: the slot is open; the handle lives in the table until it unloads.
        let handle = unsafe { self.handle(index) };
        let at = match handle.try_alloc_layout(Layout::new::<Detached<'static>>()) {
            Ok(p) => p.cast::<Detached<'static>>(),
            Err(e) => return Err(SlotError::alloc(self, name, e)),
        };
        let h = self.record(index).holder_ptr();
        // SAFETY: we hold the slot. `at` is fresh room below the sub-block's bump
        // pointer; the name lives in the table while the slot is open; the slot scope
        // allocates nothing more until the concurrent scope is closed (its handle is
        // not lent while the concurrent one is open). The field is written so that
        // `unload` closes the scope even if `build` panics.
        unsafe {
            let block = &*ptr::addr_of!((*h).block);
            let name: &str = self.record(index).holder_name();
            Detached::open(block, block.root(), name, ConcurrentConfig::new(), at);
            ptr::addr_of_mut!((*h).concurrent).write(Some(at));
        }
        // Reports may now read the slot's concurrent scope (its chunks) and the
        // containers of both scopes while `build` fills them.
        self.record(index).publish_open();
        // SAFETY: just opened; it lives in the slot until it unloads.
        let scope = unsafe { self.concurrent_scope(index) };
        let placed = match build(scope) {
            Ok(root) => place_root(scope, root),
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
            Err(e) => Err(SlotError::alloc(self, name, e)),
        }
    }

    /// The concurrent scope of slot `index`, with a lifetime the caller picks.
    ///
    /// # Safety
    /// Slot `index` was loaded with a concurrent scope and stays open while the
    /// reference is used.
    pub(crate) unsafe fn concurrent_scope<'x>(&self, index: usize) -> &'x ConcurrentScope<'x> {
        let h = self.record(index).holder_ptr();
        // SAFETY: per the caller the field is set and the scope lives in the slot.
        unsafe {
            let at: NonNull<Detached<'static>> =
                (*ptr::addr_of!((*h).concurrent)).unwrap_unchecked();
            &*ptr::addr_of!((*at.as_ptr()).scope).cast::<ConcurrentScope<'x>>()
        }
    }
}
