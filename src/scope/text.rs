//! Text in a scope: `alloc_str` copies a string, `alloc_fmt` formats straight into the
//! block.
//!
//! This module owns text placement. Invariant: the text handed out is valid UTF-8 and
//! exactly what was written; while `alloc_fmt` formats, the rest of the block is
//! reserved for it (so a `Display` impl that allocates from the same block lands above
//! it) and that reservation never counts as use.
use core::fmt;
use core::ptr::{self};

use crate::block::cursor::Cursor;
use crate::block::linear::LinearAllocator;
use crate::block::reservation::SavedGaps;
use crate::error::{AllocError, AllocErrorKind};

use super::ScopeStack;

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
        let bytes = self.try_alloc_slice_copy(src.as_bytes())?;
        // SAFETY: the bytes were copied from a `str`.
        Ok(unsafe { core::str::from_utf8_unchecked_mut(bytes) })
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
        if let Some(s) = args.as_str() {
            return self.try_alloc_str(s);
        }
        let cursor = self.cursor;
        if cursor.is_suspended() {
            return Err(self.oom(0, 1));
        }
        let start = cursor.cur();
        let limit = cursor.limit();

        /// Ends the reservation: keeps `[start, keep_to)` and gives back the rest. If a
        /// formatting impl moved the bump pointer (possible only when nothing could be
        /// written, `start == limit`), it is left alone.
        struct Reservation<'a> {
            alloc: &'a LinearAllocator,
            cursor: &'a Cursor,
            reserved_to: usize,
            keep_to: usize,
            outer: SavedGaps,
        }
        impl Drop for Reservation<'_> {
            fn drop(&mut self) {
                self.alloc
                    .end_reservation(self.cursor, self.reserved_to, self.keep_to, self.outer);
            }
        }

        struct Writer<'a> {
            cursor: &'a Cursor,
            at: usize,
            limit: usize,
            out_of_memory: bool,
        }
        impl fmt::Write for Writer<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                if s.len() > self.limit - self.at {
                    self.out_of_memory = true;
                    return Err(fmt::Error);
                }
                // SAFETY: `[at, at + len)` lies in the reserved region `[start, limit)`,
                // which nobody else can allocate while the reservation lasts.
                unsafe {
                    ptr::copy_nonoverlapping(
                        s.as_ptr(),
                        self.cursor.ptr_at(self.at).as_ptr(),
                        s.len(),
                    )
                };
                self.at += s.len();
                Ok(())
            }
        }

        // Reserve everything up to the limit while user formatting code runs; on a panic
        // the reservation's drop gives it all back. Statistics read meanwhile (`used`,
        // high-water marks, reports) leave the reservation out.
        let outer = self.alloc().begin_reservation(cursor);
        let mut reservation = Reservation {
            alloc: self.alloc(),
            cursor,
            reserved_to: limit,
            keep_to: start,
            outer,
        };
        let mut w = Writer {
            cursor,
            at: start,
            limit,
            out_of_memory: false,
        };
        match fmt::write(&mut w, args) {
            Ok(()) => {
                reservation.keep_to = w.at;
                drop(reservation);
                let len = w.at - start;
                // SAFETY: `[start, start + len)` holds the UTF-8 text just written and
                // stays below the bump pointer until this scope unwinds.
                unsafe {
                    let bytes = core::slice::from_raw_parts_mut(cursor.ptr_at(start).as_ptr(), len);
                    Ok(core::str::from_utf8_unchecked_mut(bytes))
                }
            }
            Err(fmt::Error) => {
                drop(reservation);
                if w.out_of_memory {
                    Err(self.oom(w.at - start + 1, 1))
                } else {
                    Err(self.error(AllocErrorKind::Format, w.at - start + 1, 1))
                }
            }
        }
    }
}
