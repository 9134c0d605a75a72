//! One live scope's row in a memory map: [`ScopeReport`].
//!
//! Invariant: a row holds copies of what the scope's record and its containers'
//! records published when the report was taken, never a reference into the block.
use alloc::string::String;
use alloc::vec::Vec;

use super::concurrent::ConcurrentReport;
use super::pool_row::PoolReport;
use super::slots::SlotsReport;

/// One live scope in a [`MemoryMap`](crate::MemoryMap).
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
/// memory.scope("a", |a| {
///     a.alloc_raw(10, 1);
///     a.scope_with_budget("b", 512, |b| {
///         b.alloc_raw(20, 1);
///         let map = b.report();
///         let (outer, inner) = (&map.scopes[0], &map.scopes[1]);
///         assert_eq!((outer.own_bytes, outer.inclusive_bytes), (10, 30));
///         assert_eq!((inner.start, inner.depth, inner.budget), (10, 1, Some(512)));
///     });
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub struct ScopeReport {
    /// The name the scope was opened with.
    pub name: String,
    /// 0 for the outermost scope.
    pub depth: u32,
    /// Offset of the scope's first byte from the start of the block.
    pub start: usize,
    /// Bytes the scope holds itself (up to where its child begins).
    pub own_bytes: usize,
    /// Bytes the scope holds with all its live children.
    pub inclusive_bytes: usize,
    /// Values whose destructors will run when the scope ends.
    pub finalizers: usize,
    /// Offsets of the finalizer records (each sits just before its value).
    pub finalizer_offsets: Vec<usize>,
    /// The byte budget, if the scope was opened with one.
    pub budget: Option<usize>,
    /// Pools carved from this scope.
    pub pools: Vec<PoolReport>,
    /// For a concurrent scope ([`ScopeStack::scope_concurrent`](crate::ScopeStack::scope_concurrent)): its region and the
    /// chunks its threads claimed. Its finalizers live in per-thread chains that only
    /// their threads may read while it is open, so `finalizers` is 0 for it.
    pub concurrent: Option<ConcurrentReport>,
    /// The [`Slots`](crate::Slots) carved from this scope, in the order made. Each
    /// also shows in [`pools`](Self::pools), as a `"Slots"` row that owns one `"Slot"`
    /// row per slot; text and picture draw each slot from its report here (its state,
    /// used bytes, and what it holds, listed under it).
    pub slots: Vec<SlotsReport>,
}
