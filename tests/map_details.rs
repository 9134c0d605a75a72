//! The memory map's details (issue 47 item 6): a heap's row counts its bytes wherever
//! its `Heap` was placed; a thread with a name shows it in the map; a set with many
//! slots held folds the alike ones into one line and says how many wait for a slot.
#![cfg(feature = "std")]

use scope_stack::{slot_root, Heap, LinearAllocator};

slot_root!(struct HeapRoot = for<'s> &'s Heap);

/// The size of a heap's region for `bytes` asked (whole 32-byte granules on 64-bit).
fn region(bytes: usize) -> usize {
    bytes.next_multiple_of(2 * size_of::<usize>() * 2)
}

#[test]
fn a_heap_row_counts_its_region_and_the_heap_beside_it() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let _heap = game.new_heap(8 << 10);
        let levels = game.new_slots("levels", 1, 64 << 10);
        let level = levels
            .load::<HeapRoot>("level", |s| s.new_heap(4096))
            .unwrap();
        let map = game.report();
        let row = &map.scopes[0].pools[0];
        assert_eq!(row.kind, "Heap");
        assert_eq!(row.bytes, region(8 << 10) + size_of::<Heap>());
        let inner = &map.scopes[0].slots[0].slots[0].contents[0];
        assert_eq!(inner.kind, "Heap");
        assert_eq!(inner.bytes, region(4096) + size_of::<Heap>());
        drop(level);
    });
}

#[test]
fn a_heap_whose_heap_sits_in_a_threads_chunk_still_counts_its_region() {
    // A 2 MiB slot gives 16 KiB chunks: the `Heap` (about 3.7 KiB) fits in the chunk
    // the string claimed, before the 100 KiB region, which is placed directly.
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 2 << 20);
        let level = levels
            .load_concurrent::<HeapRoot>("level", |s| {
                let _ = s.alloc_str("x");
                s.new_heap(100 << 10)
            })
            .unwrap();
        let map = game.report();
        let slot = &map.scopes[0].slots[0].slots[0];
        let heap = slot.contents.iter().find(|p| p.kind == "Heap").unwrap();
        // The region alone: the chunk's row counts the `Heap`.
        assert_eq!(heap.bytes, region(100 << 10));
        assert_eq!(heap.capacity, region(100 << 10));
        // Summing the slot's rows and chunks now accounts for what it uses.
        let chunks: usize = slot
            .concurrent
            .as_ref()
            .unwrap()
            .chunks
            .iter()
            .map(|c| c.used)
            .sum();
        let rows: usize = slot.contents.iter().map(|p| p.bytes).sum();
        assert!(
            rows + chunks <= slot.used,
            "{rows} + {chunks} > {}",
            slot.used
        );
        assert!(rows >= 100 << 10);
        let text = map.to_string();
        let line = text.lines().find(|l| l.contains("- Heap")).unwrap();
        assert!(line.contains("100.0 KiB  0 B used of 100.0 KiB"), "{line}");
        drop(level);
    });
}
