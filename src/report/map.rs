//! The memory map's data: what a report holds, and how it prints as a table.
//!
//! This module owns the report types ([`MemoryMap`], [`ScopeReport`], [`PoolReport`]) and
//! their text form. Invariant: a `MemoryMap` owns all its data (no borrow of the block),
//! so it can be printed, compared or kept after the scopes are gone.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write as _};

use super::concurrent::ConcurrentReport;
use super::pool_row::PoolReport;
use super::slots::SlotsReport;

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

/// One live scope in a [`MemoryMap`].
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
    /// row per slot, so text and picture draw them.
    pub slots: Vec<SlotsReport>,
}

impl ScopeReport {
    /// The scope's pools in the order text and picture list them: each row that no
    /// other row owns, in the order made, followed by the rows it owns (one level
    /// deeper, and so on). Every row appears once, with its nesting level.
    pub(crate) fn pool_tree(&self) -> Vec<(&PoolReport, usize)> {
        let mut out = Vec::with_capacity(self.pools.len());
        let mut listed = alloc::vec![false; self.pools.len()];
        // A row whose owner is missing (or itself) counts as a top-level row.
        let top =
            |i: usize, p: &PoolReport| p.owner.is_none_or(|o| o == i || o >= self.pools.len());
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for (i, p) in self.pools.iter().enumerate() {
            if !top(i, p) {
                continue;
            }
            stack.push((i, 0));
            while let Some((at, level)) = stack.pop() {
                if core::mem::replace(&mut listed[at], true) {
                    continue;
                }
                out.push((&self.pools[at], level));
                let children = self.pools.iter().enumerate().rev();
                for (j, _) in children.filter(|&(j, c)| c.owner == Some(at) && j != at) {
                    stack.push((j, level + 1));
                }
            }
        }
        // Rows in an ownership circle (a map edited by hand) still show, at the top.
        for (i, p) in self.pools.iter().enumerate() {
            if !listed[i] {
                out.push((p, 0));
            }
        }
        out
    }
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
        let name_width = self
            .scopes
            .iter()
            .map(|s| s.name.chars().count() + 2 * s.depth as usize)
            .chain(self.scopes.iter().flat_map(|s| {
                s.pool_tree().into_iter().map(move |(p, level)| {
                    p.kind.len() + p.type_name.chars().count() + 6 + 2 * (s.depth as usize + level)
                })
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
        for s in &self.scopes {
            let mut label = String::new();
            for _ in 0..s.depth {
                label.push_str("  ");
            }
            label.push_str(&s.name);
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
            if let Some(c) = &s.concurrent {
                let mut clabel = String::new();
                for _ in 0..=s.depth {
                    clabel.push_str("  ");
                }
                writeln!(
                    f,
                    "  {}{} slots, {} chunks, {} of {} claimed, {} direct",
                    clabel,
                    c.threads,
                    Bytes(c.chunk_size),
                    Bytes(c.claimed_bytes),
                    Bytes(c.region_bytes),
                    Bytes(c.direct_bytes),
                )?;
                for ch in &c.chunks {
                    let label = alloc::format!("{clabel}- chunk of thread {}", ch.thread);
                    writeln!(
                        f,
                        "  {:<nw$}  {:>10}  {:>10}  used {} ({} {})",
                        label,
                        ch.offset,
                        Bytes(ch.bytes),
                        Bytes(ch.used),
                        Bytes(ch.tail),
                        if ch.current { "free" } else { "wasted" },
                        nw = name_width
                    )?;
                }
            }
            for (p, level) in s.pool_tree() {
                let mut plabel = String::new();
                for _ in 0..=(s.depth as usize + level) {
                    plabel.push_str("  ");
                }
                if p.kind == "Slots" || p.kind == "Slot" {
                    let _ = write!(plabel, "- {} {}", p.kind, p.type_name);
                    if p.kind == "Slots" {
                        writeln!(
                            f,
                            "  {:<nw$}  {:>10}  {:>10}  {}/{} slots held (high-water {})",
                            plabel,
                            p.offset,
                            Bytes(p.bytes),
                            p.len,
                            p.capacity,
                            p.high_water_len,
                            nw = name_width
                        )?;
                    } else {
                        writeln!(
                            f,
                            "  {:<nw$}  {:>10}  {:>10}  used {} (high-water {})",
                            plabel,
                            p.offset,
                            Bytes(p.bytes),
                            Bytes(p.len),
                            Bytes(p.high_water_len),
                            nw = name_width
                        )?;
                    }
                    continue;
                }
                let _ = write!(plabel, "- {}<{}>", p.kind, p.type_name);
                writeln!(
                    f,
                    "  {:<nw$}  {:>10}  {:>10}  len {}/{} (high-water {}{})",
                    plabel,
                    p.offset,
                    Bytes(p.bytes),
                    p.len,
                    p.capacity,
                    if p.high_water_exact { "" } else { "≤ " },
                    p.high_water_len,
                    nw = name_width
                )?;
            }
        }
        Ok(())
    }
}
