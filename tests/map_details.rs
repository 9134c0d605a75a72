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

/// Runs `load` on a loader thread; `load` calls its `step` closure inside the build
/// after each stage, and the main thread calls `look` (with the stage number) while
/// the loader waits there, then lets it go on. Returns what each `look` gave.
fn while_building<T: Send>(
    stages: usize,
    load: impl FnOnce(&dyn Fn()) + Send,
    look: impl Fn(usize) -> T,
) -> Vec<T> {
    use std::sync::mpsc;
    let (reached_tx, reached) = mpsc::channel::<()>();
    let (go_tx, go) = mpsc::channel::<()>();
    std::thread::scope(|t| {
        let loader = std::thread::Builder::new()
            .name(String::from("loader"))
            .spawn_scoped(t, move || {
                let step = move || {
                    reached_tx.send(()).unwrap();
                    go.recv().unwrap();
                };
                load(&step);
            })
            .unwrap();
        let seen = (0..stages)
            .map(|stage| {
                reached.recv().unwrap();
                let out = look(stage);
                go_tx.send(()).unwrap();
                out
            })
            .collect();
        loader.join().unwrap();
        seen
    })
}

#[test]
fn a_slot_being_built_shows_the_bytes_placed_and_the_containers_carved_so_far() {
    use scope_stack::SlotState;
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 2, 64 << 10);
        let map = game.map_handle();
        let seen = while_building(
            2,
            |step| {
                let level = levels
                    .load::<Bytes>("forest", |s| {
                        s.alloc_slice_fill_copy(1000, 1u8);
                        let enemies = s.new_pool::<u64>(16);
                        let _ = enemies.insert(7).ok().unwrap().into_handle();
                        step();
                        let bytes = &*s.alloc_slice_fill_copy(5000, 2u8);
                        step();
                        bytes
                    })
                    .unwrap();
                drop(level);
            },
            |_| map.report(),
        );
        let slot = |m: &scope_stack::MemoryMap| m.scopes[0].slots[0].slots[0].clone();
        let (first, second) = (slot(&seen[0]), slot(&seen[1]));
        for s in [&first, &second] {
            assert_eq!(s.state, SlotState::Building);
            assert_eq!(s.holder.as_deref(), Some("forest"));
        }
        assert!(first.used >= 1000, "{}", first.used);
        assert!(
            second.used >= first.used + 5000,
            "{} {}",
            first.used,
            second.used
        );
        // The pool carved before the first look, with its one value.
        let pool = first.contents.iter().find(|p| p.kind == "Pool").unwrap();
        assert_eq!(
            (pool.type_name.as_str(), pool.len, pool.capacity),
            ("u64", 1, 16)
        );
        // The text, the rows and the picture say it.
        let text = seen[1].to_string();
        let line = text.lines().find(|l| l.contains("- Slot forest")).unwrap();
        let expect = format!(
            "building: {} placed so far of 64.0 KiB",
            format_kib(second.used)
        );
        assert!(line.contains(&expect), "{line} / {expect}");
        assert!(text.contains("- Pool<u64>"), "{text}");
        let row = seen[1].scopes[0]
            .pools
            .iter()
            .find(|p| p.kind == "Slot" && p.type_name == "forest")
            .unwrap();
        assert_eq!(row.len, second.used);
        let svg = seen[1].to_svg();
        assert!(svg.contains("class=\"slot-building\""));
        assert!(svg.contains(&format!(
            "Slot forest: building, {} of 65536 bytes placed so far",
            second.used
        )));
        // Once loaded, the slot shows its published use as before.
        let after = game.report();
        assert_eq!(after.scopes[0].slots[0].slots[0].state, SlotState::Free);
    });
}

/// `n` bytes as the text prints KiB figures: `5.9 KiB`.
fn format_kib(n: usize) -> String {
    format!("{:.1} KiB", n as f64 / 1024.0)
}

#[test]
fn a_concurrent_slot_being_built_shows_the_chunks_claimed_so_far() {
    use scope_stack::SlotState;
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("game", |game| {
        let frames = game.new_slots("frames", 1, 1 << 20);
        let map = game.map_handle();
        let seen = while_building(
            2,
            |step| {
                let frame = frames
                    .load_concurrent::<Bytes>("frame", |jobs| {
                        for _ in 0..10 {
                            jobs.alloc_slice_fill_copy(100, 1u8);
                        }
                        let _ = jobs.new_dense_pool::<u32>(8);
                        step();
                        for _ in 0..20 {
                            jobs.alloc_slice_fill_copy(4000, 2u8);
                        }
                        step();
                        jobs.alloc_str("done").as_bytes()
                    })
                    .unwrap();
                drop(frame);
            },
            |_| map.report(),
        );
        let slot = |m: &scope_stack::MemoryMap| m.scopes[0].slots[0].slots[0].clone();
        let (first, second) = (slot(&seen[0]), slot(&seen[1]));
        assert_eq!(first.state, SlotState::Building);
        assert_eq!(second.state, SlotState::Building);
        let region = first
            .concurrent
            .as_ref()
            .expect("the region while building");
        // The loader's chunk, with what it placed in it (large requests go straight
        // to the region: `direct_bytes`).
        let used: usize = region.chunks.iter().map(|c| c.used).sum();
        assert!(used >= 1000, "{region:?}");
        // The bytes placed so far are what the concurrent scope claimed from the slot.
        assert!(
            first.used >= region.claimed_bytes,
            "{} {region:?}",
            first.used
        );
        // 80,000 bytes more, less what fitted in the tail of a chunk claimed before.
        assert!(
            second.used >= first.used + 60_000,
            "{} {}",
            first.used,
            second.used
        );
        assert!(first.contents.iter().any(|p| p.kind == "DensePool"));
        let text = seen[1].to_string();
        assert!(text.contains("placed so far"), "{text}");
        assert!(text.contains(" of thread "), "{text}");
    });
}

#[test]
fn maps_taken_while_builds_run_and_fail_read_only_whole_figures() {
    // No steps: the loaders place, carve and unload (a failed build too) while the
    // main thread takes maps, so Miri checks every read against the builds' writes.
    let rounds = if cfg!(miri) { 3 } else { 200 };
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 2, 256 << 10);
        let map = game.map_handle();
        let done = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|t| {
            t.spawn(|| {
                for i in 0..rounds {
                    let level = levels.load::<Bytes>("plain", |s| {
                        let pool = s.new_pool::<u32>(8);
                        let _ = pool.insert(i).ok().unwrap().into_handle();
                        &*s.alloc_slice_fill_copy(100, 1u8)
                    });
                    drop(level);
                    let failed = levels.try_load::<Bytes>("too big", |s| {
                        let _ = s.new_dense_pool::<u64>(4);
                        Ok(&*s.try_alloc_slice_fill_copy(1 << 20, 0u8)?)
                    });
                    assert!(failed.is_err());
                }
                done.fetch_add(1, std::sync::atomic::Ordering::Release);
            });
            t.spawn(|| {
                for _ in 0..rounds {
                    let frame = levels.load_concurrent::<Bytes>("concurrent", |jobs| {
                        let _ = jobs.new_pool::<u64>(4);
                        &*jobs.alloc_slice_fill_copy(200, 2u8)
                    });
                    drop(frame);
                }
                done.fetch_add(1, std::sync::atomic::Ordering::Release);
            });
            while done.load(std::sync::atomic::Ordering::Acquire) < 2 {
                let report = map.report();
                let set = &report.scopes[0].slots[0];
                for slot in &set.slots {
                    assert!(slot.used <= set.bytes_each, "{slot:?}");
                }
                let _ = report.to_string();
                let _ = report.to_svg();
            }
        });
    });
}

#[test]
fn a_thread_with_a_name_shows_it_in_the_map_and_one_without_shows_its_number() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        level.scope_concurrent("load", |load| {
            let barrier = std::sync::Barrier::new(3);
            let work = || {
                load.local().alloc_str("mesh");
                barrier.wait(); // both threads live while the map is taken
                barrier.wait();
            };
            let (text, svg, named, unnamed) = std::thread::scope(|t| {
                let a = std::thread::Builder::new()
                    .name(String::from("loader"))
                    .spawn_scoped(t, work)
                    .unwrap();
                let b = t.spawn(work);
                barrier.wait();
                let map = load.report();
                barrier.wait();
                a.join().unwrap();
                b.join().unwrap();
                let chunks = map.scopes[1].concurrent.clone().unwrap().chunks;
                let named = chunks
                    .iter()
                    .find(|c| c.thread_name.as_deref() == Some("loader"))
                    .cloned()
                    .expect("the loader's chunk, named");
                let unnamed = chunks
                    .iter()
                    .find(|c| c.thread_name.is_none())
                    .cloned()
                    .expect("the unnamed thread's chunk");
                (map.to_string(), map.to_svg(), named, unnamed)
            });
            let loader = format!("- chunk of thread {} (loader) ", named.thread);
            assert!(text.contains(&loader), "{loader:?} in\n{text}");
            let plain = format!("- chunk of thread {} ", unnamed.thread);
            assert!(text.contains(&plain), "{plain:?} in\n{text}");
            let named_too = format!("thread {} (", unnamed.thread);
            assert!(!text.contains(&named_too), "{text}");
            assert!(svg.contains(&format!("chunk of thread {} (loader): ", named.thread)));
            assert!(svg.contains(&format!("chunk of thread {}: ", unnamed.thread)));
        });
    });
}

#[test]
fn an_index_taken_over_by_another_thread_shows_the_new_threads_name() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        level.scope_concurrent("load", |load| {
            let chunks = || load.report().scopes[1].concurrent.clone().unwrap().chunks;
            let spawn = |name: Option<&str>| {
                std::thread::scope(|t| {
                    let mut b = std::thread::Builder::new();
                    if let Some(name) = name {
                        b = b.name(String::from(name));
                    }
                    // `join` waits until the thread has exited, so its index is back.
                    b.spawn_scoped(t, || {
                        load.local().alloc_str("mesh");
                        let mine = chunks()
                            .into_iter()
                            .find(|c| c.thread_name.as_deref() == name && name.is_some());
                        mine.map(|c| c.thread)
                    })
                    .unwrap()
                    .join()
                    .unwrap()
                })
            };
            let first = spawn(Some("first")).expect("named while it lives");
            // Gone: nothing shows its name, whoever holds its index now.
            let gone = chunks();
            assert!(gone.iter().any(|c| c.thread == first));
            assert!(gone
                .iter()
                .all(|c| c.thread_name.as_deref() != Some("first")));
            // An unnamed thread, then a named one, most likely on the same index
            // (the lowest free one; other tests' threads may take it first).
            spawn(None);
            assert!(chunks()
                .iter()
                .all(|c| c.thread_name.as_deref() != Some("first")));
            let second = spawn(Some("second")).expect("named while it lives");
            if second == first {
                // While it lived, its index's chunks (the first thread's included)
                // showed its name; after it, none.
                assert!(chunks()
                    .iter()
                    .all(|c| c.thread_name.as_deref() != Some("second")));
            }
            let text = load.report().to_string();
            assert!(
                !text.contains("(first)") && !text.contains("(second)"),
                "{text}"
            );
        });
    });
}
