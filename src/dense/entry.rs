//! One roster entry of a dense pool: a single word naming the slot that owns the roster
//! position and that slot's generation, laid out exactly like the slot's handle without
//! the pool's tag, `generation << 32 | index`.
//!
//! This module owns the entry layout. Invariant: an entry's generation is odd exactly
//! while its slot is live, and changes on every insert and remove, so a handle made
//! before a remove never matches again. An entry moves as one word when its object
//! moves, so the generation always belongs to the slot it names.
use core::sync::atomic::AtomicU64;

/// A roster entry: `generation << 32 | slot index`. Atomic (always `Relaxed`, which
/// compiles to plain 8-byte loads and stores) only because a memory map report may read
/// it from another thread while the pool is in use; see [Reports](crate::dense#reports).
pub(super) type Entry = AtomicU64;

/// What adding one to an entry's generation adds to the word.
pub(super) const ONE_GENERATION: u64 = 1 << 32;

/// The slot index an entry names.
#[inline(always)]
pub(super) fn index(entry: u64) -> usize {
    entry as u32 as usize
}

/// Whether an entry's generation is odd: its slot is live.
#[inline(always)]
pub(super) fn is_live(entry: u64) -> bool {
    entry & ONE_GENERATION != 0
}

/// An entry for slot `index` at generation `generation`.
#[inline(always)]
pub(super) fn entry(index: u32, generation: u32) -> u64 {
    (generation as u64) << 32 | index as u64
}
