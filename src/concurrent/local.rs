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
use core::mem::{align_of, needs_drop, size_of};
use core::ptr::{self, NonNull};

use crate::error::{AllocError, AllocErrorKind, AllocErrorWith};
use crate::limits::MAX_ALIGN;
use crate::scope::finalizer::{self, ObjectLayout};

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
pub struct LocalScope<'a> {
    inner: &'a Inner,
    /// This thread's slot, or the scope's idle slot (never written: every bump through
    /// it fails and takes the slow path) when it has none.
    slot: NonNull<Slot>,
    /// Whether `slot` is this thread's own.
    owned: bool,
    /// This thread's index (recorded in the chunks it claims).
    index: u32,
    /// Neither `Send` nor `Sync`: the slot belongs to this thread.
    _thread: PhantomData<*const ()>,
}

impl<'a> LocalScope<'a> {
    #[inline(always)]
    pub(crate) fn new(inner: &'a Inner, slot: Option<NonNull<Slot>>, index: u32) -> Self {
        LocalScope {
            inner,
            slot: slot.unwrap_or(NonNull::from(&inner.idle)),
            owned: slot.is_some(),
            index,
            _thread: PhantomData,
        }
    }

    /// This thread's own slot, if it has one.
    #[inline(always)]
    pub(super) fn slot(&self) -> Option<&Slot> {
        self.owned.then(|| self.any_slot())
    }

    /// The slot to try the fast path in: this thread's, or the idle one.
    #[inline(always)]
    pub(super) fn any_slot(&self) -> &Slot {
        // SAFETY: the slot lives in the region (or, the idle one, in the scope's shared
        // state) while the scope is open (`'a`); only this thread writes it, and nobody
        // writes the idle one (module invariant).
        unsafe { &*self.slot.as_ptr() }
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
            Err(e) => fail(e),
        }
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
                    unsafe { slot.start_chunk(self.inner.base, at, at + chunk, self.index) };
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

    /// Gives `[addr, addr + size)` back if it is this thread's newest allocation.
    pub(crate) fn give_back_if_last(&self, addr: usize, size: usize) {
        if let Some(slot) = self.slot() {
            if slot.is_last(addr, size) {
                slot.set_cur(addr);
            }
        }
    }

    /// Moves the end of `[addr, addr + old)` to `addr + new` if it is this thread's
    /// newest allocation and the chunk has the room; says whether it did.
    pub(crate) fn resize_if_last(&self, addr: usize, old: usize, new: usize) -> bool {
        match self.slot() {
            Some(slot) if slot.is_last(addr, old) && new <= old + slot.room() => {
                slot.set_cur(addr + new);
                true
            }
            _ => false,
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

    /// Checks and bumps a runtime (size, align).
    pub(super) fn bump_checked(
        &self,
        size: usize,
        align: usize,
    ) -> Result<NonNull<u8>, AllocError> {
        if !align.is_power_of_two() {
            return Err(self.error(AllocErrorKind::InvalidAlignment, size, align));
        }
        if align > MAX_ALIGN {
            return Err(self.error(AllocErrorKind::AlignmentTooLarge, size, align));
        }
        if size == 0 {
            return Ok(dangling(align));
        }
        self.bump(size, align)
    }

    /// Room for `len` `T`s (no record).
    pub(super) fn bump_array<T>(&self, len: usize) -> Result<NonNull<T>, AllocError> {
        let layout = Layout::array::<T>(len).map_err(|_| {
            self.error(
                AllocErrorKind::CapacityOverflow,
                usize::MAX,
                align_of::<T>(),
            )
        })?;
        Ok(self.bump_checked(layout.size(), layout.align())?.cast())
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
        const {
            assert!(
                !needs_drop::<T>(),
                "new_pod: this type needs drop; use new_object"
            )
        };
        if size_of::<T>() == 0 || size_of::<T>() > MAX_ALIGN || align_of::<T>() > MAX_ALIGN {
            return match self.try_new_pod(value) {
                Ok(r) => r,
                Err(e) => fail(e.error),
            };
        }
        // Both conditions above are constants: small types come straight here, to one
        // bump in this thread's chunk and one branch.
        let at = self.any_slot().bump(size_of::<T>(), align_of::<T>());
        if size_of::<T>() <= 16 {
            // A value that travels in registers: the slow path takes it along, so the
            // fast path keeps nothing alive across a call.
            return match at {
                // SAFETY: fresh memory of this thread's, sized and aligned for `T`,
                // valid until the scope closes.
                Some(at) => unsafe { place(self.ptr(at).cast(), value) },
                None => self.new_pod_slow(value),
            };
        }
        // A larger value is written once, after the branches meet, so the compiler can
        // build it in place instead of on the stack.
        let p = match at {
            Some(at) => self.ptr(at),
            None => self.bump_or_fail(size_of::<T>(), align_of::<T>()),
        };
        // SAFETY: as above.
        unsafe { place(p.cast(), value) }
    }

    /// `new_pod` after the chunk ran out, for values small enough to travel in
    /// registers.
    #[cold]
    #[inline(never)]
    #[track_caller]
    pub(crate) fn new_pod_slow<T>(&self, value: T) -> &'a mut T {
        let p = self.bump_or_fail(size_of::<T>(), align_of::<T>());
        // SAFETY: fresh memory of this thread's, sized and aligned for `T`.
        unsafe { place(p.cast(), value) }
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
        const {
            assert!(
                !needs_drop::<T>(),
                "new_pod: this type needs drop; use new_object"
            )
        };
        if size_of::<T>() == 0 {
            // SAFETY: any aligned non-null pointer holds a zero-sized value.
            return Ok(unsafe { place(dangling(align_of::<T>()).cast(), value) });
        }
        if align_of::<T>() > MAX_ALIGN {
            let error = self.error(
                AllocErrorKind::AlignmentTooLarge,
                size_of::<T>(),
                align_of::<T>(),
            );
            return Err(AllocErrorWith { error, value });
        }
        match self.bump(size_of::<T>(), align_of::<T>()) {
            // SAFETY: fresh memory of this thread's, sized and aligned for `T`, valid
            // until the scope closes.
            Ok(p) => Ok(unsafe { place(p.cast(), value) }),
            Err(error) => Err(AllocErrorWith { error, value }),
        }
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
        match self.try_new_object(value) {
            Ok(r) => r,
            Err(e) => fail(e.error),
        }
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
        if !needs_drop::<T>() {
            return self.try_place_plain(value);
        }
        let record = match self.bump_record(ObjectLayout::<T>::SIZE, ObjectLayout::<T>::ALIGN) {
            Ok(p) => p,
            Err(error) => return Err(AllocErrorWith { error, value }),
        };
        // SAFETY: room for a record and a `T`, aligned; the value is written before the
        // record is linked. `T: Send + 'static` (module docs of `concurrent`).
        unsafe {
            let slot = finalizer::write_object_record::<T>(record);
            slot.as_ptr().write(value);
            self.link(record);
            Ok(&mut *slot.as_ptr())
        }
    }

    /// A value that needs no drop, without the build-time check (`new_object`'s path).
    fn try_place_plain<T>(&self, value: T) -> Result<&'a mut T, AllocErrorWith<T>> {
        debug_assert!(!needs_drop::<T>());
        match self.bump_value::<T>() {
            // SAFETY: fresh room for a `T`.
            Ok(p) => Ok(unsafe { place(p, value) }),
            Err(error) => Err(AllocErrorWith { error, value }),
        }
    }

    /// Room for one `T` (zero-sized: dangling).
    #[inline]
    fn bump_value<T>(&self) -> Result<NonNull<T>, AllocError> {
        if size_of::<T>() == 0 {
            return Ok(dangling(align_of::<T>()).cast());
        }
        if align_of::<T>() > MAX_ALIGN {
            return Err(self.error(
                AllocErrorKind::AlignmentTooLarge,
                size_of::<T>(),
                align_of::<T>(),
            ));
        }
        Ok(self.bump(size_of::<T>(), align_of::<T>())?.cast())
    }

    /// Room for a record and its value (a constant size and alignment).
    #[inline]
    fn bump_record(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        if align > MAX_ALIGN {
            return Err(self.error(AllocErrorKind::AlignmentTooLarge, size, align));
        }
        self.bump(size, align)
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
        match self.try_new_pod_with(f) {
            Ok(r) => r,
            Err(e) => fail(e),
        }
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
        const {
            assert!(
                !needs_drop::<T>(),
                "new_pod_with: this type needs drop; use new_object_with"
            )
        };
        let slot = self.bump_value::<T>()?;
        // SAFETY: fresh room for a `T`; if `f` panics nothing was written or linked.
        Ok(unsafe { place_with(slot, f) })
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
        match self.try_new_object_with(f) {
            Ok(r) => r,
            Err(e) => fail(e),
        }
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
        if !needs_drop::<T>() {
            let slot = self.bump_value::<T>()?;
            // SAFETY: fresh room for a `T` that needs no drop.
            return Ok(unsafe { place_with(slot, f) });
        }
        let record = self.bump_record(ObjectLayout::<T>::SIZE, ObjectLayout::<T>::ALIGN)?;
        // SAFETY: room for a record and a `T`; the value is complete before the record
        // is linked (if `f` panics, nothing is linked and the room is simply unused).
        unsafe {
            let slot = finalizer::write_object_record::<T>(record);
            let value = place_with(slot, f);
            self.link(record);
            Ok(value)
        }
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
        match self.try_alloc_layout(layout) {
            Ok(p) => p,
            Err(e) => fail(e),
        }
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
        let p = self.bump_checked(layout.size(), layout.align())?;
        #[cfg(feature = "debug-fill")]
        crate::block::debug_fill::fresh(p, layout.size());
        Ok(p)
    }
}

impl fmt::Debug for LocalScope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalScope")
            .field("name", &self.name())
            .field("thread", &self.index)
            .field("has_slot", &self.owned)
            .finish()
    }
}

/// A slice being collected; drops its elements if dropped (on an error or a panic).
pub(super) struct Growing<T> {
    pub(super) first: NonNull<T>,
    pub(super) len: usize,
    pub(super) cap: usize,
}

impl<T> Drop for Growing<T> {
    fn drop(&mut self) {
        // SAFETY: the first `len` elements are initialised and owned by the buffer.
        unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.first.as_ptr(), self.len)) };
    }
}

/// Writes `value` at `slot` and returns it with the caller's lifetime.
///
/// # Safety
/// `slot` is valid, aligned and exclusive for a `T` for `'b`.
#[inline(always)]
unsafe fn place<'b, T>(slot: NonNull<T>, value: T) -> &'b mut T {
    // SAFETY: per the caller.
    unsafe {
        slot.as_ptr().write(value);
        &mut *slot.as_ptr()
    }
}

/// Builds `f()` straight into `slot`.
///
/// # Safety
/// As [`place`].
#[inline(always)]
unsafe fn place_with<'b, T>(slot: NonNull<T>, f: impl FnOnce() -> T) -> &'b mut T {
    // SAFETY: per the caller.
    unsafe {
        slot.as_ptr().write(f());
        &mut *slot.as_ptr()
    }
}

/// Writes `f(0..len)` into `first..`; if `f` panics, drops what was written.
///
/// # Safety
/// `first` is room for `len` `T`s.
pub(super) unsafe fn fill<T>(first: NonNull<T>, len: usize, f: &mut impl FnMut(usize) -> T) {
    let mut done = Growing {
        first,
        len: 0,
        cap: len,
    };
    while done.len < len {
        // SAFETY: `done.len < len`, inside the room.
        unsafe { first.as_ptr().add(done.len).write(f(done.len)) };
        done.len += 1;
    }
    core::mem::forget(done);
}

/// An aligned dangling pointer (zero-sized values and empty slices).
#[inline(always)]
fn dangling(align: usize) -> NonNull<u8> {
    crate::scope::dangling(align)
}

/// Panics with the error, at the caller's line.
#[cold]
#[inline(never)]
#[track_caller]
pub(super) fn fail(e: AllocError) -> ! {
    panic!("{e}")
}
