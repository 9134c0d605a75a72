//! Concurrent scopes: many threads allocate into one scope at once, each at bump speed.
//!
//! This module owns a concurrent scope's lifecycle: it carves the scope's region from
//! the parent, lends `&ConcurrentScope` to a closure that may share it with any number
//! of threads, and when the closure returns (or panics) runs every finalizer exactly
//! once on the closing thread and rewinds the region in one step. The invariant it
//! keeps: nothing a concurrent scope hands out outlives the closure, and no two threads
//! ever bump the same pointer without an atomic read-modify-write.
//!
//! # How it works
//!
//! The scope owns a *region*: the rest of the parent's room, or its budget. At its
//! start it carves a table of per-thread *slots* (128 bytes each, one per dense thread
//! index, see `crate::thread_index`). A thread's first allocation claims a *chunk* of
//! the region with one compare-exchange and bumps through it with plain loads and
//! stores; a full chunk claims the next. Requests larger than a quarter of a chunk are
//! claimed straight from the region. A thread whose index is shared (more live threads
//! than slots, or a thread that is exiting) has no slot: each of its allocations is a
//! compare-exchange on the region, and its finalizers are pushed onto a lock-free
//! overflow chain. Only the thread that holds an index exclusively touches that slot, so
//! the fast path has no atomic read-modify-write (see `region`).
//!
//! A thread's first call into any concurrent scope or pool takes its dense index. A
//! thread spawned right after others finished may wait for their indices, up to 5 ms
//! (see [`Pool::home_shard`](crate::Pool::home_shard)): on a 16-core machine, 16
//! threads spawned afresh for each round of 20,000 allocations each waited about
//! 1.3 ms per round on their first allocation (`docs/PERFORMANCE.md`). Long-lived
//! workers (rayon's) pay it once. A thread spawned for a frame should call
//! [`local`](ConcurrentScope::local) when it starts, before its latency-critical work.
//!
//! # Soundness
//!
//! - **Lifetimes keep every thread inside the closure.** The closure receives
//!   `&'c ConcurrentScope<'env>` with a higher-ranked `'c`; everything placed is
//!   `&'c mut T`. A thread that uses the scope must have been joined before the closure
//!   returns (`std::thread::scope`, rayon), and that join orders all its writes before
//!   the close. The parent is borrowed mutably meanwhile, so it allocates nothing.
//! - **Finalizers may run on another thread**, so a value that gets one must be
//!   `Send + 'static` ([`ConcurrentScope::new_object`]). Values that need no drop may
//!   borrow anything that outlives the closure (`'env`).
//! - **Order.** Each thread's values are destroyed in reverse order of construction.
//!   Across threads: first the overflow chain (slot-less threads, newest first), then
//!   the slots in ascending thread index, each newest first. Values of different
//!   threads are otherwise in no promised order. A panicking destructor skips no other.
//!
//! A reference cannot leave the closure:
//!
//! ```compile_fail,E0521
//! use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("level", |level| {
//!     let mut escaped: Option<&mut u32> = None;
//!     level.scope_concurrent("jobs", |jobs| escaped = Some(jobs.new_pod(1u32)));
//!     drop(escaped);
//! });
//! ```
//!
//! Nor can the scope be given to a thread that may outlive it:
//!
//! ```compile_fail,E0521
//! use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("level", |level| {
//!     level.scope_concurrent("jobs", |jobs| {
//!         std::thread::spawn(move || *jobs.new_pod(1u32));
//!     });
//! });
//! ```
//!
//! A value whose destructor could not run on another thread is refused:
//!
//! ```compile_fail,E0277
//! use scope_stack::LinearAllocator;
//! let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
//! memory.scope("level", |level| {
//!     level.scope_concurrent("jobs", |jobs| {
//!         jobs.new_object(std::rc::Rc::new(5u32));
//!     });
//! });
//! ```

mod alloc_api;
mod builders;
mod forward;
mod local;
pub(crate) mod region;
pub(crate) mod shared;
mod slices;
mod surface;

use core::marker::PhantomData;
use core::ptr::{self, NonNull};

use crate::block::cursor::Cursor;
use crate::block::linear::LinearAllocator;
use crate::block::reservation::SavedGaps;
use crate::error::AllocErrorKind;
use crate::scope::info::{Extras, ScopeInfo};
use crate::scope::{NotThreadSafe, ScopeStack};

pub use local::LocalScope;
use region::{Region, Slot, SLOT_BYTES};
pub(crate) use shared::Inner;

/// How a concurrent scope is laid out: its budget, chunk size and slot count.
///
/// ```
/// use scope_stack::{ConcurrentConfig, LinearAllocator};
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
/// memory.scope("frame", |frame| {
///     let config = ConcurrentConfig::new().budget(256 << 10).chunk_size(8 << 10).threads(8);
///     frame.scope_concurrent_with("jobs", config, |jobs| {
///         assert!(jobs.remaining() <= 256 << 10);
///     });
/// });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConcurrentConfig {
    /// Bytes the scope may take from its parent (`None`: all the parent has left; a
    /// budget above that is clamped to it).
    pub budget: Option<usize>,
    /// Bytes a thread claims at a time. Smaller when the region is small (see
    /// [`chunk_size`](Self::chunk_size)).
    pub chunk_size: usize,
    /// Per-thread slots: threads whose index is below this bump without atomics; the
    /// others take a slower shared path.
    pub threads: usize,
}

/// The chunk size used when none is given.
pub const DEFAULT_CHUNK_SIZE: usize = 16 << 10;
/// The slot count used when none is given: thread indices `0..32` get a slot.
pub const DEFAULT_THREADS: usize = 32;
/// The smallest chunk a scope uses.
const MIN_CHUNK: usize = 256;

impl ConcurrentConfig {
    /// No budget, [`DEFAULT_CHUNK_SIZE`], [`DEFAULT_THREADS`].
    ///
    /// ```
    /// # use scope_stack::ConcurrentConfig;
    /// assert_eq!(ConcurrentConfig::new().budget, None);
    /// ```
    pub const fn new() -> ConcurrentConfig {
        ConcurrentConfig {
            budget: None,
            chunk_size: DEFAULT_CHUNK_SIZE,
            threads: DEFAULT_THREADS,
        }
    }

    /// Caps the region at `bytes`.
    ///
    /// ```
    /// # use scope_stack::ConcurrentConfig;
    /// assert_eq!(ConcurrentConfig::new().budget(4096).budget, Some(4096));
    /// ```
    pub const fn budget(mut self, bytes: usize) -> ConcurrentConfig {
        self.budget = Some(bytes);
        self
    }

    /// Sets the bytes a thread claims at a time. The scope uses at most this, and less
    /// when the region is small: at most a quarter of the region per slot, and never
    /// below 256 bytes.
    ///
    /// ```
    /// # use scope_stack::ConcurrentConfig;
    /// assert_eq!(ConcurrentConfig::new().chunk_size(4096).chunk_size, 4096);
    /// ```
    pub const fn chunk_size(mut self, bytes: usize) -> ConcurrentConfig {
        self.chunk_size = bytes;
        self
    }

    /// Sets the number of per-thread slots (128 bytes each, carved from the region; at
    /// most a quarter of the region is used for them).
    ///
    /// ```
    /// # use scope_stack::ConcurrentConfig;
    /// assert_eq!(ConcurrentConfig::new().threads(4).threads, 4);
    /// ```
    pub const fn threads(mut self, slots: usize) -> ConcurrentConfig {
        self.threads = slots;
        self
    }
}

impl Default for ConcurrentConfig {
    fn default() -> Self {
        ConcurrentConfig::new()
    }
}

/// A scope that any number of threads allocate into at once.
///
/// Open one with [`ScopeStack::scope_concurrent`]. Share `&ConcurrentScope` with worker
/// threads (`std::thread::scope`, rayon): everything they place lives until the
/// closure returns, so a worker's output can be handed back through the join and read
/// by the opening thread. Each thread bumps through a chunk of its own, without atomic
/// read-modify-writes; [`local`](Self::local) skips even the thread look-up.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
/// memory.scope("frame", |frame| {
///     let total = frame.scope_concurrent("jobs", |jobs| {
///         let lists: Vec<&[u32]> = std::thread::scope(|t| {
///             let handles: Vec<_> = (0..4u32)
///                 .map(|w| t.spawn(move || &*jobs.alloc_slice_fill_with(100, |i| w + i as u32)))
///                 .collect();
///             handles.into_iter().map(|h| h.join().unwrap()).collect()
///         });
///         lists.iter().map(|l| l.iter().sum::<u32>()).sum::<u32>()
///     });
///     assert_eq!(total, 4 * 4950 + 100 * (0 + 1 + 2 + 3));
/// });
/// ```
pub struct ConcurrentScope<'env> {
    pub(crate) inner: Inner,
    _env: PhantomData<fn(&'env ()) -> &'env ()>,
}

// SAFETY: every field that threads write is an atomic (the region's `next`, the
// overflow chain, a slot's `cur` and `chunks`) or belongs to one thread at a time (a
// slot's other fields: see `region`'s invariants). The rest is read-only while the
// scope is open. Values placed need no `Send` to be placed: they stay with the thread
// that holds their reference, and those that get a finalizer must be `Send`.
unsafe impl Sync for ConcurrentScope<'_> {}
// SAFETY: as above; the scope holds nothing tied to the thread that opened it.
unsafe impl Send for ConcurrentScope<'_> {}

// SAFETY: these impls never apply: `*mut T` is never `Send` or `Sync` (see
// `NotThreadSafe`), so a `LocalScope` stays on its thread, as its `PhantomData<*const
// ()>` field would keep it. They make the compiler name `NotThreadSafe` in the error.
unsafe impl<'a> Send for LocalScope<'a> where *mut NotThreadSafe<'a>: Send {}
// SAFETY: as above.
unsafe impl<'a> Sync for LocalScope<'a> where *mut NotThreadSafe<'a>: Sync {}

impl<'env> ConcurrentScope<'env> {
    /// The name this scope was opened with.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |f| f.scope_concurrent("jobs", |jobs| assert_eq!(jobs.name(), "jobs")));
    /// ```
    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// A handle for the calling thread that skips the thread look-up on every call. It
    /// cannot leave the thread (it is neither `Send` nor `Sync`). Several handles, and
    /// calls on `&ConcurrentScope`, may be mixed on one thread.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("frame", |frame| {
    ///     frame.scope_concurrent("jobs", |jobs| {
    ///         std::thread::scope(|t| {
    ///             t.spawn(|| {
    ///                 let here = jobs.local();
    ///                 let xs: Vec<&mut u64> = (0..100).map(|i| here.new_pod(i)).collect();
    ///                 assert_eq!(*xs[99], 99);
    ///             });
    ///         });
    ///     });
    /// });
    /// ```
    #[inline(always)]
    pub fn local(&self) -> LocalScope<'_> {
        let (slot, _index) = self.inner.slot_here();
        LocalScope::new(&self.inner, slot)
    }

    /// Bytes this thread may still allocate: what is left of its chunk plus what no
    /// thread has claimed from the region yet. Other threads take from the same region,
    /// so the figure can drop at any time.
    ///
    /// ```
    /// # use scope_stack::{ConcurrentConfig, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("frame", |frame| {
    ///     frame.scope_concurrent_with_budget("jobs", 64 << 10, |jobs| {
    ///         assert!(jobs.remaining() <= 64 << 10);
    ///         let before = jobs.remaining();
    ///         jobs.new_pod(0u64);
    ///         assert!(jobs.remaining() < before);
    ///     });
    /// });
    /// ```
    pub fn remaining(&self) -> usize {
        self.local().remaining()
    }

    /// The budget the scope was opened with, if any, clamped to the room its parent
    /// had left (see [`ScopeStack::scope_concurrent_with_budget`]).
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("frame", |frame| {
    ///     frame.scope_concurrent_with_budget("jobs", 4096, |jobs| assert_eq!(jobs.budget(), Some(4096)));
    /// });
    /// ```
    pub fn budget(&self) -> Option<usize> {
        self.inner.budget
    }
}

impl core::fmt::Debug for ConcurrentScope<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ConcurrentScope")
            .field("name", &self.name())
            .field("threads", &self.inner.slot_count)
            .field("chunk_size", &self.inner.chunk_size)
            .field("unclaimed", &self.inner.region.unclaimed())
            .finish()
    }
}

/// Closes a concurrent scope, even while its closure (or a destructor) panics: runs
/// every finalizer chain, then rewinds the block and unlinks the record.
struct Close<'a> {
    alloc: &'a LinearAllocator,
    cursor: &'a Cursor,
    inner: &'a Inner,
    /// The parent's reservation bound, to restore.
    outer_reserved: SavedGaps,
    parent: Option<NonNull<ScopeInfo>>,
}

impl Drop for Close<'_> {
    fn drop(&mut self) {
        /// The rewind half, so it also runs when a finalizer panics.
        struct Rewind<'b>(&'b Close<'b>);
        impl Drop for Rewind<'_> {
            fn drop(&mut self) {
                let c = self.0;
                let reserved_to = c.cursor.cur();
                // Count the region's peak (what was claimed) as the block's use, then
                // rewind to where the scope began.
                let top = c.inner.region.top().max(c.inner.start);
                c.alloc
                    .end_reservation(c.cursor, reserved_to, top, c.outer_reserved);
                #[cfg(feature = "debug-fill")]
                crate::block::debug_fill::released(c.cursor, c.inner.start);
                c.alloc.rewind(c.cursor, c.inner.start);
                c.alloc.set_innermost(c.parent);
                // SAFETY: the record lives in the frame (or slot) of the opening call,
                // which outlives this close.
                #[cfg(feature = "tracy")]
                unsafe { c.inner.info.get().as_ref() }
                    .profiler
                    .close(c.alloc);
            }
        }
        /// Runs the chains after the one that panicked.
        struct RunRest<'b>(&'b Inner, usize);
        impl Drop for RunRest<'_> {
            fn drop(&mut self) {
                run_chains(self.0, self.1);
            }
        }
        fn run_chains(inner: &Inner, from: usize) {
            // Chain 0 is the overflow chain; chain `i + 1` is slot `i`'s.
            for i in from..=inner.slot_count {
                let rest = RunRest(inner, i + 1);
                if i == 0 {
                    // SAFETY: the scope is ending and every thread that used it was
                    // joined (module docs); nothing uses the values again.
                    unsafe { inner.region.overflow.run_all() };
                } else {
                    // SAFETY: as above; the closing thread owns every slot now.
                    unsafe { inner.slots().nth(i - 1).unwrap().chain.run_all() };
                }
                core::mem::forget(rest);
            }
        }
        let _rewind = Rewind(self);
        run_chains(self.inner, 0);
    }
}

impl<'p> ScopeStack<'p> {
    /// Opens a scope that any number of threads may allocate into at once, runs `f`
    /// with it, and closes it: every finalizer runs on this thread (each thread's
    /// values in reverse order of construction) and the region rewinds in one step.
    ///
    /// The scope takes all the room this scope has left (see
    /// [`scope_concurrent_with_budget`](Self::scope_concurrent_with_budget) to cap it);
    /// this scope is borrowed mutably until `f` returns. See [`ConcurrentScope`].
    ///
    /// # Panics
    /// When this scope may not allocate (a scratch scope interrupts it).
    ///
    /// ```
    /// use scope_stack::LinearAllocator;
    ///
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("level", |level| {
    ///     let names = level.scope_concurrent("load", |load| {
    ///         let parts: Vec<&str> = std::thread::scope(|t| {
    ///             let a = t.spawn(|| &*load.alloc_fmt(format_args!("mesh-{}", 1)));
    ///             let b = t.spawn(|| &*load.alloc_str("texture"));
    ///             vec![a.join().unwrap(), b.join().unwrap()]
    ///         });
    ///         parts.join("+")
    ///     });
    ///     assert_eq!(names, "mesh-1+texture");
    /// });
    /// ```
    #[track_caller]
    pub fn scope_concurrent<'env, R>(
        &mut self,
        name: &str,
        f: impl for<'c> FnOnce(&'c ConcurrentScope<'env>) -> R,
    ) -> R {
        self.scope_concurrent_with(name, ConcurrentConfig::new(), f)
    }

    /// [`scope_concurrent`](Self::scope_concurrent) with a byte budget: the region is
    /// at most `bytes` long, and going over is an
    /// [`AllocErrorKind::BudgetExceeded`] error naming the scope and its budget.
    ///
    /// A budget larger than the room this scope has left is clamped to that room, as
    /// for [`scope_with_budget`](Self::scope_with_budget):
    /// [`ConcurrentScope::budget`] reports the clamped figure, and running out is an
    /// error of what really ends the room (the block, or an outer budget).
    ///
    /// On a scratch arena ([`crate::scratch()`]) a budget also leaves the room above
    /// the region to the opening thread: its nested `scratch()` calls, and the
    /// scope's finalizers (which run on it), allocate there while the scope is open.
    /// Without a budget the region takes the whole rest of the arena, and they get
    /// nothing (an out-of-memory error that names this scope as the largest).
    ///
    /// # Panics
    /// As [`scope_concurrent`](Self::scope_concurrent).
    ///
    /// ```
    /// # use scope_stack::{AllocErrorKind, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("frame", |frame| {
    ///     frame.scope_concurrent_with_budget("jobs", 8192, |jobs| {
    ///         let err = jobs.try_alloc_slice_copy(&[0u8; 10_000]).unwrap_err();
    ///         assert_eq!(err.kind(), AllocErrorKind::BudgetExceeded);
    ///         assert!(err.to_string().contains("\"jobs\""));
    ///     });
    ///     let room = frame.remaining();
    ///     frame.scope_concurrent_with_budget("all", usize::MAX, |all| {
    ///         assert_eq!(all.budget(), Some(room)); // clamped to the parent's room
    ///     });
    /// });
    /// ```
    #[track_caller]
    pub fn scope_concurrent_with_budget<'env, R>(
        &mut self,
        name: &str,
        bytes: usize,
        f: impl for<'c> FnOnce(&'c ConcurrentScope<'env>) -> R,
    ) -> R {
        self.scope_concurrent_with(name, ConcurrentConfig::new().budget(bytes), f)
    }

    /// [`scope_concurrent`](Self::scope_concurrent) with a budget, chunk size and slot
    /// count of your choice ([`ConcurrentConfig`]).
    ///
    /// # Panics
    /// As [`scope_concurrent`](Self::scope_concurrent).
    ///
    /// ```
    /// # use scope_stack::{ConcurrentConfig, LinearAllocator};
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("frame", |frame| {
    ///     let config = ConcurrentConfig::new().chunk_size(1024).threads(4);
    ///     frame.scope_concurrent_with("jobs", config, |jobs| *jobs.new_pod(7u8));
    /// });
    /// ```
    #[track_caller]
    pub fn scope_concurrent_with<'env, R>(
        &mut self,
        name: &str,
        config: ConcurrentConfig,
        f: impl for<'c> FnOnce(&'c ConcurrentScope<'env>) -> R,
    ) -> R {
        let alloc = self.allocator();
        let cursor = self.cursor();
        if cursor.is_suspended() {
            self.fail(self.error(AllocErrorKind::NotInnermost, 0, 1));
        }
        // Who sets the region's end when a budget of this scope does not: a budgeted
        // parent (its name and budget go into errors), or the block.
        let limit_by = if config
            .budget
            .is_some_and(|b| b < cursor.limit() - cursor.cur())
        {
            None
        } else {
            self.binding_budget(cursor.limit())
                .map(|(info, b)| (NonNull::from(info.name()), b))
        };
        let (inner, end, limit) = lay_out(alloc, cursor, name, config, limit_by);
        let start = inner.start;
        let budget = inner.budget;
        let room = limit - start;
        let shared = ConcurrentScope {
            inner,
            _env: PhantomData,
        };
        let extras = Extras::with_detail(budget, NonNull::from(&shared.inner).cast())
            .clamped(config.budget.is_some_and(|b| b > room));
        let parent = alloc.innermost();
        let info = ScopeInfo::new(name, start, parent, Some(NonNull::from(&extras)));
        // A `Cell`: the record's `detail` already points at `shared.inner`.
        shared.inner.info.set(NonNull::from(&info));
        // The region is taken: the parent's cursor stands at its end (so a scope
        // nested on this block later, a scratch scope of this thread, starts above it),
        // and the block's counters leave it out until the close counts its peak. The
        // cursor's limit goes back to the parent's at once: the parent is borrowed and
        // allocates nothing, so the room above a budgeted region is left to scopes
        // nested on the block (this thread's scratch, this scope's finalizers).
        cursor.set_limit(end);
        let outer_reserved = alloc.begin_reservation(cursor);
        cursor.set_limit(limit);
        alloc.set_innermost(Some(NonNull::from(&info)));
        let _close = Close {
            alloc,
            cursor,
            inner: &shared.inner,
            outer_reserved,
            parent,
        };
        f(&shared)
    }
}

/// Lays out a concurrent scope on `cursor`'s free room: the slot table at its start and
/// the region after it. Returns the shared state, the region's end and the cursor's
/// limit before the scope (the caller lowers it to the end when a budget binds).
fn lay_out(
    alloc: &LinearAllocator,
    cursor: &Cursor,
    name: &str,
    config: ConcurrentConfig,
    limit_by: Option<(NonNull<str>, usize)>,
) -> (Inner, usize, usize) {
    let start = cursor.cur();
    let limit = cursor.limit();
    // A budget over the parent's room is clamped to it, as for every scope kind (see
    // `ScopeStack::scope_with_budget`).
    let room = limit - start;
    let budget = config.budget.map(|b| b.min(room));
    let budget_binds = config.budget.is_some_and(|b| b < room);
    let end = match config.budget {
        Some(b) if b < room => start + b,
        _ => limit,
    };
    // The slot table: aligned to its slots, at most a quarter of the region.
    let table = ((start + (SLOT_BYTES - 1)) & !(SLOT_BYTES - 1)).min(end);
    let slot_count = config.threads.min((end - table) / (4 * SLOT_BYTES));
    let slots = cursor.ptr_at(table).cast::<Slot>();
    for i in 0..slot_count {
        // SAFETY: the table lies in the region, which is this scope's alone, and
        // is aligned for `Slot`.
        unsafe { slots.add(i).as_ptr().write(Slot::new()) };
    }
    let claim_from = table + slot_count * SLOT_BYTES;
    let chunk_size = config
        .chunk_size
        .min((end - claim_from) / (4 * slot_count.max(1)))
        .max(MIN_CHUNK)
        & !63;
    let inner = Inner {
        base: cursor.ptr_at(start),
        slots,
        slot_count,
        region: Region::new(claim_from, end),
        idle: Slot::new(),
        chunk_size,
        large: chunk_size / 4,
        name: NonNull::from(name),
        budget,
        budget_binds,
        limit_by: if budget_binds { None } else { limit_by },
        capacity: alloc.capacity(),
        start,
        block_start: start - alloc.offset_of(start),
        high_water_at_open: alloc.high_water_mark(),
        // Set by the caller, once the record has its address.
        info: core::cell::Cell::new(NonNull::dangling()),
        map_printed: core::sync::atomic::AtomicBool::new(false),
    };
    (inner, end, limit)
}

/// A concurrent scope whose close is left to the code that opened it, for scopes that
/// outlive the opening call (a loaded slot's, see `crate::slots`). The scope, its
/// record and what its close needs live together wherever the opener put this value.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub(crate) struct Detached<'env> {
    /// The scope lent to the builders.
    pub(crate) scope: ConcurrentScope<'env>,
    extras: Extras,
    info: ScopeInfo,
    outer_reserved: SavedGaps,
    parent: Option<NonNull<ScopeInfo>>,
}

#[cfg_attr(not(feature = "std"), allow(dead_code))]
impl<'env> Detached<'env> {
    /// Opens a concurrent scope on `cursor`'s free room (up to its limit) and writes it
    /// to `at`, linking its record as the block's innermost scope. Its record is a
    /// slot's (`ScopeInfo::new_in_slot`): with `tracy` it shows in the slot's pool.
    ///
    /// # Safety
    /// `cursor` belongs to `alloc` and is not suspended; `at` is valid for writes,
    /// lies below the cursor's bump pointer, and stays put until
    /// [`close`](Self::close); `name` outlives it; nothing else allocates on `cursor`
    /// or opens scopes on `alloc` until the close.
    pub(crate) unsafe fn open(
        alloc: &LinearAllocator,
        cursor: &Cursor,
        name: &str,
        config: ConcurrentConfig,
        at: NonNull<Detached<'env>>,
    ) {
        let (inner, end, limit) = lay_out(alloc, cursor, name, config, None);
        let start = inner.start;
        let budget = inner.budget;
        let d = at.as_ptr();
        let parent = alloc.innermost();
        // SAFETY: `at` is valid for writes (caller); each field is written once, and
        // the pointers taken point into `*at`, which stays put until the close.
        unsafe {
            ptr::addr_of_mut!((*d).scope).write(ConcurrentScope {
                inner,
                _env: PhantomData,
            });
            let inner = NonNull::new_unchecked(ptr::addr_of_mut!((*d).scope.inner));
            ptr::addr_of_mut!((*d).extras).write(Extras::with_detail(budget, inner.cast()));
            let extras = NonNull::new_unchecked(ptr::addr_of_mut!((*d).extras));
            #[cfg(not(feature = "tracy"))]
            let info = ScopeInfo::new(name, start, parent, Some(extras));
            #[cfg(feature = "tracy")]
            let info = ScopeInfo::new_in_slot(name, start, parent, Some(extras));
            ptr::addr_of_mut!((*d).info).write(info);
            let info = NonNull::new_unchecked(ptr::addr_of_mut!((*d).info));
            (*d).scope.inner.info.set(info);
            // As in `scope_concurrent_with`: the cursor stands at the region's end and
            // its limit goes back at once.
            cursor.set_limit(end);
            ptr::addr_of_mut!((*d).outer_reserved).write(alloc.begin_reservation(cursor));
            cursor.set_limit(limit);
            ptr::addr_of_mut!((*d).parent).write(parent);
            alloc.set_innermost(Some(info));
        }
    }

    /// Closes the scope: runs every finalizer chain (a panicking destructor skips no
    /// other), rewinds `cursor` to where the scope began and unlinks its record.
    ///
    /// # Safety
    /// `self` was opened with [`open`](Self::open) on `alloc` and `cursor`, is closed
    /// once, and every thread that used the scope is done with it (joined, or its
    /// borrow ended before the caller got exclusive access).
    pub(crate) unsafe fn close(&self, alloc: &LinearAllocator, cursor: &Cursor) {
        drop(Close {
            alloc,
            cursor,
            inner: &self.scope.inner,
            outer_reserved: self.outer_reserved,
            parent: self.parent,
        });
    }
}
