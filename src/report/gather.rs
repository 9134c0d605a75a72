//! Gathering a report's rows from a live block: each scope's containers (pools,
//! dense pools, stores), its `Slots` with a row per slot, and what each loaded slot
//! holds, which nests the same rows one level down.
//!
//! Invariant: everything is read through the report records the containers registered
//! (see `crate::scope::info::PoolLink`) and the atomics behind them, never through a
//! container object the caller may hold `&mut` to; a loaded slot's contents only under
//! its read pin (see `crate::slots::table`).
//!
//! Premises, as this module's callers may be on another thread than the block's owner
//! (a `MapHandle`, a concurrent scope's report; the full list is in `super::handle`):
//! - a scope record and its parents are live and unchanged while the report runs;
//! - a container may be used from any thread during the report (it was made before
//!   the watched scope opened, or is `Sync`), so only its atomics are read, and a
//!   heap's row is taken under its lock in one acquisition;
//! - a scope's finalizer chain may still grow while its child is open (a suspended
//!   scratch scope's builders freeze), so [`rows_down_from`] reads a chain only through
//!   its atomic head, never its counters; and never the innermost one for a handle.
use alloc::string::String;
use alloc::vec::Vec;

use crate::scope::info::{PoolLink, PoolSnapshot, ScopeInfo};
use crate::slots::carve::{Slots, SLOTS_KIND};
use crate::slots::table::{SlotView, BUILDING, FREE};
use crate::sync::Ordering;

use super::concurrent::{concurrent_report, ConcurrentReport};
use super::heap_row::HeapReport;
use super::pool_row::PoolReport;
use super::scope_row::{scope_row, ScopeReport};
use super::slots::{SlotReport, SlotState, SlotsReport};
use super::tree::{SLOT, SLOTS};
use super::type_name::short_type_name;

/// The rows of the pools carved from a scope, in the order they were made, and the
/// reports of its `Slots`, whose rows follow the pools'. The set rows and the reports
/// come from one read of each slot, so they agree.
pub(crate) fn pool_rows(
    info: &ScopeInfo,
    capacity: usize,
    block_start: usize,
) -> (Vec<PoolReport>, Vec<SlotsReport>) {
    let mut pools = Vec::new();
    // Each row's link `ptr` (as an address), and the one its snapshot says it owns.
    let mut keys = Vec::new();
    let mut link = info.pools();
    while let Some(l) = link {
        // SAFETY: pool links live in this scope's memory and stay valid while the
        // scope is live (see `ScopeInfo::add_pool`).
        let l = unsafe { l.as_ref() };
        if l.kind == SLOTS_KIND {
            // Listed after the pools, with a row per slot (see `slots_of`).
            link = l.next;
            continue;
        }
        // SAFETY: as above; `snapshot` was registered with this link's pool.
        let p = unsafe { (l.snapshot)(l) };
        let offset = pool_offset(&p, l, capacity, block_start);
        pools.push(PoolReport {
            kind: l.kind,
            type_name: short_type_name(l.type_name),
            full_type_name: l.type_name,
            owner: None,
            len: p.len,
            capacity: p.capacity,
            high_water_len: p.high_water_len,
            high_water_exact: p.high_water_exact,
            offset,
            bytes: row_bytes(&p, l).min(capacity - offset),
            heap: p.heap.map(|h| HeapReport {
                live: h.live,
                free: h.free,
                free_blocks: h.free_blocks,
                largest_free: h.largest_free,
            }),
        });
        keys.push((l.ptr.as_ptr().addr(), p.owns));
        link = l.next;
    }
    pools.reverse();
    keys.reverse();
    for (owner, &(_, owns)) in keys.iter().enumerate() {
        let owned = owns.and_then(|o| keys.iter().position(|&(ptr, _)| ptr == o));
        if let Some(row) = owned.and_then(|i| pools.get_mut(i)) {
            row.owner = Some(owner);
        }
    }
    let sets = slots_of(info, capacity, block_start);
    for set in &sets {
        let first = pools.len();
        pools.extend(slot_pool_rows(set, first));
    }
    (pools, sets)
}

/// The pool-style rows of a `Slots`: one for the set (`kind` `"Slots"`, `len` slots
/// held of `capacity`) and, owned by it, one per slot (`kind` `"Slot"`, `len` bytes
/// used of `capacity` bytes, the holder's name as the type, or the state when it has
/// none: `free`, `building`, `loaded`), so the text and the picture draw the slots
/// nested in their set. `first` is the index the set's row will have.
fn slot_pool_rows(report: &SlotsReport, first: usize) -> Vec<PoolReport> {
    let mut rows = Vec::with_capacity(report.count + 1);
    rows.push(PoolReport {
        kind: SLOTS,
        type_name: report.name.clone(),
        full_type_name: "scope_stack::Slots",
        owner: None,
        len: report.loaded,
        capacity: report.count,
        high_water_len: report.most_loaded,
        high_water_exact: true,
        offset: report.offset,
        bytes: report.stride * report.count,
        heap: None,
    });
    for slot in &report.slots {
        let type_name = match (&slot.holder, slot.state) {
            (Some(name), _) => name.clone(),
            (None, SlotState::Free) => String::from("free"),
            (None, SlotState::Building) => String::from("building"),
            (None, SlotState::Loaded) => String::from("loaded"),
        };
        rows.push(PoolReport {
            kind: SLOT,
            type_name,
            full_type_name: "scope_stack::Slots",
            owner: Some(first),
            len: slot.used,
            capacity: report.bytes_each,
            high_water_len: slot.high_water_mark,
            high_water_exact: true,
            offset: slot.offset,
            bytes: report.bytes_each,
            heap: None,
        });
    }
    rows
}

/// The reports of the [`Slots`](crate::Slots) carved from a scope, in the order made.
fn slots_of(info: &ScopeInfo, capacity: usize, block_start: usize) -> Vec<SlotsReport> {
    let mut out = Vec::new();
    let mut link = info.pools();
    while let Some(l) = link {
        // SAFETY: as in `pool_rows`.
        let l = unsafe { l.as_ref() };
        if l.kind == SLOTS_KIND {
            // SAFETY: a link of this kind was registered by `new_slots`; its scope is
            // live.
            out.push(unsafe { slots_report(l, capacity, block_start) });
        }
        link = l.next;
    }
    out.reverse();
    out
}

/// A row's bytes: the snapshot's, except for a heap, whose region is `capacity`
/// bytes from `addr` and whose `Heap` (at `link.ptr`) is counted with it only where it
/// sits right after the region, as a plain scope places it. On a concurrent scope the
/// `Heap` may land in the thread's chunk, before the region or past other threads'
/// chunks; there the chunk's row already counts it, and the heap's row is its region
/// alone (the snapshot's span from the region to the end of the `Heap` was 0 or took
/// in other rows' bytes).
fn row_bytes(p: &PoolSnapshot, link: &PoolLink) -> usize {
    if p.heap.is_none() {
        return p.bytes;
    }
    let region_end = p.addr.saturating_add(p.capacity);
    let heap = link.ptr.as_ptr().addr();
    let beside = region_end
        .checked_next_multiple_of(align_of::<crate::heap::Heap>())
        .is_some_and(|at| at == heap);
    if beside {
        heap + size_of::<crate::heap::Heap>() - p.addr
    } else {
        p.capacity
    }
}

/// Where a pool's storage begins, as an offset inside the block.
///
/// A pool's storage address is outside the block when its first array holds a
/// zero-sized type: Rust gives such an array a dangling address, since it takes no
/// memory. The pool's side tables (`link.ptr`, scope memory by the contract of
/// `PoolLink`) were carved right after it, so they mark where its bytes begin. If
/// even those are elsewhere, the pool is shown where its link record sits.
fn pool_offset(p: &PoolSnapshot, link: &PoolLink, capacity: usize, block_start: usize) -> usize {
    let inside = |addr: usize| {
        (block_start..=block_start + capacity)
            .contains(&addr)
            .then(|| addr - block_start)
    };
    inside(p.addr)
        .or_else(|| inside(link.ptr.as_ptr().addr()))
        .unwrap_or_else(|| {
            core::ptr::from_ref(link)
                .addr()
                .clamp(block_start, block_start + capacity)
                - block_start
        })
}

/// The report of the `Slots` that `link` names.
///
/// # Safety
/// `link` was registered by `new_slots`, and its scope is live.
unsafe fn slots_report(link: &PoolLink, capacity: usize, block_start: usize) -> SlotsReport {
    // SAFETY: per the caller, `ptr` points at the live `Slots`.
    let slots = unsafe { link.ptr.cast::<Slots>().as_ref() };
    let rows: Vec<SlotReport> = (0..slots.count)
        .map(|i| {
            // SAFETY: `capacity` is the carving block's, and the slots live (caller).
            let pinned = unsafe { slot_contents(slots, i, capacity, block_start) };
            // A slot the report pinned is shown as that one load: its figures were read
            // under the pin, while its holder could not unload it. Otherwise the slot
            // was free, unloading, or in the first steps of a load (before its holder
            // published its fields) when it was looked at, and shows no contents.
            let (view, contents, concurrent) = pinned.unwrap_or_else(|| {
                let mut view = slots.record(i).view();
                if view.state == BUILDING {
                    // A load in its first steps: what the slot's bump pointer says,
                    // read atomically (a sample).
                    view.used = slots.record(i).bump_now();
                }
                (view, Vec::new(), None)
            });
            let state = match view.state {
                FREE => SlotState::Free,
                BUILDING => SlotState::Building,
                _ => SlotState::Loaded,
            };
            SlotReport {
                index: i,
                offset: slots.start_of(i) - block_start,
                state,
                holder: (state != SlotState::Free && view.name_len > 0)
                    .then(|| String::from(view.name())),
                used: view.used,
                high_water_mark: view.high_water,
                loads: view.loads,
                contents,
                concurrent,
            }
        })
        .collect();
    // Counted from the rows, so the set's figure agrees with them even while other
    // threads load and free slots during the report.
    let loaded = rows.iter().filter(|r| r.state != SlotState::Free).count();
    SlotsReport {
        name: String::from(slots.name()),
        offset: slots.region - block_start,
        count: slots.count,
        bytes_each: slots.bytes_each,
        stride: slots.stride,
        loaded,
        // A claim shows in its slot's row before it reaches the counter.
        most_loaded: slots.most_held.load(Ordering::Relaxed).max(loaded),
        waiting: waiting(slots),
        slots: rows,
    }
}

/// Threads and tasks waiting for one of `slots` (see `crate::slots::wait`): a sample.
fn waiting(slots: &Slots) -> usize {
    #[cfg(feature = "std")]
    {
        // Relaxed: a figure for the reader, which orders nothing.
        slots.waiters.load(Ordering::Relaxed) as usize
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = slots;
        0
    }
}

/// What loaded slot `i` holds, or what slot `i` being built holds so far, read under
/// its read pin: the slot's figures, the containers carved in its scope (and in its
/// concurrent scope, for a slot loaded through one), and that concurrent scope's
/// region. For a slot being built, the view's `used` is the bytes placed so far: the
/// slot scope's bump pointer, or what its concurrent scope has claimed (the published
/// figure comes only at the end of the build). `None` while the slot is free,
/// unloading, or its holder has not yet published its fields (see
/// `crate::slots::table`).
///
/// # Safety
/// `slots` are live, carved from a block of `capacity` bytes starting at
/// `block_start`.
unsafe fn slot_contents(
    slots: &Slots,
    i: usize,
    capacity: usize,
    block_start: usize,
) -> Option<(SlotView, Vec<PoolReport>, Option<ConcurrentReport>)> {
    let record = slots.record(i);
    let pin = record.pin_for_read()?;
    // Under the pin the slot is held by one holder, whose name and figures these are.
    let mut view = record.view();
    let h = pin.holder_ptr();
    // SAFETY: the pin keeps the slot held by one holder for as long as it lives (the
    // holder's unload, after a build or a failed one, waits for it, and no pin
    // succeeds once the unload has begun: see `crate::slots::table`), and the holder
    // wrote `info` and `concurrent` before it published them with `OPEN` (release; the
    // pin's compare-exchange acquires). Only those two fields are read, through the
    // raw pointer: the holder may be writing the others. A scope's container list and
    // its extras are atomics (see `crate::scope::info`), linked once a container is
    // whole, so a build that is still carving shows the containers finished so far;
    // each container's snapshot reads only atomics (a heap's row, its lock), as while
    // a loaded slot's `with_mut` changes them; and the concurrent scope's chunk list
    // and region top are published with release stores and atomics, as while any
    // concurrent scope is open.
    let (contents, concurrent) = unsafe {
        let info = &*core::ptr::addr_of!((*h).info).cast::<ScopeInfo>();
        // A slot's own `Slots` show as rows only (see `super::tree`).
        let (mut contents, _) = pool_rows(info, capacity, block_start);
        let mut concurrent = None;
        if let Some(c) = *core::ptr::addr_of!((*h).concurrent) {
            let inner = &c.as_ref().scope.inner;
            let cinfo = inner.info.get().as_ref();
            // The concurrent scope's rows follow the slot scope's: their `owner`
            // indices count from the start of their own list, so they move too.
            let first = contents.len();
            contents.extend(pool_rows(cinfo, capacity, block_start).0.into_iter().map(
                |mut row| {
                    row.owner = row.owner.map(|o| o + first);
                    row
                },
            ));
            concurrent = Some(concurrent_report(inner, block_start));
            if view.state == BUILDING {
                // What its threads have claimed from the slot so far (the figure the
                // holder publishes when the build ends).
                view.used = inner.region.top().saturating_sub(slots.start_of(i));
            }
        }
        (contents, concurrent)
    };
    if view.state == BUILDING && concurrent.is_none() {
        // The slot scope's bump pointer: what the build has placed so far.
        view.used = record.bump_now();
    }
    drop(pin);
    Some((view, contents, concurrent))
}

/// The rows of `innermost` and every scope it is nested in, outermost first: each
/// scope's own bytes run up to the next one's start (the innermost's up to `top`).
/// The chain of `innermost` is read only if `read_innermost_chain` (a map handle's
/// watched scope is still linking its own).
pub(crate) fn rows_down_from(
    innermost: &ScopeInfo,
    capacity: usize,
    block_start: usize,
    top: usize,
    read_innermost_chain: bool,
) -> Vec<ScopeReport> {
    let mut scopes = Vec::new();
    let mut upper = top;
    let mut at = Some(innermost);
    while let Some(info) = at {
        let (pools, slots) = pool_rows(info, capacity, block_start);
        let read_chain = read_innermost_chain || !core::ptr::eq(info, innermost);
        scopes.push(scope_row(
            info,
            block_start,
            upper.saturating_sub(info.start),
            top.saturating_sub(info.start),
            pools,
            slots,
            read_chain,
        ));
        upper = info.start;
        // SAFETY: the parents of a live scope are live (see `crate::scope::info`).
        at = info.parent.map(|p| unsafe { &*p.as_ptr() });
    }
    scopes.reverse();
    scopes
}
