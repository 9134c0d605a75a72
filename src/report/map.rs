//! The memory map's data: what a report holds, and how it prints as a table.
//!
//! This module owns the report types ([`MemoryMap`], [`ScopeReport`], [`PoolReport`]) and
//! their text form. Invariant: a `MemoryMap` owns all its data (no borrow of the block),
//! so it can be printed, compared or kept after the scopes are gone.
//!
//! The text folds what would repeat: a run of free slots is one line (see
//! `super::tree`), and so are the held slots of one set with one holder name and
//! nothing listed under them (a service's 64 requests: `- 64 Slots request`); the data
//! keeps a row per slot, and so does the picture.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::concurrent::{chunk_runs, ChunkRun, ConcurrentReport};
use super::pool_row::PoolReport;
use super::scope_row::ScopeReport;
use super::slots::{SlotState, SlotsReport};
use super::tree::{containers, Item, RowItem, SlotView, ARCHIVE, SLOT, SLOTS};

/// A snapshot of a block: its totals and every live scope, outermost first.
///
/// ```
/// use scope_stack::LinearAllocator;
///
/// let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
/// memory.scope("systems", |systems| {
///     systems.alloc_raw(1000, 8);
///     systems.scope("level", |level| {
///         level.new_object(String::from("finalized"));
///         let map = level.report();
///         assert_eq!(map.scopes.len(), 2);
///         assert_eq!(map.scopes[0].name, "systems");
///         assert_eq!(map.scopes[0].own_bytes, 1000);
///         assert_eq!(map.scopes[1].finalizers, 1);
///         println!("{map}"); // an aligned table with a bar per scope
///     });
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub struct MemoryMap {
    /// Bytes in the block.
    pub capacity: usize,
    /// Bytes in use when the snapshot was taken.
    pub used: usize,
    /// The most bytes ever in use at once.
    pub high_water_mark: usize,
    /// Every live scope, outermost first.
    pub scopes: Vec<ScopeReport>,
}

/// `n` bytes in a short human form: `512 B`, `1.5 KiB`, `12.0 MiB`.
pub(super) struct Bytes(pub(super) usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0 as f64;
        let text = if self.0 < 1024 {
            alloc::format!("{} B", self.0)
        } else if self.0 < 1024 * 1024 {
            alloc::format!("{:.1} KiB", n / 1024.0)
        } else if self.0 < 1024 * 1024 * 1024 {
            alloc::format!("{:.1} MiB", n / (1024.0 * 1024.0))
        } else {
            alloc::format!("{:.1} GiB", n / (1024.0 * 1024.0 * 1024.0))
        };
        f.pad(&text)
    }
}

pub(super) fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Width of the bar column, in characters.
const BAR: usize = 32;

impl MemoryMap {
    /// Draws one scope's extent on a bar as wide as the block: `#` for its own bytes,
    /// `+` for its children's, `.` elsewhere.
    fn bar(&self, start: usize, own: usize, inclusive: usize) -> String {
        let cell = |off: usize| -> usize {
            if self.capacity == 0 {
                0
            } else {
                (off as u128 * BAR as u128 / self.capacity as u128) as usize
            }
        };
        let mut bar = String::with_capacity(BAR);
        for i in 0..BAR {
            let lo = start;
            let own_end = start.saturating_add(own);
            let end = start.saturating_add(inclusive);
            // Cell i covers [i, i + 1) * capacity / BAR; mark it if the range touches it.
            let c = if own > 0 && cell(lo) <= i && i <= cell(own_end.saturating_sub(1)) {
                '#'
            } else if inclusive > own && cell(own_end) <= i && i <= cell(end.saturating_sub(1)) {
                '+'
            } else {
                '.'
            };
            bar.push(c);
        }
        bar
    }
}

/// `2 * n` spaces.
fn indent(n: usize) -> String {
    "  ".repeat(n)
}

/// A line of the table under a scope's row.
enum Line {
    /// A container, slot or chunk: its label (indented), offset, bytes, and the rest.
    Cols {
        label: String,
        offset: usize,
        bytes: usize,
        detail: String,
    },
    /// A concurrent region's summary, indented.
    Note(String),
}

/// What a concurrent region holds, in words: its per-thread table is counted in
/// threads (a `Slots` set's rows are the only slots in a map).
pub(super) fn region_summary(c: &ConcurrentReport) -> String {
    alloc::format!(
        "{} chunks for up to {} thread{}, {} of {} claimed, {} direct",
        Bytes(c.chunk_size),
        c.threads,
        if c.threads == 1 { "" } else { "s" },
        Bytes(c.claimed_bytes),
        Bytes(c.region_bytes),
        Bytes(c.direct_bytes),
    )
}

/// What a slot's row says after its bytes.
fn slot_detail(v: &SlotView<'_>) -> String {
    match v.state {
        SlotState::Free => alloc::format!("free (high-water {})", Bytes(v.high_water)),
        SlotState::Building => alloc::format!(
            "building: {} placed so far of {} (high-water {})",
            Bytes(v.used),
            Bytes(v.capacity),
            Bytes(v.high_water)
        ),
        SlotState::Loaded => alloc::format!(
            "used {} of {} (high-water {})",
            Bytes(v.used),
            Bytes(v.capacity),
            Bytes(v.high_water)
        ),
    }
}

/// A concurrent region's summary and a line per chunk, at indent `at`.
fn region_lines(out: &mut Vec<Line>, c: &ConcurrentReport, at: usize) {
    out.push(Line::Note(alloc::format!(
        "{}{}",
        indent(at),
        region_summary(c)
    )));
    for run in chunk_runs(c) {
        out.push(Line::Cols {
            label: alloc::format!("{}- {}", indent(at), chunk_run_name(&run)),
            offset: run.range.0,
            bytes: run.bytes,
            detail: alloc::format!("used {}{}", Bytes(run.used), chunk_run_tails(&run)),
        });
    }
}

/// `chunk of thread 3`, or `11 chunks of thread 0` for a run; `chunk of thread 3
/// (loader)` for a thread with a name.
pub(super) fn chunk_run_name(run: &ChunkRun) -> String {
    let thread = thread_label(run.thread, run.thread_name.as_deref());
    if run.count == 1 {
        alloc::format!("chunk of {thread}")
    } else {
        alloc::format!("{} chunks of {thread}", run.count)
    }
}

/// `thread 3`, or `thread 3 (loader)` for a thread with a name.
pub(super) fn thread_label(index: u32, name: Option<&str>) -> String {
    match name {
        Some(name) => alloc::format!("thread {index} ({name})"),
        None => alloc::format!("thread {index}"),
    }
}

/// What a run left unused: ` (4.3 KiB free)`, ` (0 B wasted)`, or both.
fn chunk_run_tails(run: &ChunkRun) -> String {
    match (run.current, run.count) {
        (false, _) => alloc::format!(" ({} wasted)", Bytes(run.wasted)),
        (true, 1) => alloc::format!(" ({} free)", Bytes(run.free)),
        (true, _) => alloc::format!(" ({} wasted, {} free)", Bytes(run.wasted), Bytes(run.free)),
    }
}

/// A heap row's detail: bytes in use of the heap's, live allocations, free bytes and
/// in how many blocks (fragmentation), the largest free block, the high-water mark.
fn heap_detail(p: &PoolReport) -> String {
    let h = p.heap_figures();
    alloc::format!(
        "{} used of {} in {} live, {} free in {} block{} (largest {}), high-water {}",
        Bytes(p.len),
        Bytes(p.capacity),
        h.live,
        Bytes(h.free),
        h.free_blocks,
        if h.free_blocks == 1 { "" } else { "s" },
        Bytes(h.largest_free),
        Bytes(p.high_water_len)
    )
}

/// The line of a container's row, at indent `at`; `waiting` is what a `Slots` set's
/// report says waits for one of its slots (0 for a set without one).
fn row_line(r: &RowItem<'_>, at: usize, waiting: usize) -> Line {
    let p = r.row;
    let (label, detail) = match (&r.slot, p.kind) {
        (Some(v), _) if v.run > 1 => (
            alloc::format!("- {} {SLOT}s free", v.run),
            alloc::format!("free (high-water {})", Bytes(v.high_water)),
        ),
        (Some(v), _) => (alloc::format!("- {SLOT} {}", v.name), slot_detail(v)),
        (None, SLOTS) => (
            alloc::format!("- {SLOTS} {}", p.type_name),
            alloc::format!(
                "{}/{} slots held (high-water {}){}",
                p.len,
                p.capacity,
                p.high_water_len,
                if waiting == 0 {
                    String::new()
                } else {
                    alloc::format!(", {waiting} waiting")
                }
            ),
        ),
        (None, _) if p.heap.is_some() => (String::from("- Heap"), heap_detail(p)),
        (None, ARCHIVE) => (
            alloc::format!("- {ARCHIVE} {}", p.type_name),
            alloc::format!("{} archived, read in place", Bytes(p.bytes)),
        ),
        (None, kind) => (
            alloc::format!("- {kind}<{}>", p.type_name),
            alloc::format!(
                "len {}/{} (high-water {}{})",
                p.len,
                p.capacity,
                if p.high_water_exact { "" } else { "≤ " },
                p.high_water_len
            ),
        ),
    };
    Line::Cols {
        label: indent(at) + &label,
        offset: p.offset,
        // A run of free slots spans them all.
        bytes: match &r.slot {
            Some(v) if v.run > 1 => r.range.1 - r.range.0,
            _ => p.bytes,
        },
        detail,
    }
}

/// The lines under a scope's row: its region if it is concurrent, then its containers
/// in tree order, with each slot's region and contents under the slot. Held slots of
/// one set with one holder name and nothing listed under them share one line (see
/// [`held_runs`]).
fn lines(s: &ScopeReport) -> Vec<Line> {
    let base = s.depth as usize + 1;
    let mut out = Vec::new();
    if let Some(c) = &s.concurrent {
        region_lines(&mut out, c, base);
    }
    let items = containers(s);
    let runs = held_runs(&items);
    for (k, item) in items.iter().enumerate() {
        match (item, &runs[k]) {
            (_, Held::Folded) => {}
            (Item::Row(r), Held::First(members)) => {
                out.push(held_line(&items, members, base + r.depth));
            }
            (Item::Row(r), Held::Alone) => {
                let waiting = set_report(s, r.row).map_or(0, |set| set.waiting);
                out.push(row_line(r, base + r.depth, waiting));
            }
            (Item::Concurrent { report, depth, .. }, _) => {
                region_lines(&mut out, report, base + depth);
            }
        }
    }
    out
}

/// The report of the `Slots` set whose row is `row`, if it is one of `s`'s own: its
/// offset and name find it, its place among the rows with both tells two apart.
fn set_report<'m>(s: &'m ScopeReport, row: &PoolReport) -> Option<&'m SlotsReport> {
    if row.kind != SLOTS {
        return None;
    }
    let i = s.pools.iter().position(|p| core::ptr::eq(p, row))?;
    let same =
        |r: &PoolReport| r.kind == SLOTS && r.offset == row.offset && r.type_name == row.type_name;
    let nth = s.pools[..i].iter().filter(|r| same(r)).count();
    s.slots
        .iter()
        .filter(|set| set.offset == row.offset && set.name == row.type_name)
        .nth(nth)
}

/// How an entry of the walk prints in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Held {
    /// On a line of its own.
    Alone,
    /// The first of held slots that share a line: the entries of all of them, this
    /// one first.
    First(Vec<usize>),
    /// Shown on the line of an earlier slot.
    Folded,
}

/// Which entries of the walk share a line: the held slots (loaded, or being built)
/// of one set with the same holder name and state and nothing listed under them (no
/// contents, no concurrent region), two or more of them, wherever they lie among the
/// set's other slots. A service's 64 requests are one line, not 64. The picture and
/// the data keep a slot each.
fn held_runs(items: &[Item<'_>]) -> Vec<Held> {
    let mut out = alloc::vec![Held::Alone; items.len()];
    // A slot that nothing is listed under: the next entry is not deeper.
    let bare = |k: usize| -> Option<(&RowItem<'_>, &SlotView<'_>)> {
        let Item::Row(r) = &items[k] else { return None };
        let v = r.slot.as_ref()?;
        let deeper = match items.get(k + 1) {
            Some(Item::Row(n)) => n.depth > r.depth,
            Some(Item::Concurrent { depth, .. }) => *depth > r.depth,
            None => false,
        };
        (v.state != SlotState::Free && v.run == 1 && !deeper).then_some((r, v))
    };
    for k in 0..items.len() {
        if out[k] != Held::Alone {
            continue;
        }
        let Some((r, v)) = bare(k) else { continue };
        let mut members = alloc::vec![k];
        // The set's other slots follow, at this depth, before anything shallower or
        // any row that is not one of them (entries under a slot are deeper).
        for j in k + 1..items.len() {
            let (depth, same_set) = match &items[j] {
                Item::Row(n) => (n.depth, n.row.kind == SLOT && n.row.owner == r.row.owner),
                Item::Concurrent { depth, .. } => (*depth, false),
            };
            if depth < r.depth || (depth == r.depth && !same_set) {
                break;
            }
            if depth > r.depth || out[j] != Held::Alone {
                continue;
            }
            if bare(j).is_some_and(|(_, w)| w.state == v.state && w.name == v.name) {
                members.push(j);
            }
        }
        if members.len() > 1 {
            for &j in &members[1..] {
                out[j] = Held::Folded;
            }
            out[k] = Held::First(members);
        }
    }
    out
}

/// The one line of held slots that share a holder name (see [`held_runs`]), at
/// indent `at`: `- 64 Slots request`, their bytes in all, the bytes they use (least
/// and most of one slot, and in all) and the highest high-water mark among them.
fn held_line(items: &[Item<'_>], members: &[usize], at: usize) -> Line {
    let slots: Vec<(&PoolReport, SlotView<'_>)> = members
        .iter()
        .filter_map(|&k| match &items[k] {
            Item::Row(r) => r.slot.map(|v| (r.row, v)),
            Item::Concurrent { .. } => None,
        })
        .collect();
    let Some(&(first, v)) = slots.first() else {
        return Line::Note(String::new());
    };
    let high_water = slots.iter().map(|(_, v)| v.high_water).max().unwrap_or(0);
    let used = slots.iter().map(|(_, v)| v.used);
    let (least, most) = (
        used.clone().min().unwrap_or(0),
        used.clone().max().unwrap_or(0),
    );
    let each = if least == most {
        alloc::format!("{}", Bytes(least))
    } else {
        alloc::format!("{} to {}", Bytes(least), Bytes(most))
    };
    let detail = match v.state {
        SlotState::Building => alloc::format!(
            "building: {each} placed so far each of {}, {} in all (high-water {})",
            Bytes(v.capacity),
            Bytes(used.sum()),
            Bytes(high_water)
        ),
        _ => alloc::format!(
            "used {each} each of {}, {} in all (high-water {})",
            Bytes(v.capacity),
            Bytes(used.sum()),
            Bytes(high_water)
        ),
    };
    Line::Cols {
        label: alloc::format!("{}- {} {SLOT}s {}", indent(at), slots.len(), v.name),
        offset: first.offset,
        bytes: slots.iter().map(|(p, _)| p.bytes).sum(),
        detail,
    }
}

impl fmt::Display for MemoryMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "memory map: {} block, {} used ({:.1}%), high-water {} ({:.1}%)",
            Bytes(self.capacity),
            Bytes(self.used),
            percent(self.used, self.capacity),
            Bytes(self.high_water_mark),
            percent(self.high_water_mark, self.capacity),
        )?;
        if self.scopes.is_empty() {
            return writeln!(f, "  (no live scopes)");
        }
        let below: Vec<Vec<Line>> = self.scopes.iter().map(lines).collect();
        let name_width = self
            .scopes
            .iter()
            .map(|s| s.name.chars().count() + 2 * s.depth as usize)
            .chain(below.iter().flatten().map(|l| match l {
                Line::Cols { label, .. } => label.chars().count(),
                Line::Note(_) => 0,
            }))
            .max()
            .unwrap_or(5)
            .max(5);
        writeln!(
            f,
            "  {:<nw$}  {:>10}  {:>10}  {:>10}  {:>5}  {:>10}  map",
            "scope",
            "start",
            "own",
            "inclusive",
            "fin",
            "budget",
            nw = name_width
        )?;
        for (s, below) in self.scopes.iter().zip(&below) {
            let label = indent(s.depth as usize) + &s.name;
            let budget = match s.budget {
                Some(b) => alloc::format!("{}", Bytes(b)),
                None => String::from("-"),
            };
            writeln!(
                f,
                "  {:<nw$}  {:>10}  {:>10}  {:>10}  {:>5}  {:>10}  |{}|",
                label,
                s.start,
                Bytes(s.own_bytes),
                Bytes(s.inclusive_bytes),
                s.finalizers,
                budget,
                self.bar(s.start, s.own_bytes, s.inclusive_bytes),
                nw = name_width
            )?;
            for line in below {
                match line {
                    Line::Note(text) => writeln!(f, "  {text}")?,
                    Line::Cols {
                        label,
                        offset,
                        bytes,
                        detail,
                    } => writeln!(
                        f,
                        "  {:<nw$}  {:>10}  {:>10}  {}",
                        label,
                        offset,
                        Bytes(*bytes),
                        detail,
                        nw = name_width
                    )?,
                }
            }
        }
        Ok(())
    }
}
