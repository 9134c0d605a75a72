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
                (pools[0].type_name, pools[0].len, pools[0].capacity),
                ("[f32; 4]", 0, 64)
            );
            assert_eq!(pools[0].high_water_len, 10);
            assert_eq!((pools[1].type_name, pools[1].len), ("String", 1));
            assert!(pools[0].offset >= map.scopes[1].start);
            assert!(pools[0].bytes >= 64 * 16);
            let text = map.to_string();
            assert!(
                text.contains("Pool<[f32; 4]>") && text.contains("len 0/64 (high-water 10)"),
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
