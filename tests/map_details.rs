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

slot_root!(struct Unit = for<'s> ());
slot_root!(struct Bytes = for<'s> &'s [u8]);

#[test]
fn held_slots_with_one_name_and_nothing_inside_share_a_line() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("service", |service| {
        let requests = service.new_slots("requests", 70, 1024);
        let held: Vec<_> = (0..64)
            .map(|i| {
                requests
                    .load::<Bytes>("request", |s| {
                        &*s.alloc_slice_copy(&[0u8; 100][..i % 3 + 1])
                    })
                    .unwrap()
            })
            .collect();
        // One held slot with a pool in it, and one with another name: lines of their own.
        let with_pool = requests
            .load::<Unit>("request", |s| {
                s.new_pool::<u64>(4);
            })
            .unwrap();
        let health = requests.load::<Unit>("health", |_| ()).unwrap();
        let map = service.report();
        // The data keeps a slot each.
        assert_eq!(map.scopes[0].slots[0].slots.len(), 70);
        assert_eq!(map.scopes[0].slots[0].loaded, 66);
        let text = map.to_string();
        let folded: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("Slots request "))
            .collect();
        assert_eq!(folded.len(), 1, "{text}");
        let line = folded[0];
        assert!(line.contains("- 64 Slots request"), "{line}");
        // Their bytes in all, what they use, least and most of one slot.
        assert!(line.contains("64.0 KiB  used "), "{line}");
        assert!(line.contains(" each of 1.0 KiB, "), "{line}");
        // The slot with a pool in it, its pool under it, and the other holder.
        assert_eq!(
            text.lines()
                .filter(|l| l.contains("- Slot request"))
                .count(),
            1
        );
        assert!(text.contains("- Pool<u64>"));
        assert_eq!(
            text.lines().filter(|l| l.contains("- Slot health")).count(),
            1
        );
        assert!(text.contains("- 4 Slots free"), "{text}");
        drop((held, with_pool, health));
        // Nothing held: the set's slots are one free run.
        let text = service.report().to_string();
        assert!(text.contains("- 70 Slots free"), "{text}");
    });
}

#[test]
fn a_single_held_slot_keeps_its_own_line() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 3, 1024);
        let a = levels.load::<Unit>("forest", |_| ()).unwrap();
        let b = levels.load::<Unit>("castle", |_| ()).unwrap();
        let text = game.report().to_string();
        assert!(text.contains("- Slot forest"), "{text}");
        assert!(text.contains("- Slot castle"), "{text}");
        assert!(!text.contains("Slots forest"), "{text}");
        drop((a, b));
    });
}

#[test]
fn the_map_counts_threads_waiting_for_a_slot() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("service", |service| {
        let requests = service.new_slots("requests", 1, 1024);
        let set = || service.report().scopes[0].slots[0].clone();
        assert_eq!(set().waiting, 0);
        let held = requests.load::<Unit>("request", |_| ()).unwrap();
        std::thread::scope(|t| {
            let waiters: Vec<_> = (0..2)
                .map(|_| t.spawn(|| drop(requests.load_wait::<Unit>("next", |_| ()))))
                .collect();
            while set().waiting < 2 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            assert_eq!(set().waiting, 2);
            let text = service.report().to_string();
            assert!(
                text.contains("1/1 slots held (high-water 1), 2 waiting"),
                "{text}"
            );
            drop(held);
            for w in waiters {
                w.join().unwrap();
            }
        });
        assert_eq!(set().waiting, 0);
        let text = service.report().to_string();
        assert!(text.contains("0/1 slots held (high-water 1)\n"), "{text}");
    });
}
