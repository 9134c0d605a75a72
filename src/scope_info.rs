//! The record of one live scope, linked into its block's list of live scopes.
//!
//! Each scope call keeps a `ScopeInfo` in its own stack frame, beside (not inside) the
//! `ScopeStack` it lends to the closure, so the block can read every live scope's name,
//! start, finalizer chain, budget and pools through shared references while the closure
//! holds `&mut` to its handle. Reports and out-of-memory diagnostics walk this list.
//!
//! Invariants this module keeps:
//! - The block's `innermost` pointer and each `parent` link point at `ScopeInfo`s whose
//!   scope calls are still running; a scope unlinks itself (restoring `innermost` to its
//!   parent) before its frame returns or unwinds. Scopes end in strict LIFO order (they
//!   are closures), so the list is always a stack.
//! - Everything mutable is in `Cell`s; nothing here is ever borrowed mutably.

use core::cell::Cell;
use core::ptr::NonNull;

use crate::finalizer::Chain;

/// One live scope, as the block sees it.
pub(crate) struct ScopeInfo {
    /// The scope's name; the `str` outlives the scope call.
    name: NonNull<str>,
    /// Address where the scope began (its rewind point).
    pub(crate) start: usize,
    /// The scope that was innermost when this one opened.
    pub(crate) parent: Option<NonNull<ScopeInfo>>,
    /// Destructors to run when the scope ends.
    pub(crate) chain: Chain,
    /// The byte budget given by `scope_with_budget`, if any.
    pub(crate) budget: Option<usize>,
    /// The cursor limit to restore when the scope ends, when a budget lowered it
    /// (0: nothing to restore; a real limit is never 0 while a scope is open on it).
    pub(crate) saved_limit: Cell<usize>,
    /// Pools carved from this scope, newest first (for reports).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) pools: Cell<Option<NonNull<PoolLink>>>,
}

impl ScopeInfo {
    #[inline]
    pub(crate) fn new(
        name: &str,
        start: usize,
        parent: Option<NonNull<ScopeInfo>>,
        budget: Option<usize>,
    ) -> ScopeInfo {
        ScopeInfo {
            name: NonNull::from(name),
            start,
            parent,
            chain: Chain::new(),
            budget,
            saved_limit: Cell::new(0),
            pools: Cell::new(None),
        }
    }

    /// 0 for the outermost live scope on the block, 1 for its child, and so on.
    pub(crate) fn depth(&self) -> u32 {
        let mut depth = 0;
        let mut at = self.parent;
        while let Some(p) = at {
            depth += 1;
            // SAFETY: parents of a live scope are live (module invariant).
            at = unsafe { p.as_ref() }.parent;
        }
        depth
    }

    /// The scope's name.
    pub(crate) fn name(&self) -> &str {
        // SAFETY: the name was borrowed for at least as long as the scope call, and this
        // record does not outlive that call.
        unsafe { self.name.as_ref() }
    }
}

/// What a pool tells the report about itself.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(crate) struct PoolSnapshot {
    /// Live objects now.
    pub(crate) len: usize,
    /// Slots in all.
    pub(crate) capacity: usize,
    /// The most objects ever live at once.
    pub(crate) high_water_len: usize,
    /// Address of the pool's storage (slots and side tables). When the first array is
    /// of a zero-sized type this is a dangling address outside the block; the report
    /// then places the pool at `PoolLink::ptr`.
    pub(crate) addr: usize,
    /// Bytes of that storage.
    pub(crate) bytes: usize,
}

/// A node in a scope's list of pools, stored in scope memory next to the pool.
///
/// It holds copies of what a report needs plus a pointer into the pool's side tables,
/// never a pointer to the pool object itself: the caller may hold `&mut` to that object
/// while a report is taken, and reading it then would break Rust's aliasing rules.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(crate) struct PoolLink {
    /// Pool-defined: memory the pool shares with the report (scope memory that the pool
    /// itself only reaches through raw pointers). Reports use it to place a pool whose
    /// storage address is dangling (see `PoolSnapshot::addr`), so it should point into
    /// the block, at memory carved together with the pool's storage.
    pub(crate) ptr: NonNull<u8>,
    /// Pool-defined words (sizes, counts).
    pub(crate) words: [usize; 5],
    /// `"Pool"`, `"DensePool"` or `"Store"`.
    pub(crate) kind: &'static str,
    /// The element type's name.
    pub(crate) type_name: &'static str,
    /// Computes the statistics from this link.
    pub(crate) snapshot: unsafe fn(&PoolLink) -> PoolSnapshot,
    /// The pool registered before this one.
    pub(crate) next: Option<NonNull<PoolLink>>,
}

impl ScopeInfo {
    /// Links a pool's record into this scope's list.
    ///
    /// # Safety
    /// `link` lives in this scope's memory (or longer), and its pool stays valid (and
    /// readable by `snapshot`) until the scope ends.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) unsafe fn add_pool(&self, link: NonNull<PoolLink>) {
        // SAFETY: per the caller, `link` is valid for writes and not yet shared.
        unsafe { (*link.as_ptr()).next = self.pools.get() };
        self.pools.set(Some(link));
    }
}
