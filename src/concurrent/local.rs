//! Placement in a concurrent scope: one thread's view of it, [`LocalScope`].
//!
//! This module owns every way of placing values in a concurrent scope; the methods on
//! `&ConcurrentScope` look the thread up and come here. The invariant it keeps: a
//! `LocalScope` stays on the thread that made it (it is neither `Send` nor `Sync`), so
//! its slot, when it has one, is this thread's alone; without a slot every allocation
//! is claimed from the region by compare-exchange and every finalizer record is pushed
//! onto the shared overflow chain. A record is linked only once its value is complete.

use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};

use crate::error::{AllocError, AllocErrorKind, AllocErrorWith};
use crate::limits::MAX_ALIGN;
use crate::scope::place;

use super::region::Slot;
use super::shared::Inner;

/// One thread's handle to a [`ConcurrentScope`](super::ConcurrentScope), from
/// [`ConcurrentScope::local`](super::ConcurrentScope::local).
///
/// It has every placement method of the shared scope, without the thread look-up on
/// each call; what it places lives as long as the shared scope's borrow `'a`. It cannot
/// leave its thread:
///
/// ```compile_fail,E0277
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("frame", |frame| {
///     frame.scope_concurrent("jobs", |jobs| {
///         let here = jobs.local();
///         std::thread::scope(|t| { t.spawn(move || here.new_pod(1u8)); });
///     });
/// });
/// ```
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
/// memory.scope("frame", |frame| {
///     frame.scope_concurrent("jobs", |jobs| {
///         let here = jobs.local();
///         let a = here.new_pod(1u32);
///         let b = jobs.new_pod(2u32); // mixing with the shared handle is fine
///         assert_eq!(*a + *b, 3);
///     });
/// });
/// ```
#[derive(Clone, Copy)]
pub struct LocalScope<'a> {
    inner: &'a Inner,
    /// This thread's slot, or the scope's idle slot (never written: every bump through
    /// it fails and takes the slow path) when it has none.
    /// (Two words, so the handle travels in registers: whether the slot is this
    /// thread's own, and the thread's index, are derived from it.)
    slot: NonNull<Slot>,
    /// Neither `Send` nor `Sync`: the slot belongs to this thread.
    _thread: PhantomData<*const ()>,
}

impl<'a> LocalScope<'a> {
    /// The concurrent scope's shared state (for reports).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn inner(&self) -> &'a Inner {
        self.inner
    }

    #[inline(always)]
    pub(crate) fn new(inner: &'a Inner, slot: Option<NonNull<Slot>>) -> Self {
        LocalScope {
            inner,
            slot: slot.unwrap_or(NonNull::from(&inner.idle)),
            _thread: PhantomData,
        }
    }

    /// Whether `slot` is this thread's own (not the idle one).
    #[inline(always)]
    fn owned(&self) -> bool {
        self.slot != NonNull::from(&self.inner.idle)
    }

    /// This thread's index: its slot's place in the table (recorded in the chunks it
    /// claims). Only meaningful when the slot is its own.
    fn index(&self) -> u32 {
        // SAFETY: an owned slot lies in the table that starts at `inner.slots`.
        unsafe { self.slot.offset_from(self.inner.slots) as u32 }
    }

    /// This thread's own slot, if it has one.
    #[inline(always)]
    pub(super) fn slot(&self) -> Option<&Slot> {
        self.owned().then(|| self.any_slot())
    }

    /// This thread's own slot, for as long as the scope is open.
    #[inline(always)]
    pub(super) fn own_slot(&self) -> Option<&'a Slot> {
        // SAFETY: as in `any_slot`; the slot lives in the region until the scope closes.
        self.owned().then(|| unsafe { &*self.slot.as_ptr() })
    }

    /// The slot to try the fast path in: this thread's, or the idle one.
    #[inline(always)]
    pub(super) fn any_slot(&self) -> &Slot {
        // SAFETY: the slot lives in the region (or, the idle one, in the scope's shared
        // state) while the scope is open (`'a`); only this thread writes it, and nobody
        // writes the idle one (module invariant).
        unsafe { &*self.slot.as_ptr() }
    }

    /// The concurrent scope's record in the block's list of live scopes.
    #[inline]
    pub(super) fn scope_info(&self) -> &'a crate::scope::info::ScopeInfo {
        // SAFETY: the record lives in the frame of the opening call, which outlives
        // every `LocalScope` of the scope (`'a`).
        unsafe { self.inner.info.get().as_ref() }
    }

    /// The scope's shared region.
    #[inline]
    pub(super) fn region(&self) -> &'a super::region::Region {
        &self.inner.region
    }

    #[inline(always)]
    pub(super) fn ptr(&self, addr: usize) -> NonNull<u8> {
        self.inner.ptr(addr)
    }

    /// Bumps `size > 0` bytes at `align` (a power of two at most `MAX_ALIGN`).
    #[inline(always)]
    pub(super) fn bump(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        if size <= MAX_ALIGN {
            if let Some(at) = self.any_slot().bump(size, align) {
                return Ok(self.ptr(at));
            }
        }
        self.bump_slow(size, align)
    }

    /// The slow path of `new_pod`: a new chunk or a direct claim, or a panic.
    #[cold]
    #[inline(never)]
    #[track_caller]
    pub(crate) fn bump_or_fail(&self, size: usize, align: usize) -> NonNull<u8> {
        match self.bump_slow(size, align) {
            Ok(p) => p,
            Err(e) => self.fail(e),
        }
    }

    /// Requests with `size + align` above this go straight to the region.
    #[inline]
    pub(super) fn inner_large(&self) -> usize {
        self.inner.large
    }

    /// A new chunk, or a claim straight from the region.
    #[cold]
    #[inline(never)]
    pub(super) fn bump_slow(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        if size > isize::MAX as usize {
            return Err(self.error(AllocErrorKind::CapacityOverflow, size, align));
        }
        let region = &self.inner.region;
        if let Some(slot) = self.slot() {
            if size.saturating_add(align) <= self.inner.large {
                if let Some(at) = slot.bump_any(size, align) {
                    return Ok(self.ptr(at));
                }
                let chunk = self.inner.chunk_size;
                if let Some(at) = region.claim(chunk, 64) {
                    // SAFETY: this thread owns the slot; the chunk was just claimed, is
                    // 64-aligned and at least 256 bytes.
                    unsafe { slot.start_chunk(self.inner.base, at, at + chunk, self.index()) };
                    if let Some(at) = slot.bump_any(size, align) {
                        return Ok(self.ptr(at));
                    }
                }
            }
        }
        match region.claim_direct(size, align) {
            Some(at) => Ok(self.ptr(at)),
            None => Err(self.inner.oom(size, align, self.remaining())),
        }
    }

    /// Links a finalizer record whose value is complete.
    ///
    /// # Safety
    /// As `Chain::link`: `record` was written by `finalizer`, its value is initialised,
    /// and it lives in this scope's region.
    #[inline]
    pub(super) unsafe fn link(&self, record: NonNull<u8>) {
        match self.slot() {
            // SAFETY: forwarded; the slot is this thread's.
            Some(slot) => unsafe { slot.chain.link(record) },
            // SAFETY: forwarded.
            None => unsafe { self.inner.region.overflow.push(record) },
        }
    }

    #[cold]
    pub(super) fn error(&self, kind: AllocErrorKind, size: usize, align: usize) -> AllocError {
        self.inner.error(kind, size, align, self.remaining())
    }

    /// The name of the scope.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| assert_eq!(jobs.local().name(), "jobs")));
    /// ```
    pub fn name(&self) -> &'a str {
        // SAFETY: the name outlives the scope.
        unsafe { &*ptr::from_ref(self.inner.name()) }
    }

    /// Bytes this thread may still allocate: the rest of its chunk plus what no thread
    /// has claimed yet (see [`ConcurrentScope::remaining`](super::ConcurrentScope::remaining)).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| assert!(jobs.local().remaining() > 0)));
    /// ```
    pub fn remaining(&self) -> usize {
        self.slot().map_or(0, Slot::room) + self.inner.region.unclaimed()
    }

    // ----- single values -----

    /// Places a value that needs no drop (checked at build time) and returns it.
    ///
    /// # Panics
    /// When the scope is out of memory; see [`try_new_pod`](Self::try_new_pod).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| assert_eq!(*jobs.local().new_pod(5u8), 5)));
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn new_pod<T>(&self, value: T) -> &'a mut T {
        place::new_pod(self, value)
    }

    /// Places a value that needs no drop, or hands it back with the error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| assert!(jobs.local().try_new_pod(1u64).is_ok())));
    /// ```
    #[inline(always)]
    pub fn try_new_pod<T>(&self, value: T) -> Result<&'a mut T, AllocErrorWith<T>> {
        place::try_new_pod(self, value)
    }

    /// Places a value; if it needs drop, its destructor runs when the scope closes, on
    /// the closing thread (hence `Send`).
    ///
    /// # Panics
    /// When the scope is out of memory; see [`try_new_object`](Self::try_new_object).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     jobs.local().new_object(String::from("dropped at the close")).push('!');
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn new_object<T: Send + 'static>(&self, value: T) -> &'a mut T {
        place::or_fail(self, self.try_new_object(value).map_err(|e| e.error))
    }

    /// Places a value with a finalizer if it needs drop, or hands it back with the
    /// error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent_with_budget("jobs", 1024, |jobs| {
    ///     let here = jobs.local();
    ///     assert!(here.try_new_object(String::from("fits")).is_ok());
    ///     let back = here.try_new_object([0u64; 1000].map(|_| String::new()));
    ///     assert_eq!(back.unwrap_err().into_value().len(), 1000); // handed back
    /// }));
    /// ```
    #[inline]
    pub fn try_new_object<T: Send + 'static>(
        &self,
        value: T,
    ) -> Result<&'a mut T, AllocErrorWith<T>> {
        // SAFETY: `T: Send + 'static`: the drop rule, and the closing thread may drop it.
        unsafe { place::try_new_object(self, value) }
    }

    /// As [`new_pod`](Self::new_pod), building the value in place.
    ///
    /// # Panics
    /// When the scope is out of memory (before `f` runs).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let big = jobs.local().new_pod_with(|| [7u8; 64 << 10]);
    ///     assert_eq!(big[1000], 7);
    /// }));
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn new_pod_with<T>(&self, f: impl FnOnce() -> T) -> &'a mut T {
        place::or_fail(self, place::try_new_pod_with(self, f))
    }

    /// As [`try_new_pod`](Self::try_new_pod), building the value in place; `f` is not
    /// called when there is no room.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| assert!(jobs.local().try_new_pod_with(|| 3u16).is_ok())));
    /// ```
    #[inline(always)]
    pub fn try_new_pod_with<T>(&self, f: impl FnOnce() -> T) -> Result<&'a mut T, AllocError> {
        place::try_new_pod_with(self, f)
    }

    /// As [`new_object`](Self::new_object), building the value in place.
    ///
    /// # Panics
    /// When the scope is out of memory (before `f` runs).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().new_object_with(|| vec![1, 2, 3]).len(), 3);
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn new_object_with<T: Send + 'static>(&self, f: impl FnOnce() -> T) -> &'a mut T {
        place::or_fail(self, self.try_new_object_with(f))
    }

    /// As [`try_new_object`](Self::try_new_object), building the value in place; `f`
    /// is not called when there is no room.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_new_object_with(String::new).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_new_object_with<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T,
    ) -> Result<&'a mut T, AllocError> {
        // SAFETY: `T: Send + 'static`: the drop rule, and the closing thread may drop it.
        unsafe { place::try_new_object_with(self, f) }
    }

    // ----- raw memory -----

    /// Allocates uninitialised memory for `layout` (zero-sized: a dangling pointer).
    ///
    /// # Panics
    /// When the scope is out of memory or the alignment is above [`MAX_ALIGN`].
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// use core::alloc::Layout;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let p = jobs.local().alloc_layout(Layout::from_size_align(100, 64).unwrap());
    ///     assert_eq!(p.as_ptr() as usize % 64, 0);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        place::or_fail(self, place::try_alloc_layout(self, layout))
    }

    /// Allocates uninitialised memory for `layout`, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// use core::alloc::Layout;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let err = jobs.local().try_alloc_layout(Layout::from_size_align(1 << 20, 1).unwrap());
    ///     assert_eq!(err.unwrap_err().kind(), AllocErrorKind::OutOfMemory);
    /// }));
    /// ```
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        place::try_alloc_layout(self, layout)
    }

    /// Raw memory of `size` bytes at `align` (a power of two up to [`MAX_ALIGN`](crate::MAX_ALIGN)).
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     assert_eq!(here.alloc_raw(24, 64).as_ptr() as usize % 64, 0);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_raw(&self, size: usize, align: usize) -> NonNull<u8> {
        place::or_fail(self, self.try_alloc_raw(size, align))
    }

    /// The `try_` form of [`alloc_raw`](Self::alloc_raw).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     assert!(here.try_alloc_raw(8, 3).is_err()); // not a power of two
    /// }));
    /// ```
    pub fn try_alloc_raw(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        place::try_alloc_raw(self, size, align)
    }

    /// Uninitialised room for one `T`, never dropped by the scope.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     let x = here.alloc_uninit::<u64>().write(5);
    ///     assert_eq!(*x, 5);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_uninit<T>(&self) -> &'a mut MaybeUninit<T> {
        place::or_fail(self, self.try_alloc_uninit())
    }

    /// The `try_` form of [`alloc_uninit`](Self::alloc_uninit).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     assert!(here.try_alloc_uninit::<[u8; 1 << 20]>().is_err());
    /// }));
    /// ```
    pub fn try_alloc_uninit<T>(&self) -> Result<&'a mut MaybeUninit<T>, AllocError> {
        place::try_alloc_uninit(self)
    }

    /// Uninitialised room for `len` `T`s, never dropped by the scope.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     assert_eq!(here.alloc_uninit_slice::<u32>(8).len(), 8);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_uninit_slice<T>(&self, len: usize) -> &'a mut [MaybeUninit<T>] {
        place::or_fail(self, self.try_alloc_uninit_slice(len))
    }

    /// The `try_` form of [`alloc_uninit_slice`](Self::alloc_uninit_slice).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     assert!(here.try_alloc_uninit_slice::<u32>(usize::MAX).is_err());
    /// }));
    /// ```
    pub fn try_alloc_uninit_slice<T>(
        &self,
        len: usize,
    ) -> Result<&'a mut [MaybeUninit<T>], AllocError> {
        place::try_alloc_uninit_slice(self, len)
    }
}

impl fmt::Debug for LocalScope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalScope")
            .field("name", &self.name())
            .field("thread", &self.owned().then(|| self.index()))
            .field("has_slot", &self.owned())
            .finish()
    }
}

impl LocalScope<'_> {
    /// Panics with the error, at the caller's line.
    #[cold]
    #[inline(never)]
    #[track_caller]
    pub(super) fn fail(&self, e: AllocError) -> ! {
        #[cfg(feature = "alloc")]
        if matches!(
            e.kind(),
            AllocErrorKind::OutOfMemory | AllocErrorKind::BudgetExceeded
        ) {
            // One map per scope: with many jobs, the first panic prints it and the
            // others point to it.
            if !self
                .inner
                .map_printed
                .swap(true, core::sync::atomic::Ordering::Relaxed)
            {
                panic!("{e}\n{}", self.inner.report());
            }
            panic!(
                "{e}\n(the memory map is printed with the first out-of-memory panic in concurrent scope \"{}\")",
                self.inner.name()
            );
        }
        panic!("{e}")
    }
}
