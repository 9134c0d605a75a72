//! The builders on a concurrent scope: [`ScopeVec`] and [`ScopeString`] grown in the
//! calling thread's chunk, through [`LocalScope`] and `&ConcurrentScope`.
//!
//! A `LocalScope` is a `Copy` handle and a `ConcurrentScope` is shared between threads,
//! so a mutable borrow of either would exclude nothing: these methods take `&self`, and
//! the builder keeps its own soundness at run time. It grows in place only while the end
//! of its room is still the top of this thread's chunk, and otherwise moves to fresh
//! room (another placement on the same thread meanwhile leaves a hole, never an
//! overlap). The builder holds the `LocalScope`, so it is neither `Send` nor `Sync`: the
//! chunk it grows in is this thread's alone.
//!
//! Invariant: a frozen slice gets a finalizer only for `Send + 'static` elements (rule
//! 8), which is what [`Finalizes`] admits for a `LocalScope`.
use crate::error::AllocError;
use crate::scope::builders::{sealed, Finalizes, ScopeString, ScopeVec};

use super::local::LocalScope;
use super::ConcurrentScope;

// SAFETY: the closing thread runs this scope's chains, so a value with a destructor must
// be `Send` (rule 8) and `'static` (no borrow may end before the chain runs).
unsafe impl<'s, T: Send + 'static> Finalizes<T> for LocalScope<'s> {}
impl<'s, T: Send + 'static> sealed::Admits<T> for LocalScope<'s> {}

impl<'a> LocalScope<'a> {
    /// An empty [`ScopeVec`] in this thread's chunk (see the module docs for why it
    /// borrows nothing).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     let here = jobs.local();
    ///     let mut v = here.new_vec();
    ///     v.extend(0..4u32);
    ///     assert_eq!(v.into_slice(), &[0, 1, 2, 3]);
    /// }));
    /// ```
    #[inline]
    pub fn new_vec<T>(&self) -> ScopeVec<'a, 'a, T, LocalScope<'a>> {
        ScopeVec::new_in(*self)
    }

    /// A [`ScopeVec`] with room for at least `n` elements.
    ///
    /// # Panics
    /// When the scope has no room for them.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().vec_with_capacity::<u8>(8).capacity() >= 8);
    /// }));
    /// ```
    #[track_caller]
    pub fn vec_with_capacity<T>(&self, n: usize) -> ScopeVec<'a, 'a, T, LocalScope<'a>> {
        match ScopeVec::with_capacity_in(*self, n) {
            Ok(v) => v,
            Err(e) => self.fail(e),
        }
    }

    /// A [`ScopeVec`] with room for at least `n` elements, or why there is none.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_vec_with_capacity::<u64>(1 << 20).is_err());
    /// }));
    /// ```
    pub fn try_vec_with_capacity<T>(
        &self,
        n: usize,
    ) -> Result<ScopeVec<'a, 'a, T, LocalScope<'a>>, AllocError> {
        ScopeVec::with_capacity_in(*self, n)
    }

    /// An empty [`ScopeString`] in this thread's chunk.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// use core::fmt::Write;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     let mut s = jobs.local().new_string();
    ///     write!(s, "job {}", 7).unwrap();
    ///     assert_eq!(s.into_str(), "job 7");
    /// }));
    /// ```
    #[inline]
    pub fn new_string(&self) -> ScopeString<'a, 'a, LocalScope<'a>> {
        ScopeString::new_in(*self)
    }

    /// A [`ScopeString`] with room for at least `n` bytes.
    ///
    /// # Panics
    /// When the scope has no room for them.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().string_with_capacity(8).capacity() >= 8);
    /// }));
    /// ```
    #[track_caller]
    pub fn string_with_capacity(&self, n: usize) -> ScopeString<'a, 'a, LocalScope<'a>> {
        match ScopeString::with_capacity_in(*self, n) {
            Ok(v) => v,
            Err(e) => self.fail(e),
        }
    }

    /// A [`ScopeString`] with room for at least `n` bytes, or why there is none.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.local().try_string_with_capacity(1 << 20).is_err());
    /// }));
    /// ```
    pub fn try_string_with_capacity(
        &self,
        n: usize,
    ) -> Result<ScopeString<'a, 'a, LocalScope<'a>>, AllocError> {
        ScopeString::with_capacity_in(*self, n)
    }
}

impl<'c> ConcurrentScope<'_> {
    /// An empty [`ScopeVec`] in the calling thread's chunk (see
    /// [`LocalScope::new_vec`]). The vector stays on this thread.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     let mut v = jobs.new_vec();
    ///     v.push(String::from("frog")); // `Send + 'static`: finalized when frozen
    ///     assert_eq!(v.into_slice()[0], "frog");
    /// }));
    /// ```
    ///
    /// A value that is not `Send` cannot be frozen with a finalizer there (the closing
    /// thread would drop it):
    ///
    /// ```compile_fail,E0277
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     let mut v = jobs.new_vec();
    ///     v.push(std::rc::Rc::new(1));
    ///     v.into_slice();
    /// }));
    /// ```
    #[inline]
    pub fn new_vec<T>(&'c self) -> ScopeVec<'c, 'c, T, LocalScope<'c>> {
        self.local().new_vec()
    }

    /// A [`ScopeVec`] with room for at least `n` elements (see
    /// [`LocalScope::vec_with_capacity`]).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.vec_with_capacity::<u8>(8).capacity() >= 8);
    /// }));
    /// ```
    #[track_caller]
    pub fn vec_with_capacity<T>(&'c self, n: usize) -> ScopeVec<'c, 'c, T, LocalScope<'c>> {
        self.local().vec_with_capacity(n)
    }

    /// A [`ScopeVec`] with room for at least `n` elements, or why there is none.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_vec_with_capacity::<u64>(1 << 20).is_err());
    /// }));
    /// ```
    pub fn try_vec_with_capacity<T>(
        &'c self,
        n: usize,
    ) -> Result<ScopeVec<'c, 'c, T, LocalScope<'c>>, AllocError> {
        self.local().try_vec_with_capacity(n)
    }

    /// An empty [`ScopeString`] in the calling thread's chunk.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     let mut s = jobs.new_string();
    ///     s.push_str("frog");
    ///     assert_eq!(s.into_str(), "frog");
    /// }));
    /// ```
    #[inline]
    pub fn new_string(&'c self) -> ScopeString<'c, 'c, LocalScope<'c>> {
        self.local().new_string()
    }

    /// A [`ScopeString`] with room for at least `n` bytes.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.string_with_capacity(8).capacity() >= 8);
    /// }));
    /// ```
    #[track_caller]
    pub fn string_with_capacity(&'c self, n: usize) -> ScopeString<'c, 'c, LocalScope<'c>> {
        self.local().string_with_capacity(n)
    }

    /// A [`ScopeString`] with room for at least `n` bytes, or why there is none.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| frame.scope_concurrent("jobs", |jobs| {
    ///     assert!(jobs.try_string_with_capacity(1 << 20).is_err());
    /// }));
    /// ```
    pub fn try_string_with_capacity(
        &'c self,
        n: usize,
    ) -> Result<ScopeString<'c, 'c, LocalScope<'c>>, AllocError> {
        self.local().try_string_with_capacity(n)
    }
}
