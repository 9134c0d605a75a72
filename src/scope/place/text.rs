//! Text, written once for every surface: `alloc_str` copies a string, `alloc_fmt`
//! formats straight into the region.
//!
//! Invariant: the text handed out is valid UTF-8 and exactly what was written. While
//! `alloc_fmt` formats into the room at the top of the region, that room is reserved
//! for it (so a `Display` impl that allocates from the same surface lands above it) and
//! the reservation never counts as use. When the text does not fit there, it is
//! measured and then written into room of its exact length.
use core::fmt;
use core::ptr;

use crate::error::{AllocError, AllocErrorKind};

use super::core::{bump_checked, Core};
use super::slices::try_alloc_slice_copy;

/// `try_alloc_str`.
#[inline]
pub(crate) fn try_alloc_str<'s, C: Core<'s>>(c: C, src: &str) -> Result<&'s mut str, AllocError> {
    let bytes = try_alloc_slice_copy(c, src.as_bytes())?;
    // SAFETY: the bytes were copied from a `str`.
    Ok(unsafe { core::str::from_utf8_unchecked_mut(bytes) })
}

/// `try_alloc_fmt`.
pub(crate) fn try_alloc_fmt<'s, C: Core<'s>>(
    c: C,
    args: fmt::Arguments<'_>,
) -> Result<&'s mut str, AllocError> {
    if let Some(s) = args.as_str() {
        return try_alloc_str(c, s);
    }
    let start = c.top();
    let limit = c.limit();
    if start < limit {
        match format_at_top(c, args, start, limit) {
            Formatted::Done(s) => return Ok(s),
            Formatted::Failed => {
                return Err(c.error(AllocErrorKind::Format, 0, 1));
            }
            // The room at the top was all a plain scope has: no need to measure.
            Formatted::NoRoom(written) if c.one_region() => {
                // A request one byte past the room: its error says what a plain scope
                // says when it is full (the budget or the block, by name).
                let past = (written + 1).max(c.limit().saturating_sub(c.top()) + 1);
                return match bump_checked(c, past, 1) {
                    Err(e) => Err(e),
                    Ok(_) => unreachable!("a plain scope's room ends at its limit"),
                };
            }
            Formatted::NoRoom(_) => {}
        }
    }
    format_measured(c, args)
}

/// What formatting into the room at the top gave.
enum Formatted<'s> {
    Done(&'s mut str),
    /// A `Display` implementation returned an error.
    Failed,
    /// The text is longer than the room (which it filled with this many bytes).
    NoRoom(usize),
}

/// Formats into `[start, limit)`, reserved for the call.
fn format_at_top<'s, C: Core<'s>>(
    c: C,
    args: fmt::Arguments<'_>,
    start: usize,
    limit: usize,
) -> Formatted<'s> {
    /// Ends the reservation: keeps `[start, keep_to)` and gives back the rest. If a
    /// formatting impl moved the top, it is left alone.
    struct Reservation<'s, C: Core<'s>> {
        core: C,
        reserved_to: usize,
        keep_to: usize,
        outer: C::Gaps,
        _s: core::marker::PhantomData<&'s ()>,
    }
    impl<'s, C: Core<'s>> Drop for Reservation<'s, C> {
        fn drop(&mut self) {
            // SAFETY: `[keep_to, reserved_to)` holds nothing this call handed out.
            unsafe {
                self.core
                    .end_reservation(self.reserved_to, self.keep_to, self.outer)
            };
        }
    }

    struct Writer<C> {
        core: C,
        at: usize,
        limit: usize,
        no_room: bool,
    }
    impl<'s, C: Core<'s>> fmt::Write for Writer<C> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            if s.len() > self.limit - self.at {
                self.no_room = true;
                return Err(fmt::Error);
            }
            // SAFETY: `[at, at + len)` lies in the reserved room `[start, limit)`, which
            // nobody else can take while the reservation lasts.
            unsafe {
                ptr::copy_nonoverlapping(s.as_ptr(), self.core.ptr_at(self.at).as_ptr(), s.len())
            };
            self.at += s.len();
            Ok(())
        }
    }

    // Reserve the room up to the limit while user formatting code runs; on a panic the
    // reservation's drop gives it all back. Statistics read meanwhile leave it out.
    let outer = c.gaps_save();
    // SAFETY: `[start, limit)` is free room of this region.
    unsafe { c.set_top(limit) };
    c.gaps_set(&outer, start, limit);
    let mut reservation = Reservation {
        core: c,
        reserved_to: limit,
        keep_to: start,
        outer,
        _s: core::marker::PhantomData,
    };
    let mut w = Writer {
        core: c,
        at: start,
        limit,
        no_room: false,
    };
    match fmt::write(&mut w, args) {
        Ok(()) => {
            reservation.keep_to = w.at;
            drop(reservation);
            let len = w.at - start;
            #[cfg(feature = "tracy")]
            super::core::placed(c, c.ptr_at(start), len);
            // SAFETY: `[start, start + len)` holds the UTF-8 text just written and stays
            // below the top until the scope ends.
            unsafe {
                let bytes = core::slice::from_raw_parts_mut(c.ptr_at(start).as_ptr(), len);
                Formatted::Done(core::str::from_utf8_unchecked_mut(bytes))
            }
        }
        Err(fmt::Error) if w.no_room => Formatted::NoRoom(w.at - start),
        Err(fmt::Error) => Formatted::Failed,
    }
}

/// Measures the text, then writes it into room of its exact length (a text that comes
/// out longer the second time gets more room and another try).
fn format_measured<'s, C: Core<'s>>(
    c: C,
    args: fmt::Arguments<'_>,
) -> Result<&'s mut str, AllocError> {
    /// Counts bytes.
    struct Count(usize);
    impl fmt::Write for Count {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0 += s.len();
            Ok(())
        }
    }
    /// Writes into room of a fixed size; fails when it is full.
    struct Fill {
        at: *mut u8,
        cap: usize,
        len: usize,
        no_room: bool,
    }
    impl fmt::Write for Fill {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            if s.len() > self.cap - self.len {
                self.no_room = true;
                return Err(fmt::Error);
            }
            // SAFETY: `[len, len + s.len())` lies in the `cap` bytes of fresh room.
            unsafe { ptr::copy_nonoverlapping(s.as_ptr(), self.at.add(self.len), s.len()) };
            self.len += s.len();
            Ok(())
        }
    }
    let mut count = Count(0);
    if fmt::write(&mut count, args).is_err() {
        return Err(c.error(AllocErrorKind::Format, count.0 + 1, 1));
    }
    let mut cap = count.0;
    loop {
        let room = bump_checked(c, cap, 1)?;
        let mut fill = Fill {
            at: room.as_ptr(),
            cap,
            len: 0,
            no_room: false,
        };
        let written = fmt::write(&mut fill, args);
        if written.is_err() && !fill.no_room {
            return Err(c.error(AllocErrorKind::Format, fill.len + 1, 1));
        }
        if written.is_ok() {
            // SAFETY: the first `len` bytes of fresh room were written, as UTF-8 from
            // `str`s, and stay valid for `'s`.
            return Ok(unsafe {
                core::str::from_utf8_unchecked_mut(core::slice::from_raw_parts_mut(
                    room.as_ptr(),
                    fill.len,
                ))
            });
        }
        // The text came out longer the second time: try again with more room.
        cap = cap.saturating_mul(2).max(16);
    }
}
