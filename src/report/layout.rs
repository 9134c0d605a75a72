//! Where the memory map picture puts things: its size, its bands, and a box for every
//! piece of text it draws.
//!
//! The picture has a column of labels on the left, one row per scope, chunk, container,
//! slot and marker in tree order (a scope, its chunks if it is concurrent, its pools
//! with a store's versions pool under the store, its `Slots` sets with each slot under
//! its set and what the slot holds under the slot, then its child scope), and the band
//! of the block on the right. When the used part of the
//! block is small (under half), the band shows only that part, with a thin band of the
//! whole block above it and lines that mark the zoomed range. Each row has a leader line
//! from the end of its text, right along its own row and up to the band at the item's
//! place. The rows' leader ends are kept in increasing order, so a leader never crosses
//! another one.
//!
//! Invariant: the layout is computed, not hoped for. Every text is monospace and its
//! box is `0.6 ×` font size wide per character, the width the renderer also assumes;
//! no two boxes overlap (rows have rows of their own, scale labels that would touch
//! their neighbour are dropped, legend entries wrap), and every box and every band lies
//! inside the picture, whose size is computed from them.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use super::concurrent::{chunk_runs, ConcurrentReport};
use super::map::{chunk_run_name, percent, Bytes, MemoryMap};
use super::pool_row::PoolReport;
use super::slots::SlotState;
use super::tree::{containers, Item, RowItem, ARCHIVE, SLOT, SLOTS};

/// Width of one character, as a fraction of the font size (monospace).
pub(super) const CHAR_WIDTH: f64 = 0.6;
/// The fonts the picture asks for: monospace, so that [`CHAR_WIDTH`] holds.
pub(super) const FONT_FAMILY: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";

const MARGIN: f64 = 16.0;
const TITLE_FONT: f64 = 15.0;
const ROW_FONT: f64 = 12.0;
const SMALL_FONT: f64 = 10.0;
/// Vertical distance between label rows.
const ROW_STEP: f64 = 17.0;
/// Space between the label column and the band.
const GAP: f64 = 28.0;
/// Width of the band, and room right of it for the last scale label.
const BAND_W: f64 = 620.0;
const RIGHT: f64 = 36.0;
const BAND_H: f64 = 60.0;
const OVERVIEW_H: f64 = 20.0;
/// Height of the lane of scale labels above the band.
const AXIS_H: f64 = 16.0;
/// How many scope colours the picture cycles through by depth (the legend shows one
/// entry per depth up to this many).
pub(super) const SCOPE_DEPTH_COLOURS: usize = 6;
/// Least distance between two leader ends on the band.
const LEADER_SEP: f64 = 3.0;
/// A band zooms in when the used part of the block is under this fraction.
const ZOOM_BELOW: f64 = 0.5;

/// What a piece of text is, for the renderer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// The heading line.
    Title,
    /// The name of a band, left of it.
    Caption,
    /// A scale label above the band.
    Tick,
    /// A row of the label column.
    Row(RowKind),
    /// A legend entry (its box starts with the swatch).
    Legend(Swatch),
}

/// What a row labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RowKind {
    Scope,
    Pool,
    /// A chunk of a concurrent scope: its owner thread and used bytes.
    Chunk,
    /// A slot of a `Slots` set.
    Slot,
    /// A [`Heap`](crate::Heap): bytes in use, free bytes, largest free block, live
    /// allocations and high-water in its text.
    Heap,
    /// A level's archived bytes, read in place (feature `rkyv`).
    Archive,
    AllocationPoint,
    HighWater,
}

/// A legend swatch: one per thing the picture draws, each in a colour or pattern of
/// its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Swatch {
    /// A scope of this depth (the band colours scopes by depth).
    Scope(u8),
    /// A concurrent scope's chunk: the used part filled, the rest left light.
    Chunk,
    Pool,
    Store,
    /// A slot of a `Slots` set: the used part filled, the rest free.
    Slot,
    /// A slot whose root is being built: its bytes are not known yet.
    Building,
    /// A heap: its region light, a gauge of its bytes in use filled from its start.
    Heap,
    /// A level's archived bytes, read in place.
    Archive,
    Finalizer,
    AllocationPoint,
    HighWater,
    Free,
}

/// A piece of text in the memory map picture and the box it takes.
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(4096).unwrap();
/// memory.scope("systems", |s| {
///     let layout = s.report().svg_layout();
///     let label = layout.labels.iter().find(|l| l.text == "systems  0 B").unwrap();
///     assert_eq!(label.width, 12.0 * 0.6 * label.font_size);
///     assert!(label.leader_to.is_some()); // a row, with a leader line to the band
/// });
/// ```
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SvgLabel {
    /// The text, unescaped (leading spaces indent it).
    pub text: String,
    /// Left edge of the box.
    pub x: f64,
    /// Top edge of the box.
    pub y: f64,
    /// `0.6 × font_size` per character.
    pub width: f64,
    /// The font size and a little room for descenders.
    pub height: f64,
    /// The font size.
    pub font_size: f64,
    /// Where its leader line meets the band, if it has one.
    pub leader_to: Option<(f64, f64)>,
    pub(super) role: Role,
}

/// A horizontal band that draws bytes `0..end` of the block between `x0` and `x1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Band {
    pub(super) x0: f64,
    pub(super) x1: f64,
    pub(super) y: f64,
    pub(super) h: f64,
    pub(super) end: usize,
}

impl Band {
    /// The x of byte offset `off`; offsets past the band's end are drawn at its end.
    pub(super) fn x(&self, off: usize) -> f64 {
        if self.end == 0 {
            self.x0
        } else {
            self.x0 + (self.x1 - self.x0) * (off.min(self.end) as f64 / self.end as f64)
        }
    }
}

/// Where everything in the memory map picture goes (see the module docs).
///
/// ```
/// # use scope_stack::LinearAllocator;
/// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
/// memory.scope("systems", |s| {
///     s.alloc_raw(1000, 1);
///     let layout = s.report().svg_layout();
///     for l in &layout.labels {
///         assert!(l.x >= 0.0 && l.x + l.width <= layout.width);
///     }
/// });
/// ```
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SvgLayout {
    /// Width of the picture (its viewBox).
    pub width: f64,
    /// Height of the picture (its viewBox).
    pub height: f64,
    /// Every piece of text the picture draws.
    pub labels: Vec<SvgLabel>,
    /// The band the scopes and pools are drawn in.
    pub(super) band: Band,
    /// The whole block, when `band` shows only its used part.
    pub(super) overview: Option<Band>,
    /// For each row label (in `labels` order): the byte range it stands for.
    pub(super) items: Vec<(usize, usize)>,
}

fn text_width(text: &str, font: f64) -> f64 {
    text.chars().count() as f64 * CHAR_WIDTH * font
}

fn label(text: String, x: f64, y: f64, font: f64, role: Role) -> SvgLabel {
    SvgLabel {
        width: text_width(&text, font),
        height: font + 3.0,
        text,
        x,
        y,
        font_size: font,
        leader_to: None,
        role,
    }
}

/// The unit of a scale that runs to `end` bytes: one for every label of the axis.
#[derive(Clone, Copy)]
enum ScaleUnit {
    Bytes,
    KiB,
    MiB,
}

impl ScaleUnit {
    fn for_end(end: usize) -> ScaleUnit {
        if end >= 4 << 20 {
            ScaleUnit::MiB
        } else if end >= 4 << 10 {
            ScaleUnit::KiB
        } else {
            ScaleUnit::Bytes
        }
    }

    /// `n` in this unit: `0`, `64 KiB`, `1.5 MiB` (at most three decimals, trailing zeros
    /// dropped).
    fn label(self, n: usize) -> String {
        let (div, name) = match self {
            ScaleUnit::Bytes => {
                return if n == 0 {
                    String::from("0")
                } else {
                    alloc::format!("{n} B")
                }
            }
            ScaleUnit::KiB => (1024.0, "KiB"),
            ScaleUnit::MiB => (1024.0 * 1024.0, "MiB"),
        };
        if n == 0 {
            return String::from("0");
        }
        let v = n as f64 / div;
        let mut text = alloc::format!("{v:.3}");
        while text.ends_with('0') {
            text.pop();
        }
        if text.ends_with('.') {
            text.pop();
        }
        alloc::format!("{text} {name}")
    }
}

/// The end of the zoomed band: a little past the high-water mark, rounded up to an
/// eighth of the next power of two.
fn zoom_end(high_water: usize, capacity: usize) -> usize {
    let want = high_water.saturating_add(high_water / 10).max(64);
    let step = (want.checked_next_power_of_two().unwrap_or(usize::MAX) / 8).max(1);
    want.div_ceil(step).saturating_mul(step).min(capacity)
}

/// One row of the label column before it is placed.
struct Row {
    text: String,
    kind: RowKind,
    range: (usize, usize),
}

fn indent(n: usize) -> String {
    "  ".repeat(n)
}

/// One row per thread's chunks of a concurrent region, as the text report has (a run
/// of chunks is one row), in the order they lie on the band (so their leaders do not
/// cross).
fn chunk_rows(rows: &mut Vec<Row>, c: &ConcurrentReport, at: usize) {
    let mut runs = chunk_runs(c);
    runs.sort_by_key(|r| r.range.0);
    for run in runs {
        rows.push(Row {
            text: alloc::format!(
                "{}{}: {} of {} used",
                indent(at),
                chunk_run_name(&run),
                Bytes(run.used),
                Bytes(run.bytes)
            ),
            kind: RowKind::Chunk,
            range: run.range,
        });
    }
}

/// The label of a container's row (without its indent).
fn row_text(r: &RowItem<'_>) -> String {
    let p = r.row;
    match (&r.slot, p.kind) {
        (Some(v), _) if v.run > 1 => {
            alloc::format!("{} {SLOT}s free, {}", v.run, Bytes(r.range.1 - r.range.0))
        }
        (Some(v), _) => {
            let what = match v.state {
                SlotState::Free => alloc::format!("free, {}", Bytes(v.capacity)),
                SlotState::Building => alloc::format!(
                    "building, {} of {} placed so far",
                    Bytes(v.used),
                    Bytes(v.capacity)
                ),
                SlotState::Loaded => {
                    alloc::format!("{} of {} used", Bytes(v.used), Bytes(v.capacity))
                }
            };
            if v.state == SlotState::Free && v.name == "free" {
                alloc::format!("{SLOT} {what}")
            } else {
                alloc::format!("{SLOT} {}: {what}", v.name)
            }
        }
        (None, SLOTS) => alloc::format!(
            "{SLOTS} {}: {}/{} held, {}",
            p.type_name,
            p.len,
            p.capacity,
            Bytes(p.bytes)
        ),
        (None, _) if p.heap.is_some() => heap_text(p),
        (None, ARCHIVE) => alloc::format!("{ARCHIVE} {}: {} archived", p.type_name, Bytes(p.bytes)),
        (None, kind) => alloc::format!(
            "{kind}<{}> {}/{}, {}",
            p.type_name,
            p.len,
            p.capacity,
            Bytes(p.bytes)
        ),
    }
}

/// A heap's row: what the table's heap line says, shorter.
fn heap_text(p: &PoolReport) -> String {
    let h = p.heap_figures();
    alloc::format!(
        "Heap {} used of {}, {} live, {} free (largest {}), high-water {}",
        Bytes(p.len),
        Bytes(p.capacity),
        h.live,
        Bytes(h.free),
        Bytes(h.largest_free),
        Bytes(p.high_water_len)
    )
}

impl MemoryMap {
    /// The rows of the label column, in tree order.
    fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let indent = |n: usize| "  ".repeat(n);
        for s in &self.scopes {
            let depth = s.depth as usize;
            let mut text = alloc::format!("{}{}  {}", indent(depth), s.name, Bytes(s.own_bytes));
            if let Some(b) = s.budget {
                let _ = write!(text, " of {} budget", Bytes(b));
            }
            if s.finalizers > 0 {
                let _ = write!(
                    text,
                    ", {} finalizer{}",
                    s.finalizers,
                    if s.finalizers == 1 { "" } else { "s" }
                );
            }
            if let Some(c) = s
                .concurrent
                .as_ref()
                .filter(|c| !(s.own_bytes == c.claimed_bytes && s.budget == Some(c.region_bytes)))
            {
                // What the text's region line says: what its threads claimed (chunks
                // and direct claims), of the region (unless the label has said it).
                let _ = write!(
                    text,
                    ", {} of {} claimed",
                    Bytes(c.claimed_bytes),
                    Bytes(c.region_bytes)
                );
            }
            rows.push(Row {
                text,
                kind: RowKind::Scope,
                range: (s.start, s.start.saturating_add(s.own_bytes)),
            });
            if let Some(c) = &s.concurrent {
                chunk_rows(&mut rows, c, depth + 1);
            }
            for item in containers(s) {
                match item {
                    Item::Row(r) => rows.push(Row {
                        text: indent(depth + 1 + r.depth) + &row_text(&r),
                        kind: if r.slot.is_some() {
                            RowKind::Slot
                        } else if r.row.kind == ARCHIVE {
                            RowKind::Archive
                        } else if r.row.heap.is_some() {
                            RowKind::Heap
                        } else {
                            RowKind::Pool
                        },
                        range: r.range,
                    }),
                    Item::Concurrent {
                        report, depth: d, ..
                    } => {
                        chunk_rows(&mut rows, report, depth + 1 + d);
                    }
                }
            }
        }
        let used = alloc::format!("{}", Bytes(self.used));
        if self.used == self.high_water_mark {
            rows.push(Row {
                text: alloc::format!("allocation point = high-water {used}"),
                kind: RowKind::AllocationPoint,
                range: (self.used, self.used),
            });
        } else {
            rows.push(Row {
                text: alloc::format!("allocation point {used}"),
                kind: RowKind::AllocationPoint,
                range: (self.used, self.used),
            });
            rows.push(Row {
                text: alloc::format!("high-water {}", Bytes(self.high_water_mark)),
                kind: RowKind::HighWater,
                range: (self.high_water_mark, self.high_water_mark),
            });
        }
        rows
    }

    /// Where the picture of this map puts its bands and every piece of text: the boxes
    /// [`to_svg`](Self::to_svg) draws, each `0.6 × font size` wide per character. No
    /// two boxes overlap, and all lie inside `0..width` × `0..height`.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    /// memory.scope("systems", |s| {
    ///     s.scope("level", |l| {
    ///         let layout = l.report().svg_layout();
    ///         let rows: Vec<_> = layout.labels.iter().filter(|l| l.leader_to.is_some()).collect();
    ///         assert_eq!(rows[0].text, "systems  0 B");
    ///         assert_eq!(rows[1].text, "  level  0 B");
    ///     });
    /// });
    /// ```
    #[doc(hidden)]
    pub fn svg_layout(&self) -> SvgLayout {
        let rows = self.rows();
        let mut labels = Vec::new();
        let title = alloc::format!(
            "Memory map: {} block, {} used ({:.1}%), high-water {} ({:.1}%)",
            Bytes(self.capacity),
            Bytes(self.used),
            percent(self.used, self.capacity),
            Bytes(self.high_water_mark),
            percent(self.high_water_mark, self.capacity),
        );
        labels.push(label(title, MARGIN, MARGIN, TITLE_FONT, Role::Title));
        let mut y = MARGIN + TITLE_FONT + 3.0 + 14.0;

        let zoom = self.capacity > 0
            && (self.high_water_mark as f64) < ZOOM_BELOW * self.capacity as f64
            && zoom_end(self.high_water_mark, self.capacity) < self.capacity;
        let end = if zoom {
            zoom_end(self.high_water_mark, self.capacity)
        } else {
            self.capacity
        };
        let overview_caption = alloc::format!("whole block, {}", Bytes(self.capacity));
        let band_caption = if zoom {
            alloc::format!("zoom: 0 to {}", ScaleUnit::for_end(end).label(end))
        } else {
            String::from("block")
        };
        // The label column is as wide as its widest text.
        let column = rows
            .iter()
            .map(|r| text_width(&r.text, ROW_FONT))
            .chain([
                text_width(&band_caption, ROW_FONT),
                if zoom {
                    text_width(&overview_caption, ROW_FONT)
                } else {
                    0.0
                },
            ])
            .fold(0.0, f64::max);
        let x0 = MARGIN + column + GAP;
        let x1 = x0 + BAND_W;

        let overview = zoom.then(|| {
            let band = Band {
                x0,
                x1,
                y,
                h: OVERVIEW_H,
                end: self.capacity,
            };
            labels.push(label(
                overview_caption,
                MARGIN,
                y + (OVERVIEW_H - ROW_FONT - 3.0) / 2.0,
                ROW_FONT,
                Role::Caption,
            ));
            y += OVERVIEW_H + 22.0;
            band
        });

        // Scale labels above the band: a power-of-two step with room between labels.
        let axis_y = y;
        y += AXIS_H;
        let band = Band {
            x0,
            x1,
            y,
            h: BAND_H,
            end,
        };
        let unit = ScaleUnit::for_end(end);
        let widest = text_width(&unit.label(end), SMALL_FONT) + 12.0;
        let most_ticks = ((BAND_W / widest.max(1.0)) as usize).max(1);
        let mut step = 1usize;
        while end / step > most_ticks && step < usize::MAX / 2 {
            step *= 2;
        }
        let mut last_right = f64::NEG_INFINITY;
        let mut tick = 0usize;
        loop {
            let text = unit.label(tick);
            let w = text_width(&text, SMALL_FONT);
            let cx = band.x(tick);
            let lx = (cx - w / 2.0).max(x0 - GAP / 2.0);
            if lx > last_right + 6.0 && lx + w <= x1 + RIGHT - 2.0 {
                last_right = lx + w;
                labels.push(label(text, lx, axis_y, SMALL_FONT, Role::Tick));
            }
            match tick.checked_add(step) {
                Some(next) if next <= end => tick = next,
                _ => break,
            }
        }
        labels.push(label(
            band_caption,
            MARGIN,
            y + (BAND_H - ROW_FONT - 3.0) / 2.0,
            ROW_FONT,
            Role::Caption,
        ));
        y += BAND_H + 14.0;

        // The rows, with leader ends on the band in increasing order.
        let mut items = Vec::new();
        let mut last_end = f64::NEG_INFINITY;
        for r in rows {
            let (a, b) = (band.x(r.range.0), band.x(r.range.1));
            let inset = ((b - a) / 2.0).min(LEADER_SEP);
            // Never left of the previous end: rows too narrow to hold their leaders
            // apart (a thread's chunks in a slot of a large block) share an end rather
            // than cross.
            let to = if a == b {
                a
            } else {
                (last_end + LEADER_SEP).max(a + inset).min(b)
            }
            .max(last_end);
            last_end = to;
            let mut l = label(r.text, MARGIN, y, ROW_FONT, Role::Row(r.kind));
            l.leader_to = Some((to, band.y + band.h));
            labels.push(l);
            items.push(r.range);
            y += ROW_STEP;
        }

        // The legend, wrapped to the picture's width.
        let width = (x1 + RIGHT).max(MARGIN + text_width(&labels[0].text, TITLE_FONT) + MARGIN);
        y += 8.0;
        let mut x = MARGIN;
        // One scope entry per depth drawn, in the colour the band uses for it.
        let depths = self
            .scopes
            .iter()
            .map(|s| s.depth)
            .max()
            .map_or(0, |d| d + 1);
        let mut entries: Vec<(&str, Swatch)> = Vec::new();
        let scope_entries: Vec<String> = (0..depths.min(SCOPE_DEPTH_COLOURS as u32))
            .map(|d| alloc::format!("scope, depth {d}"))
            .collect();
        for (d, text) in scope_entries.iter().enumerate() {
            entries.push((text, Swatch::Scope(d as u8)));
        }
        // Chunks and slots get an entry when the picture draws some.
        let drawn: Vec<Item<'_>> = self.scopes.iter().flat_map(containers).collect();
        let slot_in = |state: Option<SlotState>| {
            drawn.iter().any(|i| match i {
                Item::Row(r) => r.slot.is_some_and(|v| state.is_none_or(|s| v.state == s)),
                Item::Concurrent { .. } => false,
            })
        };
        let chunks = self.scopes.iter().any(|s| s.concurrent.is_some())
            || drawn.iter().any(|i| matches!(i, Item::Concurrent { .. }));
        if chunks {
            entries.push(("chunk (used part dark)", Swatch::Chunk));
        }
        entries.extend([("pool", Swatch::Pool), ("store", Swatch::Store)]);
        let heaps = drawn
            .iter()
            .any(|i| matches!(i, Item::Row(r) if r.slot.is_none() && r.row.heap.is_some()));
        if heaps {
            entries.push(("heap (bytes in use filled)", Swatch::Heap));
        }
        let archives = drawn
            .iter()
            .any(|i| matches!(i, Item::Row(r) if r.slot.is_none() && r.row.kind == ARCHIVE));
        if archives {
            entries.push(("archive (read in place)", Swatch::Archive));
        }
        if slot_in(None) {
            entries.push(("slot (used part filled)", Swatch::Slot));
        }
        if slot_in(Some(SlotState::Building)) {
            entries.push(("slot being built", Swatch::Building));
        }
        entries.extend([
            ("finalized object", Swatch::Finalizer),
            ("allocation point", Swatch::AllocationPoint),
            ("high-water mark", Swatch::HighWater),
            ("free", Swatch::Free),
        ]);
        for (text, swatch) in entries {
            let mut l = label(
                String::from(text),
                x,
                y,
                ROW_FONT - 1.0,
                Role::Legend(swatch),
            );
            l.width += 16.0;
            if l.x + l.width > width - MARGIN {
                y += ROW_STEP;
                l.x = MARGIN;
                l.y = y;
            }
            x = l.x + l.width + 18.0;
            labels.push(l);
        }
        y += ROW_STEP;
        SvgLayout {
            width,
            height: y + MARGIN,
            labels,
            band,
            overview,
            items,
        }
    }
}
