//! What a pool tells a memory map: len, capacity, high-water mark, where its storage
//! is and how big.
//!
//! This module owns the pool's report hook. Invariant: it reads only the scope memory the
//! pool's record names (stamps and side tables), never the pool object, so a report can
//! be taken while the caller holds `&mut Pool` or `&mut` to one of its objects.

use crate::sync::AtomicU32;

use super::free_list::ShardLayout;
use super::slots::StampView;
impl<T> super::Pool<'_, T> {
    /// What this pool's report record names as its `ptr` (the stamps array), so that a
    /// container built on the pool (a store) can say which record is its own.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn report_key(&self) -> usize {
        self.core.stamps.as_ptr().addr()
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
    let [addr, bytes, capacity, fresh, shard_len] = link.words;
    let view = StampView {
        stamps: link.ptr.cast::<AtomicU32>(),
        capacity: capacity as u32,
        fresh_stamp: fresh as u32,
        layout: ShardLayout {
            len: shard_len as u32,
            shards: (capacity as u32).div_ceil(shard_len as u32),
        },
    };
    crate::scope::info::PoolSnapshot {
        len: view.live_count(),
        capacity,
        high_water_len: view.used_count(),
        // One shard reuses every freed slot before a fresh one; several may not (see
        // `Pool::high_water_len`).
        high_water_exact: view.layout.shards == 1,
        addr,
        bytes,
        owns: None,
    }
}
