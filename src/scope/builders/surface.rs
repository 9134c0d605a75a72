//! The builders on a [`ScopeStack`]: `new_vec`, `vec_with_capacity`, `new_string`,
//! `string_with_capacity`, each borrowing the scope mutably.
//!
//! Invariant: a builder made here holds `&'a ScopeStack<'s>` taken from `&'a mut`, so
//! for `'a` the scope places nothing else and opens no child (rule 2).
use crate::error::AllocError;
use crate::scope::ScopeStack;

use super::string::ScopeString;
use super::vec::ScopeVec;

impl<'s> ScopeStack<'s> {
    /// An empty [`ScopeVec`] at the top of this scope. It borrows the scope mutably
    /// until it is frozen or dropped; it claims nothing until the first element.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// memory.scope("a", |a| {
    ///     let mut v = a.new_vec();
    ///     v.push(1u64);
    ///     assert_eq!(v.into_slice(), &[1]);
    /// });
    /// ```
    #[inline]
    pub fn new_vec<T>(&mut self) -> ScopeVec<'_, 's, T> {
        ScopeVec::new_in(&*self)
    }

    /// A [`ScopeVec`] with room for at least `n` elements.
    ///
    /// # Panics
    /// When the scope has no room for them (the message names the scope).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// memory.scope("a", |a| assert!(a.vec_with_capacity::<u32>(8).capacity() >= 8));
    /// ```
    #[track_caller]
    pub fn vec_with_capacity<T>(&mut self, n: usize) -> ScopeVec<'_, 's, T> {
        match ScopeVec::with_capacity_in(&*self, n) {
            Ok(v) => v,
            Err(e) => self.fail(e),
        }
    }

    /// A [`ScopeVec`] with room for at least `n` elements, or why there is none.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| assert!(a.try_vec_with_capacity::<u64>(100).is_err()));
    /// ```
    pub fn try_vec_with_capacity<T>(
        &mut self,
        n: usize,
    ) -> Result<ScopeVec<'_, 's, T>, AllocError> {
        ScopeVec::with_capacity_in(&*self, n)
    }

    /// An empty [`ScopeString`] at the top of this scope, borrowing it mutably.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// use core::fmt::Write;
    /// let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// memory.scope("a", |a| {
    ///     let mut s = a.new_string();
    ///     write!(s, "level {}", 3).unwrap();
    ///     assert_eq!(s.into_str(), "level 3");
    /// });
    /// ```
    #[inline]
    pub fn new_string(&mut self) -> ScopeString<'_, 's> {
        ScopeString::new_in(&*self)
    }

    /// A [`ScopeString`] with room for at least `n` bytes.
    ///
    /// # Panics
    /// When the scope has no room for them.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 12).unwrap();
    /// memory.scope("a", |a| assert!(a.string_with_capacity(8).capacity() >= 8));
    /// ```
    #[track_caller]
    pub fn string_with_capacity(&mut self, n: usize) -> ScopeString<'_, 's> {
        match ScopeString::with_capacity_in(&*self, n) {
            Ok(v) => v,
            Err(e) => self.fail(e),
        }
    }

    /// A [`ScopeString`] with room for at least `n` bytes, or why there is none.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| assert!(a.try_string_with_capacity(100).is_err()));
    /// ```
    pub fn try_string_with_capacity(
        &mut self,
        n: usize,
    ) -> Result<ScopeString<'_, 's>, AllocError> {
        ScopeString::with_capacity_in(&*self, n)
    }
}
