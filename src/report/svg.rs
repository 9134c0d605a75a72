//! The memory map as a picture: the block drawn as one horizontal band, like the
//! "Memory Layout" diagrams of the scope-stack talk.
//!
//! Invariant: the drawing is a pure function of a [`MemoryMap`] snapshot; positions are
//! proportional to offsets in the block (anything past its end is drawn at the end, and
//! no sum of offsets can overflow), and every name is XML-escaped.

use alloc::string::String;
use core::fmt::Write as _;

use super::map::MemoryMap;

/// Picture width and band geometry, in SVG user units.
const WIDTH: f64 = 1000.0;
const MARGIN: f64 = 20.0;
const BAND_Y: f64 = 110.0;
const BAND_H: f64 = 60.0;

/// Fill colours for scopes by depth (cycled).
const SCOPE_COLOURS: [&str; 6] = [
    "#8fb8de", "#9fd39a", "#f3c77a", "#e8a0bf", "#b9a7e0", "#8ed3cf",
];

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

impl MemoryMap {
    /// Draws the block as a horizontal band: each live scope is a labelled segment
    /// (nested scopes one row lower), pools are hatched, finalized objects are red ticks,
    /// and two markers show the allocation point and the high-water mark.
    ///
    /// ```
    /// # use scope_stack::LinearAllocator;
    /// let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    /// memory.scope("systems", |systems| {
    ///     systems.new_object(String::from("lock"));
    ///     let svg = systems.report().to_svg();
    ///     assert!(svg.starts_with("<svg"));
    ///     assert!(svg.contains(">systems<"));
    /// });
    /// ```
    pub fn to_svg(&self) -> String {
        let depth_rows = self
            .scopes
            .iter()
            .map(|s| s.depth)
            .max()
            .map_or(0, |d| d + 1);
        let height = BAND_Y + BAND_H + 70.0 + 18.0 * depth_rows as f64;
        let inner = WIDTH - 2.0 * MARGIN;
        // Offsets past the block (a map edited by hand) are drawn at its end.
        let x = |off: usize| -> f64 {
            if self.capacity == 0 {
                MARGIN
            } else {
                MARGIN + inner * (off.min(self.capacity) as f64 / self.capacity as f64)
            }
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
             viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"12\">"
        );
        s.push_str(
            "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
             patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\" \
             fill-opacity=\"0.35\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#333\" \
             stroke-width=\"2\"/></pattern></defs>\n",
        );
        let _ = writeln!(
            s,
            "<rect width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>\n\
             <text x=\"{MARGIN}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">Memory map: {} bytes, \
             {} used, high-water {}</text>",
            self.capacity, self.used, self.high_water_mark
        );
        // The free block.
        let _ = writeln!(
            s,
            "<rect x=\"{MARGIN}\" y=\"{BAND_Y}\" width=\"{inner}\" height=\"{BAND_H}\" \
             fill=\"#e6e6e6\" stroke=\"#555\"/>"
        );
        for scope in &self.scopes {
            let colour = SCOPE_COLOURS[scope.depth as usize % SCOPE_COLOURS.len()];
            let x0 = x(scope.start);
            let own_w = (x(scope.start.saturating_add(scope.own_bytes)) - x0).max(1.0);
            let _ = writeln!(
                s,
                "<rect class=\"scope\" x=\"{x0:.2}\" y=\"{BAND_Y}\" width=\"{own_w:.2}\" \
                 height=\"{BAND_H}\" fill=\"{colour}\" stroke=\"#333\" stroke-width=\"0.5\">\
                 <title>{} — {} bytes</title></rect>",
                escape(&scope.name),
                scope.own_bytes
            );
            // Label below the band, one row per depth, with a bracket over the
            // inclusive extent.
            let row_y = BAND_Y + BAND_H + 22.0 + 18.0 * scope.depth as f64;
            let x1 = x(scope.start.saturating_add(scope.inclusive_bytes)).max(x0 + 1.0);
            let _ = writeln!(
                s,
                "<line x1=\"{x0:.2}\" y1=\"{y:.2}\" x2=\"{x1:.2}\" y2=\"{y:.2}\" stroke=\"{colour}\" \
                 stroke-width=\"4\"/>\n<text x=\"{tx:.2}\" y=\"{ty:.2}\">{}</text>",
                escape(&scope.name),
                y = row_y - 4.0,
                tx = x0 + 2.0,
                ty = row_y + 10.0,
            );
            for (i, pool) in scope.pools.iter().enumerate() {
                let px = x(pool.offset);
                let pw = (x(pool.offset.saturating_add(pool.bytes)) - px).max(1.0);
                let _ = writeln!(
                    s,
                    "<rect class=\"pool\" x=\"{px:.2}\" y=\"{y:.2}\" width=\"{pw:.2}\" \
                     height=\"{h:.2}\" fill=\"url(#hatch)\" stroke=\"#333\"><title>{}&lt;{}&gt; \
                     {}/{} live, high-water {}{}</title></rect>\n<text x=\"{tx:.2}\" y=\"{ty:.2}\" \
                     font-size=\"10\">{}&lt;{}&gt; {}/{}</text>",
                    pool.kind,
                    escape(&pool.type_name),
                    pool.len,
                    pool.capacity,
                    if pool.high_water_exact { "" } else { "≤ " },
                    pool.high_water_len,
                    pool.kind,
                    escape(&pool.type_name),
                    pool.len,
                    pool.capacity,
                    y = BAND_Y + 18.0,
                    h = BAND_H - 18.0,
                    tx = px + 2.0,
                    // Stagger neighbouring labels so narrow pools stay readable.
                    ty = BAND_Y - 28.0 - 12.0 * (i % 3) as f64,
                );
            }
            for &off in &scope.finalizer_offsets {
                let fx = x(off);
                let _ = writeln!(
                    s,
                    "<line class=\"finalizer\" x1=\"{fx:.2}\" y1=\"{y0}\" x2=\"{fx:.2}\" \
                     y2=\"{y1}\" stroke=\"#c0392b\" stroke-width=\"1.5\"/>",
                    y0 = BAND_Y + BAND_H - 14.0,
                    y1 = BAND_Y + BAND_H,
                );
            }
        }
        // Markers: allocation point and high-water mark.
        let ax = x(self.used);
        let hx = x(self.high_water_mark);
        let _ = writeln!(
            s,
            "<line class=\"high-water\" x1=\"{hx:.2}\" y1=\"{y0}\" x2=\"{hx:.2}\" y2=\"{y1}\" \
             stroke=\"#7f8c8d\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>\n\
             <text x=\"{hx:.2}\" y=\"{ty}\" font-size=\"11\" fill=\"#555\" text-anchor=\"start\">\
             high-water</text>\n\
             <line class=\"allocation-point\" x1=\"{ax:.2}\" y1=\"{y0}\" x2=\"{ax:.2}\" y2=\"{y1}\" \
             stroke=\"#c0392b\" stroke-width=\"2\"/>\n\
             <text x=\"{ax:.2}\" y=\"{ay}\" font-size=\"11\" fill=\"#c0392b\" text-anchor=\"end\">\
             allocation point</text>",
            y0 = BAND_Y - 16.0,
            y1 = BAND_Y + BAND_H + 4.0,
            ty = BAND_Y - 20.0,
            ay = BAND_Y - 4.0,
        );
        // Legend.
        let ly = height - 12.0;
        let _ = writeln!(
            s,
            "<g font-size=\"11\"><rect x=\"{MARGIN}\" y=\"{y}\" width=\"12\" height=\"12\" \
             fill=\"{c}\"/><text x=\"{t1}\" y=\"{ly}\">scope</text>\
             <rect x=\"{p}\" y=\"{y}\" width=\"12\" height=\"12\" fill=\"url(#hatch)\" \
             stroke=\"#333\"/><text x=\"{t2}\" y=\"{ly}\">pool</text>\
             <line x1=\"{f}\" y1=\"{y}\" x2=\"{f}\" y2=\"{ly}\" stroke=\"#c0392b\" \
             stroke-width=\"1.5\"/><text x=\"{t3}\" y=\"{ly}\">finalized object</text>\
             <rect x=\"{fr}\" y=\"{y}\" width=\"12\" height=\"12\" fill=\"#e6e6e6\" \
             stroke=\"#555\"/><text x=\"{t4}\" y=\"{ly}\">free</text></g>",
            y = ly - 10.0,
            c = SCOPE_COLOURS[0],
            t1 = MARGIN + 16.0,
            p = MARGIN + 70.0,
            t2 = MARGIN + 86.0,
            f = MARGIN + 130.0,
            t3 = MARGIN + 136.0,
            fr = MARGIN + 240.0,
            t4 = MARGIN + 256.0,
        );
        s.push_str("</svg>\n");
        s
    }
}
