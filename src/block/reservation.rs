//! Reservations: room a call has claimed on the block but not used yet, which the
//! block's statistics leave out.
//!
//! Three calls claim room ahead of what they know they will keep: `alloc_fmt` claims
//! everything up to the limit while user formatting code runs, `alloc_iter` claims room
//! ahead of the elements it has built, and a concurrent scope claims its whole region
//! while it is open. Meanwhile the bump pointer stands at the end of the claim, but the
//! claimed bytes are not in use, so `used()`, high-water marks and reports must not
//! count them. Code run during the claim (the iterator, the formatting impl) may still
//! allocate *above* it (an allocator-api2 `Box` in the same scope, a nested scratch
//! scope on the same arena), and that memory is real use.
//!
//! Invariants this module keeps:
//! - At most one gap `[from, to)` is described here: the innermost live reservation's.
//!   Reservations nest (one made while another lives lies above the other's claim), and
//!   `below` holds the bytes of the outer reservations' gaps, all of which lie below
//!   `from`. Each reservation saves the state it found ([`Gaps::save`]) and restores it
//!   when it ends, so an ended reservation leaves no trace.
//! - `lowest` is the start of the outermost live gap (`usize::MAX` when none is live).
//!   Below it nothing needs adjusting, which keeps [`Gaps::counted`] one compare on the
//!   paths that close scopes.
//! - [`Gaps::counted`] maps a bump pointer to "the address use would reach if every live
//!   gap were closed": the bump pointer minus the gap bytes beneath it. It never
//!   decreases as the bump pointer rises, and equals the bump pointer when no gap lies
//!   beneath it, so high-water marks stored from it stay comparable across
//!   reservations.

use core::cell::Cell;

/// The live reservations' gaps, as the block's statistics see them.
pub(crate) struct Gaps {
    /// Start of the outermost live gap, or `usize::MAX` when none is live.
    lowest: Cell<usize>,
    /// The innermost live gap `[from, to)` (`from == to` when that reservation has not
    /// claimed anything yet).
    from: Cell<usize>,
    to: Cell<usize>,
    /// Bytes in the outer reservations' gaps, all below `from`.
    below: Cell<usize>,
}

/// What a reservation found when it began, to put back when it ends.
#[derive(Clone, Copy)]
pub struct SavedGaps {
    lowest: usize,
    from: usize,
    to: usize,
    below: usize,
}

impl Gaps {
    /// No reservation live.
    pub(crate) const fn new() -> Gaps {
        Gaps {
            lowest: Cell::new(usize::MAX),
            from: Cell::new(usize::MAX),
            to: Cell::new(usize::MAX),
            below: Cell::new(0),
        }
    }

    /// Start of the lowest live gap (`usize::MAX` when none is live): addresses up to
    /// it count as they are.
    #[inline(always)]
    pub(crate) fn lowest(&self) -> usize {
        self.lowest.get()
    }

    /// The bump pointer `cur` with the live gaps beneath it taken out (see the module
    /// docs).
    #[inline(always)]
    pub(crate) fn counted(&self, cur: usize) -> usize {
        if cur <= self.lowest.get() {
            cur
        } else {
            self.counted_past_gaps(cur)
        }
    }

    #[cold]
    #[inline(never)]
    fn counted_past_gaps(&self, cur: usize) -> usize {
        let (from, to) = (self.from.get(), self.to.get());
        let below = self.below.get();
        let above = if cur <= from {
            cur
        } else if cur <= to {
            from
        } else {
            cur - (to - from)
        };
        // The outer gaps lie below `from`. An address inside one of them (no live
        // allocation ends there, but a report may ask) counts as the gap's start.
        above.saturating_sub(below).max(self.lowest.get())
    }

    /// The state to hand back to [`restore`](Self::restore) when a reservation that
    /// begins now ends.
    #[inline]
    pub(crate) fn save(&self) -> SavedGaps {
        SavedGaps {
            lowest: self.lowest.get(),
            from: self.from.get(),
            to: self.to.get(),
            below: self.below.get(),
        }
    }

    /// Makes `[from, to)` the innermost gap of the reservation that saved `outer`
    /// (called again each time that reservation's claim moves). `from <= to`, and the
    /// gap lies above every outer gap.
    #[inline]
    pub(crate) fn set(&self, outer: &SavedGaps, from: usize, to: usize) {
        debug_assert!(from <= to);
        let outer_gap = if outer.lowest == usize::MAX {
            0
        } else {
            outer.to - outer.from
        };
        debug_assert!(outer.lowest == usize::MAX || from >= outer.to);
        self.below.set(outer.below + outer_gap);
        self.from.set(from);
        self.to.set(to);
        self.lowest.set(outer.lowest.min(from));
    }

    /// Moves the innermost gap's start up to `from` (the reservation used the bytes
    /// before it). One store: `lowest` stays at or below the new start.
    #[inline(always)]
    pub(crate) fn raise_from(&self, from: usize) {
        debug_assert!(from >= self.from.get() && from <= self.to.get());
        self.from.set(from);
    }

    /// Puts back what [`save`](Self::save) returned: the reservation has ended.
    #[inline]
    pub(crate) fn restore(&self, outer: &SavedGaps) {
        self.lowest.set(outer.lowest);
        self.from.set(outer.from);
        self.to.set(outer.to);
        self.below.set(outer.below);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_gap_counts_the_bump_pointer() {
        let g = Gaps::new();
        assert_eq!(g.counted(0), 0);
        assert_eq!(g.counted(1000), 1000);
    }

    #[test]
    fn one_gap_is_left_out_below_inside_and_above() {
        let g = Gaps::new();
        let outer = g.save();
        g.set(&outer, 100, 300);
        assert_eq!(g.counted(50), 50);
        assert_eq!(g.counted(100), 100);
        assert_eq!(g.counted(200), 100);
        assert_eq!(g.counted(300), 100);
        // 50 bytes allocated above the claim count.
        assert_eq!(g.counted(350), 150);
        // The reservation used 20 more bytes.
        g.raise_from(120);
        assert_eq!(g.counted(200), 120);
        assert_eq!(g.counted(350), 170);
        g.restore(&outer);
        assert_eq!(g.counted(350), 350);
    }

    #[test]
    fn nested_gaps_add_up_and_restore_in_turn() {
        let g = Gaps::new();
        let outer = g.save();
        g.set(&outer, 100, 300); // 200 bytes
        let inner = g.save();
        g.set(&inner, 400, 450); // 50 bytes, above 100 bytes of real use at 300..400
        assert_eq!(g.counted(400), 200);
        assert_eq!(g.counted(420), 200);
        assert_eq!(g.counted(500), 250);
        g.restore(&inner);
        assert_eq!(g.counted(500), 300);
        g.restore(&outer);
        assert_eq!(g.counted(500), 500);
    }

    #[test]
    fn counted_never_decreases_as_the_pointer_rises() {
        let g = Gaps::new();
        let outer = g.save();
        g.set(&outer, 64, 192);
        let inner = g.save();
        g.set(&inner, 256, 512);
        let mut last = 0;
        for cur in 0..1024 {
            let c = g.counted(cur);
            assert!(c >= last && c <= cur);
            last = c;
        }
    }
}
