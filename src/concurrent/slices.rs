//! Slices and text in a concurrent scope, through one thread's [`LocalScope`]: copies,
//! clones, fills, collected iterators, strings and formatted text.
//!
//! This module owns the placement of many values at once. Invariants: every element is
//! written before the slice's finalizer record is linked (if the code that makes them
//! panics, the ones made so far are dropped and nothing is linked); a collected slice
//! that moves while it grows leaves its old room unused, never reused while live.

use core::fmt;

use crate::error::{AllocError, AllocErrorWith};
use crate::scope::place;

use super::local::LocalScope;

impl<'a> LocalScope<'a> {
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
        place::or_fail(self, place::try_alloc_slice_copy(self, src))
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
        place::try_alloc_slice_copy(self, src)
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
        place::or_fail(self, self.try_alloc_slice_clone(src))
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
        // SAFETY: `T: Send + 'static`: the drop rule, and the closing thread may drop it.
        unsafe { place::try_alloc_slice_clone(self, src) }
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
        place::or_fail(self, self.try_alloc_slice_fill_with(len, f))
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
        f: impl FnMut(usize) -> T,
    ) -> Result<&'a mut [T], AllocError> {
        // SAFETY: `T: Send + 'static`: the drop rule, and the closing thread may drop it.
        unsafe { place::try_alloc_slice_fill_with(self, len, f) }
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
        place::or_fail(self, self.try_alloc_iter(iter))
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
        // SAFETY: `T: Send + 'static`: the drop rule, and the closing thread may drop it.
        unsafe { place::try_alloc_iter(self, iter) }
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
        place::or_fail(self, self.try_alloc_iter_exact(iter))
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
    #[track_caller]
    pub fn try_alloc_iter_exact<T: Send + 'static, I>(
        &self,
        iter: I,
    ) -> Result<&'a mut [T], AllocError>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        // SAFETY: `T: Send + 'static`: the drop rule, and the closing thread may drop it.
        unsafe { place::try_alloc_iter_exact(self, iter) }
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
        place::or_fail(self, place::try_alloc_str(self, src))
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
        place::try_alloc_str(self, src)
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
        place::or_fail(self, place::try_alloc_fmt(self, args))
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
    #[track_caller]
    pub fn try_alloc_fmt(&self, args: fmt::Arguments<'_>) -> Result<&'a mut str, AllocError> {
        place::try_alloc_fmt(self, args)
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
    ///     let here = jobs.local();
    ///     assert_eq!(here.alloc_slice_fill_copy(3, 7u8), &[7, 7, 7]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_copy<T: Copy>(&self, len: usize, value: T) -> &'a mut [T] {
        place::or_fail(
            self,
            self.try_alloc_slice_fill_copy(len, value)
                .map_err(|e| e.error),
        )
    }

    /// The `try_` form of [`alloc_slice_fill_copy`](Self::alloc_slice_fill_copy).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     assert_eq!(here.try_alloc_slice_fill_copy(1 << 20, 9u64).unwrap_err().value, 9);
    /// }));
    /// ```
    pub fn try_alloc_slice_fill_copy<T: Copy>(
        &self,
        len: usize,
        value: T,
    ) -> Result<&'a mut [T], AllocErrorWith<T>> {
        place::try_alloc_slice_fill_copy(self, len, value)
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
    ///     let here = jobs.local();
    ///     assert_eq!(here.alloc_slice_fill_clone(2, &String::from("x"))[1], "x");
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_clone<T: Clone + Send + 'static>(
        &self,
        len: usize,
        value: &T,
    ) -> &'a mut [T] {
        place::or_fail(self, self.try_alloc_slice_fill_clone(len, value))
    }

    /// The `try_` form of [`alloc_slice_fill_clone`](Self::alloc_slice_fill_clone).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     assert!(here.try_alloc_slice_fill_clone(1 << 20, &0u64).is_err());
    /// }));
    /// ```
    pub fn try_alloc_slice_fill_clone<T: Clone + Send + 'static>(
        &self,
        len: usize,
        value: &T,
    ) -> Result<&'a mut [T], AllocError> {
        // SAFETY: `T: Send + 'static`: the drop rule, and the closing thread may drop it.
        unsafe { place::try_alloc_slice_fill_clone(self, len, value) }
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
    ///     let here = jobs.local();
    ///     assert_eq!(here.alloc_slice_fill_default::<u16>(3), &[0, 0, 0]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_default<T: Default + Send + 'static>(&self, len: usize) -> &'a mut [T] {
        place::or_fail(self, self.try_alloc_slice_fill_default(len))
    }

    /// The `try_` form of [`alloc_slice_fill_default`](Self::alloc_slice_fill_default).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     assert!(here.try_alloc_slice_fill_default::<u64>(1 << 20).is_err());
    /// }));
    /// ```
    pub fn try_alloc_slice_fill_default<T: Default + Send + 'static>(
        &self,
        len: usize,
    ) -> Result<&'a mut [T], AllocError> {
        // SAFETY: `T: Send + 'static`: the drop rule, and the closing thread may drop it.
        unsafe { place::try_alloc_slice_fill_default(self, len) }
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
    ///     let here = jobs.local();
    ///     let w: [&str; 2] = [here.alloc_str("frog"), here.alloc_str("toad")];
    ///     let refs: &[&str] = here.alloc_iter_pod(w.iter().copied());
    ///     assert_eq!(refs, &["frog", "toad"]);
    /// }));
    /// ```
    #[track_caller]
    pub fn alloc_iter_pod<T>(&self, iter: impl IntoIterator<Item = T>) -> &'a mut [T] {
        place::or_fail(self, self.try_alloc_iter_pod(iter))
    }

    /// The `try_` form of [`alloc_iter_pod`](Self::alloc_iter_pod).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("f", |f| f.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     assert!(here.try_alloc_iter_pod(0..1_000_000u64).is_err());
    /// }));
    /// ```
    pub fn try_alloc_iter_pod<T>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'a mut [T], AllocError> {
        place::try_alloc_iter_pod(self, iter)
    }
}
