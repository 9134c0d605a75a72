//! Which shards' stacks may hold freed slots: one bit per shard, so that an insert whose
//! home is empty looks only at the shards that may have something for it.
//!
//! Without it, that insert visited every other shard's two heads twice (once for the
//! shards no live thread calls home, once for the rest) before it took a never-used
//! slot. A thread that fills a pool alone (a loader building a level) takes its home's
//! share of never-used slots and then every later insert pays those visits: about
//! 2,700 instructions more per insert than with one shard, and a fill of 4,096 slots
//! 13 times slower than with the bits (docs/PERFORMANCE.md, "One thread filling a
//! pool").
//!
//! This module owns that summary. Invariant: a shard whose stacks have held a freed
//! slot has its bit set, from the moment the push that put the slot on an empty stack
//! returns. Bits are never cleared while the pool lives: a set bit may be stale (its
//! stacks empty again), and a search visits such a shard as every search visited every
//! shard before. So a search may skip a shard whose bit is clear, and loses nothing
//! that was freed before it began.
//!
//! # Why a plain load and an `or` are enough
//!
//! A push that makes an empty stack non-empty (its compare-exchange replaced `NIL` or
//! a waiters' mark) then sets its shard's bit unless it is set ([`Stock::mark`]); a
//! push onto a non-empty stack needs nothing, since the push that filled it did. A bit
//! only ever goes from clear to set, so any search that happens after the push (a join,
//! a channel, a lock in between) sees it: loads never go back in a word's order of
//! writes. A search that runs at the same time as the push may miss it, as it may miss
//! a slot pushed onto a stack it has already looked at. `Relaxed` throughout: the bit
//! says where to look, and the stack's own acquire/release orders what is found there.
//! A free reads this line (which stays shared in every core's cache: it is written at
//! most once per shard) and tests a bit; with the bit set, which is the usual case, it
//! writes nothing.
//!
//! Clearing stale bits was tried: the clear and the next look at the stacks must then
//! be ordered against every filling push (`SeqCst` on both sides), and the extra atomic
//! operations on the waiting paths made one loom model run for more than seven
//! minutes (the whole set took two before), for the rarer case of a pool drained and
//! then filled past what it held before.
//!
//! A pool of one shard never looks at another shard, so its pushes leave the bits
//! alone. Under `&mut Pool` (`exclusive.rs`) nothing else runs, so the exclusive push
//! sets a bit with a plain load and store.

use crate::limits::MAX_POOL_SHARDS;
use crate::sync::{AtomicU64, Ordering};

/// Words of the bitmap: one bit per shard, for the most shards a pool may have.
const WORDS: usize = MAX_POOL_SHARDS.div_ceil(64);
static_assertions::const_assert!(WORDS.is_power_of_two());

/// One bit per shard: set while the shard's stacks may hold a freed slot.
pub(crate) struct Stock {
    words: [AtomicU64; WORDS],
}

/// A copy of the bitmap, taken at the start of a search.
#[derive(Clone, Copy)]
pub(crate) struct StockSnapshot([u64; WORDS]);

impl StockSnapshot {
    /// Whether shard `shard`'s bit was set.
    #[inline(always)]
    pub(crate) fn has(&self, shard: u32) -> bool {
        self.0[(shard / 64) as usize] & bit(shard) != 0
    }

    /// Whether any shard but `home` had its bit set.
    #[inline]
    pub(crate) fn any_but(&self, home: u32) -> bool {
        self.0.iter().enumerate().any(|(w, &word)| {
            let own = if (home / 64) as usize == w {
                bit(home)
            } else {
                0
            };
            word & !own != 0
        })
    }
}

#[inline(always)]
fn bit(shard: u32) -> u64 {
    1 << (shard % 64)
}

impl Stock {
    /// Every bit clear: a new pool's stacks are empty.
    pub(crate) fn new() -> Stock {
        Stock {
            words: core::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    #[inline(always)]
    fn word(&self, shard: u32) -> &AtomicU64 {
        // `shard < MAX_POOL_SHARDS`, so the mask changes nothing; it spares the free
        // path a bounds check (`WORDS` is a power of two).
        &self.words[(shard / 64) as usize & (WORDS - 1)]
    }

    /// Called right after a push onto an empty stack of shard `shard`: sets its bit
    /// unless it is set.
    #[inline(always)]
    pub(crate) fn mark(&self, shard: u32) {
        // Relaxed: see the module docs. Read first, so that a set bit (the usual case)
        // costs no write.
        if (self.word(shard).load(Ordering::Relaxed) >> (shard % 64)) & 1 == 0 {
            self.set(shard);
        }
    }

    #[cold]
    #[inline(never)]
    fn set(&self, shard: u32) {
        // Relaxed: see the module docs.
        self.word(shard).fetch_or(bit(shard), Ordering::Relaxed);
    }

    /// [`mark`](Self::mark) for a caller that holds `&mut Pool`: nothing else runs, so a
    /// plain load and store (no read-modify-write, see `exclusive.rs`).
    #[inline(always)]
    pub(crate) fn mark_exclusive(&self, shard: u32) {
        let word = self.word(shard);
        // Relaxed: `&mut Pool` orders everything before and after us.
        let now = word.load(Ordering::Relaxed);
        if (now >> (shard % 64)) & 1 == 0 {
            word.store(now | bit(shard), Ordering::Relaxed);
        }
    }

    /// The bitmap as it is now, for one search.
    #[inline]
    pub(crate) fn snapshot(&self, shards: u32) -> StockSnapshot {
        let mut copy = [0; WORDS];
        for (w, word) in copy
            .iter_mut()
            .zip(&self.words)
            .take(shards.div_ceil(64) as usize)
        {
            // Relaxed: see the module docs.
            *w = word.load(Ordering::Relaxed);
        }
        StockSnapshot(copy)
    }

    /// Whether shard `shard`'s bit is set now (tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_set(&self, shard: u32) -> bool {
        self.word(shard).load(Ordering::Relaxed) & bit(shard) != 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    // Named by its full path: scripts/layers.sh reads `super` in this file as the
    // parent module.
    use crate::pool::free_list::stock::Stock;

    #[test]
    fn a_new_stock_has_no_shard_and_a_mark_adds_one() {
        let stock = Stock::new();
        assert!(!stock.snapshot(256).any_but(0));
        stock.mark(3);
        stock.mark(3);
        stock.mark(200);
        let now = stock.snapshot(256);
        assert!(now.has(3) && now.has(200) && !now.has(4) && !now.has(0));
        assert!(now.any_but(3) && now.any_but(200) && now.any_but(0));
        // A snapshot of the first 64 shards sees nothing of the others.
        assert!(!stock.snapshot(64).has(200));
        assert!(stock.is_set(200));
    }

    #[test]
    fn an_exclusive_mark_sets_the_same_bit() {
        let stock = Stock::new();
        stock.mark_exclusive(7);
        stock.mark_exclusive(7);
        stock.mark(7);
        assert!(stock.is_set(7) && stock.snapshot(8).has(7));
        assert!(!stock.snapshot(8).any_but(7) && stock.snapshot(8).any_but(6));
    }
}
