//! Memory map reports: where the block's memory is, by scope, as text and as a picture.
//!
//! A [`MemoryMap`] is a snapshot taken from the block's list of live scopes (see
//! `crate::scope::info`): it owns its data, so it can be printed, compared or kept after
//! the scopes are gone. Taking one allocates on the global heap (it is a diagnostic, not
//! a hot path); it is available with the `alloc` feature.
//!
//! Invariant: a snapshot only reads live scopes' records and finalizer chains, through
//! shared references; it never changes the block.

mod concurrent;
mod gather;
mod handle;
mod heap_row;
use gather::{pool_rows, rows_down_from};
mod layout;
mod map;
mod pool_row;
#[cfg(test)]
mod render_tests;
mod scope_row;
use scope_row::scope_row;
mod slots;
mod svg;
mod tree;
mod type_name;

use alloc::vec::Vec;

use crate::block::linear::LinearAllocator;
use crate::concurrent::{ConcurrentScope, Inner};
use crate::scope::ScopeStack;

use concurrent::concurrent_of;
pub use concurrent::{ChunkReport, ConcurrentReport};
pub use handle::MapHandle;
pub use heap_row::HeapReport;
#[doc(hidden)]
pub use layout::{SvgLabel, SvgLayout};
pub use map::MemoryMap;
pub use pool_row::PoolReport;
pub use scope_row::ScopeReport;
pub use slots::{SlotReport, SlotState, SlotsReport};

#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl LinearAllocator {
    /// A snapshot of the block and its live scopes. Callable through
    /// [`ScopeStack::report`] while scopes are open, or here between them.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("s", |s| { s.alloc_raw(100, 1); });
    /// let map = memory.report();
    /// assert!(map.scopes.is_empty());
    /// assert_eq!((map.used, map.high_water_mark), (0, 100));
    /// ```
    pub fn report(&self) -> MemoryMap {
        let mut scopes = Vec::new();
        let block_start = self.offset_base();
        // A live concurrent scope's region lies above the bump pointer's account (see
        // `crate::concurrent`): count what its threads claimed.
        let mut end = self.used();
        self.for_each_live_scope(|info, _| {
            if let Some(c) = concurrent_of(info) {
                end = end.max(c.region.top() - block_start);
            }
        });
        // Every deeper scope lies inside an outer one, so a scope's inclusive extent runs
        // from its start to the top.
        self.for_each_live_scope(|info, own| {
            let start = self.offset_of(info.start);
            let own = match concurrent_of(info) {
                Some(c) => c.region.top() - info.start,
                None => own,
            };
            let (pools, slots) = pool_rows(info, self.capacity(), block_start);
            scopes.push(scope_row(
                info,
                block_start,
                own,
                end.saturating_sub(start),
                pools,
                slots,
                true,
            ));
        });
        scopes.reverse();
        MemoryMap {
            capacity: self.capacity(),
            used: end,
            high_water_mark: self.high_water_mark().max(end),
            scopes,
        }
    }

    /// Address of the block's first byte.
    fn offset_base(&self) -> usize {
        self.end_addr() - self.capacity()
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl ScopeStack<'_> {
    /// A snapshot of this scope's block: totals and every live scope on it.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    /// memory.scope("systems", |s| {
    ///     s.scope("level", |l| assert_eq!(l.report().scopes[1].name, "level"));
    /// });
    /// ```
    pub fn report(&self) -> MemoryMap {
        self.allocator().report()
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl ConcurrentScope<'_> {
    /// A snapshot of the block as this scope sees it: this scope with its chunks, and
    /// every scope it is nested in. Any thread may take one while workers allocate; the
    /// figures may trail allocations still in flight. Scopes opened above this one on
    /// the same block are not listed: a scratch scope of the opening thread, nested
    /// while a budgeted scope on a scratch arena is open, lies above the region (see
    /// [`ScopeStack::scope_concurrent_with_budget`](crate::ScopeStack::scope_concurrent_with_budget);
    /// an unbudgeted region leaves it no room) and shows in that thread's own
    /// [`ScopeStack::report`](crate::ScopeStack::report).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     level.scope_concurrent("load", |load| {
    ///         std::thread::scope(|t| {
    ///             t.spawn(|| {
    ///                 load.alloc_str("mesh");
    ///                 let map = load.report(); // from a worker
    ///                 assert_eq!(map.scopes[1].name, "load");
    ///             });
    ///         });
    ///     });
    /// });
    /// ```
    pub fn report(&self) -> MemoryMap {
        self.inner.report()
    }
}

impl Inner {
    /// The map [`ConcurrentScope::report`] returns, from the state every thread shares
    /// (so a worker's out-of-memory panic can print it through its `LocalScope`).
    pub(crate) fn report(&self) -> MemoryMap {
        let inner = self;
        // SAFETY: the record lives in the frame of the opening call, as long as `self`.
        let info = unsafe { inner.info.get().as_ref() };
        let block_start = inner.block_start;
        let top = inner.region.top();
        let scopes = rows_down_from(info, inner.capacity, block_start, top, true);
        let used = top - block_start;
        MemoryMap {
            capacity: inner.capacity,
            used,
            high_water_mark: inner.high_water_at_open.max(used),
            scopes,
        }
    }
}
