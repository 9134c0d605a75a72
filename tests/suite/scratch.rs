//! Per-thread scratch scopes: nesting, the scratch-conflict rule, run-time misuse
//! detection, panics, threads, and the talk's `File`/`formatString` example.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use scope_stack::{scratch, scratch_for, AllocErrorKind, ScopeStack, ScratchPads};

#[test]
fn scratch_rewinds_when_the_closure_returns() {
    let first = scratch(|s| {
        let text = s.alloc_fmt(format_args!("foo/bar/{}", 7));
        assert_eq!(text, "foo/bar/7");
        text.as_ptr() as usize
    });
    // Same pointers every time: the next call starts where the last one did.
    let second = scratch(|s| s.alloc_str("x").as_ptr() as usize);
    assert_eq!(first, second);
    let [(used, _), _] = scope_stack::scratch::usage().unwrap();
    assert_eq!(used, 0);
}

#[test]
fn nested_scratch_scopes_stack_eight_deep_and_unwind_in_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    struct Logged(u32, Arc<Mutex<Vec<u32>>>);
    impl Drop for Logged {
        fn drop(&mut self) {
            self.1.lock().unwrap().push(self.0);
        }
    }
    fn nest(depth: u32, log: &Arc<Mutex<Vec<u32>>>, starts: &mut Vec<usize>) {
        if depth == 10 {
            return;
        }
        scratch(|s| {
            starts.push(s.start_offset());
            let value = s.new_pod(depth as u64);
            s.new_object(Logged(depth, log.clone()));
            nest(depth + 1, log, starts);
            // The inner scopes are gone; this one's value is intact.
            assert_eq!(*value, depth as u64);
            assert_eq!(log.lock().unwrap().len(), (9 - depth) as usize);
        });
    }
    let mut starts = Vec::new();
    nest(0, &log, &mut starts);
    assert_eq!(*log.lock().unwrap(), (0..10).rev().collect::<Vec<_>>());
    assert!(
        starts.windows(2).all(|w| w[0] < w[1]),
        "each stacks on the last: {starts:?}"
    );
}

#[test]
fn outer_scratch_cannot_allocate_while_an_inner_one_lives() {
    scratch(|outer| {
        let kept = outer.new_pod(11u32);
        scratch(|inner| {
            let x = inner.new_pod(22u32);
            // try_ forms say why.
            let err = outer.try_new_pod(1u8).unwrap_err().error;
            assert_eq!(err.kind(), AllocErrorKind::NotInnermost);
            assert!(err.to_string().contains("innermost"), "{err}");
            assert_eq!(
                outer.try_alloc_str("no").unwrap_err().kind(),
                AllocErrorKind::NotInnermost
            );
            assert_eq!(
                outer
                    .try_alloc_fmt(format_args!("{}", 1))
                    .unwrap_err()
                    .kind(),
                AllocErrorKind::NotInnermost
            );
            // The panicking forms panic with the same message.
            let p = catch_unwind(AssertUnwindSafe(|| {
                outer.new_pod(3u8);
            }));
            let msg = p.unwrap_err().downcast::<String>().unwrap();
            assert!(msg.contains("not the innermost"), "{msg}");
            // Collections refuse too, with a panic rather than an abort.
            let p = catch_unwind(AssertUnwindSafe(|| {
                let mut v = allocator_api2::vec::Vec::new_in(&**outer);
                v.push(1u8);
            }));
            assert!(p.is_err());
            // Values the outer scope handed out stay usable.
            assert_eq!(*kept + *x, 33);
        });
        // Once the inner scope is gone, the outer one allocates again.
        assert_eq!(*outer.new_pod(5u8), 5);
        assert_eq!(*kept, 11);
    });
}

#[test]
fn a_child_of_an_outer_scratch_scope_is_refused_too() {
    scratch(|outer| {
        scratch(|_inner| {
            outer.scope("child", |child| {
                assert_eq!(
                    child.try_new_pod(1u8).unwrap_err().error.kind(),
                    AllocErrorKind::NotInnermost
                );
            });
        });
    });
}

/// Builds its result in `out` and its temporaries in scratch: the words, sorted, each
/// copied into `out`.
fn sorted_words<'s>(out: &ScopeStack<'s>, text: &str) -> &'s [&'s str] {
    scratch_for(out, |tmp| {
        let mut words = allocator_api2::vec::Vec::new_in(&**tmp);
        words.extend(text.split(' '));
        words.sort_unstable();
        let copies = tmp.alloc_slice_fill_with(words.len(), |_| 0usize);
        let result: &'s mut [&'s str] = out.alloc_slice_copy(&[""; 8][..words.len()]);
        for (i, w) in words.iter().enumerate() {
            result[i] = out.alloc_str(w);
            copies[i] = w.len();
        }
        assert_eq!(copies.iter().sum::<usize>(), text.len() + 1 - words.len());
        &*result
    })
}

#[test]
fn scratch_for_keeps_temporaries_off_the_callers_arena() {
    // The caller is itself a scratch scope: the temporaries must go to the other arena,
    // or they would sit on top of the result and be refused (or collide).
    scratch(|caller| {
        let before = caller.allocator().used();
        let words = sorted_words(caller, "toad frog newt");
        assert_eq!(words, &["frog", "newt", "toad"]);
        assert!(
            caller.allocator().used() > before,
            "the result lives in the caller"
        );
        // The other arena held the temporaries and has rewound.
        let [_, (other_used, other_high)] = scope_stack::scratch::usage().unwrap();
        assert_eq!(other_used, 0);
        assert!(other_high > 0);
    });
}

#[test]
fn scratch_for_a_non_scratch_caller_uses_the_first_arena() {
    let mut block = scope_stack::LinearAllocator::with_capacity(4096).unwrap();
    block.scope("level", |level| {
        let words = sorted_words(level, "b a");
        assert_eq!(words, &["a", "b"]);
    });
}

#[test]
fn a_panic_inside_scratch_unwinds_and_scratch_stays_usable() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }
    let r = catch_unwind(|| {
        scratch(|outer| {
            outer.new_object(Counted);
            scratch(|inner| {
                inner.new_object(Counted);
                panic!("job failed");
            })
        })
    });
    assert!(r.is_err());
    assert_eq!(DROPS.load(Ordering::SeqCst), 2);
    let [(used, _), _] = scope_stack::scratch::usage().unwrap();
    assert_eq!(used, 0);
    // Fully usable again, including nesting and the outer scope allocating.
    scratch(|s| {
        s.new_pod(1u8);
        scratch(|t| {
            t.new_pod(2u8);
        });
        s.new_pod(3u8);
    });
}

#[test]
fn threads_have_their_own_scratch() {
    let threads = 2;
    let rounds = if cfg!(miri) { 20 } else { 2000 };
    std::thread::scope(|t| {
        for id in 0..threads {
            t.spawn(move || {
                for round in 0..rounds {
                    scratch(|s| {
                        let text = s.alloc_fmt(format_args!("thread {id} round {round}"));
                        let nums = s.alloc_slice_fill_with(32, |i| (i * id) as u32);
                        std::hint::black_box(&nums);
                        assert_eq!(&*text, format!("thread {id} round {round}"));
                        assert_eq!(nums[31], 31 * id as u32);
                    });
                }
            });
        }
    });
}

#[test]
fn capacity_is_configurable_per_thread() {
    std::thread::spawn(|| {
        scope_stack::scratch::set_capacity(8192).unwrap();
        scratch(|s| {
            assert_eq!(s.allocator().capacity(), 8192);
            assert!(s.try_alloc_raw(8193, 1).is_err());
            assert_eq!(
                scope_stack::scratch::set_capacity(4096),
                Err(scope_stack::scratch::SetCapacityError::Busy)
            );
        });
    })
    .join()
    .unwrap();
}

// --- the talk's example: formatString and File on the scratch pad ---

struct File<'s> {
    buffer: &'s mut [u8],
    handle: u32,
}

static OPEN_FILES: AtomicUsize = AtomicUsize::new(0);

impl<'s> File<'s> {
    fn open(scope: &ScopeStack<'s>, filename: &str) -> File<'s> {
        OPEN_FILES.fetch_add(1, Ordering::SeqCst);
        File {
            buffer: scope.alloc_slice_fill_with(8192, |_| 0u8),
            handle: filename.len() as u32,
        }
    }
    fn read(&mut self) -> usize {
        self.buffer[0] = 1;
        self.buffer.len()
    }
}

impl Drop for File<'_> {
    fn drop(&mut self) {
        OPEN_FILES.fetch_sub(1, Ordering::SeqCst);
    }
}

fn my_function(f: &str) -> u32 {
    scratch(|s| {
        let filename = s.alloc_fmt(format_args!("foo/bar/{f}"));
        // SAFETY: File's destructor closes the handle; it never reads its buffer.
        let file = unsafe { s.new_object_unchecked(File::open(s, filename)) };
        assert_eq!(file.read(), 8192);
        assert_eq!(OPEN_FILES.load(Ordering::SeqCst), 1);
        file.handle
    })
}

#[test]
fn file_and_format_string_on_the_scratch_pad() {
    assert_eq!(my_function("level.dat"), "foo/bar/level.dat".len() as u32);
    assert_eq!(
        OPEN_FILES.load(Ordering::SeqCst),
        0,
        "closed when the scratch scope ended"
    );
}

#[test]
fn scratch_pads_serve_every_thread_and_report_per_thread() {
    let mut pads = ScratchPads::new(16 * 1024);
    let jobs = if cfg!(miri) { 4 } else { 64 };
    // Both workers stay alive until both have used the pads (a finished thread's pad
    // may be handed to a later thread).
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|t| {
        for w in 0..2 {
            let pads = &pads;
            let barrier = &barrier;
            t.spawn(move || {
                pads.with(|_| ());
                barrier.wait();
                for job in 0..jobs {
                    pads.with(|s| {
                        let data = s.alloc_slice_fill_with(100 * (w + 1), |i| i as u8);
                        pads.with(|inner| inner.alloc_slice_copy(data).len());
                        let _ = job;
                    });
                }
            });
        }
    });
    let stats: Vec<_> = pads.stats().collect();
    assert_eq!(stats.len(), 2);
    for s in &stats {
        assert_eq!(s.used, 0);
        assert_eq!(s.capacity, 16 * 1024);
        assert!(s.high_water_mark >= 200, "{s:?}");
    }
    pads.reset_all();
    assert!(pads
        .stats()
        .all(|s| s.high_water_mark == 0 && s.peak >= 200));
}

/// Bytes `scratch()` can place on this thread right now, and its error if it cannot
/// place `want` bytes.
fn nested_scratch(want: usize) -> Result<usize, scope_stack::AllocError> {
    scratch(|t| t.try_alloc_raw(want, 8).map(|_| want))
}

/// A concurrent scope opened inside `scratch()` with a budget leaves the rest of the
/// arena, above its region, to the opening thread: a nested `scratch()` there, and the
/// scope's own finalizers (which run on the opening thread), get it.
#[test]
fn a_budgeted_concurrent_scope_on_scratch_leaves_the_arena_above_it_to_its_opener() {
    const ARENA: usize = 1 << 20;
    const BUDGET: usize = 128 << 10;
    let in_finalizer = Arc::new(Mutex::new(None));
    std::thread::spawn({
        let in_finalizer = in_finalizer.clone();
        move || {
            scope_stack::scratch::set_capacity(ARENA).unwrap();
            struct Probe(Arc<Mutex<Option<Result<usize, scope_stack::AllocError>>>>);
            impl Drop for Probe {
                fn drop(&mut self) {
                    *self.0.lock().unwrap() = Some(nested_scratch(512 << 10));
                }
            }
            scratch(|s| {
                s.scope_concurrent_with_budget("on-scratch", BUDGET, |jobs| {
                    jobs.new_object(Probe(in_finalizer));
                    std::thread::scope(|t| {
                        t.spawn(|| *jobs.new_pod(1u64));
                    });
                    // About 900 KiB of the arena lie above the region.
                    let got = nested_scratch(800 << 10).unwrap();
                    assert_eq!(got, 800 << 10);
                    let free = scratch(|t| t.remaining());
                    assert!(free >= ARENA - BUDGET - 4096, "{free}");
                    // Past the arena's end the error is the arena's, not the budget's.
                    let e = nested_scratch(free + 1).unwrap_err();
                    assert_eq!(e.kind(), AllocErrorKind::OutOfMemory, "{e}");
                    assert_eq!(e.scope_name(), "scratch");
                    // The region itself still ends at the budget.
                    let e = jobs.try_alloc_slice_copy(&vec![0u8; BUDGET]).unwrap_err();
                    assert_eq!(e.kind(), AllocErrorKind::BudgetExceeded, "{e}");
                    assert_eq!(e.scope_name(), "on-scratch");
                });
            });
        }
    })
    .join()
    .unwrap();
    let got = in_finalizer.lock().unwrap().take().unwrap();
    assert_eq!(
        got.unwrap(),
        512 << 10,
        "a finalizer's scratch got the arena above"
    );
}

/// Without a budget the region takes the rest of the arena, so nested scratch gets
/// nothing, and the error names the concurrent scope as the one that holds the arena.
#[test]
fn an_unbudgeted_concurrent_scope_on_scratch_is_named_when_nested_scratch_is_full() {
    std::thread::spawn(|| {
        scratch(|s| {
            s.scope_concurrent("on-scratch", |jobs| {
                jobs.new_pod(1u64);
                let e = nested_scratch(64).unwrap_err();
                assert_eq!(e.kind(), AllocErrorKind::OutOfMemory, "{e}");
                assert_eq!(e.scope_name(), "scratch");
                let (holder, _) = e.largest_scope().expect("a holder is named");
                assert_eq!(holder, "on-scratch", "{e}");
                assert!(e.to_string().contains("\"on-scratch\""), "{e}");
            });
        });
    })
    .join()
    .unwrap();
}
