//! Named scopes, memory map reports and pictures, budgets, out-of-memory diagnostics,
//! and the "same pointers every time" determinism property.

use scope_stack::{AllocErrorKind, LinearAllocator, ScopeStack};

#[test]
fn report_lists_live_scopes_outermost_first() {
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    memory.scope("systems", |systems| {
        systems.alloc_raw(1000, 1);
        systems.new_object(String::from("renderer"));
        systems.scope("level", |level| {
            level.alloc_raw(3000, 1);
            level.scope_with_budget("audio", 4096, |audio| {
                audio.alloc_raw(100, 1);
                audio.new_object(vec![1u8]);
                audio.new_object(String::new());
                let map = audio.report();
                let names: Vec<_> = map.scopes.iter().map(|s| s.name.as_str()).collect();
                assert_eq!(names, ["systems", "level", "audio"]);
                let depths: Vec<_> = map.scopes.iter().map(|s| s.depth).collect();
                assert_eq!(depths, [0, 1, 2]);
                let (sys, lvl, aud) = (&map.scopes[0], &map.scopes[1], &map.scopes[2]);
                assert_eq!(sys.start, 0);
                assert_eq!(lvl.start, sys.own_bytes);
                assert_eq!(aud.start, lvl.start + lvl.own_bytes);
                assert_eq!(lvl.own_bytes, 3000);
                assert_eq!(sys.inclusive_bytes, map.used);
                assert_eq!(
                    sys.own_bytes + lvl.own_bytes + aud.own_bytes,
                    sys.inclusive_bytes
                );
                assert_eq!((sys.finalizers, lvl.finalizers, aud.finalizers), (1, 0, 2));
                assert_eq!(aud.finalizer_offsets.len(), 2);
                assert!(aud.finalizer_offsets.windows(2).all(|w| w[0] < w[1]));
                assert!(aud.finalizer_offsets.iter().all(|&o| o >= aud.start));
                assert_eq!(aud.budget, Some(4096));
                assert_eq!(map.capacity, 64 * 1024);

                let text = map.to_string();
                assert!(text.starts_with("memory map: 64.0 KiB block"), "{text}");
                for name in ["systems", "  level", "    audio"] {
                    assert!(text.contains(name), "{text}");
                }
                assert!(text.contains("4.0 KiB"), "the budget is shown: {text}");
                // Every scope row has a bar of the same width.
                let bars: Vec<_> = text.lines().filter_map(|l| l.split('|').nth(1)).collect();
                assert_eq!(bars.len(), 3);
                assert!(bars
                    .iter()
                    .all(|b| b.len() == bars[0].len() && b.contains('#')));
            });
        });
    });
    let after = memory.report();
    assert!(after.scopes.is_empty());
    assert!(after.high_water_mark > 4100);
}

#[test]
fn svg_draws_every_scope_finalizer_and_marker() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("systems <&>", |systems| {
        systems.new_object(String::from("lock"));
        systems.scope("level", |level| {
            level.alloc_raw(5000, 8);
            level.new_object(vec![0u32; 4]);
            let svg = level.report().to_svg();
            assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
            assert_eq!(svg.matches("class=\"scope\"").count(), 2);
            assert_eq!(svg.matches("class=\"finalizer\"").count(), 2);
            assert!(svg.contains("class=\"allocation-point\""));
            assert!(svg.contains("class=\"high-water\""));
            assert!(svg.contains("systems &lt;&amp;&gt;"), "names are escaped");
            assert!(!svg.contains("<&>"));
        });
    });
}

#[test]
fn a_budget_is_enforced_even_when_the_block_has_room() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("systems", |systems| {
        systems.scope_with_budget("audio", 1000, |audio| {
            audio.alloc_raw(600, 1);
            audio.scope("voices", |voices| {
                voices.alloc_raw(300, 1);
                // The child shares its parent's budget.
                let err = voices.try_alloc_raw(200, 1).unwrap_err();
                assert_eq!(err.kind(), AllocErrorKind::BudgetExceeded);
                assert_eq!(err.scope_name(), "audio");
                assert_eq!(err.budget(), Some(1000));
                assert_eq!(err.remaining(), 100);
                assert_eq!(
                    err.to_string(),
                    "scope-stack: budget exceeded in scope \"audio\" (budget 1000 bytes): \
                     requested 200 bytes (align 1), 100 budget bytes remaining"
                );
                voices.alloc_raw(100, 1); // exactly fills the budget
            });
            // A nested budget cannot raise the outer one.
            audio.scope_with_budget("music", 10_000, |music| {
                let err = music.try_alloc_raw(500, 1).unwrap_err();
                assert_eq!(err.scope_name(), "audio");
            });
            // A tighter nested budget binds first.
            audio.scope_with_budget("sfx", 50, |sfx| {
                let err = sfx.try_new_pod([0u8; 64]).unwrap_err().error;
                assert_eq!((err.scope_name(), err.budget()), ("sfx", Some(50)));
            });
        });
        // Outside the budgeted scope the limit is back.
        systems.alloc_raw(50_000, 1);
    });
}

#[test]
fn exceeding_a_budget_panics_with_the_scope_and_budget() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        memory.scope("systems", |systems| {
            systems.scope_with_budget("audio", 64, |audio| {
                audio.new_pod([0u8; 100]);
            });
        })
    }));
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("budget exceeded in scope \"audio\" (budget 64 bytes)"),
        "{msg}"
    );
    // The budget was lifted again by the unwind.
    memory.scope("again", |s| {
        s.new_pod([0u8; 1000]);
    });
}

#[test]
fn out_of_memory_names_the_scope_that_holds_the_memory() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("systems", |systems| {
        systems.alloc_raw(500, 1);
        systems.scope("level", |level| {
            level.alloc_raw(3000, 1);
            level.scope("frame", |frame| {
                frame.alloc_raw(100, 1);
                let err = frame.try_alloc_raw(1000, 1).unwrap_err();
                assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
                assert_eq!(err.scope_name(), "frame");
                assert_eq!(err.largest_scope(), Some(("level", 3000)));
                let text = err.to_string();
                assert!(
                    text.contains("largest live scope: \"level\" holds 3000 bytes"),
                    "{text}"
                );
                // And the full map at that moment, from the scope.
                let map = frame.report();
                let biggest = map.scopes.iter().max_by_key(|s| s.own_bytes).unwrap();
                assert_eq!(biggest.name, "level");
            });
        });
    });
}

/// Loads a level, simulates frames, and records every scope's and allocation's offset.
fn load_and_unload(memory: &mut LinearAllocator) -> Vec<(String, usize)> {
    fn record(log: &mut Vec<(String, usize)>, scope: &ScopeStack<'_>, what: &str, off: usize) {
        log.push((
            format!("{}@{}:{what}", scope.name(), scope.start_offset()),
            off,
        ));
    }
    let mut log = Vec::new();
    memory.scope("systems", |systems| {
        let base = systems.new_pod(0u8) as *mut u8 as usize;
        let off = |p: usize| p - base;
        log.push(("systems:start".into(), systems.start_offset()));
        let r = systems.new_object(String::from("renderer")) as *mut String as usize;
        record(&mut log, systems, "renderer", off(r));
        for level_no in 0..2 {
            systems.scope("level", |level| {
                log.push((format!("level{level_no}:start"), level.start_offset()));
                let data = level.alloc_slice_fill_with(100 + level_no * 50, |i| i as u32);
                record(&mut log, level, "data", off(data.as_ptr() as usize));
                for frame_no in 0..3 {
                    level.scope("frame", |frame| {
                        let t = frame.alloc_fmt(format_args!("frame {frame_no}"));
                        record(&mut log, frame, "title", off(t.as_ptr() as usize));
                        let v = frame.new_object(vec![frame_no; 3]) as *mut Vec<i32> as usize;
                        record(&mut log, frame, "vec", off(v));
                    });
                }
            });
        }
    });
    log
}

#[test]
fn the_same_sequence_gives_the_same_offsets_every_time() {
    let mut a = LinearAllocator::with_capacity(1 << 16).unwrap();
    let first = load_and_unload(&mut a);
    let second = load_and_unload(&mut a);
    let mut b = LinearAllocator::with_capacity(1 << 16).unwrap();
    let third = load_and_unload(&mut b);
    assert_eq!(first, second);
    assert_eq!(first, third, "a different block gives the same offsets");
    assert!(first.len() > 10);
}

#[cfg(feature = "debug-fill")]
mod debug_fill {
    use scope_stack::debug_fill::{FRESH, RELEASED};
    use scope_stack::LinearAllocator;

    #[test]
    fn fresh_raw_memory_is_painted_0xcd() {
        let mut memory = LinearAllocator::with_capacity(4096).unwrap();
        memory.scope("s", |s| {
            let p = s.alloc_raw(64, 8);
            // SAFETY: 64 bytes were just allocated and painted.
            let bytes = unsafe { core::slice::from_raw_parts(p.as_ptr(), 64) };
            assert!(bytes.iter().all(|&b| b == FRESH));
        });
    }

    #[test]
    fn rewound_memory_is_painted_0xdd() {
        use core::mem::MaybeUninit;
        #[repr(align(64))]
        struct Buf([MaybeUninit<u8>; 256]);
        static mut BUF: Buf = Buf([MaybeUninit::uninit(); 256]);
        // SAFETY: this test is the only user of `BUF`; the block is its only other user
        // and is dropped before the bytes are read back below.
        let buf: &'static mut Buf = unsafe { &mut *core::ptr::addr_of_mut!(BUF) };
        let buffer = &mut buf.0[..];
        let mut memory = LinearAllocator::from_static(buffer);
        let mut range = 0..0;
        memory.scope("outer", |outer| {
            outer.new_pod(1u64);
            outer.scope("inner", |inner| {
                let v = inner.new_pod([7u8; 32]);
                let start = inner.start_offset();
                range = start..start + v.len();
            });
        });
        drop(memory);
        // SAFETY: the block is gone; read the static's bytes directly.
        let buf: &Buf = unsafe { &*core::ptr::addr_of!(BUF) };
        let bytes = &buf.0;
        for (i, b) in bytes[range.clone()].iter().enumerate() {
            // SAFETY: these bytes were written (7, then the RELEASED paint).
            assert_eq!(
                unsafe { b.assume_init() },
                RELEASED,
                "byte {i} of {range:?}"
            );
        }
        // The outer scope's u64 was released too.
        // SAFETY: as above.
        assert_eq!(unsafe { bytes[0].assume_init() }, RELEASED);
    }

    #[test]
    fn fresh_allocations_are_repainted_over_freed_bytes() {
        let mut memory = LinearAllocator::with_capacity(4096).unwrap();
        memory.scope("s", |s| {
            let mut v = allocator_api2::vec::Vec::<u8, _>::with_capacity_in(16, &**s);
            v.extend([1u8; 16]);
            drop(v); // the last allocation: freed in place and painted
            let p = s.alloc_raw(16, 1); // lands on the same bytes, painted FRESH again
                                        // SAFETY: 16 bytes just allocated.
            let bytes = unsafe { core::slice::from_raw_parts(p.as_ptr(), 16) };
            assert!(bytes.iter().all(|&b| b == FRESH));
        });
    }
}

#[test]
fn pools_appear_under_their_scope_in_reports_and_pictures() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("systems", |systems| {
        systems.scope("level", |level| {
            let enemies = level.new_pool::<[f32; 4]>(64);
            let sounds = level.new_pool::<String>(8);
            let boxes: Vec<_> = (0..10)
                .map(|i| enemies.insert([i as f32; 4]).unwrap())
                .collect();
            let s = sounds.insert(String::from("boom")).unwrap();
            drop(boxes);
            let map = level.report();
            let pools = &map.scopes[1].pools;
            assert_eq!(pools.len(), 2);
            assert_eq!(
                (pools[0].type_name.as_str(), pools[0].len, pools[0].capacity),
                ("[f32; 4]", 0, 64)
            );
            assert_eq!(pools[0].high_water_len, 10);
            assert_eq!((pools[1].type_name.as_str(), pools[1].len), ("String", 1));
            assert!(pools[0].offset >= map.scopes[1].start);
            assert!(pools[0].bytes >= 64 * 16);
            let text = map.to_string();
            assert!(
                text.contains("Pool<[f32; 4]>") && text.contains("len 0/64 (high-water ≤ 10)"),
                "{text}"
            );
            let svg = map.to_svg();
            assert_eq!(svg.matches("class=\"pool\"").count(), 2);
            drop(s);
            // Reports never read the pool objects themselves, so taking one while the
            // caller uses `&mut Pool` is fine (Miri checks the aliasing here).
            let h = sounds.insert(String::from("zap")).unwrap().into_handle();
            let during = level.report();
            assert_eq!(during.scopes[1].pools[1].len, 1);
            assert_eq!(sounds.remove(h).as_deref(), Some("zap"));
            assert_eq!(level.report().scopes[1].pools[1].len, 0);
            sounds.get_mut(h);
        });
        assert!(systems.report().scopes[0].pools.is_empty());
    });
}

#[cfg(feature = "debug-fill")]
#[test]
fn freed_pool_slots_are_painted_with_0x1deadb0b() {
    use core::mem::MaybeUninit;
    use scope_stack::debug_fill::FREED_SLOT;
    #[repr(align(4096))]
    struct Buf([MaybeUninit<u8>; 8192]);
    static mut BUF: Buf = Buf([MaybeUninit::uninit(); 8192]);
    // SAFETY: this test is the only user of `BUF`.
    let buf: &'static mut Buf = unsafe { &mut *core::ptr::addr_of_mut!(BUF) };
    let mut memory = LinearAllocator::from_static(&mut buf.0[..]);
    memory.scope("level", |level| {
        let pool = level.new_pool::<[u32; 4]>(4);
        let b = pool.insert([1, 2, 3, 4]).unwrap();
        let offset = (&*b as *const [u32; 4] as usize) - core::ptr::addr_of!(BUF) as usize;
        drop(b);
        // Read the vacated slot through the static itself (the pool no longer owns it).
        // SAFETY: the bytes were initialised (the object, then the paint).
        let words: [u32; 4] = unsafe {
            core::ptr::addr_of!(BUF)
                .cast::<u8>()
                .add(offset)
                .cast::<[u32; 4]>()
                .read()
        };
        assert_eq!(words, [FREED_SLOT; 4]);
    });
}

#[cfg(feature = "debug-fill")]
#[test]
fn pool_slots_freed_on_the_exclusive_path_are_painted_too() {
    use core::mem::MaybeUninit;
    use scope_stack::debug_fill::FREED_SLOT;
    #[repr(align(4096))]
    struct Buf([MaybeUninit<u8>; 8192]);
    static mut BUF: Buf = Buf([MaybeUninit::uninit(); 8192]);
    // SAFETY: this test is the only user of `BUF`.
    let buf: &'static mut Buf = unsafe { &mut *core::ptr::addr_of_mut!(BUF) };
    let mut memory = LinearAllocator::from_static(&mut buf.0[..]);
    memory.scope("level", |level| {
        let pool = level.new_pool::<[u32; 4]>(4);
        let h = pool.insert_mut([1, 2, 3, 4]).unwrap();
        let at = pool.get(h).unwrap() as *const [u32; 4] as usize;
        let offset = at - core::ptr::addr_of!(BUF) as usize;
        assert_eq!(pool.remove(h), Some([1, 2, 3, 4]));
        // SAFETY: as in the test above: initialised bytes the pool no longer owns.
        let words: [u32; 4] = unsafe {
            core::ptr::addr_of!(BUF)
                .cast::<u8>()
                .add(offset)
                .cast::<[u32; 4]>()
                .read()
        };
        assert_eq!(words, [FREED_SLOT; 4]);
    });
}

/// An entity in a dense pool, for the report tests.
struct Spark {
    heat: u32,
}

/// The rows of a scope's pools that are of `kind`.
fn rows<'m>(
    map: &'m scope_stack::MemoryMap,
    scope: usize,
    kind: &str,
) -> Vec<&'m scope_stack::PoolReport> {
    map.scopes[scope]
        .pools
        .iter()
        .filter(|p| p.kind == kind)
        .collect()
}

/// `(len, capacity, high_water_len)` of a row.
fn counts(p: &scope_stack::PoolReport) -> (usize, usize, usize) {
    (p.len, p.capacity, p.high_water_len)
}

#[test]
fn dense_pools_and_stores_appear_in_reports_and_pictures() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("systems", |systems| {
        systems.scope("level", |level| {
            let sparks = level.new_dense_pool::<Spark>(8);
            let config = level.new_store::<u64>(40, 64);
            let handles: Vec<_> = (0..5)
                .map(|i| sparks.insert(Spark { heat: i }).ok().unwrap())
                .collect();
            for &h in &handles[..3] {
                sparks.remove(h);
            }
            sparks.insert(Spark { heat: 9 }).ok().unwrap();
            let ids: Vec<_> = (0..3).map(|i| config.create(i).unwrap()).collect();
            config.destroy(ids[0]);
            config.end_frame();

            let map = level.report();
            let dense = rows(&map, 1, "DensePool");
            let store = rows(&map, 1, "Store");
            assert_eq!((dense.len(), store.len()), (1, 1));
            let (dense, store) = (dense[0], store[0]);
            assert_eq!(
                (dense.type_name.as_str(), counts(dense)),
                ("Spark", (3, 8, 5))
            );
            assert_eq!(
                (store.type_name.as_str(), counts(store)),
                ("u64", (2, 40, 3))
            );
            // The store's versions pool is listed just before it.
            let kinds: Vec<_> = map.scopes[1].pools.iter().map(|p| p.kind).collect();
            assert_eq!(kinds, ["DensePool", "Pool", "Store"]);
            assert_eq!(counts(&map.scopes[1].pools[1]), (2, 64, 3));
            // Where they are and how big: inside the level, slots of 4 + 8 bytes each
            // and a 4-byte roster entry (plus the high-water word); the store's table
            // holds one block of 1024 12-byte entries.
            let level_end = map.scopes[1].start + map.scopes[1].own_bytes;
            for p in [dense, store] {
                assert!(p.offset >= map.scopes[1].start && p.offset + p.bytes <= level_end);
            }
            assert_eq!(dense.bytes, 8 * (4 + 8) + 8 * 4 + 4);
            assert!(store.bytes >= 1024 * 12 + 8 + 4, "{}", store.bytes);
            assert!(dense.offset + dense.bytes <= store.offset);

            let text = map.to_string();
            assert!(
                text.contains("DensePool<Spark>") && text.contains("len 3/8 (high-water 5)"),
                "{text}"
            );
            assert!(
                text.contains("Store<u64>") && text.contains("len 2/40 (high-water 3)"),
                "{text}"
            );
            let svg = map.to_svg();
            assert_eq!(svg.matches("class=\"pool\"").count(), 3);
            assert!(
                svg.contains("DensePool&lt;Spark&gt; 3/8 live, high-water 5"),
                "{svg}"
            );
            assert!(
                svg.contains("Store&lt;u64&gt; 2/40 live, high-water 3"),
                "{svg}"
            );

            // More churn: the numbers follow.
            let all: Vec<_> = sparks.handles().collect();
            for h in all {
                sparks.remove(h);
            }
            for i in 0..7 {
                sparks.insert(Spark { heat: i }).ok().unwrap();
            }
            let more: Vec<_> = (0..4).map(|i| config.create(10 + i).unwrap()).collect();
            config.destroy(more[3]);
            let map = level.report();
            assert_eq!(counts(rows(&map, 1, "DensePool")[0]), (7, 8, 7));
            // Index 0 was recycled by `end_frame`; three new ones were needed.
            assert_eq!(counts(rows(&map, 1, "Store")[0]), (5, 40, 6));
            let text = map.to_string();
            assert!(text.contains("len 7/8 (high-water 7)"), "{text}");
            assert!(text.contains("len 5/40 (high-water 6)"), "{text}");
            assert!(
                map.to_svg()
                    .contains("Store&lt;u64&gt; 5/40 live, high-water 6"),
                "the picture follows too"
            );
            assert_eq!(sparks.values().map(|s| s.heat).sum::<u32>(), 21);
        });
    });
}

#[test]
fn dense_pool_high_water_is_exact() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<u32>(16);
        let report = |level: &ScopeStack<'_>| counts(rows(&level.report(), 0, "DensePool")[0]);
        assert_eq!(report(level), (0, 16, 0));
        let mut live = Vec::new();
        let mut peak = 0;
        // Rising and falling waves; the mark is the highest crest, not a slot count.
        for (up, down) in [(3, 2), (4, 4), (6, 1), (2, 5), (1, 0)] {
            for i in 0..up {
                live.push(pool.insert(i).unwrap());
            }
            peak = peak.max(live.len());
            assert_eq!(report(level), (live.len(), 16, peak));
            for _ in 0..down {
                pool.remove(live.remove(0)).unwrap();
            }
            assert_eq!(report(level), (live.len(), 16, peak));
        }
        assert_eq!(peak, 8);
        // Churn at the same level moves nothing.
        for i in 0..100 {
            let h = pool.insert(i).unwrap();
            pool.remove(h);
        }
        pool.retain(|_, _| false);
        assert_eq!(report(level), (0, 16, 8));
        // Filling it, by evicting too, reaches the capacity exactly.
        for i in 0..20 {
            pool.insert_evicting(i, |&v| v);
        }
        assert_eq!(report(level), (16, 16, 16));
        pool.clear();
        assert_eq!(report(level), (0, 16, 16));
    });
}

#[test]
fn store_high_water_counts_object_indices_in_use() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        // Two blocks of the table: objects past the first 1024 are counted too.
        let store = level.new_store::<u16>(1500, 1600);
        let report = |level: &ScopeStack<'_>| counts(rows(&level.report(), 0, "Store")[0]);
        assert_eq!(report(level), (0, 1500, 0));
        let ids: Vec<_> = (0..1100).map(|i| store.create(i).unwrap()).collect();
        assert_eq!(report(level), (1100, 1500, 1100));
        for &id in &ids[..600] {
            store.destroy(id);
        }
        // A destroyed object's index stays taken until `end_frame`.
        let late = store.create(7).unwrap();
        assert_eq!(late.index(), 1100);
        assert_eq!(report(level), (501, 1500, 1101));
        store.end_frame();
        let reused: Vec<_> = (0..600).map(|i| store.create(i).unwrap()).collect();
        assert!(reused.iter().all(|id| id.index() < 600));
        assert_eq!(report(level), (1101, 1500, 1101));
        // Commits and drafts change no count of objects.
        let mut draft = store.write(late).unwrap();
        *draft = 8;
        store.commit(draft).ok().unwrap();
        assert_eq!(report(level), (1101, 1500, 1101));
        assert_eq!(store.read(late), Some(&8));
    });
}

#[test]
fn pools_of_a_nested_scope_leave_the_report_with_it() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("systems", |systems| {
        let roster = systems.new_dense_pool::<u8>(4);
        roster.insert(1).unwrap();
        systems.scope("level", |level| {
            let sparks = level.new_dense_pool::<Spark>(4);
            sparks.insert(Spark { heat: 1 }).ok().unwrap();
            let store = level.new_store::<u8>(4, 4);
            store.create(1).unwrap();
            let map = level.report();
            let kinds: Vec<_> = map.scopes[1].pools.iter().map(|p| p.kind).collect();
            assert_eq!(kinds, ["DensePool", "Pool", "Store"]);
            assert_eq!(rows(&map, 0, "DensePool").len(), 1);
        });
        let map = systems.report();
        assert_eq!(map.scopes.len(), 1);
        let kinds: Vec<_> = map.scopes[0].pools.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, ["DensePool"]);
        assert_eq!(counts(&map.scopes[0].pools[0]), (1, 4, 1));
        let text = map.to_string();
        assert!(!text.contains("Spark") && !text.contains("Store"), "{text}");
        assert!(!map.to_svg().contains("Spark"));
    });
}

/// Run under Miri: a report reads only memory disjoint from the pool object and from
/// every value, so `&mut` borrows taken before it stay usable after it.
#[test]
fn reports_leave_mut_borrows_of_dense_pools_and_stores_usable() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool: &mut scope_stack::DensePool<'_, Spark> = level.new_dense_pool(4);
        let a = pool.insert(Spark { heat: 1 }).ok().unwrap();
        pool.insert(Spark { heat: 2 }).ok().unwrap();
        let store = level.new_store::<[u32; 2]>(4, 8);
        let id = store.create([1, 2]).unwrap();

        // `&mut T` into a live slot, across a report.
        let hot = pool.get_mut(a).unwrap();
        hot.heat += 10;
        let map = level.report();
        hot.heat += 100;
        assert_eq!(counts(rows(&map, 0, "DensePool")[0]), (2, 4, 2));
        assert_eq!(pool[a].heat, 111);

        // Half-way through `iter_mut`, across a report.
        let mut it = pool.iter_mut();
        let (_, first) = it.next().unwrap();
        first.heat += 1;
        let map = level.report();
        first.heat += 1;
        for (_, s) in it {
            s.heat += 1;
        }
        assert_eq!(counts(rows(&map, 0, "DensePool")[0]), (2, 4, 2));
        assert_eq!(pool.values().map(|s| s.heat).sum::<u32>(), 113 + 3);

        // `&mut DensePool` itself, then an insert through it.
        let whole: &mut scope_stack::DensePool<'_, Spark> = &mut *pool;
        let map = level.report();
        whole.insert(Spark { heat: 3 }).ok().unwrap();
        assert_eq!(counts(rows(&map, 0, "DensePool")[0]), (2, 4, 2));

        // A draft's `&mut T`, and `&mut Store` for `end_frame`, across reports.
        let mut draft = store.write(id).unwrap();
        let value: &mut [u32; 2] = &mut draft;
        value[0] = 5;
        let map = level.report();
        value[1] = 6;
        assert_eq!(counts(rows(&map, 0, "Store")[0]), (1, 4, 1));
        store.commit(draft).ok().unwrap();
        let exclusive: &mut scope_stack::store::Store<'_, [u32; 2]> = &mut *store;
        let map = level.report();
        assert_eq!(exclusive.end_frame(), 1);
        assert_eq!(exclusive.read(id), Some(&[5, 6]));
        assert_eq!(counts(rows(&map, 0, "Store")[0]), (1, 4, 1));
        assert_eq!(counts(rows(&level.report(), 0, "DensePool")[0]), (3, 4, 3));
    });
}

/// Run under Miri: a dense pool may be used on another thread while this one takes
/// reports (the pool is `Send`); the report's reads must not race with its writes.
#[test]
fn reports_may_run_while_another_thread_churns_a_dense_pool() {
    let rounds = if cfg!(miri) { 20 } else { 2_000 };
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<u64>(8);
        let store = level.new_store::<u64>(rounds as usize, rounds as usize);
        std::thread::scope(|threads| {
            let store = &*store;
            threads.spawn(move || {
                for i in 0..rounds {
                    let a = pool.insert(i).unwrap();
                    let b = pool.insert(i + 1).unwrap();
                    *pool.get_mut(a).unwrap() += 1;
                    pool.remove(b);
                    assert_eq!(pool.remove(a), Some(i + 1));
                    let id = store.create(i).unwrap();
                    store.destroy(id);
                }
            });
            for _ in 0..rounds / 4 {
                let map = level.report();
                let dense = rows(&map, 0, "DensePool")[0];
                assert!(dense.len <= 2 && dense.high_water_len <= 2);
                // A store's `len` is counted entry by entry while the writer moves on
                // to fresh indices: a sample bounded by the indices used so far, not a
                // snapshot (see `PoolReport::len`). The exact figures come after the
                // join.
                assert!(rows(&map, 0, "Store")[0].len <= rounds as usize);
            }
        });
        let map = level.report();
        assert_eq!(counts(rows(&map, 0, "DensePool")[0]), (0, 8, 2));
        let rounds = rounds as usize;
        assert_eq!(counts(rows(&map, 0, "Store")[0]), (0, rounds, rounds));
    });
}

scope_stack::slot_root!(struct Cell = for<'s> &'s scope_stack::Pool<'s, u64>);
scope_stack::slot_root!(struct Unit = for<'s> ());

/// The table of a block with a `Slots` set of three 48 KiB cells (one loaded with
/// terrain and a pool, one being built on another thread with 40,000 bytes placed, one
/// free), taken from a concurrent scope with a table for four threads.
fn slots_and_threads_table() -> String {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let cells = game.new_slots("cells", 3, 48 * 1024);
        let _loaded = cells
            .load::<Cell>("cell 0,0", |s| {
                s.alloc_raw(6000, 8);
                &*s.new_pool::<u64>(64)
            })
            .unwrap();
        let (placed, reported) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|t| {
            t.spawn(|| {
                let building = cells.load::<Unit>("cell 0,1", |s| {
                    s.alloc_raw(40_000, 8);
                    placed.wait(); // placed, not yet published
                    reported.wait();
                });
                drop(building.unwrap());
            });
            placed.wait();
            let config = scope_stack::ConcurrentConfig::new().threads(4);
            let text = game.scope_concurrent_with("jobs", config, |jobs| {
                jobs.local().alloc_raw(100, 8);
                jobs.report().to_string()
            });
            reported.wait();
            text
        })
    })
}

#[test]
fn slots_say_whether_they_are_free_used_or_being_built() {
    let text = slots_and_threads_table();
    let line = |needle: &str| -> &str {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in\n{text}"))
    };
    assert!(line("- Slots cells").contains("2/3 slots held"), "{text}");
    let loaded = line("- Slot cell 0,0");
    assert!(loaded.contains(" of 48.0 KiB (high-water "), "{loaded}");
    assert!(!loaded.contains("used 0 B"), "{loaded}");
    // While the build runs, the slot shows what it has placed so far (its bump
    // pointer, read live): 40,000 bytes.
    let building = line("- Slot cell 0,1");
    assert!(
        building.contains("building: 39.1 KiB placed so far of 48.0 KiB"),
        "{building}"
    );
    assert!(!building.contains("used 0 B"), "{building}");
    assert!(line("- Slot free").contains("free (high-water "), "{text}");
    // What the loaded slot holds is listed under it, one level deeper.
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("- Slot cell 0,0"))
        .unwrap();
    let indent = |l: &str| l.len() - l.trim_start().len();
    assert!(
        lines[at + 1].trim_start().starts_with("- Pool<u64>")
            && lines[at + 1].contains("len 0/64")
            && indent(lines[at + 1]) == indent(lines[at]) + 2,
        "{text}"
    );
}

#[test]
fn a_concurrent_scopes_thread_table_is_not_called_slots() {
    let text = slots_and_threads_table();
    let region = text
        .lines()
        .find(|l| l.contains(" claimed, "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(region.contains("chunks for up to 4 threads,"), "{region}");
    // "slots" is said of a `Slots` set's rows only (a chunk's row may name its
    // thread, and the test harness names each test's thread after the test).
    for l in text
        .lines()
        .filter(|l| l.contains("slot") && !l.contains(" of thread "))
    {
        assert!(
            l.contains("- Slot") || l.contains("slots held"),
            "{l:?} in\n{text}"
        );
    }
}

/// Run under Miri: removals that move objects (the last live one fills the hole) while
/// another thread takes reports. The report reads only the roster's generation words,
/// so it never races with the moves, and never counts more live objects than the pool
/// ever held.
#[test]
fn reports_may_run_while_removals_move_dense_pool_objects() {
    let rounds = if cfg!(miri) { 20 } else { 2_000 };
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_dense_pool::<[u64; 3]>(8);
        std::thread::scope(|threads| {
            threads.spawn(move || {
                let mut live: Vec<_> = (0..3).map(|i| pool.insert([i; 3]).unwrap()).collect();
                for i in 0..rounds {
                    // Removing the oldest moves the newest into its cell.
                    let oldest = live.remove(0);
                    assert!(pool.remove(oldest).is_some());
                    live.push(pool.insert([i; 3]).unwrap());
                    for &h in &live {
                        assert!(pool.contains(h));
                    }
                }
            });
            for _ in 0..rounds / 4 {
                let map = level.report();
                let dense = rows(&map, 0, "DensePool")[0];
                assert!(dense.len <= 3 && dense.high_water_len <= 3, "{dense:?}");
            }
        });
        assert_eq!(counts(rows(&level.report(), 0, "DensePool")[0]), (3, 8, 3));
    });
}
