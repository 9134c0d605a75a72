//! Slices in a scope: copies, clones, fills, and slices collected from iterators of
//! known or unknown length.
//!
//! This module owns the placement of many values at once. Invariants: a slice's
//! elements are all written before its one finalizer record is linked; if the code that
//! makes them panics, the ones made so far are dropped and, when the slice is still the
//! newest allocation, its room is given back; while `alloc_iter` claims room ahead of
//! the elements it has built, statistics leave the claimed tail out.
use crate::error::{AllocError, AllocErrorWith};

use super::{place, ScopeStack};

impl<'s> ScopeStack<'s> {
    /// Copies a slice into the scope.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let xs = a.alloc_slice_copy(&[1, 2, 3]);
    ///     xs[0] = 9;
    ///     assert_eq!(xs, &[9, 2, 3]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &'s mut [T] {
        match self.try_alloc_slice_copy(src) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Copies a slice into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_copy(&[0u32; 3]).is_err()));
    /// ```
    pub fn try_alloc_slice_copy<T: Copy>(&self, src: &[T]) -> Result<&'s mut [T], AllocError> {
        place::try_alloc_slice_copy(self, src)
    }

    /// Clones every element of a slice into the scope. If `T` needs drop, one finalizer
    /// record covers the whole slice. If a `clone` panics, the clones made so far are
    /// dropped and the slice's memory is given back, as in
    /// [`alloc_slice_fill_with`](Self::alloc_slice_fill_with).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let names = a.alloc_slice_clone(&[String::from("frog"), String::from("toad")]);
    ///     assert_eq!(names[1], "toad");
    ///     assert_eq!(a.finalizer_count(), 1);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_clone<T: Clone + 'static>(&self, src: &[T]) -> &'s mut [T] {
        match self.try_alloc_slice_clone(src) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Clones a slice into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_clone(&[String::new()]).is_err()));
    /// ```
    pub fn try_alloc_slice_clone<T: Clone + 'static>(
        &self,
        src: &[T],
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: 'static` (drop rule); a plain scope runs its chain on its own thread.
        unsafe { place::try_alloc_slice_clone(self, src) }
    }

    /// Builds a slice of `len` elements from `f(0), f(1), ...`. If `T` needs drop, one
    /// finalizer record covers the whole slice. If `f` panics, the elements built so far
    /// are dropped and the panic goes on; the slice's memory is given back too, unless
    /// `f` allocated from this scope meanwhile.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let squares = a.alloc_slice_fill_with(5, |i| i * i);
    ///     assert_eq!(squares, &[0, 1, 4, 9, 16]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_with<T: 'static>(
        &self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> &'s mut [T] {
        match self.try_alloc_slice_fill_with(len, f) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Builds a slice from `f`, or says why the memory cannot be had (`f` is then not
    /// called).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_fill_with(5, |i| i as u64).is_err()));
    /// ```
    pub fn try_alloc_slice_fill_with<T: 'static>(
        &self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: 'static` (drop rule); a plain scope runs its chain on its own thread.
        unsafe { place::try_alloc_slice_fill_with(self, len, f) }
    }

    /// Collects an iterator into a slice in the scope, for any iterator: its length need
    /// not be known up front. If `T` needs drop, one finalizer record covers the whole
    /// slice, as in [`alloc_slice_fill_with`](Self::alloc_slice_fill_with).
    ///
    /// The allocating scope is the innermost one, so the slice is at the top of the block
    /// and grows in place there: no copying, no size guess, no temporary `Vec`. Room is
    /// claimed ahead in growing steps (so the per-element cost is one compare and one
    /// write) and the unused tail is given back at the end. Like
    /// [`alloc_fmt`](Self::alloc_fmt)'s reservation, the room claimed ahead is never
    /// counted as use or as a high-water mark: statistics read while the iterator runs
    /// may leave out the newest elements, and are exact once the slice is done.
    ///
    /// The iterator may allocate from this scope while it is collected (for example a
    /// `map` that calls [`alloc_str`](Self::alloc_str)): the elements built so far are
    /// then moved above the new allocation and collection goes on. The bytes they left
    /// (and the room claimed ahead of them) stay taken until the scope ends, so such an
    /// iterator costs more memory; nothing is corrupted.
    ///
    /// If the iterator (or a value's construction) panics, the elements built so far are
    /// dropped, each exactly once, the memory is given back (unless the iterator
    /// allocated from this scope meanwhile) and the panic goes on.
    ///
    /// # Panics
    /// When the scope runs out of memory; see [`try_alloc_iter`](Self::try_alloc_iter).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("a", |a| {
    ///     let evens = a.alloc_iter((0..20u32).filter(|n| n % 2 == 0));
    ///     assert_eq!(evens.len(), 10);
    ///     let words = a.alloc_iter("frog toad newt".split(' ').map(String::from));
    ///     assert_eq!(words[2], "newt");
    ///     assert_eq!(a.finalizer_count(), 1); // one record for the three Strings
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_iter<T: 'static>(&self, iter: impl IntoIterator<Item = T>) -> &'s mut [T] {
        match self.try_alloc_iter(iter) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Collects an iterator into a slice in the scope, or says why it cannot. On error
    /// the elements built so far are dropped and their memory is given back; the
    /// iterator is dropped too.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| {
    ///     let err = a.try_alloc_iter((0..5u64).map(|n| n * n)).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    ///     assert_eq!(a.used(), 0);
    ///     assert_eq!(a.try_alloc_iter(0..2u64).unwrap(), &[0, 1]);
    /// });
    /// ```
    pub fn try_alloc_iter<T: 'static>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: 'static` (drop rule); a plain scope runs its chain on its own thread.
        unsafe { place::try_alloc_iter(self, iter) }
    }

    /// Collects items that need no drop into a slice, with no `'static` bound: the items
    /// may borrow, for example `&'s str`s from this same scope. As
    /// [`alloc_iter`](Self::alloc_iter) otherwise (grown in place, no temporary `Vec`).
    /// It is to `alloc_iter` what [`new_pod`](Self::new_pod) is to
    /// [`new_object`](Self::new_object): no finalizer is recorded, so no destructor can
    /// see a borrow that is already dead, and a type that needs drop is a compile-time
    /// error (E0080, "alloc_iter_pod: this type needs drop; use alloc_iter").
    ///
    /// `alloc_iter` of such items fails with "borrowed data escapes" or "must outlive
    /// `'static`": that bound is what keeps a finalized element's destructor from
    /// reading freed data; use this method instead.
    ///
    /// # Panics
    /// When the scope runs out of memory; see [`try_alloc_iter_pod`](Self::try_alloc_iter_pod).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     let names: [&str; 2] = [level.alloc_str("frog"), level.alloc_str("newt")];
    ///     let by_len: &[&str] = level.alloc_iter_pod(names.iter().copied());
    ///     assert_eq!(by_len, &["frog", "newt"]);
    /// });
    /// ```
    ///
    /// ```compile_fail,E0080
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("level", |level| {
    ///     level.alloc_iter_pod((0..3).map(|i| i.to_string())); // String needs drop
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_iter_pod<T>(&self, iter: impl IntoIterator<Item = T>) -> &'s mut [T] {
        place::or_fail(self, place::try_alloc_iter_pod(self, iter))
    }

    /// The `try_` form of [`alloc_iter_pod`](Self::alloc_iter_pod): on an error the
    /// items taken so far are dropped and their memory is given back.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let word = a.alloc_str("toad");
    ///     assert!(a.try_alloc_iter_pod(std::iter::repeat(&*word).take(100)).is_err());
    ///     assert_eq!(a.try_alloc_iter_pod([&*word]).unwrap(), &["toad"]);
    /// });
    /// ```
    pub fn try_alloc_iter_pod<T>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&'s mut [T], AllocError> {
        place::try_alloc_iter_pod(self, iter)
    }

    /// Collects an iterator of known length into a slice in the scope. The memory is
    /// reserved once, up front, from [`len`](ExactSizeIterator::len); otherwise like
    /// [`alloc_iter`](Self::alloc_iter) (one finalizer record if `T` needs drop; a panic
    /// drops what was built).
    ///
    /// # Panics
    /// When the scope is out of memory, or when the iterator yields fewer items than its
    /// `len` said (the items built are dropped first). Items past `len` are not taken.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let squares = a.alloc_iter_exact((1..5u32).map(|n| n * n));
    ///     assert_eq!(squares, &[1, 4, 9, 16]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_iter_exact<T: 'static, I>(&self, iter: I) -> &'s mut [T]
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        match self.try_alloc_iter_exact(iter) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Collects an iterator of known length into a slice in the scope, or says why the
    /// memory cannot be had (no item is taken from the iterator then).
    ///
    /// # Panics
    /// When the iterator yields fewer items than its `len` said.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_iter_exact([1u32, 2, 3]).is_err()));
    /// ```
    #[track_caller]
    pub fn try_alloc_iter_exact<T: 'static, I>(&self, iter: I) -> Result<&'s mut [T], AllocError>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        // SAFETY: `T: 'static` (drop rule); a plain scope runs its chain on its own thread.
        unsafe { place::try_alloc_iter_exact(self, iter) }
    }

    /// Fills a new slice of `len` elements with copies of `value`. Any `Copy` type
    /// (such a type never needs drop, so no `'static` is asked).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| assert_eq!(a.alloc_slice_fill_copy(3, 7u8), &[7, 7, 7]));
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_copy<T: Copy>(&self, len: usize, value: T) -> &'s mut [T] {
        match self.try_alloc_slice_fill_copy(len, value) {
            Ok(s) => s,
            Err(e) => self.fail(e.error),
        }
    }

    /// Fills a new slice with copies of `value`, or hands `value` back with the error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8).unwrap();
    /// memory.scope("a", |a| {
    ///     assert_eq!(a.try_alloc_slice_fill_copy(3, 9u32).unwrap_err().into_value(), 9);
    /// });
    /// ```
    pub fn try_alloc_slice_fill_copy<T: Copy>(
        &self,
        len: usize,
        value: T,
    ) -> Result<&'s mut [T], AllocErrorWith<T>> {
        place::try_alloc_slice_fill_copy(self, len, value)
    }

    /// Fills a new slice of `len` elements with clones of `value`. If `T` needs drop,
    /// one finalizer record covers the slice; if a `clone` panics, the clones made so far
    /// are dropped and the memory is given back.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let rows = a.alloc_slice_fill_clone(2, &vec![0u8; 3]);
    ///     rows[1][2] = 5;
    ///     assert_eq!(rows, &[vec![0, 0, 0], vec![0, 0, 5]]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_clone<T: Clone + 'static>(&self, len: usize, value: &T) -> &'s mut [T] {
        match self.try_alloc_slice_fill_clone(len, value) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Fills a new slice with clones of `value`, or says why it cannot (no clone is made
    /// then).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(16).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_fill_clone(4, &String::new()).is_err()));
    /// ```
    pub fn try_alloc_slice_fill_clone<T: Clone + 'static>(
        &self,
        len: usize,
        value: &T,
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: 'static` (drop rule); a plain scope runs its chain on its own thread.
        unsafe { place::try_alloc_slice_fill_clone(self, len, value) }
    }

    /// Fills a new slice of `len` elements with `T::default()`. If `T` needs drop, one
    /// finalizer record covers the slice.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    /// memory.scope("a", |a| {
    ///     let names = a.alloc_slice_fill_default::<String>(3);
    ///     names[0].push_str("frog");
    ///     assert_eq!(names, &["frog", "", ""]);
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_slice_fill_default<T: Default + 'static>(&self, len: usize) -> &'s mut [T] {
        match self.try_alloc_slice_fill_default(len) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Fills a new slice with `T::default()`, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(8).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_slice_fill_default::<u64>(2).is_err()));
    /// ```
    pub fn try_alloc_slice_fill_default<T: Default + 'static>(
        &self,
        len: usize,
    ) -> Result<&'s mut [T], AllocError> {
        // SAFETY: `T: 'static` (drop rule); a plain scope runs its chain on its own thread.
        unsafe { place::try_alloc_slice_fill_default(self, len) }
    }
}
