//! Loading a task slot ([`Slots::load_task`], [`Slots::try_load_task`]): the slot's
//! plain scope, built through a [`TaskScope`], handed out as a `Send`
//! [`Loaded`] of kind [`Task`].
//!
//! This module owns nothing of its own: a task slot opens, builds and unloads exactly
//! as a plain one (`super::load`), so it costs what a plain one costs. Invariant: the
//! plain handle reaches `build` only inside a `TaskScope`, the one thing that makes the
//! `Loaded` a `Task` rather than a `Plain` one.

// As in `super::load`: a `SlotError` is large but built only on the cold path.
#![allow(clippy::result_large_err)]

use crate::error::AllocError;

use super::carve::Slots;
use super::error::{SlotError, SlotErrorKind};
use super::loaded::{Loaded, Task};
use super::root::SlotRoot;
use super::task_scope::TaskScope;

impl Slots {
    /// Like [`load`](Self::load), for a slot that one task at a time uses and that may
    /// move between threads: an async request's arena. `build` gets a [`TaskScope`]
    /// (every method of [`Place`](crate::Place) and [`Carve`](crate::Carve) over the
    /// slot's plain scope, taking values that need drop only when they are `Send`),
    /// and the [`Loaded`] of kind [`Task`] is `Send` when its root is.
    ///
    /// It costs what a plain load costs: no concurrent scope, no per-thread table.
    /// Use [`load_concurrent`](Self::load_concurrent) when several threads fill the
    /// slot at once.
    ///
    /// # Errors
    /// As [`load`](Self::load): [`SlotErrorKind::Full`] when every slot is held,
    /// [`SlotErrorKind::Alloc`] when the root itself does not fit.
    ///
    /// ```
    /// use scope_stack::{slot_root, Place, Slots};
    /// struct Request<'s> { path: &'s str, body: &'s [u8] }
    /// slot_root!(struct RequestRoot => Request);
    ///
    /// let requests = Slots::leak("requests", 8, 16 << 10)?;
    /// let request = requests.load_task::<RequestRoot>("GET /index", |arena| Request {
    ///     path: arena.alloc_str("/index"),
    ///     body: arena.alloc_slice_copy(b"hello"),
    /// })?;
    /// // A work-stealing runtime may resume the task on another thread.
    /// let size = std::thread::spawn(move || request.with(|r| r.path.len() + r.body.len()))
    ///     .join()
    ///     .unwrap(); // the slot was unloaded over there
    /// assert_eq!((size, requests.loaded()), (11, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn load_task<R: SlotRoot>(
        &self,
        name: &str,
        build: impl for<'x> FnOnce(TaskScope<'x>) -> R::Of<'x>,
    ) -> Result<Loaded<'_, R, Task>, SlotError> {
        let Some(index) = self.claim() else {
            return Err(SlotError::busy(SlotErrorKind::Full, self, name));
        };
        // SAFETY: this thread just claimed slot `index`; `build` sees the handle only
        // through a `TaskScope`, so the slot holds what a task slot may hold.
        unsafe { self.build_plain::<R, Task>(index, name, |s| Ok(build(TaskScope::new(s)))) }
    }

    /// Like [`load_task`](Self::load_task), with a `build` that may fail (see
    /// [`try_load`](Self::try_load)).
    ///
    /// ```
    /// use scope_stack::{slot_root, Place, SlotErrorKind, Slots};
    /// slot_root!(struct Bytes = for<'s> &'s [u8]);
    ///
    /// let requests = Slots::leak("requests", 1, 1024)?;
    /// let err = requests
    ///     .try_load_task::<Bytes>("upload", |s| Ok(&*s.try_alloc_slice_copy(&[0u8; 4096])?))
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), SlotErrorKind::Alloc);
    /// assert_eq!(requests.loaded(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`try_load`](Self::try_load).
    pub fn try_load_task<R: SlotRoot>(
        &self,
        name: &str,
        build: impl for<'x> FnOnce(TaskScope<'x>) -> Result<R::Of<'x>, AllocError>,
    ) -> Result<Loaded<'_, R, Task>, SlotError> {
        let Some(index) = self.claim() else {
            return Err(SlotError::busy(SlotErrorKind::Full, self, name));
        };
        // SAFETY: as in `load_task`.
        unsafe { self.build_plain::<R, Task>(index, name, |s| build(TaskScope::new(s))) }
    }
}
