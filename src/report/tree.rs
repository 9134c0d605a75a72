//! The containers of a scope in the order the text and the picture list them: the
//! ownership tree of its rows (a store's versions pool under the store, each slot under
//! its `Slots` row), and under each slot what it holds (its contents, and a concurrent
//! slot's chunks), one level deeper.
//!
//! This module owns that walk, so that the table and the picture list the same things
//! in the same order, and it owns how a `"Slot"` row is read: from its
//! [`SlotReport`](super::slots::SlotReport) when the scope's
//! [`slots`](super::scope_row::ScopeReport::slots) has it (state, holder, used bytes, contents),
//! and from the row's own fields otherwise (a slot nested in another slot's contents).
//!
//! Invariant: every row of a scope's `pools`, and of each slot's `contents`, is listed
//! exactly once (a run of free slots of one set as one row that counts them), and nothing here fails on a map edited by hand: a row whose owner is
//! missing is listed at the top, and a `"Slot"` row whose report cannot be found is
//! read from its own fields.

use alloc::vec::Vec;

use super::concurrent::ConcurrentReport;
use super::pool_row::PoolReport;
use super::scope_row::ScopeReport;
use super::slots::{SlotReport, SlotState, SlotsReport};

/// The [`PoolReport::kind`] of a `Slots` set's row.
pub(super) const SLOTS: &str = "Slots";
/// The [`PoolReport::kind`] of one slot's row.
pub(super) const SLOT: &str = "Slot";
/// The [`PoolReport::kind`] of a level's archived bytes, read in place (feature `rkyv`).
pub(super) const ARCHIVE: &str = crate::scope::info::ARCHIVE_KIND;

/// What the text and the picture show of one slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct SlotView<'m> {
    pub(super) state: SlotState,
    /// The holder's name, or the state (`free`, `building`, `loaded`) if it has none.
    pub(super) name: &'m str,
    /// Bytes used as the holder last published them (at the end of its build and of
    /// each `with_mut`), or, while the slot is being built, the bytes placed so far.
    pub(super) used: usize,
    /// Bytes the slot may use.
    pub(super) capacity: usize,
    pub(super) high_water: usize,
    /// How many slots the row stands for: a run of free slots of one set is one row
    /// (the highest high-water mark of the run), anything else is 1.
    pub(super) run: usize,
}

/// A container's row, where it sits in the tree, and the bytes it is drawn over.
#[derive(Clone, Copy, Debug)]
pub(super) struct RowItem<'m> {
    pub(super) row: &'m PoolReport,
    /// Nesting under the scope: 0 for a row of the scope's own that no row owns.
    pub(super) depth: usize,
    /// How many slots the row lies in (0 for the scope's own rows).
    pub(super) nest: usize,
    /// Nesting inside its own list of rows (0 unless another row owns it).
    pub(super) level: usize,
    /// Whether another row of its list is owned by it (a store's versions pool, a
    /// `Slots` set's slots).
    pub(super) owns: bool,
    /// For a `"Slot"` row: the slot.
    pub(super) slot: Option<SlotView<'m>>,
    /// Its bytes, and those of every row it owns.
    pub(super) range: (usize, usize),
}

/// One entry of the walk.
#[derive(Clone, Copy, Debug)]
pub(super) enum Item<'m> {
    /// A pool, dense pool, store, slots set or slot.
    Row(RowItem<'m>),
    /// The region and chunks of a slot loaded through a concurrent scope, listed
    /// right after its slot, at the depth of the slot's contents.
    Concurrent {
        report: &'m ConcurrentReport,
        depth: usize,
        nest: usize,
    },
}

/// Every container of `scope`, and what each slot holds, in listing order.
pub(super) fn containers(scope: &ScopeReport) -> Vec<Item<'_>> {
    let mut out = Vec::new();
    walk(&scope.pools, &scope.slots, 0, 0, &mut out);
    out
}

fn walk<'m>(
    rows: &'m [PoolReport],
    sets: &'m [SlotsReport],
    base: usize,
    nest: usize,
    out: &mut Vec<Item<'m>>,
) {
    let tree = row_tree(rows);
    let mut k = 0;
    while let Some(&(i, level)) = tree.get(k) {
        k += 1;
        let row = &rows[i];
        let report = (row.kind == SLOT)
            .then(|| slot_report(rows, i, sets))
            .flatten();
        let mut slot = (row.kind == SLOT).then(|| slot_view(row, report));
        let mut range = drawn_range(rows, i);
        // A free slot takes in the free slots of its set that follow it: 200 request
        // slots with 3 held are a handful of rows, not 200. (A free slot holds nothing,
        // so nothing listed under the ones it takes in is lost.)
        if let Some(v) = slot.as_mut().filter(|v| v.state == SlotState::Free) {
            while let Some(&(j, next_level)) = tree.get(k) {
                let next = &rows[j];
                if next_level != level || next.kind != SLOT || next.owner != row.owner {
                    break;
                }
                let nv = slot_view(next, slot_report(rows, j, sets));
                if nv.state != SlotState::Free {
                    break;
                }
                v.run += 1;
                v.high_water = v.high_water.max(nv.high_water);
                range.1 = range.1.max(drawn_range(rows, j).1);
                k += 1;
            }
        }
        let depth = base + level;
        out.push(Item::Row(RowItem {
            row,
            depth,
            nest,
            level,
            owns: rows
                .iter()
                .enumerate()
                .any(|(j, r)| j != i && r.owner == Some(i)),
            slot,
            range,
        }));
        if let Some(r) = report.filter(|_| slot.is_none_or(|v| v.run == 1)) {
            if let Some(c) = &r.concurrent {
                out.push(Item::Concurrent {
                    report: c,
                    depth: depth + 1,
                    nest: nest + 1,
                });
            }
            // What a slot holds has no reports of its own slots: a `Slots` carved in
            // a slot shows its rows, read from their fields.
            walk(&r.contents, &[], depth + 1, nest + 1, out);
        }
    }
}

/// The rows in listing order, as (index, nesting level): each row that no other row
/// owns, in the order made, followed by the rows it owns (one level deeper, and so
/// on). Every row appears once.
pub(super) fn row_tree(rows: &[PoolReport]) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(rows.len());
    let mut listed = alloc::vec![false; rows.len()];
    // A row whose owner is missing (or itself) counts as a top-level row.
    let top = |i: usize, p: &PoolReport| p.owner.is_none_or(|o| o == i || o >= rows.len());
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for (i, p) in rows.iter().enumerate() {
        if !top(i, p) {
            continue;
        }
        stack.push((i, 0));
        while let Some((at, level)) = stack.pop() {
            if core::mem::replace(&mut listed[at], true) {
                continue;
            }
            out.push((at, level));
            let children = rows.iter().enumerate().rev();
            for (j, _) in children.filter(|&(j, c)| c.owner == Some(at) && j != at) {
                stack.push((j, level + 1));
            }
        }
    }
    // Rows in an ownership circle (a map edited by hand) still show, at the top.
    for (i, listed) in listed.iter().enumerate() {
        if !listed {
            out.push((i, 0));
        }
    }
    out
}

/// The bytes row `i` is drawn over: its own, and for an owner (a store, a `Slots`
/// set) those of every row it owns too.
pub(super) fn drawn_range(rows: &[PoolReport], i: usize) -> (usize, usize) {
    let row = &rows[i];
    let own = (row.offset, row.offset.saturating_add(row.bytes));
    rows.iter()
        .enumerate()
        .filter(|&(j, p)| j != i && p.owner == Some(i))
        .fold(own, |(a, b), (_, p)| {
            (a.min(p.offset), b.max(p.offset.saturating_add(p.bytes)))
        })
}

/// The report of the slot whose row is `rows[i]`: the `Slots` row that owns it names
/// its set (by offset and name), and its place among that row's slots its index.
fn slot_report<'m>(
    rows: &[PoolReport],
    i: usize,
    sets: &'m [SlotsReport],
) -> Option<&'m SlotReport> {
    let owner = rows[i].owner.filter(|&o| o != i)?;
    let set_row = rows.get(owner).filter(|r| r.kind == SLOTS)?;
    let same = |r: &PoolReport| {
        r.kind == SLOTS && r.offset == set_row.offset && r.type_name == set_row.type_name
    };
    // Two sets at one offset with one name (both empty) are told apart by order.
    let nth = rows[..owner].iter().filter(|r| same(r)).count();
    let set = sets
        .iter()
        .filter(|s| s.offset == set_row.offset && s.name == set_row.type_name)
        .nth(nth)?;
    let index = rows[..i]
        .iter()
        .filter(|r| r.kind == SLOT && r.owner == Some(owner))
        .count();
    set.slots.get(index).filter(|s| s.offset == rows[i].offset)
}

fn slot_view<'m>(row: &'m PoolReport, report: Option<&'m SlotReport>) -> SlotView<'m> {
    match report {
        Some(r) => SlotView {
            state: r.state,
            name: r.holder.as_deref().unwrap_or(match r.state {
                SlotState::Free => "free",
                SlotState::Building => "building",
                _ => "loaded",
            }),
            used: r.used,
            capacity: row.capacity,
            high_water: r.high_water_mark,
            run: 1,
        },
        // The row's own fields: the holder's name, or the state in its place.
        None => SlotView {
            state: match row.type_name.as_str() {
                "free" => SlotState::Free,
                "building" => SlotState::Building,
                _ => SlotState::Loaded,
            },
            name: &row.type_name,
            used: row.len,
            capacity: row.capacity,
            high_water: row.high_water_len,
            run: 1,
        },
    }
}
