//! Text in a scope: `alloc_str` copies a string, `alloc_fmt` formats straight into the
//! block.
//!
//! This module owns text placement. Invariant: the text handed out is valid UTF-8 and
//! exactly what was written; while `alloc_fmt` formats, the rest of the block is
//! reserved for it (so a `Display` impl that allocates from the same block lands above
//! it) and that reservation never counts as use.
use core::fmt;

use crate::error::AllocError;

use super::{place, ScopeStack};

impl<'s> ScopeStack<'s> {
    /// Copies a string into the scope.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let s = a.alloc_str("frog");
    ///     s.make_ascii_uppercase();
    ///     assert_eq!(s, "FROG");
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_str(&self, src: &str) -> &'s mut str {
        match self.try_alloc_str(src) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Copies a string into the scope, or says why it cannot.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(2).unwrap();
    /// memory.scope("a", |a| assert!(a.try_alloc_str("frog").is_err()));
    /// ```
    pub fn try_alloc_str(&self, src: &str) -> Result<&'s mut str, AllocError> {
        place::try_alloc_str(self, src)
    }

    /// Formats into the scope: the talk's `formatString`. Use it with `format_args!`.
    ///
    /// The text is written straight into free memory, so formatting needs no temporary
    /// buffer. While it runs, the rest of the block is reserved: a `Display` impl that
    /// tries to allocate from the same block meanwhile gets an out-of-memory error. The
    /// reservation is not counted as use: `used`, the high-water mark and reports read
    /// meanwhile show only what was allocated before.
    ///
    /// # Panics
    /// When the text does not fit, or a formatting implementation returns an error.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(64).unwrap();
    /// memory.scope("a", |a| {
    ///     let path = a.alloc_fmt(format_args!("foo/bar/{}.txt", 7));
    ///     assert_eq!(path, "foo/bar/7.txt");
    /// });
    /// ```
    #[track_caller]
    pub fn alloc_fmt(&self, args: fmt::Arguments<'_>) -> &'s mut str {
        match self.try_alloc_fmt(args) {
            Ok(s) => s,
            Err(e) => self.fail(e),
        }
    }

    /// Formats into the scope, or says why it cannot. Nothing stays allocated on error.
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(4).unwrap();
    /// memory.scope("a", |a| {
    ///     let err = a.try_alloc_fmt(format_args!("{}", 123456)).unwrap_err();
    ///     assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
    ///     assert_eq!(a.used(), 0);
    /// });
    /// ```
    pub fn try_alloc_fmt(&self, args: fmt::Arguments<'_>) -> Result<&'s mut str, AllocError> {
        place::try_alloc_fmt(self, args)
    }
}
