//! Counting live objects: how `Pool::len` adds up without walking the slots.
//!
//! `Pool::len` must not walk the slots, and the count must not cost the insert and free
//! paths a read-modify-write of a line they do not already write. So each shard's local
//! line also holds two wrapping counters of slots handed out minus slots given back
//! (by `Core::claim` and `Core::release`, and by the exclusive take and push),
//! and a count is the sum over the shards:
//! - **`own`** is written only by the thread that holds the dense index equal to the
//!   shard's number alone (`thread_index::current_exclusive_fast`, which is exactly
//!   the index such a thread calls home), with a relaxed load and a relaxed store: no
//!   other thread writes the word, so nothing is lost, and the line is the one its
//!   insert has just popped from (its home's local head). An index handed over from
//!   an exited thread comes with everything written under it (`thread_index`: given
//!   back with `Release`, taken with `Acquire`). Under `&mut FreeLists` nothing else
//!   runs, so the exclusive paths write `own` of any shard the same way.
//! - **`shared`** takes the counts of every other thread (one that shares its index, or
//!   whose index is not below the shard count) with a relaxed `fetch_add` on its home's
//!   line, the line its home pops and pushes already use.
//!
//! Which thread counts a slot does not matter: only the sum means anything, and it
//! wraps exactly, so a slot counted out on one thread and back on another (a box freed
//! on another thread) nets to zero. Relaxed throughout: the counters order nothing, and
//! a reader that happens after every insert and free it must count (the same thread, a
//! join, a channel) sees their last values. A reader that runs while others insert or
//! free reads the shards one by one, so its sum may mix moments; [`count_live`] clamps
//! it to `0..=capacity`.
//!
//!
//! Invariant: the sum over the shards of `own + shared`, wrapping, is the number of
//! slots handed out and not given back, once every count is in.

use core::ptr::NonNull;

use super::lists::{FreeLists, Head, HEADS_PER_SHARD};
use crate::sync::Ordering;

/// What a count of one slot adds to a live counter: one slot handed out.
pub(crate) const COUNT_OUT: u32 = 1;

/// What a count of one slot adds to a live counter: one slot given back (minus one,
/// wrapping).
pub(crate) const COUNT_BACK: u32 = u32::MAX;

/// The number of slots handed out and not given back, read from `shards` shards'
/// local lines at `heads` (one line per shard, two relaxed loads on it), clamped to
/// `0..=capacity`: exact when every count it must include happens before the call,
/// a snapshot while other threads insert and free (module docs, "Counting live
/// objects").
///
/// # Safety
/// `heads` points to the `2 * shards` heads of live free lists (or of lists whose pool
/// is gone but whose scope memory is not yet rewound).
pub(crate) unsafe fn count_live(heads: NonNull<Head>, shards: u32, capacity: u32) -> u32 {
    let mut sum = 0u32;
    for shard in 0..shards as usize {
        // SAFETY: `shard < shards`: the local line of one of the caller's shards.
        let line = unsafe { heads.add(HEADS_PER_SHARD * shard).as_ref() };
        // Relaxed: a count, ordering nothing (module docs).
        sum = sum
            .wrapping_add(line.own.load(Ordering::Relaxed))
            .wrapping_add(line.shared.load(Ordering::Relaxed));
    }
    // A sum that mixed moments may dip below zero (a free read, its insert not) or
    // pass the capacity; the true count is at most 2^24, far from the wrap.
    if (sum as i32) < 0 {
        0
    } else {
        sum.min(capacity)
    }
}

/// The number of slots ever handed out: each shard's count of its never-used slots
/// taken (one relaxed load per shard). Exact when every insert it must include happens
/// before the call; while other threads insert it may miss the slots they are taking.
///
/// # Safety
/// As [`count_live`].
pub(crate) unsafe fn count_used(heads: NonNull<Head>, shards: u32) -> u32 {
    (0..shards as usize)
        .map(|shard| {
            // SAFETY: `shard < shards`: the local line of one of the caller's shards.
            let line = unsafe { heads.add(HEADS_PER_SHARD * shard).as_ref() };
            // Relaxed: see `take_fresh`.
            line.fresh_taken.load(Ordering::Relaxed)
        })
        .sum()
}

impl FreeLists {
    /// Counts `delta` ([`COUNT_OUT`] or [`COUNT_BACK`]) slots for the calling thread,
    /// whose home is `home`: on `home`'s `own` counter if `alone` (the thread holds
    /// dense index `home` alone), else on its `shared` counter (module docs, "Counting
    /// live objects").
    #[inline(always)]
    pub(crate) fn count(&self, home: u32, alone: bool, delta: u32) {
        if alone {
            // Relaxed load and store: no other thread writes `own` (module docs).
            let own = &self.line(home).own;
            own.store(
                own.load(Ordering::Relaxed).wrapping_add(delta),
                Ordering::Relaxed,
            );
        } else {
            self.count_shared(home, delta);
        }
    }

    /// The `shared` half of [`count`](Self::count), out of line, so that the usual
    /// case (a thread that calls the shard home alone) jumps over nothing.
    #[cold]
    #[inline(never)]
    fn count_shared(&self, home: u32, delta: u32) {
        // Relaxed: a count, ordering nothing (module docs).
        self.line(home).shared.fetch_add(delta, Ordering::Relaxed);
    }

    /// See [`count_live`].
    pub(crate) fn live(&self) -> u32 {
        // SAFETY: our own heads, valid while `self` lives.
        unsafe { count_live(self.heads, self.layout.shards, self.capacity) }
    }

    /// See [`count_used`].
    pub(crate) fn used(&self) -> u32 {
        // SAFETY: as in `live`.
        unsafe { count_used(self.heads, self.layout.shards) }
    }
}
