//! The placement methods of `&ConcurrentScope`: each looks up the calling thread's slot
//! and places through it, exactly as [`LocalScope`](super::LocalScope) does (see there
//! for the details). This module owns no state; its invariant is that each method here
//! is the `LocalScope` method of the same name, reached through `local()`.

// Each method hands out fresh memory tied to the borrow of the scope, as bumpalo's
// `alloc(&self) -> &mut T` does: the memory is exclusive to the caller, not a second
// path to anything `self` holds.
#![allow(clippy::mut_from_ref)]

use core::alloc::Layout;
use core::fmt;
use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::NonNull;

use crate::error::{AllocError, AllocErrorWith};
use crate::limits::MAX_ALIGN;
use crate::thread_index;

use super::ConcurrentScope;

impl<'c> ConcurrentScope<'_> {
    /// Places a value that needs no drop (checked at build time). (see
    /// [`LocalScope::new_pod`](super::LocalScope::new_pod)).
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(*jobs.new_pod(5u32), 5);
    /// }));
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn new_pod<T>(&'c self, value: T) -> &'c mut T {
        const {
            assert!(
                !core::mem::needs_drop::<T>(),
                "new_pod: this type needs drop; use new_object"
            )
        };
        let (size, align) = (size_of::<T>(), align_of::<T>());
        if size == 0 || size > MAX_ALIGN || align > MAX_ALIGN {
            return self.local().new_pod(value);
        }
        // The thread look-up and the bump, with no handle in between: an index that is
        // unassigned, shared or past the table fails the bounds check and goes the slow
        // way, which assigns it.
        let inner = &self.inner;
        let index = thread_index::current_exclusive_fast() as usize;
        let mut at = None;
        if index < inner.slot_count {
            // SAFETY: `index < slot_count`: a slot of the table, held by this thread
            // alone (see `region`).
            let slot = unsafe { &*inner.slots.as_ptr().add(index) };
            at = slot.bump(size, align);
            // SAFETY: the record lives as long as the scope call, which outlives `self`.
            #[cfg(feature = "tracy")]
            if let Some(a) = at {
                let pool = unsafe { inner.info.get().as_ref() }.profiler.pool;
                crate::profiler::alloc(pool, a, size);
            }
        }
        if size <= 16 {
            // As in `LocalScope::new_pod`: small values go to the slow path with it.
            return match at {
                // SAFETY: fresh memory of this thread's, sized and aligned for `T`.
                Some(at) => unsafe { place(inner.ptr(at).cast(), value) },
                None => new_pod_cold(self, value),
            };
        }
        let p = match at {
            Some(at) => inner.ptr(at),
            None => {
                let local = self.local();
                let p = local.bump_or_fail(size, align);
                #[cfg(feature = "tracy")]
                crate::scope::place::placed(&local, p, size);
                p
            }
        };
        // SAFETY: fresh memory of this thread's, sized and aligned for `T`.
        unsafe { place(p.cast(), value) }
    }

    /// Places a value that needs no drop, or hands it back with the error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_new_pod(5u32).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_new_pod<T>(&'c self, value: T) -> Result<&'c mut T, AllocErrorWith<T>> {
        self.local().try_new_pod(value)
    }

    /// Places a value; if it needs drop, its destructor runs when the scope closes, on the closing thread (so it must be `Send`).
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     jobs.new_object(String::from("dropped at the close"));
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn new_object<T: Send + 'static>(&'c self, value: T) -> &'c mut T {
        self.local().new_object(value)
    }

    /// Places a value with a finalizer if it needs drop, or hands it back with the error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_new_object(vec![1u8]).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_new_object<T: Send + 'static>(
        &'c self,
        value: T,
    ) -> Result<&'c mut T, AllocErrorWith<T>> {
        self.local().try_new_object(value)
    }

    /// As [`new_pod`](Self::new_pod), building the value in place.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.new_pod_with(|| [1u8; 4096])[4095], 1);
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn new_pod_with<T>(&'c self, f: impl FnOnce() -> T) -> &'c mut T {
        self.local().new_pod_with(f)
    }

    /// As [`try_new_pod`](Self::try_new_pod), building the value in place; `f` is not called when there is no room.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_new_pod_with(|| 1u8).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_new_pod_with<T>(&'c self, f: impl FnOnce() -> T) -> Result<&'c mut T, AllocError> {
        self.local().try_new_pod_with(f)
    }

    /// As [`new_object`](Self::new_object), building the value in place.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.new_object_with(Vec::<u8>::new).is_empty());
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn new_object_with<T: Send + 'static>(&'c self, f: impl FnOnce() -> T) -> &'c mut T {
        self.local().new_object_with(f)
    }

    /// As [`try_new_object`](Self::try_new_object), building the value in place; `f` is not called when there is no room.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_new_object_with(String::new).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_new_object_with<T: Send + 'static>(
        &'c self,
        f: impl FnOnce() -> T,
    ) -> Result<&'c mut T, AllocError> {
        self.local().try_new_object_with(f)
    }

    /// Allocates uninitialised memory for `layout` (any power-of-two alignment up to `MAX_ALIGN`).
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     let p = jobs.alloc_layout(core::alloc::Layout::from_size_align(64, 64).unwrap());
    /// assert_eq!(p.as_ptr() as usize % 64, 0);
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_layout(&'c self, layout: Layout) -> NonNull<u8> {
        self.local().alloc_layout(layout)
    }

    /// Allocates uninitialised memory for `layout`, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_layout(core::alloc::Layout::new::<u64>()).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_alloc_layout(&'c self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        self.local().try_alloc_layout(layout)
    }

    /// Copies a slice into the scope.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_slice_copy(&[1, 2]), &[1, 2]);
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_slice_copy<T: Copy>(&'c self, src: &[T]) -> &'c mut [T] {
        self.local().alloc_slice_copy(src)
    }

    /// Copies a slice into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_slice_copy(&[1, 2]).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_alloc_slice_copy<T: Copy>(&'c self, src: &[T]) -> Result<&'c mut [T], AllocError> {
        self.local().try_alloc_slice_copy(src)
    }

    /// Clones a slice into the scope; the clones are dropped when it closes.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_slice_clone(&[String::from("a")])[0], "a");
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_slice_clone<T: Clone + Send + 'static>(&'c self, src: &[T]) -> &'c mut [T] {
        self.local().alloc_slice_clone(src)
    }

    /// Clones a slice into the scope, or says why the memory cannot be had.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_slice_clone(&[String::new()]).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_alloc_slice_clone<T: Clone + Send + 'static>(
        &'c self,
        src: &[T],
    ) -> Result<&'c mut [T], AllocError> {
        self.local().try_alloc_slice_clone(src)
    }

    /// A slice of `len` values made by `f(index)`; values that need drop are dropped when the scope closes.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_slice_fill_with(3, |i| i), &[0, 1, 2]);
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_slice_fill_with<T: Send + 'static>(
        &'c self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> &'c mut [T] {
        self.local().alloc_slice_fill_with(len, f)
    }

    /// A slice of `len` values made by `f(index)`, or why the memory cannot be had.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_slice_fill_with(3, |i| i).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_alloc_slice_fill_with<T: Send + 'static>(
        &'c self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> Result<&'c mut [T], AllocError> {
        self.local().try_alloc_slice_fill_with(len, f)
    }

    /// Collects an iterator into a slice (see [`LocalScope::alloc_iter`](super::LocalScope::alloc_iter)).
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_iter((0..4).filter(|i| i % 2 == 0)), &[0, 2]);
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_iter<T: Send + 'static>(
        &'c self,
        iter: impl IntoIterator<Item = T>,
    ) -> &'c mut [T] {
        self.local().alloc_iter(iter)
    }

    /// Collects an iterator into a slice, or says why the memory ran out.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_iter(0..4).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_alloc_iter<T: Send + 'static>(
        &'c self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'c mut [T], AllocError> {
        self.local().try_alloc_iter(iter)
    }

    /// Copies a string into the scope.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_str("frog"), "frog");
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_str(&'c self, src: &str) -> &'c mut str {
        self.local().alloc_str(src)
    }

    /// Copies a string into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_str("frog").is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_alloc_str(&'c self, src: &str) -> Result<&'c mut str, AllocError> {
        self.local().try_alloc_str(src)
    }

    /// Formats text straight into the scope (see [`LocalScope::alloc_fmt`](super::LocalScope::alloc_fmt)).
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_fmt(format_args!("job {}", 3)), "job 3");
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_fmt(&'c self, args: fmt::Arguments<'_>) -> &'c mut str {
        self.local().alloc_fmt(args)
    }

    /// Formats text straight into the scope, or says why the memory cannot be had.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_fmt(format_args!("{}", 1)).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_alloc_fmt(&'c self, args: fmt::Arguments<'_>) -> Result<&'c mut str, AllocError> {
        self.local().try_alloc_fmt(args)
    }

    /// Collects an iterator of known length into a slice.
    ///
    /// # Panics
    /// When the scope is out of memory, or the iterator ends before its `len`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_iter_exact([1, 2]), &[1, 2]);
    /// }));
    /// ```
    #[inline]
    #[track_caller]
    pub fn alloc_iter_exact<T: Send + 'static, I>(&'c self, iter: I) -> &'c mut [T]
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        self.local().alloc_iter_exact(iter)
    }

    /// Collects an iterator of known length, or says why the memory cannot be had.
    ///
    /// # Panics
    /// When the iterator ends before its `len`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_iter_exact([1, 2]).is_ok());
    /// }));
    /// ```
    #[inline]
    pub fn try_alloc_iter_exact<T: Send + 'static, I>(
        &'c self,
        iter: I,
    ) -> Result<&'c mut [T], AllocError>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        self.local().try_alloc_iter_exact(iter)
    }

    /// Raw memory of `size` bytes at `align` (a power of two up to [`MAX_ALIGN`]).
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_raw(24, 64).as_ptr() as usize % 64, 0);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_raw(&'c self, size: usize, align: usize) -> NonNull<u8> {
        self.local().alloc_raw(size, align)
    }

    /// The `try_` form of [`alloc_raw`](Self::alloc_raw).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_raw(8, 3).is_err()); // not a power of two
    /// }));
    /// ```
    pub fn try_alloc_raw(&'c self, size: usize, align: usize) -> Result<NonNull<u8>, AllocError> {
        self.local().try_alloc_raw(size, align)
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
    ///     let x = jobs.alloc_uninit::<u64>().write(5);
    ///     assert_eq!(*x, 5);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_uninit<T>(&'c self) -> &'c mut MaybeUninit<T> {
        self.local().alloc_uninit()
    }

    /// The `try_` form of [`alloc_uninit`](Self::alloc_uninit).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_uninit::<[u8; 1 << 20]>().is_err());
    /// }));
    /// ```
    pub fn try_alloc_uninit<T>(&'c self) -> Result<&'c mut MaybeUninit<T>, AllocError> {
        self.local().try_alloc_uninit()
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
    ///     assert_eq!(jobs.alloc_uninit_slice::<u32>(8).len(), 8);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_uninit_slice<T>(&'c self, len: usize) -> &'c mut [MaybeUninit<T>] {
        self.local().alloc_uninit_slice(len)
    }

    /// The `try_` form of [`alloc_uninit_slice`](Self::alloc_uninit_slice).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_uninit_slice::<u32>(usize::MAX).is_err());
    /// }));
    /// ```
    pub fn try_alloc_uninit_slice<T>(
        &'c self,
        len: usize,
    ) -> Result<&'c mut [MaybeUninit<T>], AllocError> {
        self.local().try_alloc_uninit_slice(len)
    }

    /// A slice of `len` copies of `value`.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_slice_fill_copy(3, 7u8), &[7, 7, 7]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_copy<T: Copy>(&'c self, len: usize, value: T) -> &'c mut [T] {
        self.local().alloc_slice_fill_copy(len, value)
    }

    /// The `try_` form of [`alloc_slice_fill_copy`](Self::alloc_slice_fill_copy).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.try_alloc_slice_fill_copy(1 << 20, 9u64).unwrap_err().value, 9);
    /// }));
    /// ```
    pub fn try_alloc_slice_fill_copy<T: Copy>(
        &'c self,
        len: usize,
        value: T,
    ) -> Result<&'c mut [T], AllocErrorWith<T>> {
        self.local().try_alloc_slice_fill_copy(len, value)
    }

    /// A slice of `len` clones of `value` (one finalizer record when `T` needs drop).
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_slice_fill_clone(2, &String::from("x"))[1], "x");
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_clone<T: Clone + Send + 'static>(
        &'c self,
        len: usize,
        value: &T,
    ) -> &'c mut [T] {
        self.local().alloc_slice_fill_clone(len, value)
    }

    /// The `try_` form of [`alloc_slice_fill_clone`](Self::alloc_slice_fill_clone).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_slice_fill_clone(1 << 20, &0u64).is_err());
    /// }));
    /// ```
    pub fn try_alloc_slice_fill_clone<T: Clone + Send + 'static>(
        &'c self,
        len: usize,
        value: &T,
    ) -> Result<&'c mut [T], AllocError> {
        self.local().try_alloc_slice_fill_clone(len, value)
    }

    /// A slice of `len` default values.
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert_eq!(jobs.alloc_slice_fill_default::<u16>(3), &[0, 0, 0]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_default<T: Default + Send + 'static>(
        &'c self,
        len: usize,
    ) -> &'c mut [T] {
        self.local().alloc_slice_fill_default(len)
    }

    /// The `try_` form of [`alloc_slice_fill_default`](Self::alloc_slice_fill_default).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_slice_fill_default::<u64>(1 << 20).is_err());
    /// }));
    /// ```
    pub fn try_alloc_slice_fill_default<T: Default + Send + 'static>(
        &'c self,
        len: usize,
    ) -> Result<&'c mut [T], AllocError> {
        self.local().try_alloc_slice_fill_default(len)
    }

    /// Collects items that need no drop, with no `'static` bound (items may borrow, say
    /// `&str`s placed in this scope); see [`ScopeStack::alloc_iter_pod`](crate::ScopeStack::alloc_iter_pod).
    ///
    /// # Panics
    /// When the scope is out of memory.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let w: [&str; 2] = [jobs.alloc_str("frog"), jobs.alloc_str("toad")];
    ///     let refs: &[&str] = jobs.alloc_iter_pod(w.iter().copied());
    ///     assert_eq!(refs, &["frog", "toad"]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_iter_pod<T>(&'c self, iter: impl IntoIterator<Item = T>) -> &'c mut [T] {
        self.local().alloc_iter_pod(iter)
    }

    /// The `try_` form of [`alloc_iter_pod`](Self::alloc_iter_pod).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_alloc_iter_pod(0..1_000_000u64).is_err());
    /// }));
    /// ```
    pub fn try_alloc_iter_pod<T>(
        &'c self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'c mut [T], AllocError> {
        self.local().try_alloc_iter_pod(iter)
    }
}

/// `new_pod` past the fast path: a new chunk, a direct claim, or the panic.
#[cold]
#[inline(never)]
#[track_caller]
fn new_pod_cold<'c, T>(scope: &'c ConcurrentScope<'_>, value: T) -> &'c mut T {
    scope.local().new_pod(value)
}

/// Writes `value` at `slot` and returns it with the scope's lifetime.
///
/// # Safety
/// `slot` is valid, aligned and exclusive for a `T` for `'c`.
#[inline(always)]
unsafe fn place<'c, T>(slot: NonNull<T>, value: T) -> &'c mut T {
    // SAFETY: per the caller.
    unsafe {
        slot.as_ptr().write(value);
        &mut *slot.as_ptr()
    }
}
