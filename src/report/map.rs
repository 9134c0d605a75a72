//! The memory map's data: what a report holds, and how it prints as a table.
//!
//! This module owns the report types ([`MemoryMap`], [`ScopeReport`], [`PoolReport`]) and
//! their text form. Invariant: a `MemoryMap` owns all its data (no borrow of the block),
//! so it can be printed, compared or kept after the scopes are gone.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::concurrent::{chunk_runs, ChunkRun, ConcurrentReport};
use super::scope_row::ScopeReport;
use super::slots::SlotState;
use super::tree::{containers, Item, RowItem, SlotView, SLOT, SLOTS};

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
            "building: bytes used not known until the build ends (high-water {})",
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

/// `chunk of thread 3`, or `11 chunks of thread 0` for a run.
pub(super) fn chunk_run_name(run: &ChunkRun) -> String {
    if run.count == 1 {
        alloc::format!("chunk of thread {}", run.thread)
    } else {
        alloc::format!("{} chunks of thread {}", run.count, run.thread)
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
fn heap_detail(p: &super::pool_row::PoolReport) -> String {
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

/// The line of a container's row, at indent `at`.
fn row_line(r: &RowItem<'_>, at: usize) -> Line {
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
                "{}/{} slots held (high-water {})",
                p.len,
                p.capacity,
                p.high_water_len
            ),
        ),
        (None, _) if p.heap.is_some() => (String::from("- Heap"), heap_detail(p)),
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
/// in tree order, with each slot's region and contents under the slot.
fn lines(s: &ScopeReport) -> Vec<Line> {
    let base = s.depth as usize + 1;
    let mut out = Vec::new();
    if let Some(c) = &s.concurrent {
        region_lines(&mut out, c, base);
    }
    for item in containers(s) {
        match item {
            Item::Row(r) => out.push(row_line(&r, base + r.depth)),
            Item::Concurrent { report, depth, .. } => region_lines(&mut out, report, base + depth),
        }
    }
    out
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
