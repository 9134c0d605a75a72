//! What a heap tells a memory map: bytes in use, free bytes and blocks, the largest
//! free block, live allocations and the high-water mark.
//!
//! Invariant: the report record points at the `Heap`, which is only ever reachable
//! through shared references (no caller holds `&mut` to it), and reads it through the
//! heap's own lock, so a report taken on any thread sees a consistent state: every
//! figure of a row comes from one hold of the lock, so they all describe one moment.
use core::ptr::NonNull;

use crate::scope::info::{HeapNumbers, PoolLink, PoolSnapshot};
use crate::scope::place::Core as Surface;

use super::Heap;

/// Lists `heap` in its scope's reports.
pub(super) fn register<'s, C: Surface<'s>>(c: C, heap: &'s Heap) {
    let start = heap.pool.as_ptr().addr();
    let end = (heap as *const Heap).addr() + size_of::<Heap>();
    let link = PoolLink {
        ptr: NonNull::from(heap).cast(),
        words: [start, end.saturating_sub(start), 0, 0, 0],
        kind: "Heap",
        type_name: "bytes",
        snapshot: heap_snapshot,
        next: None,
    };
    // SAFETY: `heap_snapshot` reads only the `Heap`, which lives in this scope's memory
    // until it ends, through its lock.
    unsafe { c.register_pool(link) };
}

/// Reads a registered heap's statistics.
///
/// # Safety
/// `link` was filled in by `register`, and the heap's scope is live.
unsafe fn heap_snapshot(link: &PoolLink) -> PoolSnapshot {
    // SAFETY: `register` named the heap, valid (and only shared) until its scope
    // ends; the caller's contract says it has not.
    let heap: &Heap = unsafe { link.ptr.cast::<Heap>().as_ref() };
    // Every figure of the row from one hold of the lock: read in two, a block freed in
    // between would count as used and as free (issue 45).
    let fig = heap.figures();
    let walk = fig.walk;
    let [addr, bytes, ..] = link.words;
    PoolSnapshot {
        len: fig.used,
        capacity: heap.capacity,
        high_water_len: fig.high_water,
        high_water_exact: true,
        addr,
        bytes,
        owns: None,
        heap: Some(HeapNumbers {
            live: fig.live,
            free: walk.free,
            free_blocks: walk.free_blocks,
            largest_free: walk.largest,
        }),
    }
}
