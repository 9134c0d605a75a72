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
use core::mem::{align_of, needs_drop, size_of, MaybeUninit};
use core::ptr::{self, NonNull};

use crate::error::{AllocError, AllocErrorKind, AllocErrorWith};
use crate::limits::MAX_ALIGN;
use crate::scope::finalizer::{self, ObjectLayout, SliceLayout};

use super::region::Slot;
use super::Inner;

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
    fn slot(&self) -> Option<&Slot> {
        self.owned.then(|| self.any_slot())
    }

    /// The slot to try the fast path in: this thread's, or the idle one.
    #[inline(always)]
    fn any_slot(&self) -> &Slot {
        // SAFETY: the slot lives in the region (or, the idle one, in the scope's shared
        // state) while the scope is open (`'a`); only this thread writes it, and nobody
        // writes the idle one (module invariant).
        unsafe { &*self.slot.as_ptr() }
    }

    #[inline(always)]
    fn ptr(&self, addr: usize) -> NonNull<u8> {
        self.inner.ptr(addr)
    }

    /// Bumps `size > 0` bytes at `align` (a power of two at most `MAX_ALIGN`).
    #[inline(always)]
    fn bump(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
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
    fn bump_slow(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
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
    unsafe fn link(&self, record: NonNull<u8>) {
        match self.slot() {
            // SAFETY: forwarded; the slot is this thread's.
            Some(slot) => unsafe { slot.chain.link(record) },
            // SAFETY: forwarded.
            None => unsafe { self.inner.region.overflow.push(record) },
        }
    }

    #[cold]
    fn error(&self, kind: AllocErrorKind, size: usize, align: usize) -> AllocError {
        self.inner.error(kind, size, align, self.remaining())
    }

    /// Checks and bumps a runtime (size, align).
    fn bump_checked(&self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
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
    fn bump_array<T>(&self, len: usize) -> Result<NonNull<T>, AllocError> {
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

    // ----- slices -----

    /// Copies a slice into the scope.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_slice_copy(&[1, 2, 3]), &[1, 2, 3]);
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &'a mut [T] {
        // Fast path: a short slice bumps straight in this thread's chunk (the bytes
        // cannot overflow: at most `MAX_ALIGN` elements of at most `MAX_ALIGN` bytes).
        if align_of::<T>() <= MAX_ALIGN && size_of::<T>() <= MAX_ALIGN && src.len() <= MAX_ALIGN {
            let bytes = src.len() * size_of::<T>();
            if bytes != 0 && bytes <= MAX_ALIGN {
                if let Some(at) = self.any_slot().bump(bytes, align_of::<T>()) {
                    let dst = self.ptr(at).cast::<T>();
                    // SAFETY: fresh room for `src.len()` `T`s, not overlapping `src`;
                    // `T: Copy`.
                    unsafe {
                        ptr::copy_nonoverlapping(src.as_ptr(), dst.as_ptr(), src.len());
                        return core::slice::from_raw_parts_mut(dst.as_ptr(), src.len());
                    }
                }
            }
        }
        self.alloc_slice_copy_slow(src)
    }

    /// `alloc_slice_copy` past the fast path: a new chunk, a long slice, or a panic.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn alloc_slice_copy_slow<T: Copy>(&self, src: &[T]) -> &'a mut [T] {
        match self.try_alloc_slice_copy(src) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Copies a slice into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_slice_copy(&[0u8; 1 << 20]).is_err());
    /// }));
    /// ```
    pub fn try_alloc_slice_copy<T: Copy>(&self, src: &[T]) -> Result<&'a mut [T], AllocError> {
        let first = self.bump_array::<T>(src.len())?;
        // SAFETY: room for `src.len()` `T`s that nothing else uses; `T: Copy`.
        unsafe {
            ptr::copy_nonoverlapping(src.as_ptr(), first.as_ptr(), src.len());
            Ok(core::slice::from_raw_parts_mut(first.as_ptr(), src.len()))
        }
    }

    /// Clones a slice into the scope; the clones are dropped when it closes.
    ///
    /// # Panics
    /// When the scope is out of memory, or a clone panics.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let names = jobs.local().alloc_slice_clone(&[String::from("a"), String::from("b")]);
    ///     assert_eq!(names.concat(), "ab");
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_clone<T: Clone + Send + 'static>(&self, src: &[T]) -> &'a mut [T] {
        match self.try_alloc_slice_clone(src) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Clones a slice into the scope, or says why the memory cannot be had.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().try_alloc_slice_clone(&[vec![1u8]]).unwrap()[0], [1]);
    /// }));
    /// ```
    pub fn try_alloc_slice_clone<T: Clone + Send + 'static>(
        &self,
        src: &[T],
    ) -> Result<&'a mut [T], AllocError> {
        self.try_alloc_slice_fill_with(src.len(), |i| src[i].clone())
    }

    /// A slice of `len` values made by `f(index)`; values that need drop are dropped
    /// when the scope closes.
    ///
    /// # Panics
    /// When the scope is out of memory, or `f` panics (the values made so far are
    /// dropped then).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_slice_fill_with(3, |i| i * 10), &[0, 10, 20]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_with<T: Send + 'static>(
        &self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> &'a mut [T] {
        match self.try_alloc_slice_fill_with(len, f) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// A slice of `len` values made by `f(index)`, or why the memory cannot be had
    /// (then `f` is not called).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_slice_fill_with(1 << 20, |i| i).is_err());
    /// }));
    /// ```
    pub fn try_alloc_slice_fill_with<T: Send + 'static>(
        &self,
        len: usize,
        mut f: impl FnMut(usize) -> T,
    ) -> Result<&'a mut [T], AllocError> {
        if !needs_drop::<T>() {
            let first = self.bump_array::<T>(len)?;
            // SAFETY: room for `len` `T`s; values that need no drop need no record.
            unsafe {
                fill(first, len, &mut f);
                return Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len));
            }
        }
        let record = self.bump_slice_record::<T>(len)?;
        // SAFETY: room for a slice record and `len` `T`s; every element is written
        // before the record is linked (on a panic `fill` drops what it wrote and
        // nothing is linked).
        unsafe {
            let first = finalizer::write_slice_record::<T>(record, len);
            fill(first, len, &mut f);
            self.link(record);
            Ok(core::slice::from_raw_parts_mut(first.as_ptr(), len))
        }
    }

    /// Room for a slice record and `len` `T`s.
    fn bump_slice_record<T>(&self, len: usize) -> Result<NonNull<u8>, AllocError> {
        let Some(size) = SliceLayout::<T>::size(len) else {
            return Err(self.error(
                AllocErrorKind::CapacityOverflow,
                usize::MAX,
                align_of::<T>(),
            ));
        };
        self.bump_checked(size, SliceLayout::<T>::ALIGN)
    }

    /// Collects an iterator into a slice. The slice grows by doubling: when it cannot
    /// grow in place (another allocation of this thread came after it, perhaps made by
    /// the iterator itself), it moves, and the room it leaves stays unused until the
    /// scope closes.
    ///
    /// # Panics
    /// When the scope is out of memory (the items taken so far are dropped), or the
    /// iterator panics.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let odd = jobs.local().alloc_iter((0..10).filter(|i| i % 2 == 1));
    ///     assert_eq!(odd, &[1, 3, 5, 7, 9]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_iter<T: Send + 'static>(&self, iter: impl IntoIterator<Item = T>) -> &'a mut [T] {
        match self.try_alloc_iter(iter) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Collects an iterator into a slice, or says why the memory ran out (the items
    /// taken so far are dropped then).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_iter(0..1_000_000u64).is_err());
    /// }));
    /// ```
    pub fn try_alloc_iter<T: Send + 'static>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'a mut [T], AllocError> {
        let mut iter = iter.into_iter();
        let mut buf = Growing::<T> {
            first: NonNull::dangling(),
            len: 0,
            cap: if size_of::<T>() == 0 { usize::MAX } else { 0 },
        };
        let want = iter.size_hint().0.max(4);
        for item in iter.by_ref() {
            if buf.len == buf.cap {
                let want = if buf.cap == 0 {
                    want
                } else {
                    buf.cap.saturating_mul(2)
                };
                if let Err(e) = self.grow(&mut buf, want) {
                    drop(item);
                    return Err(e);
                }
            }
            // SAFETY: `len < cap`: room for one more element (zero-sized: dangling).
            unsafe { buf.first.as_ptr().add(buf.len).write(item) };
            buf.len += 1;
        }
        let (first, len) = (buf.first, buf.len);
        if size_of::<T>() != 0 && buf.cap > len {
            // Give the unused tail back when it is at the top of this thread's chunk.
            if let Some(slot) = self.slot() {
                let (at, bytes) = (first.as_ptr().addr(), buf.cap * size_of::<T>());
                if slot.is_last(at, bytes) {
                    slot.set_cur(at + len * size_of::<T>());
                }
            }
        }
        if needs_drop::<T>() && len > 0 {
            // A record of its own, since the elements may have moved since they began.
            // On an error `buf` drops the elements.
            let record =
                self.bump_checked(core::mem::size_of::<SliceRef>(), align_of::<SliceRef>())?;
            core::mem::forget(buf);
            // SAFETY: room for a slice-reference record; the elements are complete.
            unsafe {
                write_slice_ref::<T>(record, first, len);
                self.link(record);
            }
        } else {
            core::mem::forget(buf);
        }
        // SAFETY: `len` initialised elements, valid until the scope closes.
        Ok(unsafe { core::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }

    /// Makes room for `want` elements, in place when the buffer is this thread's newest
    /// allocation, else by moving it.
    fn grow<T>(&self, buf: &mut Growing<T>, want: usize) -> Result<(), AllocError> {
        let too_big = || {
            self.error(
                AllocErrorKind::CapacityOverflow,
                usize::MAX,
                align_of::<T>(),
            )
        };
        let bytes = want.checked_mul(size_of::<T>()).ok_or_else(too_big)?;
        if let Some(slot) = self.slot() {
            let at = buf.first.as_ptr().addr();
            let old = buf.cap * size_of::<T>();
            if buf.cap > 0 && slot.is_last(at, old) && bytes - old <= slot.room() {
                slot.set_cur(at + bytes);
                buf.cap = want;
                return Ok(());
            }
        }
        let new = self.bump_array::<T>(want)?;
        // SAFETY: the old buffer's `len` elements move to fresh, larger room; the old
        // room is not used again.
        unsafe { ptr::copy_nonoverlapping(buf.first.as_ptr(), new.as_ptr(), buf.len) };
        buf.first = new;
        buf.cap = want;
        Ok(())
    }

    /// Collects an iterator of known length into a slice, or panics when out of memory.
    ///
    /// # Panics
    /// When the scope is out of memory, or the iterator ends before its `len`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_iter_exact([1, 2].map(|x| x * 2)), &[2, 4]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_iter_exact<T: Send + 'static, I>(&self, iter: I) -> &'a mut [T]
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        match self.try_alloc_iter_exact(iter) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Collects an iterator of known length, or says why the memory cannot be had (no
    /// item is taken then).
    ///
    /// # Panics
    /// When the iterator ends before its `len`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_iter_exact(0..1_000_000u32).is_err());
    /// }));
    /// ```
    pub fn try_alloc_iter_exact<T: Send + 'static, I>(
        &self,
        iter: I,
    ) -> Result<&'a mut [T], AllocError>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut iter = iter.into_iter();
        let len = iter.len();
        self.try_alloc_slice_fill_with(len, |i| match iter.next() {
            Some(v) => v,
            None => {
                panic!("alloc_iter_exact: the iterator said it had {len} items but ended after {i}")
            }
        })
    }

    // ----- text -----

    /// Copies a string into the scope.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_str("frog"), "frog");
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_str(&self, src: &str) -> &'a mut str {
        let bytes = self.alloc_slice_copy(src.as_bytes());
        // SAFETY: a copy of valid UTF-8.
        unsafe { core::str::from_utf8_unchecked_mut(bytes) }
    }

    /// Copies a string into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_alloc_str("ok").is_ok());
    /// }));
    /// ```
    pub fn try_alloc_str(&self, src: &str) -> Result<&'a mut str, AllocError> {
        let bytes = self.try_alloc_slice_copy(src.as_bytes())?;
        // SAFETY: a copy of valid UTF-8.
        Ok(unsafe { core::str::from_utf8_unchecked_mut(bytes) })
    }

    /// Formats text straight into the scope (`format_args!`). The text is measured
    /// first and then written, so it is formatted twice unless it is a plain literal.
    ///
    /// # Panics
    /// When the scope is out of memory, or a `Display` impl fails.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().alloc_fmt(format_args!("job {}", 7)), "job 7");
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_fmt(&self, args: fmt::Arguments<'_>) -> &'a mut str {
        match self.try_alloc_fmt(args) {
            Ok(s) => s,
            Err(e) => fail(e),
        }
    }

    /// Formats text straight into the scope, or says why the memory cannot be had.
    ///
    /// # Panics
    /// When a `Display` impl returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.local().try_alloc_fmt(format_args!("{}-{}", 1, 2)).unwrap(), "1-2");
    /// }));
    /// ```
    pub fn try_alloc_fmt(&self, args: fmt::Arguments<'_>) -> Result<&'a mut str, AllocError> {
        if let Some(s) = args.as_str() {
            return self.try_alloc_str(s);
        }
        /// Counts bytes.
        struct Count(usize);
        impl fmt::Write for Count {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0 += s.len();
                Ok(())
            }
        }
        /// Writes into room of a fixed size; fails when it is full.
        struct Fill<'b>(&'b mut [MaybeUninit<u8>], usize);
        impl fmt::Write for Fill<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                let room = self.0.len() - self.1;
                if s.len() > room {
                    return Err(fmt::Error);
                }
                for (dst, b) in self.0[self.1..].iter_mut().zip(s.bytes()) {
                    dst.write(b);
                }
                self.1 += s.len();
                Ok(())
            }
        }
        let mut count = Count(0);
        fmt::write(&mut count, args).expect("a Display implementation returned an error");
        let mut cap = count.0;
        loop {
            let room = self.bump_array::<MaybeUninit<u8>>(cap)?;
            // SAFETY: fresh room for `cap` bytes, this call's alone.
            let room = unsafe { core::slice::from_raw_parts_mut(room.as_ptr(), cap) };
            let mut fill = Fill(room, 0);
            if fmt::write(&mut fill, args).is_ok() {
                let len = fill.1;
                // SAFETY: the first `len` bytes were written, as UTF-8 from `str`s.
                return Ok(unsafe {
                    core::str::from_utf8_unchecked_mut(core::slice::from_raw_parts_mut(
                        fill.0.as_mut_ptr().cast::<u8>(),
                        len,
                    ))
                });
            }
            // The text came out longer the second time: try again with more room.
            cap = cap.saturating_mul(2).max(16);
        }
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
struct Growing<T> {
    first: NonNull<T>,
    len: usize,
    cap: usize,
}

impl<T> Drop for Growing<T> {
    fn drop(&mut self) {
        // SAFETY: the first `len` elements are initialised and owned by the buffer.
        unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.first.as_ptr(), self.len)) };
    }
}

/// A finalizer record for a slice that lies elsewhere (a collected slice moves while it
/// grows, so its record cannot sit in front of it).
type SliceRef = finalizer::SliceRefRecord;

/// Writes a record that drops `[first, first + len)`.
///
/// # Safety
/// `record` is room for a `SliceRef`, aligned; the elements stay alive until it runs.
unsafe fn write_slice_ref<T>(record: NonNull<u8>, first: NonNull<T>, len: usize) {
    // SAFETY: forwarded.
    unsafe { finalizer::write_slice_ref_record::<T>(record, first, len) }
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
unsafe fn fill<T>(first: NonNull<T>, len: usize, f: &mut impl FnMut(usize) -> T) {
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
fn fail(e: AllocError) -> ! {
    panic!("{e}")
}
