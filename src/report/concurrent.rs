//! What a report says about a concurrent scope: its region, and every chunk its threads
//! claimed, with the thread that claimed it, the bytes used and the tail left over.
//!
//! Invariant: everything here is read through atomics and through records that no
//! thread changes while the concurrent scope is open, so a report may be taken on any
//! thread while workers allocate; its figures may trail allocations still in flight.
//!
//! Premises (checked with those of `super::handle`, which a concurrent scope's report
//! shares through `super::gather::rows_down_from`):
//! - the region's chunk list and counters are atomics published with release stores;
//!   the per-thread chains, which their threads link with plain stores, are never read
//!   while the scope is open;
//! - the scope records of its ancestors never change while it is open. Their
//!   finalizer chains may: the parent is borrowed mutably by the open, but an ancestor
//!   further out may be a scratch scope that is only suspended, whose builders still
//!   link records (issue 45). Those chains are read through their atomic heads (see
//!   `crate::scope::finalizer::Chain`).

use alloc::string::String;
use alloc::vec::Vec;

use crate::concurrent::shared::Inner;
use crate::scope::info::ScopeInfo;

/// A concurrent scope's region, in its [`ScopeReport`](crate::ScopeReport).
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
/// memory.scope("frame", |frame| {
///     frame.scope_concurrent("jobs", |jobs| {
///         std::thread::scope(|t| {
///             for _ in 0..2 {
///                 t.spawn(|| jobs.alloc_slice_fill_with(100, |i| i as u64));
///             }
///         });
///         let map = jobs.report();
///         let region = map.scopes[1].concurrent.as_ref().unwrap();
///         let used: usize = region.chunks.iter().map(|c| c.used).sum();
///         assert!(used >= 2 * 800);
///         println!("{map}"); // one row per chunk, under the scope
///     });
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub struct ConcurrentReport {
    /// Entries of the scope's per-thread table: threads whose index is below this
    /// claim chunks of their own and bump without atomics; the others allocate
    /// straight from the region (see [`direct_bytes`](Self::direct_bytes)). The text
    /// report prints it as `chunks for up to N threads`.
    pub threads: usize,
    /// Bytes a thread claims at a time.
    pub chunk_size: usize,
    /// Bytes of the region (the budget, or what the parent had left).
    pub region_bytes: usize,
    /// Bytes claimed so far: the slot table, every chunk, and single allocations.
    pub claimed_bytes: usize,
    /// Bytes claimed by single allocations straight from the region (large requests,
    /// and every allocation of a thread without a slot).
    pub direct_bytes: usize,
    /// Every chunk, by thread index, oldest first within a thread.
    pub chunks: Vec<ChunkReport>,
}

/// One chunk of a concurrent scope, in a [`ConcurrentReport`].
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
/// memory.scope("frame", |frame| {
///     frame.scope_concurrent("jobs", |jobs| {
///         let here = jobs.local();
///         here.new_pod(1u64);
///         let map = jobs.report();
///         let chunk = &map.scopes[1].concurrent.as_ref().unwrap().chunks[0];
///         assert!(chunk.current && chunk.used >= 8);
///         assert_eq!(chunk.used + chunk.tail, chunk.bytes);
///     });
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub struct ChunkReport {
    /// The dense thread index of the thread that claimed it.
    pub thread: u32,
    /// The name of the thread that holds that index when the report is taken, if it
    /// has one ([`std::thread::Builder::name`], rayon's `thread_name`): the text prints
    /// `chunk of thread 3 (loader)`, the picture likewise. An index is held by one live
    /// thread at a time and an exiting thread gives it back, so a thread that took
    /// over an exited one's index (and its per-thread chunks) shows its own name, or
    /// none; so does an index no thread holds now. Always `None` without the `std`
    /// feature.
    ///
    /// ```
    /// use scope_stack::LinearAllocator;
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         std::thread::scope(|t| {
    ///             std::thread::Builder::new()
    ///                 .name("loader".into())
    ///                 .spawn_scoped(t, || {
    ///                     load.local().alloc_str("mesh");
    ///                     let map = load.report(); // while the loader lives
    ///                     let chunks = &map.scopes[1].concurrent.as_ref().unwrap().chunks;
    ///                     let mine = chunks.iter().find(|c| c.thread_name.as_deref() == Some("loader"));
    ///                     assert!(mine.is_some());
    ///                     assert!(map.to_string().contains(" (loader)"));
    ///                 })
    ///                 .unwrap();
    ///         });
    ///     });
    /// });
    /// ```
    pub thread_name: Option<String>,
    /// Offset of its first byte from the start of the block.
    pub offset: usize,
    /// Its size.
    pub bytes: usize,
    /// Bytes used, its 32-byte header included.
    pub used: usize,
    /// Bytes after the last use: still free in the thread's current chunk, wasted in
    /// one the thread has moved on from.
    pub tail: usize,
    /// Whether this is the thread's current chunk.
    pub current: bool,
}

/// The report of the concurrent scope whose shared state is `inner`, with offsets from
/// `block_start`: the start of the block the map is of. A concurrent scope on a slot
/// lives on the slot's sub-block, whose own start is the slot's, so a map of the
/// carving block passes that block's start (every row of a map counts from one place).
pub(crate) fn concurrent_report(inner: &Inner, block_start: usize) -> ConcurrentReport {
    let mut chunks = Vec::new();
    for slot in inner.slots() {
        let at = chunks.len();
        let mut first = true;
        // One look-up per thread: every chunk of a slot has its thread's index.
        let mut name: Option<(u32, Option<String>)> = None;
        slot.for_each_chunk(|c| {
            let thread_name = match &name {
                Some((t, n)) if *t == c.thread => n.clone(),
                _ => {
                    let n = crate::thread_index::name_of(c.thread);
                    name = Some((c.thread, n.clone()));
                    n
                }
            };
            chunks.push(ChunkReport {
                thread: c.thread,
                thread_name,
                offset: c.start - block_start,
                bytes: c.end - c.start,
                used: c.used_end - c.start,
                tail: c.end - c.used_end,
                current: first,
            });
            first = false;
        });
        chunks[at..].reverse();
    }
    ConcurrentReport {
        threads: inner.slot_count,
        chunk_size: inner.chunk_size,
        region_bytes: inner.region.end - inner.start,
        claimed_bytes: inner.region.top() - inner.start,
        direct_bytes: inner.region.direct_bytes(),
        chunks,
    }
}

/// A thread's chunks in a region, folded into one line of the text and one row of the
/// picture: a thread that claimed eleven chunks is one row, not eleven.
pub(super) struct ChunkRun {
    pub(super) thread: u32,
    /// The thread's name, if it has one (see [`ChunkReport::thread_name`]).
    pub(super) thread_name: Option<String>,
    /// Chunks in the run.
    pub(super) count: usize,
    /// The lowest offset of its chunks, and the end of the highest.
    pub(super) range: (usize, usize),
    /// Bytes of all its chunks, and of their used parts.
    pub(super) bytes: usize,
    pub(super) used: usize,
    /// Tails of the chunks the thread moved on from.
    pub(super) wasted: usize,
    /// The tail of its current chunk (free).
    pub(super) free: usize,
    /// Whether the run holds the thread's current chunk.
    pub(super) current: bool,
}

/// The region's chunks, one run per thread, in the report's order (by thread index).
pub(super) fn chunk_runs(c: &ConcurrentReport) -> Vec<ChunkRun> {
    let mut runs: Vec<ChunkRun> = Vec::new();
    for ch in &c.chunks {
        let end = ch.offset.saturating_add(ch.bytes);
        let (wasted, free) = if ch.current {
            (0, ch.tail)
        } else {
            (ch.tail, 0)
        };
        match runs.last_mut() {
            Some(r) if r.thread == ch.thread && r.thread_name == ch.thread_name => {
                r.count += 1;
                r.range = (r.range.0.min(ch.offset), r.range.1.max(end));
                r.bytes += ch.bytes;
                r.used += ch.used;
                r.wasted += wasted;
                r.free += free;
                r.current |= ch.current;
            }
            _ => runs.push(ChunkRun {
                thread: ch.thread,
                thread_name: ch.thread_name.clone(),
                count: 1,
                range: (ch.offset, end),
                bytes: ch.bytes,
                used: ch.used,
                wasted,
                free,
                current: ch.current,
            }),
        }
    }
    runs
}

/// The concurrent scope's state behind a scope record, if it is one.
pub(crate) fn concurrent_of(info: &ScopeInfo) -> Option<&Inner> {
    // SAFETY: only the concurrent layer sets `detail`, to its `Inner`, which lives in
    // the frame of the call that opened the scope, as long as the record does.
    info.detail().map(|d| unsafe { d.cast::<Inner>().as_ref() })
}
