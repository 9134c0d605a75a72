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

use core::ptr::NonNull;

use crate::block::linear::LinearAllocator;

use super::finalizer::Chain;

/// One live scope, as the block sees it.
///
/// Opening a scope writes six words here (name, start, parent, an empty chain, no
/// extras) and closing it reads one (the chain head): the close path keeps its own
/// copies of what the rewind needs (see `crate::scope::run_scope`).
///
/// `repr(C)` puts `extras` right before the chain's head, so the two `None`s an open
/// writes are one 16-byte store.
#[repr(C)]
pub(crate) struct ScopeInfo {
    /// The scope's name; the `str` outlives the scope call.
    name: NonNull<str>,
    /// Address where the scope began (its rewind point).
    pub(crate) start: usize,
    /// The scope that was innermost when this one opened.
    pub(crate) parent: Option<NonNull<ScopeInfo>>,
    /// The budget and the pools, once the scope has either (most scopes have neither).
    extras: core::sync::atomic::AtomicPtr<Extras>,
    /// Destructors to run when the scope ends (its head is the first field).
    pub(crate) chain: Chain,
    /// The profiler pool this scope's allocations go to, and the one its plots are
    /// named by (the top-level scope's or the slot's): see `crate::profiler`.
    #[cfg(feature = "tracy")]
    pub(crate) profiler: ProfilerNames,
}

/// A scope's names in the profiler (feature `tracy`): `None` for a pool that opened
/// while no profiler was connected (it stays hidden; see `crate::profiler`).
#[cfg(feature = "tracy")]
#[derive(Clone, Copy)]
pub(crate) struct ProfilerNames {
    /// This scope's own pool: `parent/name`, or `name` at the top.
    pub(crate) pool: Option<&'static crate::profiler::Name>,
    /// The pool of the top-level scope (or slot) this scope lies in, which names its
    /// plots.
    pub(crate) top: Option<&'static crate::profiler::Name>,
    /// For a slot's record: the slot set's name (it lives in the carving scope, which
    /// outlives the slot) and the slot's index, to name the slot's path while it is
    /// hidden.
    slot: Option<(NonNull<str>, usize)>,
    /// Whether the scope owns `pool` (ends it at its close). The concurrent scope a
    /// slot is loaded through does not: it shows in its slot's pool, which the
    /// unload ends, so the slot's pools are named once (`levels/canyon/Pool<Enemy>`).
    owns: bool,
}

#[cfg(feature = "tracy")]
impl ProfilerNames {
    /// The names of a scope called `name` opened inside `parent` (or at the top): one
    /// relaxed load while no profiler is connected.
    #[inline]
    pub(crate) fn of(name: &str, parent: Option<NonNull<ScopeInfo>>) -> ProfilerNames {
        // SAFETY: a parent record outlives its children (the scopes nest).
        let parent = parent.map(|p| unsafe { p.as_ref() });
        let pool = crate::profiler::name_for(|text| {
            if let Some(p) = parent {
                p.write_profiler_path(text);
                let _ = core::fmt::Write::write_str(text, "/");
            }
            let _ = core::fmt::Write::write_str(text, name);
        });
        ProfilerNames {
            pool,
            top: match parent {
                Some(p) => p.profiler.top,
                None => pool,
            },
            slot: None,
            owns: true,
        }
    }

    /// The names of a scope that shows in its parent's pool and does not end it (the
    /// concurrent scope a slot is loaded through).
    pub(crate) fn within(parent: Option<NonNull<ScopeInfo>>) -> ProfilerNames {
        // SAFETY: a parent record outlives its children (the scopes nest).
        let parent = parent.map(|p| unsafe { p.as_ref() }.profiler);
        ProfilerNames {
            pool: parent.and_then(|p| p.pool),
            top: parent.and_then(|p| p.top),
            slot: None,
            owns: false,
        }
    }

    /// The names of slot `index` of the slot set `set` loaded by `holder`:
    /// `set/holder`, or `set[index]` for a load with an empty name.
    pub(crate) fn slot(set: &str, index: usize, holder: &str) -> ProfilerNames {
        let pool = crate::profiler::name_for(|text| slot_path(text, set, index, holder));
        ProfilerNames {
            pool,
            top: pool,
            slot: Some((NonNull::from(set), index)),
            owns: true,
        }
    }

    /// Ends the scope in the profiler: one discard of its pool, and the top-level
    /// pool's use and the block's high-water mark plotted (nothing for a scope that
    /// shows in its parent's pool).
    pub(crate) fn close(self, block: &LinearAllocator) {
        use crate::profiler::{discard, plot, Plot};
        if !self.owns {
            return;
        }
        discard(self.pool);
        if let Some(top) = self.top {
            plot(Plot::Used(top), block.used());
            plot(Plot::HighWater(top), block.high_water_mark());
        }
    }
}

/// Writes a slot's profiler path: `set/holder`, or `set[index]` for an empty holder.
#[cfg(feature = "tracy")]
fn slot_path(text: &mut crate::profiler::names::Text, set: &str, index: usize, holder: &str) {
    use core::fmt::Write;
    let _ = if holder.is_empty() {
        write!(text, "{set}[{index}]")
    } else {
        write!(text, "{set}/{holder}")
    };
}

/// What only some scopes have: a budget, or pools to report.
///
/// A budgeted scope keeps it in the frame of its scope call; a scope without a budget
/// carves it from its own memory when its first pool registers.
pub(crate) struct Extras {
    /// The byte budget given by `scope_with_budget` (clamped to the room the parent
    /// had left when the scope opened, so never `usize::MAX`), or `usize::MAX` for
    /// none: a plain word keeps the record as small as it was before `clamped`.
    budget: usize,
    /// Whether the budget asked for was more than the parent's room and was clamped:
    /// then the parent's limit, not this budget, is what binds.
    clamped: bool,
    /// Pools carved from this scope, newest first (for reports). Atomic because the
    /// workers of a concurrent scope carve containers from it at once: a link is
    /// pushed with a release compare-exchange after its fields are written, and read
    /// with acquire. (`core`'s atomic even under loom: the list only grows while the
    /// scope lives, and no loom model is about it.)
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pools: core::sync::atomic::AtomicPtr<PoolLink>,
    /// What a concurrent scope shows the report (its region and chunks): set only by
    /// the concurrent layer, read only by the report layer, which knows the type.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    detail: Option<NonNull<()>>,
}

impl Extras {
    /// Extras with a budget (or none) and no pools yet.
    #[inline]
    pub(crate) fn new(budget: Option<usize>) -> Extras {
        Extras {
            budget: budget.unwrap_or(usize::MAX),
            clamped: false,
            pools: core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()),
            detail: None,
        }
    }

    /// Marks the budget as clamped to the parent's room (see [`Extras::clamped`]).
    #[inline]
    pub(crate) fn clamped(mut self, clamped: bool) -> Extras {
        self.clamped = clamped;
        self
    }

    /// Extras of a concurrent scope, pointing at its shared state (which must outlive
    /// the record).
    pub(crate) fn with_detail(budget: Option<usize>, detail: NonNull<()>) -> Extras {
        Extras {
            budget: budget.unwrap_or(usize::MAX),
            clamped: false,
            pools: core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()),
            detail: Some(detail),
        }
    }
}

impl ScopeInfo {
    /// A record with an empty chain. `extras` must outlive the record.
    #[inline]
    pub(crate) fn new(
        name: &str,
        start: usize,
        parent: Option<NonNull<ScopeInfo>>,
        extras: Option<NonNull<Extras>>,
    ) -> ScopeInfo {
        ScopeInfo {
            name: NonNull::from(name),
            start,
            parent,
            chain: Chain::new(),
            extras: core::sync::atomic::AtomicPtr::new(
                extras.map_or(core::ptr::null_mut(), NonNull::as_ptr),
            ),
            #[cfg(feature = "tracy")]
            profiler: ProfilerNames::of(name, parent),
        }
    }

    /// A slot scope's record: no parent, no extras, and (with `tracy`) the profiler
    /// pool named by the slot set `set` and the holder's name (or the slot's `index`).
    #[inline]
    #[cfg_attr(not(feature = "tracy"), allow(unused_variables))]
    pub(crate) fn new_slot(name: &str, start: usize, set: &str, index: usize) -> ScopeInfo {
        ScopeInfo {
            name: NonNull::from(name),
            start,
            parent: None,
            chain: Chain::new(),
            extras: core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()),
            #[cfg(feature = "tracy")]
            profiler: ProfilerNames::slot(set, index, name),
        }
    }

    /// The record of the concurrent scope a slot is loaded through (its parent is
    /// the slot's record): as [`ScopeInfo::new`], but (with `tracy`) it shows in the
    /// slot's profiler pool instead of a pool of its own, so the slot's name is not
    /// repeated (`levels/canyon/Pool<Enemy>`, not `levels/canyon/canyon/Pool<Enemy>`).
    #[cfg(feature = "tracy")]
    #[inline]
    pub(crate) fn new_in_slot(
        name: &str,
        start: usize,
        parent: Option<NonNull<ScopeInfo>>,
        extras: Option<NonNull<Extras>>,
    ) -> ScopeInfo {
        ScopeInfo {
            name: NonNull::from(name),
            start,
            parent,
            chain: Chain::new(),
            extras: core::sync::atomic::AtomicPtr::new(
                extras.map_or(core::ptr::null_mut(), NonNull::as_ptr),
            ),
            profiler: ProfilerNames::within(parent),
        }
    }

    /// Writes this scope's path as the profiler names it (`systems/level`,
    /// `levels/forest`), whether or not the scope is shown: a pool that opens in a
    /// scope that opened before the profiler connected is named by its full path.
    #[cfg(feature = "tracy")]
    pub(crate) fn write_profiler_path(&self, text: &mut crate::profiler::names::Text) {
        use core::fmt::Write;
        let names = self.profiler;
        // SAFETY: a parent record outlives its children (the scopes nest).
        let parent = self.parent.map(|p| unsafe { p.as_ref() });
        if let Some(pool) = names.pool {
            let _ = text.write_str(pool.text());
        } else if !names.owns {
            if let Some(p) = parent {
                p.write_profiler_path(text);
            }
        } else if let Some((set, index)) = names.slot {
            // SAFETY: the set's name lives in the carving scope, which outlives the
            // slot (see `ProfilerNames::slot`).
            slot_path(text, unsafe { set.as_ref() }, index, self.name());
        } else {
            if let Some(p) = parent {
                p.write_profiler_path(text);
                let _ = text.write_str("/");
            }
            let _ = text.write_str(self.name());
        }
    }

    /// The extras, if the scope has any.
    #[inline]
    fn extras(&self) -> Option<&Extras> {
        let e = self.extras.load(core::sync::atomic::Ordering::Acquire);
        // SAFETY: `extras` points into the frame of this scope's call or into its own
        // memory, both valid for as long as this record is.
        (!e.is_null()).then(|| unsafe { &*e })
    }

    /// Whether the scope has extras yet (a pool registering first carves them).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn has_extras(&self) -> bool {
        !self
            .extras
            .load(core::sync::atomic::Ordering::Relaxed)
            .is_null()
    }

    /// Installs extras carved from this scope's memory.
    ///
    /// # Safety
    /// The scope has none yet, and `extras` stays valid until the scope ends.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) unsafe fn set_extras(&self, extras: NonNull<Extras>) {
        debug_assert!(!self.has_extras());
        // Release: a report on another thread (a slot's contents) that loads the
        // pointer sees the extras' fields.
        self.extras
            .store(extras.as_ptr(), core::sync::atomic::Ordering::Release);
    }

    /// The byte budget given by `scope_with_budget`, if any.
    #[inline]
    pub(crate) fn budget(&self) -> Option<usize> {
        self.extras()
            .and_then(|e| (e.budget != usize::MAX).then_some(e.budget))
    }

    /// The budget that sets this scope's limit itself: `None` when it has no budget,
    /// or its budget was clamped to the parent's room (the parent's limit binds).
    #[inline]
    pub(crate) fn own_budget_binding(&self) -> Option<usize> {
        self.extras()
            .filter(|e| !e.clamped)
            .and_then(|e| (e.budget != usize::MAX).then_some(e.budget))
    }

    /// A concurrent scope's shared state (see [`Extras::with_detail`]).
    pub(crate) fn detail(&self) -> Option<NonNull<()>> {
        self.extras().and_then(|e| e.detail)
    }

    /// The newest pool registered with this scope.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn pools(&self) -> Option<NonNull<PoolLink>> {
        self.extras()
            .and_then(|e| NonNull::new(e.pools.load(core::sync::atomic::Ordering::Acquire)))
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
    /// Whether `high_water_len` is exact (else it is an upper bound).
    pub(crate) high_water_exact: bool,
    /// Address of the pool's storage (slots and side tables). When the first array is
    /// of a zero-sized type this is a dangling address outside the block; the report
    /// then places the pool at `PoolLink::ptr`.
    pub(crate) addr: usize,
    /// Bytes of that storage.
    pub(crate) bytes: usize,
    /// The address in `ptr` of another link of this scope whose container this one
    /// owns (a store's versions pool), so a report can nest it under its owner. It is
    /// here, not in the link, to keep links small: a scope with little room left still
    /// fits one.
    pub(crate) owns: Option<usize>,
    /// A heap's own figures (its `len`, `capacity` and `high_water_len` are bytes).
    pub(crate) heap: Option<HeapNumbers>,
}

/// What a heap adds to its [`PoolSnapshot`].
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(crate) struct HeapNumbers {
    /// Live allocations.
    pub(crate) live: usize,
    /// Bytes in free blocks, headers included.
    pub(crate) free: usize,
    /// How many free blocks there are (one when nothing is fragmented).
    pub(crate) free_blocks: usize,
    /// The payload of the largest free block.
    pub(crate) largest_free: usize,
}

/// The [`PoolLink::kind`] of a level's archived bytes read in place (feature `rkyv`,
/// `crate::inplace`): a row of its own in the map, listed before what the level's build
/// step carved after it.
#[cfg_attr(not(feature = "rkyv"), allow(dead_code))]
pub(crate) const ARCHIVE_KIND: &str = "Archive";

/// A node in a scope's list of pools, stored in scope memory next to the pool.
///
/// It holds copies of what a report needs plus a pointer into the pool's side tables,
/// never a pointer to the pool object itself: the caller may hold `&mut` to that object
/// while a report is taken, and reading it then would break Rust's aliasing rules.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub struct PoolLink {
    /// Pool-defined: memory the pool shares with the report (scope memory that the pool
    /// itself only reaches through raw pointers). Reports use it to place a pool whose
    /// storage address is dangling (see `PoolSnapshot::addr`), so it should point into
    /// the block, at memory carved together with the pool's storage.
    pub(crate) ptr: NonNull<u8>,
    /// Pool-defined words (sizes, counts).
    pub(crate) words: [usize; 5],
    /// `"Pool"`, `"DensePool"`, `"Store"`, `"Heap"`, `"Slots"` or [`ARCHIVE_KIND`].
    pub(crate) kind: &'static str,
    /// The element type's name.
    pub(crate) type_name: &'static str,
    /// Computes the statistics from this link.
    pub(crate) snapshot: unsafe fn(&PoolLink) -> PoolSnapshot,
    /// The pool registered before this one.
    pub(crate) next: Option<NonNull<PoolLink>>,
}

impl ScopeInfo {
    /// Links a pool's record into this scope's list. Does nothing if the scope has no
    /// extras (the caller carves them first; see `ScopeStack::register_pool`).
    ///
    /// # Safety
    /// `link` lives in this scope's memory (or longer), and its pool stays valid (and
    /// readable by `snapshot`) until the scope ends.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) unsafe fn add_pool(&self, link: NonNull<PoolLink>) {
        use core::sync::atomic::Ordering;
        if let Some(extras) = self.extras() {
            let mut head = extras.pools.load(Ordering::Relaxed);
            loop {
                // SAFETY: per the caller, `link` is valid for writes and not yet shared.
                unsafe { (*link.as_ptr()).next = NonNull::new(head) };
                // Release: a report that loads the new head (acquire) sees the link's
                // fields.
                match extras.pools.compare_exchange_weak(
                    head,
                    link.as_ptr(),
                    Ordering::Release,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break,
                    Err(now) => head = now,
                }
            }
        }
    }
}

/// The block's list of live scopes: the block keeps the innermost record's address,
/// this layer knows its type.
impl LinearAllocator {
    /// The innermost live scope's record.
    #[inline]
    pub(crate) fn innermost(&self) -> Option<NonNull<ScopeInfo>> {
        self.innermost_raw().map(NonNull::cast)
    }

    /// Makes `info` the innermost live scope's record (on open, and back on close).
    #[inline]
    pub(crate) fn set_innermost(&self, info: Option<NonNull<ScopeInfo>>) {
        self.set_innermost_raw(info.map(NonNull::cast));
    }

    /// Calls `f` for every live scope, innermost first, with the bytes it holds itself
    /// (from its start to the next scope's start, or to the bump pointer).
    ///
    /// Addresses are read through `counted_to`, so a reservation's unused room is no
    /// scope's own, and a scope opened above a live reservation (by the iterator that
    /// `alloc_iter` collects, say) owns what it allocated.
    pub(crate) fn for_each_live_scope(&self, mut f: impl FnMut(&ScopeInfo, usize)) {
        let mut upper = self.counted_to(self.active_cursor().cur());
        let mut at = self.innermost();
        while let Some(p) = at {
            // SAFETY: `innermost` and the `parent` links point at live scopes' records
            // (see `crate::scope::info`).
            let info = unsafe { p.as_ref() };
            let start = self.counted_to(info.start);
            f(info, upper.saturating_sub(start));
            upper = start;
            at = info.parent;
        }
    }

    /// The live scope holding the most bytes of its own, and how many.
    pub(crate) fn largest_scope(&self) -> Option<(&str, usize)> {
        let mut best: Option<(&str, usize)> = None;
        self.for_each_live_scope(|info, own| {
            if best.is_none_or(|(_, b)| own > b) {
                // SAFETY: the name outlives the scope, which outlives this call.
                best = Some((unsafe { &*core::ptr::from_ref(info.name()) }, own));
            }
        });
        best
    }
}
