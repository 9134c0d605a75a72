//! What the table and the picture show of slots, checked on maps whose slot contents
//! and concurrent regions are filled in by hand (so the rendering is tested apart from
//! the gathering of that data): contents nest under their slot, a concurrent slot
//! shows its region like a concurrent scope, a slot being built says so, and a `Slots`
//! set carved in a slot is read from its rows.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{ChunkReport, ConcurrentReport, MemoryMap, PoolReport, SlotState};
use crate::{slot_root, LinearAllocator};

slot_root!(struct Unit = for<'s> ());

fn row(kind: &'static str, type_name: &str, owner: Option<usize>, offset: usize) -> PoolReport {
    PoolReport {
        kind,
        type_name: String::from(type_name),
        full_type_name: "hand::Made",
        owner,
        len: 3,
        capacity: 16,
        high_water_len: 5,
        high_water_exact: true,
        offset,
        bytes: 512,
        heap: None,
    }
}

/// A game scope with a `Slots` set "levels" of four 16 KiB slots: 0 loaded
/// ("castle", its contents filled in by hand), 1 free, 2 marked as being built
/// ("forest"), 3 loaded through a concurrent scope ("harbour", its region filled in
/// by hand).
fn map() -> MemoryMap {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        game.alloc_raw(1000, 8);
        let levels = game.new_slots("levels", 4, 16 * 1024);
        let _castle = levels
            .load::<Unit>("castle", |s| {
                s.alloc_raw(8 * 1024, 8);
            })
            .unwrap();
        let free = levels.load::<Unit>("gone", |_| ()).unwrap();
        let _forest = levels.load::<Unit>("forest", |_| ()).unwrap();
        let _harbour = levels
            .load::<Unit>("harbour", |s| {
                s.alloc_raw(4 * 1024, 8);
            })
            .unwrap();
        drop(free);
        let mut map = game.report();
        let set = &mut map.scopes[0].slots[0];
        let castle = set.slots[0].offset;
        // A store with its versions pool (listed first, owned by the store), a dense
        // pool, and a `Slots` set of two slots, one held.
        set.slots[0].contents = alloc::vec![
            row("Pool", "Version<Thing>", Some(1), castle + 1024),
            row("Store", "Thing", None, castle + 512),
            row("DensePool", "u32", None, castle + 2048),
            row("Slots", "rooms", None, castle + 4096),
            row("Slot", "free", Some(3), castle + 4096),
            row("Slot", "hall", Some(3), castle + 6144),
        ];
        let forest = &mut set.slots[2];
        forest.state = SlotState::Building;
        forest.used = 3 * 1024;
        let harbour = set.slots[3].offset;
        set.slots[3].concurrent = Some(ConcurrentReport {
            threads: 2,
            chunk_size: 1024,
            region_bytes: 4096,
            claimed_bytes: 2048,
            direct_bytes: 0,
            chunks: alloc::vec![
                ChunkReport {
                    thread: 1,
                    thread_name: None,
                    offset: harbour + 256,
                    bytes: 1024,
                    used: 700,
                    tail: 324,
                    current: true,
                },
                ChunkReport {
                    thread: 2,
                    thread_name: Some(String::from("loader")),
                    offset: harbour + 1280,
                    bytes: 1024,
                    used: 300,
                    tail: 724,
                    current: true,
                },
            ],
        });
        map
    })
}

/// Leading spaces of a line of the table.
fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[test]
fn the_table_nests_each_slots_contents_under_it() {
    let text = map().to_string();
    let lines: Vec<&str> = text.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in\n{text}"))
    };
    let castle = at("- Slot castle");
    assert!(lines[castle].contains("used 8.0 KiB of 16.0 KiB"), "{text}");
    // The contents, in tree order, one level deeper than the slot (two spaces), the
    // versions pool under its store and the rooms under their set.
    let expect = [
        ("- Store<Thing>", 2),
        ("- Pool<Version<Thing>>", 4),
        ("- DensePool<u32>", 2),
        ("- Slots rooms", 2),
        ("- Slot free", 4),
        ("- Slot hall", 4),
    ];
    for (i, (label, deeper)) in expect.iter().enumerate() {
        let line = lines[castle + 1 + i];
        assert!(line.trim_start().starts_with(label), "{line:?} in\n{text}");
        assert_eq!(
            indent_of(line),
            indent_of(lines[castle]) + deeper,
            "{line:?}"
        );
    }
    assert!(lines[castle + 1].contains("len 3/16 (high-water 5)"));
    assert!(lines[castle + 4].contains("3/16 slots held"));
    // A slot in a slot has no report of its own: its row says what it knows.
    assert!(lines[castle + 5].contains("free (high-water"), "{text}");
    assert!(lines[castle + 6].contains("used 3 B of 16 B"), "{text}");
    // Then the free slot of the outer set, back at the slot's level.
    let free = castle + 7;
    assert!(
        lines[free].trim_start().starts_with("- Slot free"),
        "{text}"
    );
    assert_eq!(indent_of(lines[free]), indent_of(lines[castle]));
    assert!(lines[free].contains("free (high-water"), "{text}");
}

#[test]
fn a_building_slot_shows_the_bytes_placed_so_far() {
    let text = map().to_string();
    let line = text.lines().find(|l| l.contains("- Slot forest")).unwrap();
    assert!(
        line.contains("building: 3.0 KiB placed so far of 16.0 KiB (high-water"),
        "{line}"
    );
    assert!(!line.contains("not known"), "{line}");
    let layout = map().svg_layout();
    assert!(
        layout
            .labels
            .iter()
            .any(|l| l.text.trim_start()
                == "Slot forest: building, 3.0 KiB of 16.0 KiB placed so far")
    );
    assert!(layout.labels.iter().any(|l| l.text == "slot being built"));
    let svg = map().to_svg();
    // The placed part is striped, over a slot drawn free, and as wide as its bytes:
    // 3 KiB of the slot's 16 KiB.
    let building = svg
        .lines()
        .find(|l| l.contains("class=\"slot-building\""))
        .unwrap_or_else(|| panic!("no slot-building rect in\n{svg}"));
    assert!(building.contains("fill=\"url(#building)\""), "{building}");
    assert!(svg.contains("Slot forest: building, 3072 of 16384 bytes placed so far"));
    let attr = |line: &str, name: &str| -> f64 {
        let at = line.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        line[at..].split('"').next().unwrap().parse().unwrap()
    };
    let slot = svg
        .lines()
        .find(|l| l.contains("class=\"slot\"") && l.contains("Slot forest"))
        .unwrap();
    let ratio = attr(building, "width") / attr(slot, "width");
    assert!(
        (ratio - 3.0 / 16.0).abs() < 0.02,
        "{ratio}: {building} / {slot}"
    );
}

#[test]
fn a_concurrent_slot_shows_its_region_like_a_concurrent_scope() {
    let text = map().to_string();
    let lines: Vec<&str> = text.lines().collect();
    let harbour = lines
        .iter()
        .position(|l| l.contains("- Slot harbour"))
        .unwrap();
    let summary = lines[harbour + 1];
    assert_eq!(
        summary.trim_start(),
        "1.0 KiB chunks for up to 2 threads, 2.0 KiB of 4.0 KiB claimed, 0 B direct"
    );
    assert_eq!(indent_of(summary), indent_of(lines[harbour]) + 2);
    assert!(lines[harbour + 2]
        .trim_start()
        .starts_with("- chunk of thread 1"));
    assert!(lines[harbour + 3].contains("used 300 B (724 B free)"));
    assert!(!text.contains(" slots, "), "{text}");
    let svg = map().to_svg();
    assert_eq!(svg.matches("class=\"chunk-used\"").count(), 2);
    let layout = map().svg_layout();
    assert!(layout
        .labels
        .iter()
        .any(|l| l.text.trim_start() == "chunk of thread 2 (loader): 300 B of 1.0 KiB used"));
    // The unnamed thread's rows carry its number only.
    assert!(map().to_string().contains("- chunk of thread 1 "));
    assert!(svg.contains("<title>chunk of thread 2 (loader): 300 of 1024 bytes used</title>"));
    assert!(layout
        .labels
        .iter()
        .any(|l| l.text == "chunk (used part dark)"));
}

/// The `(x, width)` of every `<rect class="CLASS"` of the picture, and its `y`.
fn rects(svg: &str, class: &str) -> Vec<(f64, f64, f64)> {
    let key = alloc::format!("<rect class=\"{class}\"");
    let attr = |rest: &str, name: &str| -> f64 {
        let key = alloc::format!(" {name}=\"");
        let rest = &rest[rest.find(&key).unwrap() + key.len()..];
        rest[..rest.find('"').unwrap()].parse().unwrap()
    };
    svg.match_indices(&key)
        .map(|(at, _)| {
            let rest = &svg[at..];
            let rest = &rest[..rest.find('>').unwrap()];
            (attr(rest, "x"), attr(rest, "width"), attr(rest, "y"))
        })
        .collect()
}

#[test]
fn the_picture_draws_a_slots_contents_inside_it_with_a_row_each() {
    let map = map();
    let svg = map.to_svg();
    // The set's four slots and the two of the set carved in the castle, in tree order.
    let slots = rects(&svg, "slot");
    assert_eq!(slots.len(), 6);
    let (sx, sw, sy) = slots[0];
    // The store, its versions pool and the dense pool, drawn inside the castle's slot
    // and below its top (its used part shows above them).
    let pools = rects(&svg, "pool");
    assert_eq!(pools.len(), 3, "{svg}");
    for (x, w, y) in pools {
        assert!(
            x >= sx - 0.01 && x + w <= sx + sw + 0.01,
            "{x} {w} in {sx} {sw}"
        );
        assert!(y > sy, "{y} below {sy}");
    }
    // The nested set and its slots are drawn too, one row deeper.
    assert_eq!(rects(&svg, "slots").len(), 2);
    let layout = map.svg_layout();
    let rows: Vec<&str> = layout
        .labels
        .iter()
        .filter(|l| l.leader_to.is_some())
        .map(|l| l.text.as_str())
        .collect();
    let castle = rows
        .iter()
        .position(|r| {
            r.trim_start()
                .starts_with("Slot castle: 8.0 KiB of 16.0 KiB used")
        })
        .unwrap_or_else(|| panic!("{rows:?}"));
    let depth = |r: &str| r.len() - r.trim_start().len();
    assert!(rows[castle + 1]
        .trim_start()
        .starts_with("Store<Thing> 3/16"));
    assert_eq!(depth(rows[castle + 1]), depth(rows[castle]) + 2);
    assert!(rows[castle + 2]
        .trim_start()
        .starts_with("Pool<Version<Thing>> 3/16"));
    assert!(rows[castle + 4]
        .trim_start()
        .starts_with("Slots rooms: 3/16 held"));
    assert_eq!(rows[castle + 5].trim_start(), "Slot free, 16 B");
    assert_eq!(rows[castle + 6].trim_start(), "Slot hall: 3 B of 16 B used");
    // No two labels overlap.
    for (i, a) in layout.labels.iter().enumerate() {
        for b in &layout.labels[i + 1..] {
            let apart = a.x + a.width <= b.x
                || b.x + b.width <= a.x
                || a.y + a.height <= b.y
                || b.y + b.height <= a.y;
            assert!(apart, "{a:?} overlaps {b:?}");
        }
    }
}

#[test]
fn a_heap_is_a_row_of_its_own_kind_with_its_figures() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        level.new_pool::<u64>(8);
        let heap = level.new_heap(4096);
        let a = allocator_api2::boxed::Box::new_in([0u8; 300], heap);
        let _b = allocator_api2::boxed::Box::new_in([0u8; 100], heap);
        drop(a); // a hole: two free blocks
        let map = level.report();
        let (free, largest) = (heap.free(), heap.largest_free());
        let svg = map.to_svg();
        // Its own box and gauge, not a hatched pool: the pool is the only `pool` rect.
        assert_eq!(rects(&svg, "pool").len(), 1, "{svg}");
        let boxes = rects(&svg, "heap");
        let used = rects(&svg, "heap-used");
        assert_eq!((boxes.len(), used.len()), (1, 1), "{svg}");
        // The gauge is a share of the box: 100 of 4096 bytes, from its start.
        assert_eq!(used[0].0, boxes[0].0);
        assert!(used[0].1 < boxes[0].1 / 10.0, "{used:?} {boxes:?}");
        // The tooltip has every figure, in bytes.
        let title = alloc::format!(
            "<title>Heap: 100 of 4096 bytes in use in 1 live allocation, {free} bytes free \
             in 2 blocks (largest {largest}), high-water 400 bytes</title>"
        );
        assert!(svg.contains(&title), "{title} not in\n{svg}");
        // Its row in the label column says the same, in the heap's colour, and the
        // legend names the colour.
        let layout = map.svg_layout();
        let row = layout
            .labels
            .iter()
            .find(|l| l.text.trim_start().starts_with("Heap "))
            .unwrap_or_else(|| panic!("{:?}", layout.labels));
        assert_eq!(
            row.role,
            crate::report::layout::Role::Row(crate::report::layout::RowKind::Heap)
        );
        let expect = alloc::format!(
            "Heap 100 B used of 4.0 KiB, 1 live, {} free (largest {}), high-water 400 B",
            crate::report::map::Bytes(free),
            crate::report::map::Bytes(largest)
        );
        assert_eq!(row.text.trim_start(), expect);
        assert!(row.leader_to.is_some());
        assert!(layout
            .labels
            .iter()
            .any(|l| l.text == "heap (bytes in use filled)"));
        assert!(svg.contains("fill=\"#a0401a\">Heap 100 B used"), "{svg}");
    });
    // No heap, no heap entry in the legend.
    memory.scope("empty", |s| {
        let layout = s.report().svg_layout();
        assert!(!layout.labels.iter().any(|l| l.text.starts_with("heap")));
    });
}
