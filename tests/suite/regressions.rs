//! Regression tests for bugs found after release (issue 13, "Hardening"): each test
//! describes the behaviour that was broken.

use std::cell::Cell;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use scope_stack::{scratch, LinearAllocator, MemoryMap, ScratchPads};

// ----- reports read only addresses inside the block -----

/// Every offset a report shows lies inside the block, and the text and the picture can
/// be drawn.
fn assert_map_inside_block(map: &MemoryMap) {
    for scope in &map.scopes {
        assert!(scope.start <= map.capacity, "{map:?}");
        assert!(
            scope.start + scope.inclusive_bytes <= map.capacity,
            "{map:?}"
        );
        for &off in &scope.finalizer_offsets {
            assert!(off < map.capacity, "{map:?}");
        }
        for pool in &scope.pools {
            assert!(pool.offset <= map.capacity, "{map:?}");
            assert!(pool.offset + pool.bytes <= map.capacity, "{map:?}");
        }
    }
    let text = map.to_string();
    assert!(text.starts_with("memory map:"), "{text}");
    let svg = map.to_svg();
    assert!(svg.trim_end().ends_with("</svg>"));
}

#[test]
fn a_pool_of_a_zero_sized_type_has_an_offset_inside_its_scope() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("systems", |systems| {
        systems.alloc_raw(100, 1);
        systems.scope("level", |level| {
            level.alloc_raw(24, 1);
            let before = level.start_offset() + level.used();
            let markers = level.new_pool::<()>(4);
            let _a = markers.insert(()).unwrap();
            let map = level.report();
            assert_map_inside_block(&map);
            let scope = &map.scopes[1];
            let pool = &scope.pools[0];
            assert_eq!(
                (pool.type_name.as_str(), pool.len, pool.capacity),
                ("()", 1, 4)
            );
            // The slots take no bytes; what the pool does take was carved in `level`,
            // after what the scope held before.
            assert!(pool.offset >= before, "{map:?}");
            assert!(pool.offset + pool.bytes <= scope.start + scope.own_bytes);
            let text = map.to_string();
            assert!(text.contains("Pool<()>"), "{text}");
        });
    });
}

#[test]
fn out_of_memory_after_a_zero_sized_pool_still_panics_with_the_memory_map() {
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| {
        memory.scope("level", |level| {
            level.new_pool::<()>(4);
            level.alloc_raw(4096, 1);
        })
    }));
    let payload = result.unwrap_err();
    let msg = payload
        .downcast_ref::<String>()
        .expect("the out-of-memory panic, not an arithmetic one");
    assert!(msg.contains("out of memory"), "{msg}");
    assert!(msg.contains("Pool<()>"), "{msg}");
    assert_eq!(memory.used(), 0);
}

#[test]
fn zero_sized_dense_pools_stores_and_empty_slices_keep_the_map_inside_the_block() {
    #[derive(Clone, Debug)]
    struct Marker;
    impl Drop for Marker {
        fn drop(&mut self) {}
    }
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let dense = level.new_dense_pool::<()>(4);
        dense.insert(()).unwrap();
        let dense_drop = level.new_dense_pool::<Marker>(4);
        dense_drop.insert(Marker).unwrap();
        let store = level.new_store::<()>(4, 4);
        store.create(()).unwrap();
        let empty: &mut [String] = level.alloc_slice_fill_with(0, |_| String::new());
        assert!(empty.is_empty());
        assert!(level.alloc_slice_copy::<u64>(&[]).is_empty());
        assert!(level.alloc_slice_clone::<Marker>(&[]).is_empty());
        assert_eq!(level.alloc_slice_clone(&[Marker, Marker]).len(), 2);
        level.alloc_slice_fill_with(3, |_| ());
        level.new_object(Marker);
        level.new_object(());
        assert_eq!(level.alloc_str(""), "");
        level.scope("empty child", |child| {
            let map = child.report();
            assert_map_inside_block(&map);
            assert_eq!(map.scopes[1].own_bytes, 0);
        });
        assert_map_inside_block(&level.report());
    });
}

// ----- a panicking slice initialiser gives its bytes back -----

#[test]
fn a_panicking_fill_gives_the_slice_back() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("level", |s| {
        s.new_pod([1u8; 17]);
        let before = s.used();
        let r = catch_unwind(AssertUnwindSafe(|| {
            s.alloc_slice_fill_with(8, |i| if i == 3 { panic!("element 3") } else { i })
        }));
        assert!(r.is_err());
        assert_eq!(s.used(), before);
        // The next allocation lands where the failed slice began.
        let next = s.alloc_slice_fill_with(2, |i| i as u64);
        assert_eq!(next, &[0, 1]);
        assert_eq!(s.used(), 24 + 16);
    });
}

struct Counted {
    id: usize,
    drops: Arc<Mutex<Vec<usize>>>,
    panic_on_clone: bool,
}

impl Clone for Counted {
    fn clone(&self) -> Counted {
        if self.panic_on_clone {
            panic!("clone of {} failed", self.id);
        }
        Counted {
            id: self.id + 100,
            drops: self.drops.clone(),
            panic_on_clone: false,
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.lock().unwrap().push(self.id);
    }
}

#[test]
fn a_panicking_fill_of_values_that_need_drop_drops_each_once_and_gives_the_bytes_back() {
    let drops = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("level", |s| {
        s.new_pod([1u8; 17]);
        let before = s.used();
        let finalizers = s.finalizer_count();
        let r = catch_unwind(AssertUnwindSafe(|| {
            s.alloc_slice_fill_with(6, |i| {
                if i == 4 {
                    panic!("element 4");
                }
                Counted {
                    id: i,
                    drops: drops.clone(),
                    panic_on_clone: false,
                }
            })
        }));
        assert!(r.is_err());
        assert_eq!(*drops.lock().unwrap(), [0, 1, 2, 3]);
        assert_eq!(s.used(), before);
        assert_eq!(s.finalizer_count(), finalizers);
    });
    // The scope's unwind runs no finalizer for the failed slice.
    assert_eq!(*drops.lock().unwrap(), [0, 1, 2, 3]);
    assert_eq!(memory.used(), 0);
}

#[test]
fn a_panicking_clone_gives_the_slice_back() {
    let drops = Arc::new(Mutex::new(Vec::new()));
    let source: Vec<Counted> = (0..5)
        .map(|id| Counted {
            id,
            drops: drops.clone(),
            panic_on_clone: id == 3,
        })
        .collect();
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("level", |s| {
        s.new_pod([1u8; 17]);
        let before = s.used();
        let r = catch_unwind(AssertUnwindSafe(|| s.alloc_slice_clone(&source)));
        assert!(r.is_err());
        // The three clones that were made are dropped, once each.
        assert_eq!(*drops.lock().unwrap(), [100, 101, 102]);
        assert_eq!(s.used(), before);
        assert_eq!(s.finalizer_count(), 0);
        let r = catch_unwind(AssertUnwindSafe(|| s.try_alloc_slice_clone(&source)));
        assert!(r.is_err());
        assert_eq!(s.used(), before);
    });
    assert_eq!(drops.lock().unwrap().len(), 6);
    drop(source);
    assert_eq!(drops.lock().unwrap().len(), 11);
}

#[test]
fn a_failed_fill_keeps_what_the_initialiser_allocated() {
    // The initialiser allocates from the same scope, so the failed slice is no longer
    // the newest allocation: nothing is given back, and what it allocated stays valid.
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("level", |s| {
        let kept = Cell::new(None);
        let r = catch_unwind(AssertUnwindSafe(|| {
            s.alloc_slice_fill_with(4, |i| {
                if i == 2 {
                    kept.set(Some(s.alloc_str("kept")));
                    panic!("element 2");
                }
                i as u32
            })
        }));
        assert!(r.is_err());
        let used = s.used();
        assert!(used >= 16 + 4, "{used}");
        let kept = kept.take().unwrap();
        s.new_pod(0xFFu32);
        assert_eq!(kept, "kept");
    });
}

#[test]
fn a_run_of_objects_stays_whole_after_a_failed_fill() {
    // Objects of one type placed back to back share a finalizer record; a failed slice
    // between them must neither break nor double that run.
    let drops = Arc::new(Mutex::new(Vec::new()));
    let counted = |id| Counted {
        id,
        drops: drops.clone(),
        panic_on_clone: false,
    };
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("level", |s| {
        s.new_object(counted(1));
        s.new_object(counted(2));
        let records = s.finalizer_count();
        let used = s.used();
        for len in [1, 3] {
            let r = catch_unwind(AssertUnwindSafe(|| {
                s.alloc_slice_fill_with(len, |i| {
                    if i + 1 == len {
                        panic!("last element");
                    }
                    counted(10 + i)
                })
            }));
            assert!(r.is_err());
            let r = catch_unwind(AssertUnwindSafe(|| {
                s.alloc_slice_fill_with(len, |i| {
                    if i + 1 == len {
                        panic!("last element");
                    }
                    i as u64
                })
            }));
            assert!(r.is_err());
        }
        assert_eq!(s.used(), used);
        assert_eq!(*drops.lock().unwrap(), [10, 11]);
        // The run goes on where it stopped: the third object needs no new record.
        s.new_object(counted(3));
        assert_eq!(s.finalizer_count(), records + 1);
        assert_eq!(s.report().scopes[0].finalizer_offsets.len(), 1);
        s.new_pod(7u8);
        s.new_object(counted(4));
    });
    assert_eq!(*drops.lock().unwrap(), [10, 11, 4, 3, 2, 1]);
}

// ----- a formatting reservation is not usage -----

#[test]
fn a_scratch_scope_nested_in_alloc_fmt_does_not_raise_the_high_water_mark() {
    // A `Display` that opens a nested scratch scope on the block being formatted into.
    // The nested scope begins above the reservation and allocates nothing.
    type Seen = Cell<Option<(usize, usize, usize)>>;
    struct Nested<'a>(&'a ScratchPads, &'a Seen);
    impl fmt::Display for Nested<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let seen = self.0.with(|tmp| {
                assert!(tmp.try_new_pod(1u8).is_err(), "the rest is reserved");
                let block = tmp.allocator();
                (tmp.used(), block.used(), block.high_water_mark())
            });
            self.1.set(Some(seen));
            f.write_str("text")
        }
    }
    let mut pads = ScratchPads::new(4096);
    let seen = Cell::new(None);
    pads.with(|s| {
        s.new_pod([0u8; 40]);
        let text = s.alloc_fmt(format_args!("{}-{}", 1, Nested(&pads, &seen)));
        assert_eq!(text, "1-text");
        assert_eq!(s.used(), 46);
        assert_eq!(s.allocator().high_water_mark(), 46);
        assert_eq!(s.report().high_water_mark, 46);
    });
    // Inside the `Display`: only the 40 bytes allocated before count.
    assert_eq!(seen.get(), Some((0, 40, 40)));
    let stats = pads.stats().next().unwrap();
    assert_eq!((stats.used, stats.high_water_mark, stats.peak), (0, 46, 46));
}

#[test]
fn a_nested_scratch_call_inside_alloc_fmt_on_scratch_does_not_raise_the_high_water_mark() {
    scratch(|s| {
        let seen = Cell::new(None);
        struct OnScratch<'a>(&'a Cell<Option<(usize, usize)>>);
        impl fmt::Display for OnScratch<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                scratch(|tmp| self.0.set(Some((tmp.used(), tmp.allocator().used()))));
                f.write_str("x")
            }
        }
        let before = s.allocator().used();
        s.alloc_fmt(format_args!("{}{}", OnScratch(&seen), 2));
        assert_eq!(seen.get(), Some((0, before)));
        assert_eq!(s.allocator().high_water_mark(), before + 2);
    });
}

#[test]
fn used_and_reports_inside_a_display_count_only_allocated_bytes() {
    struct Peek<'a, 's>(&'a scope_stack::ScopeStack<'s>, &'a Cell<Option<MemoryMap>>);
    impl fmt::Display for Peek<'_, '_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            assert_eq!(self.0.used(), 8);
            assert_eq!(self.0.allocator().used(), 108);
            assert_eq!(self.0.allocator().high_water_mark(), 108);
            self.1.set(Some(self.0.report()));
            f.write_str("peek")
        }
    }
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("systems", |systems| {
        systems.alloc_raw(100, 1);
        systems.scope("level", |level| {
            level.alloc_raw(8, 1);
            let seen = Cell::new(None);
            assert_eq!(
                level.alloc_fmt(format_args!("{}!", Peek(level, &seen))),
                "peek!"
            );
            let map = seen.take().unwrap();
            assert_eq!((map.used, map.high_water_mark), (108, 108));
            assert_eq!(map.scopes[1].own_bytes, 8);
            assert_eq!(map.scopes[0].inclusive_bytes, 108);
            assert_map_inside_block(&map);
        });
    });
    assert_eq!(memory.high_water_mark(), 113);
}

// ----- a thread's first use of `ScratchPads` may nest -----

#[test]
fn a_nested_scratch_pads_call_on_a_threads_first_use_is_sound() {
    // The thread's pad is created by the outer call; the inner call reaches the same
    // pad again while the outer scope lives, and the outer scope allocates after the
    // inner one has unwound. Miri checks that both paths to the pad may be used.
    let pads = ScratchPads::new(4096);
    let (inner, outer) = pads.with(|o| {
        let inner = pads.with(|i| *i.new_pod(1u8));
        let outer = o.new_pod(2u8);
        *outer += 1;
        (inner, *outer)
    });
    assert_eq!((inner, outer), (1, 3));
    // The same on a fresh thread, whose first call is also the nested one.
    std::thread::scope(|t| {
        t.spawn(|| {
            pads.with(|o| {
                let a = o.new_pod(5u32);
                pads.with(|i| {
                    let b = i.new_pod(6u32);
                    *b += *a;
                    assert_eq!(*b, 11);
                });
                *a += 1;
                assert_eq!(*o.new_pod(7u32) + *a, 13);
            });
        });
    });
    let mut pads = pads;
    assert_eq!(pads.stats().count(), 2);
    assert!(pads.stats().all(|s| s.used == 0));
}

// ----- what an iterator allocates while `alloc_iter` collects is usage -----

#[test]
fn a_box_the_iterator_makes_in_the_same_scope_counts_and_its_peak_stays() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |a| {
        let a = &*a;
        a.new_pod(0u64); // 8 bytes before the slice
        let seen = Cell::new(None);
        let slice = a.alloc_iter((0..4u64).inspect(|&i| {
            if i == 2 {
                // Two elements (16 bytes) are built; the room claimed ahead of them is
                // left out, the box above it is counted.
                let big = allocator_api2::boxed::Box::new_in([7u8; 100_000], a);
                seen.set(Some((
                    a.used(),
                    a.allocator().used(),
                    a.allocator().high_water_mark(),
                    a.report().used,
                )));
                drop(big); // given back: it was the newest allocation
            }
        }));
        assert_eq!(slice, &[0, 1, 2, 3]);
        let inside = 8 + 16 + 100_000;
        assert_eq!(seen.get(), Some((inside, inside, inside, inside)));
        assert_eq!(a.used(), 8 + 32);
        assert_eq!(a.allocator().high_water_mark(), inside);
        assert_eq!(a.report().high_water_mark, inside);
    });
    assert_eq!(memory.high_water_mark(), 8 + 16 + 100_000);
}

#[test]
fn a_scratch_scope_the_iterator_opens_on_the_same_pad_counts() {
    let mut pads = ScratchPads::new(256 << 10);
    pads.with(|s| {
        let before = s.allocator().used();
        let seen = Cell::new(None);
        let slice = s.alloc_iter((0..3u32).map(|i| {
            if i == 1 {
                // The same pad, one scope deeper: it opens above the claimed room.
                let inner = pads.with(|tmp| {
                    tmp.alloc_raw(100_000, 1);
                    (tmp.used(), tmp.allocator().used())
                });
                seen.set(Some(inner));
            }
            i * 10
        }));
        assert_eq!(slice, &[0, 10, 20]);
        // One element (4 bytes) was built when the nested scope allocated.
        assert_eq!(seen.get(), Some((100_000, before + 4 + 100_000)));
        assert_eq!(s.allocator().used(), before + 12);
        assert_eq!(s.allocator().high_water_mark(), before + 4 + 100_000);
    });
    let stats = pads.stats().next().unwrap();
    assert_eq!(stats.used, 0);
    assert!(
        stats.high_water_mark >= 100_004,
        "{}",
        stats.high_water_mark
    );
}

#[test]
fn an_iterator_that_formats_into_the_same_scope_counts_its_text() {
    // `alloc_fmt` inside `alloc_iter`: two reservations, one above the other. The text
    // each `alloc_fmt` keeps is use; neither reservation's unused room is.
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |a| {
        let a = &*a;
        let slice = a.alloc_iter((0..3u8).inspect(|&i| {
            let text = a.alloc_fmt(format_args!("item-{i}"));
            assert_eq!(text.len(), 6);
            // Elements built so far (i bytes) plus the texts so far (6 * (i + 1)).
            assert_eq!(a.used(), i as usize + 6 * (i as usize + 1));
        }));
        assert_eq!(slice, &[0, 1, 2]);
        // The slice moved above the texts each time, so the first claims stay as holes.
        assert!(a.used() >= 3 + 18);
        assert_eq!(a.allocator().high_water_mark(), a.used().max(2 + 18));
    });
}
