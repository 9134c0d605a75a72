//! One live scope's row in a memory map: [`ScopeReport`].
//!
//! Invariant: a row holds copies of what the scope's record and its containers'
//! records published when the report was taken, never a reference into the block.
use alloc::string::String;
use alloc::vec::Vec;

use crate::scope::info::ScopeInfo;

use super::concurrent::{concurrent_of, concurrent_report, ConcurrentReport};
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

/// The row of a scope record, given the bytes it holds itself and with its children.
pub(crate) fn scope_row(
    info: &ScopeInfo,
    block_start: usize,
    own: usize,
    inclusive: usize,
    pools: Vec<PoolReport>,
    slots: Vec<SlotsReport>,
    read_chain: bool,
) -> ScopeReport {
    let start = info.start - block_start;
    let mut finalizer_offsets = Vec::new();
    let concurrent = concurrent_of(info).map(|c| concurrent_report(c, block_start));
    if concurrent.is_none() && read_chain {
        // Through the chain's atomic head: a suspended scratch scope's builders may
        // link records while this runs (see `super::handle`, premise 2).
        info.chain
            .for_each_record(|addr| finalizer_offsets.push(addr - block_start));
        finalizer_offsets.reverse();
    }
    ScopeReport {
        name: String::from(info.name()),
        depth: info.depth(),
        start,
        own_bytes: own,
        inclusive_bytes: inclusive,
        finalizers: finalizer_offsets.len(),
        finalizer_offsets,
        budget: info.budget(),
        pools,
        concurrent,
        slots,
    }
}
