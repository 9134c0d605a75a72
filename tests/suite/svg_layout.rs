//! The memory map picture is readable: its labels never overlap, nothing lies outside
//! the picture, a block used 1.6% is drawn zoomed in, type names are short, a store's
//! versions pool is listed under its store, slots are drawn as slots (free ones free,
//! a used one's used part in proportion), and every colour of the legend means one
//! thing.
//!
//! Set `SCOPE_STACK_SVG_DIR` to a folder to also write the pictures there.

use scope_stack::{LinearAllocator, MemoryMap, SvgLabel, SvgLayout};

/// Objects the scene puts in its pools, scaled down under Miri (where each insert into
/// a fresh 32-shard pool costs a visit to every shard): the carved sizes, and so the
/// picture's proportions, stay the same.
const ENEMIES: usize = if cfg!(miri) { 70 } else { 700 };
const PROJECTILES: usize = if cfg!(miri) { 150 } else { 1500 };
const PROPS: u64 = if cfg!(miri) { 30 } else { 300 };

#[derive(Clone, Copy, Default)]
struct Enemy {
    _position: [f32; 3],
    _health: u32,
}

#[derive(Clone, Copy, Default)]
struct Projectile {
    _position: [f32; 3],
    _velocity: [f32; 3],
}

/// A game's block: systems with a store and a pool, a level with pools, a dense pool
/// and finalized objects, and on top either a frame scope of `frame_bytes` or a
/// concurrent loading scope. Returns the map taken from the innermost scope.
fn scene(capacity: usize, frame_bytes: usize, concurrent: bool) -> MemoryMap {
    let mut memory = LinearAllocator::with_capacity(capacity).unwrap();
    memory.scope("systems", |systems| {
        systems.new_object(String::from("renderer"));
        systems.alloc_slice_fill_with(8 * 1024, |i| i as u8);
        let settings = systems.new_store::<[f32; 4]>(64, 128);
        for i in 0..20 {
            settings.create([i as f32; 4]).unwrap();
        }
        let names = systems.new_pool::<String>(32);
        let _n = names.insert(String::from("player")).unwrap();
        systems.scope_with_budget("level", 448 * 1024, |level| {
            level.alloc_slice_fill_with(24 * 1024, |i| i as u32);
            let enemies = level.new_pool::<Enemy>(2048);
            let projectiles = level.new_pool::<Projectile>(4096);
            let sounds = level.new_pool::<Option<Vec<String>>>(64);
            let tuples = level.new_pool::<(u8, [u16; 3])>(16);
            let _e: Vec<_> = (0..ENEMIES)
                .map(|_| enemies.insert(Enemy::default()))
                .collect();
            let _p: Vec<_> = (0..PROJECTILES)
                .map(|_| projectiles.insert(Projectile::default()))
                .collect();
            let _s = sounds.insert(None).unwrap();
            let _t = tuples.insert((1, [2; 3])).unwrap();
            let props = level.new_dense_pool::<u64>(512);
            for i in 0..PROPS {
                props.insert(i).unwrap();
            }
            level.new_object(String::from("level name"));
            if concurrent {
                level.scope_concurrent("loading", |loading| {
                    // All three live at once, so each has a thread index (and chunk) of
                    // its own.
                    let all_started = std::sync::Barrier::new(3);
                    std::thread::scope(|t| {
                        for _ in 0..3 {
                            t.spawn(|| {
                                all_started.wait();
                                loading.alloc_slice_fill_with(2000, |i| i as u32);
                                loading.new_object(String::from("mesh"));
                                loading.alloc_str("mesh name");
                                all_started.wait();
                            });
                        }
                    });
                    loading.report()
                })
            } else {
                level.scope("frame", |frame| {
                    frame.alloc_slice_fill_with(16 * 1024, |i| i as u16);
                    frame.scope("job", |job| {
                        job.alloc_raw(frame_bytes, 16);
                        job.report()
                    })
                })
            }
        })
    })
}

fn overlap(a: &SvgLabel, b: &SvgLabel) -> bool {
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
}

/// Every number in an attribute `name="..."` of the picture.
fn attribute_values(svg: &str, name: &str) -> Vec<f64> {
    let key = format!(" {name}=\"");
    svg.match_indices(&key)
        .map(|(at, _)| {
            let rest = &svg[at + key.len()..];
            rest[..rest.find('"').unwrap()].parse::<f64>().unwrap()
        })
        .collect()
}

/// The checks every picture must pass.
fn assert_readable(map: &MemoryMap, name: &str) -> SvgLayout {
    let layout = map.svg_layout();
    let svg = map.to_svg();
    if let Some(dir) = std::env::var_os("SCOPE_STACK_SVG_DIR") {
        std::fs::write(std::path::Path::new(&dir).join(format!("{name}.svg")), &svg).unwrap();
    }
    let (w, h) = (layout.width, layout.height);
    assert!(
        svg.contains(&format!("viewBox=\"0 0 {w:.2} {h:.2}\"")),
        "{name}"
    );
    for (i, a) in layout.labels.iter().enumerate() {
        assert!(
            a.x >= 0.0 && a.y >= 0.0 && a.x + a.width <= w && a.y + a.height <= h,
            "{name}: {a:?} lies outside 0 0 {w} {h}"
        );
        assert_eq!(
            a.width,
            a.text.chars().count() as f64 * 0.6 * a.font_size + legend(a)
        );
        for b in &layout.labels[i + 1..] {
            assert!(!overlap(a, b), "{name}: {a:?} overlaps {b:?}");
        }
        if let Some((x, y)) = a.leader_to {
            assert!(
                (0.0..=w).contains(&x) && (0.0..=h).contains(&y),
                "{name}: {a:?}"
            );
        }
    }
    // Leaders end in increasing order, so none crosses another.
    let ends: Vec<f64> = layout
        .labels
        .iter()
        .filter_map(|l| l.leader_to.map(|(x, _)| x))
        .collect();
    assert!(ends.windows(2).all(|p| p[0] <= p[1]), "{name}: {ends:?}");
    // Nothing is drawn outside the picture.
    for attr in ["x", "x1", "x2"] {
        for v in attribute_values(&svg, attr) {
            assert!((0.0..=w).contains(&v), "{name}: {attr}={v} outside 0..{w}");
        }
    }
    for attr in ["y", "y1", "y2"] {
        for v in attribute_values(&svg, attr) {
            assert!((0.0..=h).contains(&v), "{name}: {attr}={v} outside 0..{h}");
        }
    }
    // Every text the picture draws is a label of the layout.
    assert_eq!(svg.matches("<text ").count(), layout.labels.len(), "{name}");
    // Type names are short. (A chunk's row may name its thread, and the test harness
    // names each test's thread after its path.)
    for l in layout
        .labels
        .iter()
        .filter(|l| !l.text.contains(" of thread "))
    {
        assert!(!l.text.contains("::"), "{name}: {}", l.text);
    }
    layout
}

/// Legend boxes start with a 16-unit swatch.
fn legend(l: &SvgLabel) -> f64 {
    let legend = [
        "pool",
        "store",
        "slot (used part filled)",
        "slot being built",
        "finalized object",
        "allocation point",
        "high-water mark",
        "free",
        "chunk (used part dark)",
    ];
    let entry = legend.contains(&l.text.as_str()) || l.text.starts_with("scope, depth ");
    if entry && l.leader_to.is_none() {
        16.0
    } else {
        0.0
    }
}

fn rows(layout: &SvgLayout) -> Vec<&str> {
    layout
        .labels
        .iter()
        .filter(|l| l.leader_to.is_some())
        .map(|l| l.text.as_str())
        .collect()
}

#[test]
fn a_block_used_90_percent_has_no_overlapping_labels() {
    // 512 KiB: about 366 KiB before the job, which takes the block to ~90%.
    let map = scene(512 * 1024, 94 * 1024, false);
    let used = map.used as f64 / map.capacity as f64;
    assert!((0.85..0.95).contains(&used), "{used}");
    let layout = assert_readable(&map, "used_90");
    let rows = rows(&layout);
    let store = rows
        .iter()
        .position(|r| r.starts_with("  Store<[f32; 4]> 20/64"))
        .unwrap();
    assert!(rows[store + 1].starts_with("    Pool<Version<[f32; 4]>> 20/128"));
    assert!(rows
        .iter()
        .any(|r| r.starts_with(&format!("    Pool<Enemy> {ENEMIES}/2048"))));
    assert!(rows
        .iter()
        .any(|r| r.starts_with("    Pool<Option<Vec<String>>> 1/64")));
    assert!(rows
        .iter()
        .any(|r| r.starts_with("    Pool<(u8, [u16; 3])> 1/16")));
    assert!(rows
        .iter()
        .any(|r| r.starts_with(&format!("    DensePool<u64> {PROPS}/512"))));
    assert!(rows.iter().any(|r| r.starts_with("      job  94.0 KiB")));
    assert!(rows
        .last()
        .unwrap()
        .starts_with("allocation point = high-water"));
}

#[test]
fn a_block_used_1_6_percent_is_drawn_zoomed_in() {
    // 22.5 MiB with about 366 KiB in use: 1.6%.
    let map = scene(45 * 512 * 1024, 100, false);
    let used = map.used as f64 * 100.0 / map.capacity as f64;
    assert!((1.4..1.8).contains(&used), "{used}");
    let layout = assert_readable(&map, "used_1_6");
    assert!(layout
        .labels
        .iter()
        .any(|l| l.text == "whole block, 22.5 MiB"));
    let zoom = layout
        .labels
        .iter()
        .find(|l| l.text.starts_with("zoom: 0 to "))
        .unwrap();
    assert_eq!(zoom.text, "zoom: 0 to 448 KiB");
    // Each scope has room on the band: its leader ends at least 40 units from the next
    // scope's.
    let scope_ends: Vec<f64> = layout
        .labels
        .iter()
        .filter(|l| {
            ["systems", "  level", "    frame"]
                .iter()
                .any(|s| l.text.starts_with(&format!("{s}  ")))
        })
        .map(|l| l.leader_to.unwrap().0)
        .collect();
    assert_eq!(scope_ends.len(), 3);
    assert!(
        scope_ends.windows(2).all(|p| p[1] - p[0] > 40.0),
        "{scope_ends:?}"
    );
}

#[test]
fn a_concurrent_scope_and_a_store_read_well() {
    let map = scene(1 << 20, 0, true);
    let layout = assert_readable(&map, "concurrent");
    let rows = rows(&layout);
    assert!(
        rows.iter().any(|r| r.starts_with("    loading  ")),
        "{rows:?}"
    );
    let svg = map.to_svg();
    assert!(svg.contains("class=\"chunk\""));
    // Each chunk has a row naming its owner thread and its used bytes, as the text
    // report has, and a filled part on the band as wide as its used share.
    let report = map.scopes.last().unwrap().concurrent.as_ref().unwrap();
    assert!(report.chunks.len() >= 3, "{report:?}");
    for ch in &report.chunks {
        let row = match &ch.thread_name {
            Some(n) => format!("chunk of thread {} ({n}): ", ch.thread),
            None => format!("chunk of thread {}: ", ch.thread),
        };
        assert!(
            rows.iter().any(|r| r.trim_start().starts_with(&row)),
            "{rows:?}"
        );
    }
    let used_parts = svg.matches("class=\"chunk-used\"").count();
    assert_eq!(used_parts, report.chunks.len());
    let chunk_rows: Vec<_> = rows
        .iter()
        .filter(|r| r.contains("chunk of thread"))
        .collect();
    assert_eq!(chunk_rows.len(), report.chunks.len(), "{rows:?}");
    assert!(
        chunk_rows.iter().all(|r| r.contains(" used")),
        "{chunk_rows:?}"
    );
    assert!(layout
        .labels
        .iter()
        .any(|l| l.text == "chunk (used part dark)"));
}

/// The fill of every `<rect class="CLASS" ...>` of the picture.
fn fills(svg: &str, class: &str) -> Vec<String> {
    let key = format!("<rect class=\"{class}\"");
    svg.match_indices(&key)
        .map(|(at, _)| {
            let rest = &svg[at..];
            let rest = &rest[rest.find(" fill=\"").unwrap() + 7..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

/// Red, green and blue of a `#rrggbb` colour.
fn rgb(colour: &str) -> [i32; 3] {
    let c = colour.trim_start_matches('#');
    [0, 2, 4].map(|i| i32::from_str_radix(&c[i..i + 2], 16).unwrap())
}

#[test]
fn the_legend_shows_each_scope_colour_drawn_and_they_are_distinguishable() {
    let map = scene(512 * 1024, 1024, false);
    let layout = assert_readable(&map, "legend");
    let svg = map.to_svg();
    let depths = map.scopes.iter().map(|s| s.depth).max().unwrap() + 1;
    assert_eq!(depths, 4); // systems, level, frame, job
                           // One legend entry per depth, and its swatch has the colour of that depth's scopes.
    let entries: Vec<_> = layout
        .labels
        .iter()
        .filter(|l| l.text.starts_with("scope, depth "))
        .collect();
    assert_eq!(entries.len(), depths as usize);
    let drawn = fills(&svg, "scope");
    assert_eq!(drawn.len(), map.scopes.len());
    for (scope, fill) in map.scopes.iter().zip(&drawn) {
        let entry = format!("scope, depth {}", scope.depth);
        let text = svg
            .find(&format!(">{entry}</text>"))
            .expect("a legend entry");
        // The swatch is the rect written just before the entry's text.
        let swatch = &svg[svg[..text].rfind("<rect ").unwrap()..text];
        assert!(
            swatch.contains(&format!("fill=\"{fill}\"")),
            "{entry}: {swatch}"
        );
    }
    // Scope colours differ from each other, from the store's yellow and from the
    // free grey by a clear margin (sum of channel differences).
    let store = "#ffe58a";
    let free = "#e6e6e6";
    let mut colours: Vec<&str> = drawn.iter().map(String::as_str).collect();
    colours.dedup();
    assert_eq!(colours.len(), depths as usize);
    for (i, a) in colours.iter().enumerate() {
        for b in colours[i + 1..].iter().chain([&store, &free]) {
            let d: i32 = (0..3).map(|k| (rgb(a)[k] - rgb(b)[k]).abs()).sum();
            assert!(d >= 90, "{a} and {b} are too close ({d})");
        }
    }
    assert!(
        !svg.contains("fill=\"#f3c77a\""),
        "the old orange was close to the store"
    );
}

#[test]
fn an_empty_map_and_a_tiny_block_still_fit() {
    let memory = LinearAllocator::with_capacity(64).unwrap();
    assert_readable(&memory.report(), "empty");
    let mut memory = LinearAllocator::with_capacity(100).unwrap();
    memory.scope("a scope with a long name that is longer than most", |s| {
        s.alloc_raw(99, 1);
        assert_readable(&s.report(), "tiny");
    });
}

#[test]
fn the_allocation_point_and_a_higher_high_water_mark_get_a_row_each() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("loading", |l| {
        l.alloc_raw(100 * 1024, 8);
    });
    memory.scope("game", |game| {
        game.alloc_raw(1024, 8);
        let layout = assert_readable(&game.report(), "high_water");
        let rows = rows(&layout);
        assert_eq!(
            rows,
            [
                "game  1.0 KiB",
                "allocation point 1.0 KiB",
                "high-water 100.0 KiB"
            ]
        );
        assert!(layout.labels.iter().any(|l| l.text == "zoom: 0 to 112 KiB"));
    });
}

scope_stack::slot_root!(struct Cell = for<'s> &'s scope_stack::Pool<'s, u64>);
scope_stack::slot_root!(struct Unit = for<'s> ());

/// A block with a `Slots` set of three 48 KiB cells: one loaded with terrain and a
/// pool, one being built on another thread while the map is taken, one free.
fn slots_scene() -> MemoryMap {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        game.alloc_raw(4000, 8);
        let cells = game.new_slots("cells", 3, 48 * 1024);
        let _loaded = cells
            .load::<Cell>("cell 0,0", |s| {
                s.alloc_raw(20_000, 8);
                &*s.new_pool::<u64>(64)
            })
            .unwrap();
        let (placed, reported) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|t| {
            t.spawn(|| {
                let building = cells.load::<Unit>("cell 0,1", |s| {
                    s.alloc_raw(40_000, 8);
                    placed.wait();
                    reported.wait();
                });
                drop(building.unwrap());
            });
            placed.wait();
            let map = game.report();
            reported.wait();
            map
        })
    })
}

/// Every number in attribute `name` of an element's text.
fn attribute(element: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let rest = &element[element.find(&key)? + key.len()..];
    Some(rest[..rest.find('"').unwrap()].to_string())
}

/// The elements `<rect class="CLASS" ...>` of the picture, as their attribute text.
fn elements<'s>(svg: &'s str, class: &str) -> Vec<&'s str> {
    let key = format!("<rect class=\"{class}\"");
    svg.match_indices(&key)
        .map(|(at, _)| {
            let rest = &svg[at..];
            &rest[..rest.find('>').unwrap()]
        })
        .collect()
}

/// Each legend entry's text and the colour (or pattern) of its swatch's key element.
fn legend_keys(svg: &str) -> Vec<(String, String)> {
    svg.match_indices(" class=\"key\"")
        .map(|(at, _)| {
            let rest = &svg[at..];
            let key = &rest[..rest.find('>').unwrap()];
            let colour = attribute(key, "fill")
                .filter(|f| f != "none")
                .or_else(|| attribute(key, "stroke"))
                .unwrap();
            let text = &rest[rest.find("<text ").unwrap()..];
            let text = &text[text.find('>').unwrap() + 1..text.find("</text>").unwrap()];
            (text.to_string(), colour)
        })
        .collect()
}

fn number(element: &str, name: &str) -> f64 {
    attribute(element, name).unwrap().parse().unwrap()
}

#[test]
fn slots_are_drawn_free_used_or_being_built() {
    let map = slots_scene();
    let layout = assert_readable(&map, "slots");
    let svg = map.to_svg();
    let set = &map.scopes[0].slots[0];
    let keys = legend_keys(&svg);
    let key = |text: &str| {
        keys.iter()
            .find(|(t, _)| t == text)
            .map(|(_, c)| c.clone())
            .unwrap_or_else(|| panic!("no legend entry {text:?} in {keys:?}"))
    };
    // One box per slot, in order; the used part of each loaded slot drawn over it in
    // the slots' own colour, from the slot's start and in proportion to its bytes.
    let slots = elements(&svg, "slot");
    let used = elements(&svg, "slot-used");
    assert_eq!((slots.len(), used.len()), (3, 1), "{svg}");
    let slot_colour = key("slot (used part filled)");
    assert_eq!(attribute(used[0], "fill").unwrap(), slot_colour);
    assert_eq!(number(used[0], "x"), number(slots[0], "x"));
    let share = number(used[0], "width") / number(slots[0], "width");
    let bytes = set.slots[0].used as f64 / set.bytes_each as f64;
    assert!(set.slots[0].used >= 20_000, "{:?}", set.slots[0]);
    assert!((share - bytes).abs() < 0.01, "{share} drawn for {bytes}");
    // The free slot is drawn free, and nothing is drawn used in it.
    assert_eq!(set.slots[2].state, scope_stack::SlotState::Free);
    assert_eq!(attribute(slots[2], "fill").unwrap(), key("free"));
    let free_x = number(slots[2], "x");
    assert!(used.iter().all(|u| number(u, "x") != free_x));
    // The slot being built: drawn free, with the part its build has placed so far
    // in its own pattern and legend entry, from the slot's start and in proportion
    // to those bytes, and its row says so.
    assert_eq!(set.slots[1].state, scope_stack::SlotState::Building);
    assert_eq!(attribute(slots[1], "fill").unwrap(), key("free"));
    let building = elements(&svg, "slot-building");
    assert_eq!(building.len(), 1, "{svg}");
    assert_eq!(
        attribute(building[0], "fill").unwrap(),
        key("slot being built")
    );
    assert_eq!(number(building[0], "x"), number(slots[1], "x"));
    let share = number(building[0], "width") / number(slots[1], "width");
    let placed = set.slots[1].used as f64 / set.bytes_each as f64;
    assert!(set.slots[1].used >= 40_000, "{:?}", set.slots[1]);
    assert!((share - placed).abs() < 0.01, "{share} drawn for {placed}");
    let rows = rows(&layout);
    assert!(
        rows.iter().any(
            |r| r.trim_start() == "Slot cell 0,1: building, 39.1 KiB of 48.0 KiB placed so far"
        ),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r.trim_start().starts_with("Slot cell 0,0: ")
                && r.ends_with(" of 48.0 KiB used"))
    );
    assert!(rows.iter().any(|r| r.trim_start() == "Slot free, 48.0 KiB"));
    // Slots are not drawn as pools or stores: the one pool drawn is the one the loaded
    // cell holds, inside its slot and below the slot's top, with a row under the slot's.
    let pools = elements(&svg, "pool");
    assert_eq!(pools.len(), 1, "{svg}");
    let (x, w) = (number(pools[0], "x"), number(pools[0], "width"));
    let (sx, sw) = (number(slots[0], "x"), number(slots[0], "width"));
    assert!(x >= sx && x + w <= sx + sw + 0.01, "{x} {w} in {sx} {sw}");
    assert!(number(pools[0], "y") > number(slots[0], "y"));
    let cell = rows
        .iter()
        .position(|r| r.trim_start().starts_with("Slot cell 0,0: "))
        .unwrap();
    assert!(
        rows[cell + 1].starts_with("      Pool<u64> 0/64, "),
        "{rows:?}"
    );
}

#[test]
fn every_legend_colour_means_one_thing() {
    let scenes = [
        (slots_scene(), "slots"),
        (scene(1 << 20, 0, true), "concurrent"),
        (scene(512 * 1024, 1024, false), "legend"),
    ];
    // Miri interprets the layout slowly: one scene (every legend entry but the
    // chunk's) is enough there.
    let take = if cfg!(miri) { 1 } else { scenes.len() };
    for (map, name) in scenes.into_iter().take(take) {
        let svg = map.to_svg();
        let layout = assert_readable(&map, name);
        let keys = legend_keys(&svg);
        let entries = layout.labels.iter().filter(|l| legend(l) > 0.0).count();
        assert_eq!(keys.len(), entries, "{name}: {keys:?}");
        for (i, (a, ca)) in keys.iter().enumerate() {
            for (b, cb) in &keys[i + 1..] {
                assert_ne!(ca, cb, "{name}: {a:?} and {b:?} share a colour");
                if ca.starts_with('#') && cb.starts_with('#') {
                    let d: i32 = (0..3).map(|k| (rgb(ca)[k] - rgb(cb)[k]).abs()).sum();
                    assert!(d >= 80, "{name}: {a:?} {ca} and {b:?} {cb} are too close");
                }
            }
        }
        // The markers: finalizers red, the allocation point in a colour of its own.
        let marker = |class: &str| {
            let at = svg.find(&format!("<line class=\"{class}\"")).unwrap();
            attribute(&svg[at..at + svg[at..].find('>').unwrap()], "stroke").unwrap()
        };
        assert_eq!(
            marker("allocation-point"),
            keys.iter().find(|k| k.0 == "allocation point").unwrap().1
        );
        assert_eq!(
            marker("high-water"),
            keys.iter().find(|k| k.0 == "high-water mark").unwrap().1
        );
        if svg.contains("<line class=\"finalizer\"") {
            assert_eq!(
                marker("finalizer"),
                keys.iter().find(|k| k.0 == "finalized object").unwrap().1
            );
        }
    }
}

/// Slots loaded through concurrent scopes at several offsets: every chunk row of the
/// text and of the picture counts from the start of the block and lies inside its own
/// slot (they once counted from the slot's start, so the picture drew every slot's
/// chunks inside the first slot), a thread's chunks fold into one row, the scale has
/// one unit, and a run of free slots is one row.
#[test]
fn concurrent_slots_at_several_offsets_are_drawn_in_their_slots() {
    use scope_stack::{slot_root, Loaded, Shared};
    slot_root!(struct Bytes = for<'s> &'s [u8]);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("systems", |systems| {
        let levels = systems.new_slots("levels", 5, 512 << 10);
        let load = |name: &str, n: usize| -> Loaded<'_, Bytes, Shared> {
            levels
                .load_concurrent::<Bytes>(name, |s| {
                    let parts: Vec<usize> = std::thread::scope(|t| {
                        let hs: Vec<_> = (0..2)
                            .map(|_| {
                                t.spawn(move || {
                                    // Several chunks per thread: 24 small allocations.
                                    (0..24)
                                        .map(|_| s.alloc_slice_fill_copy(300, 7u8).len())
                                        .sum()
                                })
                            })
                            .collect();
                        hs.into_iter().map(|h| h.join().unwrap()).collect()
                    });
                    &*s.alloc_slice_fill_copy(n + parts.len(), 1u8)
                })
                .unwrap()
        };
        let a = load("harbour", 100);
        let b = load("canyon", 200);
        let c = load("glacier", 300);
        drop(b); // a free slot between two loaded ones, and two free at the end
        let map = systems.report();
        let set = &map.scopes[0].slots[0];
        let mut chunks = 0;
        for slot in &set.slots {
            let Some(region) = &slot.concurrent else {
                continue;
            };
            for ch in &region.chunks {
                chunks += 1;
                assert!(
                    ch.offset >= slot.offset
                        && ch.offset + ch.bytes <= slot.offset + set.bytes_each,
                    "chunk {ch:?} outside slot {} at {}",
                    slot.index,
                    slot.offset
                );
            }
        }
        assert!(chunks >= 4, "{set:?}");
        let text = map.to_string();
        assert!(text.contains(" chunks of thread "), "{text}");
        assert_eq!(text.matches("- 2 Slots free").count(), 1, "{text}");
        // Leaders end in increasing order (assert_readable): a chunk drawn in the wrong
        // slot would send its leader back across the others.
        let layout = assert_readable(&map, "concurrent_slots");
        let rows = rows(&layout);
        assert!(rows.iter().any(|r| r.contains("2 Slots free")), "{rows:?}");
        assert!(
            rows.iter().any(|r| r.contains(" chunks of thread ")),
            "{rows:?}"
        );
        // One unit on the scale.
        let ticks: Vec<&str> = layout
            .labels
            .iter()
            .filter(|l| l.leader_to.is_none() && (l.text == "0" || l.text.ends_with('B')))
            .map(|l| l.text.as_str())
            .filter(|t| {
                *t == "0"
                    || t.split(' ')
                        .next()
                        .is_some_and(|n| n.parse::<f64>().is_ok())
            })
            .collect();
        let units: std::collections::BTreeSet<&str> =
            ticks.iter().filter_map(|t| t.split(' ').nth(1)).collect();
        assert_eq!(units.len(), 1, "{ticks:?}");
        drop((a, c));
    });
}
