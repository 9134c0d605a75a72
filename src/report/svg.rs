//! The memory map as a picture: the block drawn as one horizontal band, like the
//! "Memory Layout" diagrams of the scope-stack talk, with a column of labels beside it.
//!
//! Invariant: the drawing is a pure function of a [`MemoryMap`] snapshot and of its
//! [`SvgLayout`](super::layout::SvgLayout), which places every text; this module only
//! draws what the layout placed, inside the layout's size. Positions on a band are
//! proportional to offsets in the block (anything past the band's end is drawn at its
//! end, and no sum of offsets can overflow), and every name is XML-escaped.

use alloc::string::String;
use core::fmt::Write as _;

use super::concurrent::ConcurrentReport;
use super::layout::{
    Band, Role, RowKind, SvgLabel, SvgLayout, Swatch, CHAR_WIDTH, FONT_FAMILY, SCOPE_DEPTH_COLOURS,
};
use super::map::{thread_label, MemoryMap};
use super::pool_row::PoolReport;
use super::scope_row::ScopeReport;
use super::slots::SlotState;
use super::tree::{containers, Item, RowItem, SlotView, ARCHIVE, SLOTS};

// Each colour (or pattern) means one thing, and the legend names it.

/// Fill colours for scopes by depth (cycled): mid-tone blue, green, pink, violet, teal
/// and amber, none of them near the store's yellow, the slots' brown or the free
/// grey, and the first four well apart from each other. The legend shows one entry per
/// depth drawn.
const SCOPE_COLOURS: [&str; SCOPE_DEPTH_COLOURS] = [
    "#7fb0e0", "#8fd18a", "#f08fb8", "#a07cd0", "#4fc0a8", "#e8a040",
];
/// Free bytes: the block past the allocation point, and the unused part of a slot.
const FREE: &str = "#e6e6e6";
/// A store: yellow with a dark golden outline (a clear yellow, apart from the free grey).
const STORE: &str = "#ffe58a";
const STORE_EDGE: &str = "#9a7b00";
/// A slot's used part: brown, with a dark brown outline around each slot and its set.
const SLOT: &str = "#a87c5a";
const SLOT_EDGE: &str = "#5c3d24";
/// A heap: its region a light coral with a dark rust outline, and a gauge of its
/// bytes in use in a stronger coral (the TLSF scatters its blocks, so the gauge is a
/// share, not where they lie).
const HEAP: &str = "#fbd3c0";
const HEAP_USED: &str = "#e4703c";
const HEAP_EDGE: &str = "#a0401a";
/// A level's archived bytes, read in place: a lavender box with a dark violet outline.
const ARCHIVED: &str = "#cdb8ec";
const ARCHIVED_EDGE: &str = "#5b3f8c";
/// A chunk's used part (over the scope's colour).
const CHUNK_USED: &str = "#2c3e50";
/// Finalized objects: red ticks.
const RED: &str = "#c0392b";
/// The allocation point: a strong blue line (red is the finalizers').
const ALLOCATION: &str = "#1f4fe0";
/// The high-water mark: a grey dashed line.
const GREY: &str = "#7f8c8d";

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

fn colour(scope: &ScopeReport) -> &'static str {
    depth_colour(scope.depth as usize)
}

fn depth_colour(depth: usize) -> &'static str {
    SCOPE_COLOURS[depth % SCOPE_COLOURS.len()]
}

/// Writes `label`'s text where the layout put it (baseline near the box's bottom).
fn text(s: &mut String, l: &SvgLabel, attrs: &str) {
    // Leading spaces indent the label; draw them as an offset, since SVG collapses them.
    let trimmed = l.text.trim_start_matches(' ');
    let indent = (l.text.len() - trimmed.len()) as f64 * CHAR_WIDTH * l.font_size;
    let _ = writeln!(
        s,
        "<text x=\"{:.2}\" y=\"{:.2}\" font-size=\"{}\"{attrs}>{}</text>",
        l.x + indent,
        l.y + l.font_size * 0.85,
        l.font_size,
        escape(trimmed)
    );
}

impl MemoryMap {
    /// Draws the block as a horizontal band: each live scope is a coloured segment,
    /// pools are hatched (a store's versions pool inside its store), heaps are coral
    /// boxes with a gauge of their bytes in use, each slot of a `Slots` set is a
    /// brown-edged box whose used part is filled brown and the rest free (striped
    /// while it is being built, when its bytes are not known), with what
    /// the slot holds drawn inside it; finalized objects are red ticks, and two markers
    /// show the allocation point (blue) and the high-water mark (grey, dashed). A column
    /// of labels on the left names every scope, container, slot and marker in tree
    /// order, with a leader line to its place on the band; the legend names every colour.
    /// When less than half of the block was ever used, the band zooms in on the used
    /// part and a thin band above shows the whole block.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("systems", |systems| {
    ///     systems.new_object(String::from("lock"));
    ///     let svg = systems.report().to_svg();
    ///     assert!(svg.starts_with("<svg"));
    ///     assert!(svg.contains(">systems  "));
    /// });
    /// ```
    pub fn to_svg(&self) -> String {
        let layout = self.svg_layout();
        let (width, height) = (layout.width, layout.height);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
             viewBox=\"0 0 {width:.2} {height:.2}\" xml:space=\"preserve\" font-family=\"{FONT_FAMILY}\" font-size=\"12\">"
        );
        s.push_str(
            "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
             patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\" \
             fill-opacity=\"0.35\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#333\" \
             stroke-width=\"2\"/></pattern>",
        );
        // The part of a slot being built that its build has placed so far: stripes of
        // the slots' colour over free, since the figure still grows.
        let _ = writeln!(
            s,
            "<pattern id=\"building\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" \
             patternTransform=\"rotate(-45)\"><rect width=\"8\" height=\"8\" fill=\"{FREE}\"/>\
             <rect width=\"4\" height=\"8\" fill=\"{SLOT}\"/></pattern></defs>",
        );
        let _ = writeln!(
            s,
            "<rect width=\"{width:.2}\" height=\"{height:.2}\" fill=\"#ffffff\"/>"
        );
        if let Some(ov) = &layout.overview {
            self.draw_overview(&mut s, ov, &layout.band);
        }
        self.draw_band(&mut s, &layout);
        for l in &layout.labels {
            self.draw_label(&mut s, l);
        }
        s.push_str("</svg>\n");
        s
    }

    /// The whole block, thin, with the zoomed range outlined and joined to the band.
    fn draw_overview(&self, s: &mut String, ov: &Band, band: &Band) {
        let _ = writeln!(
            s,
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{}\" fill=\"{FREE}\" stroke=\"#555\"/>",
            ov.x0,
            ov.y,
            ov.x1 - ov.x0,
            ov.h
        );
        for scope in &self.scopes {
            let x0 = ov.x(scope.start);
            let w = (ov.x(scope.start.saturating_add(scope.own_bytes)) - x0).max(0.5);
            let _ = writeln!(
                s,
                "<rect class=\"scope-overview\" x=\"{x0:.2}\" y=\"{:.2}\" width=\"{w:.2}\" \
                 height=\"{}\" fill=\"{}\"/>",
                ov.y,
                ov.h,
                colour(scope)
            );
        }
        let zx = ov.x(band.end).max(ov.x0 + 1.0);
        let bottom = ov.y + ov.h;
        let _ = writeln!(
            s,
            "<rect class=\"zoom\" x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"none\" \
             stroke=\"#333\" stroke-width=\"1.5\"/>\n\
             <path d=\"M {:.2} {bottom:.2} L {:.2} {:.2} M {zx:.2} {bottom:.2} L {:.2} {:.2}\" \
             fill=\"none\" stroke=\"#999\" stroke-dasharray=\"3 3\"/>",
            ov.x0,
            ov.y - 1.0,
            zx - ov.x0,
            ov.h + 2.0,
            ov.x0,
            band.x0,
            bottom + 18.0,
            band.x1,
            bottom + 18.0,
        );
        self.draw_markers(s, ov, 3.0);
    }

    /// The band the scopes, pools and finalizers are drawn in, with its scale.
    fn draw_band(&self, s: &mut String, layout: &SvgLayout) {
        let band = &layout.band;
        let (top, bottom) = (band.y, band.y + band.h);
        let _ = writeln!(
            s,
            "<rect x=\"{:.2}\" y=\"{top:.2}\" width=\"{:.2}\" height=\"{}\" fill=\"{FREE}\" stroke=\"#555\"/>",
            band.x0,
            band.x1 - band.x0,
            band.h
        );
        for scope in &self.scopes {
            let x0 = band.x(scope.start);
            let own_w = (band.x(scope.start.saturating_add(scope.own_bytes)) - x0).max(1.0);
            let _ = writeln!(
                s,
                "<rect class=\"scope\" x=\"{x0:.2}\" y=\"{top:.2}\" width=\"{own_w:.2}\" \
                 height=\"{}\" fill=\"{}\" stroke=\"#333\" stroke-width=\"0.5\">\
                 <title>{} — {} bytes</title></rect>",
                band.h,
                colour(scope),
                escape(&scope.name),
                scope.own_bytes
            );
            if let Some(c) = &scope.concurrent {
                draw_chunks(s, band, c, top + 3.0, 12.0);
            }
            for item in containers(scope) {
                match item {
                    Item::Row(r) => draw_row(s, band, &r),
                    // A slot's chunks, in the slot above what it holds.
                    Item::Concurrent { report, nest, .. } => {
                        let y = row_top(band, nest.saturating_sub(1));
                        draw_chunks(s, band, report, y, 10.0);
                    }
                }
            }
            for &off in &scope.finalizer_offsets {
                let fx = band.x(off);
                let _ = writeln!(
                    s,
                    "<line class=\"finalizer\" x1=\"{fx:.2}\" y1=\"{:.2}\" x2=\"{fx:.2}\" \
                     y2=\"{bottom:.2}\" stroke=\"{RED}\" stroke-width=\"1.5\"/>",
                    bottom - 14.0,
                );
            }
        }
        // Scale ticks on the band's top edge, one per scale label.
        for l in layout.labels.iter().filter(|l| l.role == Role::Tick) {
            let cx = l.x + l.width / 2.0;
            let tx = cx.clamp(band.x0, band.x1);
            let _ = writeln!(
                s,
                "<line x1=\"{tx:.2}\" y1=\"{:.2}\" x2=\"{tx:.2}\" y2=\"{top:.2}\" stroke=\"#555\"/>",
                top - 3.0
            );
        }
        self.draw_markers(s, band, 6.0);
    }

    /// The allocation point and the high-water mark on `band`, `over` units past it.
    fn draw_markers(&self, s: &mut String, band: &Band, over: f64) {
        let (ax, hx) = (band.x(self.used), band.x(self.high_water_mark));
        let (y0, y1) = (band.y - over, band.y + band.h + over);
        let _ = writeln!(
            s,
            "<line class=\"high-water\" x1=\"{hx:.2}\" y1=\"{y0:.2}\" x2=\"{hx:.2}\" y2=\"{y1:.2}\" \
             stroke=\"{GREY}\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>\n\
             <line class=\"allocation-point\" x1=\"{ax:.2}\" y1=\"{y0:.2}\" x2=\"{ax:.2}\" y2=\"{y1:.2}\" \
             stroke=\"{ALLOCATION}\" stroke-width=\"2\"/>"
        );
    }

    /// A piece of text, with its leader line or legend swatch.
    fn draw_label(&self, s: &mut String, l: &SvgLabel) {
        match l.role {
            Role::Title => text(s, l, " font-weight=\"bold\""),
            Role::Caption => text(s, l, " fill=\"#555\""),
            Role::Tick => text(s, l, " fill=\"#555\""),
            Role::Row(kind) => {
                let colour = match kind {
                    RowKind::Scope | RowKind::Pool | RowKind::Slot => "#222",
                    RowKind::Heap => HEAP_EDGE,
                    RowKind::Archive => ARCHIVED_EDGE,
                    RowKind::Chunk => "#444",
                    RowKind::AllocationPoint => ALLOCATION,
                    RowKind::HighWater => GREY,
                };
                if let Some((to_x, to_y)) = l.leader_to {
                    let y = l.y + l.height / 2.0;
                    let _ = writeln!(
                        s,
                        "<path class=\"leader\" d=\"M {:.2} {y:.2} L {to_x:.2} {y:.2} L {to_x:.2} {to_y:.2}\" \
                         fill=\"none\" stroke=\"{colour}\" stroke-opacity=\"0.45\" stroke-width=\"0.8\"/>",
                        l.x + l.width + 4.0,
                    );
                }
                text(s, l, &alloc::format!(" fill=\"{colour}\""));
            }
            Role::Legend(swatch) => {
                // The element of class `key` carries the entry's colour or pattern.
                let (x, y) = (l.x, l.y + 1.0);
                let box_ = |fill: &str, edge: &str| {
                    alloc::format!(
                        "<rect class=\"key\" x=\"{x:.2}\" y=\"{y:.2}\" width=\"12\" height=\"12\" \
                         fill=\"{fill}\" stroke=\"{edge}\" stroke-width=\"0.8\"/>"
                    )
                };
                let line = |colour: &str, width: f64, dash: &str| {
                    alloc::format!(
                        "<line class=\"key\" x1=\"{:.2}\" y1=\"{y:.2}\" x2=\"{:.2}\" y2=\"{:.2}\" \
                         stroke=\"{colour}\" stroke-width=\"{width}\"{dash}/>",
                        x + 6.0,
                        x + 6.0,
                        y + 12.0
                    )
                };
                // A box half used: the used part is the key, over a light box.
                let half = |base: &str, used: &str, opacity: &str, edge: &str| {
                    alloc::format!(
                        "<rect x=\"{x:.2}\" y=\"{y:.2}\" width=\"12\" height=\"12\" fill=\"{base}\" \
                         stroke=\"{edge}\" stroke-width=\"0.8\"/>\n\
                         <rect class=\"key\" x=\"{x:.2}\" y=\"{y:.2}\" width=\"7\" height=\"12\" \
                         fill=\"{used}\" fill-opacity=\"{opacity}\"/>"
                    )
                };
                let swatch = match swatch {
                    Swatch::Scope(depth) => box_(depth_colour(depth as usize), "#333"),
                    Swatch::Chunk => half("#ffffff", CHUNK_USED, "0.7", "#333"),
                    Swatch::Pool => box_("url(#hatch)", "#333"),
                    Swatch::Store => box_(STORE, STORE_EDGE),
                    Swatch::Slot => half(FREE, SLOT, "1", SLOT_EDGE),
                    Swatch::Building => box_("url(#building)", SLOT_EDGE),
                    Swatch::Heap => half(HEAP, HEAP_USED, "1", HEAP_EDGE),
                    Swatch::Archive => box_(ARCHIVED, ARCHIVED_EDGE),
                    Swatch::Finalizer => line(RED, 1.5, ""),
                    Swatch::AllocationPoint => line(ALLOCATION, 2.0, ""),
                    Swatch::HighWater => line(GREY, 1.5, " stroke-dasharray=\"4 3\""),
                    Swatch::Free => box_(FREE, "#555"),
                };
                s.push_str(&swatch);
                s.push('\n');
                let mut shifted = l.clone();
                shifted.x += 16.0;
                shifted.width -= 16.0;
                text(s, &shifted, "");
            }
        }
    }
}

/// The top of a container drawn `nest` slots deep: a scope's containers start 18 below
/// the band's top, and each slot's contents 14 lower than the slot's own row, so a
/// slot shows its used part above what it holds.
fn row_top(band: &Band, nest: usize) -> f64 {
    (band.y + 18.0 + 14.0 * nest as f64).min(band.y + band.h - 8.0)
}

/// A concurrent region's chunks, each `h` high from `y`: the used part dark, the tail
/// light (the row in the label column names the owner thread and the figures).
fn draw_chunks(s: &mut String, band: &Band, c: &ConcurrentReport, y: f64, h: f64) {
    for ch in &c.chunks {
        let cx = band.x(ch.offset);
        let cw = (band.x(ch.offset.saturating_add(ch.bytes)) - cx).max(0.5);
        let uw = (band.x(ch.offset.saturating_add(ch.used)) - cx).clamp(0.0, cw);
        let _ = writeln!(
            s,
            "<rect class=\"chunk\" x=\"{cx:.2}\" y=\"{y:.2}\" width=\"{cw:.2}\" \
             height=\"{h}\" fill=\"#ffffff\" fill-opacity=\"0.6\" stroke=\"#333\" \
             stroke-width=\"0.5\"><title>chunk of {}: {} of {} bytes used</title></rect>\n\
             <rect class=\"chunk-used\" x=\"{cx:.2}\" y=\"{y:.2}\" width=\"{uw:.2}\" \
             height=\"{h}\" fill=\"{CHUNK_USED}\" fill-opacity=\"0.7\"/>",
            escape(&thread_label(ch.thread, ch.thread_name.as_deref())),
            ch.used,
            ch.bytes,
        );
    }
}

/// What a slot's tooltip says.
fn slot_title(v: &SlotView<'_>) -> String {
    let name = escape(v.name);
    match v.state {
        SlotState::Free if v.run > 1 => alloc::format!(
            "{} slots free: {} bytes each, high-water {}",
            v.run,
            v.capacity,
            v.high_water
        ),
        SlotState::Free => alloc::format!(
            "Slot {name}: {} bytes, high-water {}",
            v.capacity,
            v.high_water
        ),
        SlotState::Building => alloc::format!(
            "Slot {name}: building, {} of {} bytes placed so far, high-water {}",
            v.used,
            v.capacity,
            v.high_water
        ),
        SlotState::Loaded => alloc::format!(
            "Slot {name}: {} of {} bytes used, high-water {}",
            v.used,
            v.capacity,
            v.high_water
        ),
    }
}

/// What a heap's tooltip says: the figures of its row in the table.
fn heap_title(p: &PoolReport) -> String {
    let h = p.heap_figures();
    alloc::format!(
        "Heap: {} of {} bytes in use in {} live allocation{}, {} bytes free in {} block{} \
         (largest {}), high-water {} bytes",
        p.len,
        p.capacity,
        h.live,
        if h.live == 1 { "" } else { "s" },
        h.free,
        h.free_blocks,
        if h.free_blocks == 1 { "" } else { "s" },
        h.largest_free,
        p.high_water_len
    )
}

/// A heap on the band, from `y` down: its whole storage (region and `Heap`) light,
/// with a gauge of the bytes in use filled from the region's start.
fn draw_heap(s: &mut String, band: &Band, p: &PoolReport, x: f64, w: f64, y: f64) {
    let bottom = band.y + band.h;
    let _ = writeln!(
        s,
        "<rect class=\"heap\" x=\"{x:.2}\" y=\"{y:.2}\" width=\"{w:.2}\" height=\"{:.2}\" \
         fill=\"{HEAP}\" stroke=\"{HEAP_EDGE}\" stroke-width=\"0.8\"><title>{}</title></rect>",
        bottom - y,
        heap_title(p)
    );
    if p.len > 0 {
        let ux = band.x(p.offset);
        let used = p.offset.saturating_add(p.len.min(p.capacity));
        let uw = (band.x(used) - ux).clamp(0.5, w);
        let _ = writeln!(
            s,
            "<rect class=\"heap-used\" x=\"{ux:.2}\" y=\"{y:.2}\" width=\"{uw:.2}\" \
             height=\"{:.2}\" fill=\"{HEAP_USED}\" stroke=\"{HEAP_EDGE}\" stroke-width=\"0.8\"/>",
            bottom - y,
        );
    }
}

/// A container's row on the band: a slot, a `Slots` set's outline, a store, a heap or a
/// pool.
fn draw_row(s: &mut String, band: &Band, r: &RowItem<'_>) {
    let bottom = band.y + band.h;
    let y = row_top(band, r.nest);
    let p = r.row;
    let (a, b) = r.range;
    let x = band.x(a);
    let w = (band.x(b) - x).max(1.0);
    if let Some(v) = &r.slot {
        // The whole slot free, its used part filled from its start, where its cursor
        // begins: solid when loaded, striped while a build is still placing (at
        // least a sliver, so a build that has placed nothing yet still shows).
        let sy = y - 2.0;
        let _ = writeln!(
            s,
            "<rect class=\"slot\" x=\"{x:.2}\" y=\"{sy:.2}\" width=\"{w:.2}\" height=\"{:.2}\" \
             fill=\"{FREE}\" stroke=\"{SLOT_EDGE}\" stroke-width=\"0.8\"><title>{}</title></rect>",
            bottom - sy,
            slot_title(v)
        );
        let used_part = match v.state {
            SlotState::Loaded if v.used > 0 => Some(("slot-used", SLOT)),
            SlotState::Building => Some(("slot-building", "url(#building)")),
            _ => None,
        };
        if let Some((class, fill)) = used_part {
            let used = p.offset.saturating_add(v.used.min(v.capacity));
            let uw = (band.x(used) - band.x(p.offset)).clamp(0.5, w);
            let _ = writeln!(
                s,
                "<rect class=\"{class}\" x=\"{:.2}\" y=\"{sy:.2}\" width=\"{uw:.2}\" \
                 height=\"{:.2}\" fill=\"{fill}\" stroke=\"{SLOT_EDGE}\" stroke-width=\"0.8\"/>",
                band.x(p.offset),
                bottom - sy,
            );
        }
        return;
    }
    if p.kind == SLOTS {
        let sy = y - 4.0;
        let _ = writeln!(
            s,
            "<rect class=\"slots\" x=\"{x:.2}\" y=\"{sy:.2}\" width=\"{w:.2}\" height=\"{:.2}\" \
             fill=\"none\" stroke=\"{SLOT_EDGE}\" stroke-width=\"1.2\"><title>Slots {}: {}/{} held, \
             high-water {}</title></rect>",
            bottom - sy,
            escape(&p.type_name),
            p.len,
            p.capacity,
            p.high_water_len
        );
        return;
    }
    if p.heap.is_some() {
        draw_heap(s, band, p, x, w, y);
        return;
    }
    if p.kind == ARCHIVE {
        let _ = writeln!(
            s,
            "<rect class=\"archive\" x=\"{x:.2}\" y=\"{y:.2}\" width=\"{w:.2}\" height=\"{:.2}\" \
             fill=\"{ARCHIVED}\" stroke=\"{ARCHIVED_EDGE}\" stroke-width=\"0.8\"><title>{ARCHIVE} {}: \
             {} archived, read in place</title></rect>",
            bottom - y,
            escape(&p.type_name),
            super::map::Bytes(p.bytes),
        );
        return;
    }
    // A row owned by another (a store's versions pool) sits in the lower half of its
    // owner.
    let py = if r.level > 0 {
        (y + 16.0).min(bottom - 4.0)
    } else {
        y
    };
    let (fill, edge) = if r.owns {
        (STORE, STORE_EDGE)
    } else {
        ("url(#hatch)", "#333")
    };
    let _ = writeln!(
        s,
        "<rect class=\"pool\" x=\"{x:.2}\" y=\"{py:.2}\" width=\"{w:.2}\" \
         height=\"{:.2}\" fill=\"{fill}\" stroke=\"{edge}\"><title>{}&lt;{}&gt; \
         {}/{} live, high-water {}{}</title></rect>",
        bottom - py,
        p.kind,
        escape(&p.type_name),
        p.len,
        p.capacity,
        if p.high_water_exact { "" } else { "≤ " },
        p.high_water_len,
    );
    if r.owns {
        // The owner's own bytes, hatched like a pool, in its lower half.
        let oy = (py + 16.0).min(bottom - 4.0);
        let ox = band.x(p.offset);
        let ow = (band.x(p.offset.saturating_add(p.bytes)) - ox).max(1.0);
        let _ = writeln!(
            s,
            "<rect x=\"{ox:.2}\" y=\"{oy:.2}\" width=\"{ow:.2}\" height=\"{:.2}\" \
             fill=\"url(#hatch)\" stroke=\"#333\"/>",
            bottom - oy
        );
    }
}
