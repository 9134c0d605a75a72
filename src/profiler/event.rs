//! What the seam carries: one [`Event`] per thing the profiler is told.
//!
//! Invariant: an event borrows nothing but a message's text for the call; names are
//! `'static` [`Name`]s.
use super::names::Name;

/// One event for the profiler.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event<'a> {
    /// `size` bytes at `addr` were placed in `pool`.
    Alloc {
        pool: &'static Name,
        addr: usize,
        size: usize,
    },
    /// The allocation at `addr` in `pool` ended on its own (a box, a pool object).
    Free { pool: &'static Name, addr: usize },
    /// Every allocation still live in `pool` ended at once (a rewind, an unload, a
    /// container dropped with its scope).
    Discard { pool: &'static Name },
    /// A plotted figure changed.
    Plot { plot: Plot, value: f64 },
    /// A text for the profiler's message list (the memory map at an out-of-memory error).
    Message { text: &'a str },
}

/// Which of a name's plots an [`Event::Plot`] is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plot {
    /// `"<name> used"`: bytes in use in a top-level scope or a slot.
    Used(&'static Name),
    /// `"<name> high-water"`: the block's high-water mark (named by its top-level scope).
    HighWater(&'static Name),
    /// `"<name> len"`: the objects in a pool.
    Len(&'static Name),
}

impl Plot {
    /// The pool the plot belongs to.
    pub(crate) fn name(self) -> &'static Name {
        match self {
            Plot::Used(n) | Plot::HighWater(n) | Plot::Len(n) => n,
        }
    }

    /// The plot's name as Tracy keeps it.
    pub(crate) fn name_c(self) -> &'static core::ffi::CStr {
        match self {
            Plot::Used(n) => n.used_c(),
            Plot::HighWater(n) => n.high_water_c(),
            Plot::Len(n) => n.len_c(),
        }
    }
}
