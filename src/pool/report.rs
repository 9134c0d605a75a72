//! What a pool tells a memory map: len, capacity, high-water mark, where its storage
//! is and how big.
//!
//! This module owns the pool's report hook. Invariant: it reads only the scope memory the
//! pool's record names (the shards' head lines, whose counters give the live count and
//! the slots ever used), never the pool object, so a report can be taken while the
//! caller holds `&mut Pool` or `&mut` to one of its objects. It reads what
//! [`Pool::len`](super::Pool::len) and [`Pool::high_water_len`](super::Pool::high_water_len)
//! read, one line per shard, with the same promise: exact when no thread inserts or
//! frees meanwhile, a snapshot otherwise.

use core::ptr::NonNull;

use super::free_list::{count_live, count_used, Head};

impl<T> super::Pool<'_, T> {
    /// What this pool's report record names as its `ptr` (the shards' heads), so that a
    /// container built on the pool (a store) can say which record is its own.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn report_key(&self) -> usize {
        self.core.free.heads().as_ptr().addr()
    }
}

/// Reads a registered pool's statistics for a memory map report.
///
/// # Safety
/// `link` was filled in by `try_new_pool`, and its pool's scope is live.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(super) unsafe fn pool_snapshot(
    link: &crate::scope::info::PoolLink,
) -> crate::scope::info::PoolSnapshot {
    let [addr, bytes, capacity, shards, _shard_len] = link.words;
    let heads: NonNull<Head> = link.ptr.cast();
    // SAFETY: `try_new_pool` named the pool's `shards` shards' heads, which live in the
    // scope's memory until it ends (the caller's contract).
    let (len, used) = unsafe {
        (
            count_live(heads, shards as u32, capacity as u32),
            count_used(heads, shards as u32),
        )
    };
    crate::scope::info::PoolSnapshot {
        len: len as usize,
        capacity,
        high_water_len: used as usize,
        // One shard reuses every freed slot before a fresh one; several may not (see
        // `Pool::high_water_len`).
        high_water_exact: shards == 1,
        addr,
        bytes,
        owns: None,
        heap: None,
    }
}
