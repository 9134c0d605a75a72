//! Concurrent scopes: many threads place values into one scope at once; everything
//! lives until the closure returns, each thread's destructors run in reverse order on
//! the closing thread, panics skip no destructor, and reports and budgets tell the truth.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use allocator_api2::vec::Vec as AVec;
use scope_stack::{AllocErrorKind, ConcurrentConfig, LinearAllocator};

/// Threads and items per thread, scaled down under Miri.
const THREADS: usize = if cfg!(miri) { 3 } else { 8 };
const ITEMS: usize = if cfg!(miri) { 40 } else { 2000 };

#[test]
fn workers_output_outlives_the_join_and_is_read_by_the_opener() {
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        let before = level.used();
        let sums = level.scope_concurrent("jobs", |jobs| {
            let lists: Vec<&[u64]> = std::thread::scope(|t| {
                let hs: Vec<_> = (0..THREADS)
                    .map(|w| {
                        t.spawn(move || {
                            let v: Vec<&mut u64> = (0..ITEMS)
                                .map(|i| jobs.new_pod((w * ITEMS + i) as u64))
                                .collect();
                            let list = jobs.alloc_iter(v.iter().map(|x| **x));
                            &*list
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            lists
                .iter()
                .map(|l| l.iter().sum::<u64>())
                .collect::<Vec<_>>()
        });
        for (w, s) in sums.iter().enumerate() {
            let expect: u64 = (0..ITEMS as u64).map(|i| w as u64 * ITEMS as u64 + i).sum();
            assert_eq!(*s, expect);
        }
        assert_eq!(level.used(), before, "the region rewound");
    });
    assert!(memory.high_water_mark() >= THREADS * ITEMS * 16);
}

#[test]
fn allocations_of_different_threads_never_overlap() {
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        level.scope_concurrent_with("jobs", ConcurrentConfig::new().chunk_size(512), |jobs| {
            let all = Mutex::new(Vec::new());
            std::thread::scope(|t| {
                for w in 0..THREADS {
                    let all = &all;
                    t.spawn(move || {
                        let mut mine = Vec::new();
                        for i in 0..ITEMS {
                            let s = jobs.alloc_slice_fill_with(1 + i % 7, |_| w as u8);
                            mine.push((s.as_ptr() as usize, s.len()));
                            if i % 100 == 0 {
                                let big = jobs.alloc_slice_copy(&[w as u8; 300]); // direct
                                mine.push((big.as_ptr() as usize, big.len()));
                            }
                        }
                        all.lock().unwrap().extend(mine);
                    });
                }
            });
            let mut all = all.into_inner().unwrap();
            all.sort();
            for pair in all.windows(2) {
                assert!(pair[0].0 + pair[0].1 <= pair[1].0, "overlap: {pair:?}");
            }
        });
    });
}

static LOG: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

struct Noisy(usize, usize);
impl Drop for Noisy {
    fn drop(&mut self) {
        LOG.lock().unwrap().push((self.0, self.1));
    }
}

#[test]
fn each_threads_values_drop_once_in_reverse_order_on_the_closing_thread() {
    LOG.lock().unwrap().clear();
    let closing = std::thread::current().id();
    static DROPPED_ON: Mutex<Vec<std::thread::ThreadId>> = Mutex::new(Vec::new());
    struct Where;
    impl Drop for Where {
        fn drop(&mut self) {
            DROPPED_ON.lock().unwrap().push(std::thread::current().id());
        }
    }
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        level.scope_concurrent("jobs", |jobs| {
            std::thread::scope(|t| {
                for w in 0..THREADS {
                    t.spawn(move || {
                        let here = jobs.local();
                        for i in 0..ITEMS / 4 {
                            if i % 2 == 0 {
                                here.new_object(Noisy(w, i));
                            } else {
                                jobs.new_object(Noisy(w, i)); // mixed with the shared handle
                            }
                        }
                        jobs.new_object(Where);
                    });
                }
            });
            assert!(
                LOG.lock().unwrap().is_empty(),
                "nothing drops before the close"
            );
        });
    });
    let log = LOG.lock().unwrap().clone();
    assert_eq!(log.len(), THREADS * (ITEMS / 4));
    for w in 0..THREADS {
        let mine: Vec<usize> = log
            .iter()
            .filter(|(t, _)| *t == w)
            .map(|(_, i)| *i)
            .collect();
        let expect: Vec<usize> = (0..ITEMS / 4).rev().collect();
        assert_eq!(mine, expect, "thread {w}: reverse order of construction");
    }
    let on = DROPPED_ON.lock().unwrap();
    assert!(on.len() >= THREADS && on.iter().all(|id| *id == closing));
}

#[test]
fn more_threads_than_slots_still_work() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Count(&'static AtomicUsize);
    impl Drop for Count {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let drops: &'static AtomicUsize = &DROPS;
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        let total =
            level.scope_concurrent_with("jobs", ConcurrentConfig::new().threads(1), |jobs| {
                std::thread::scope(|t| {
                    let hs: Vec<_> = (0..THREADS)
                        .map(|w| {
                            t.spawn(move || {
                                let xs = jobs.alloc_slice_fill_with(50, |i| (w * 50 + i) as u32);
                                jobs.new_object(Count(drops));
                                let text = jobs.alloc_fmt(format_args!("worker {w}"));
                                assert_eq!(&*text, format!("worker {w}"));
                                xs.iter().sum::<u32>()
                            })
                        })
                        .collect();
                    hs.into_iter().map(|h| h.join().unwrap()).sum::<u32>()
                })
            });
        assert_eq!(total, (0..THREADS as u32 * 50).sum::<u32>());
    });
    assert_eq!(drops.load(Ordering::Relaxed), THREADS);
}

#[test]
fn a_panicking_worker_and_a_panicking_destructor_skip_no_destructor() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct D(bool);
    impl Drop for D {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
            if self.0 {
                panic!("destructor panics");
            }
        }
    }
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        memory.scope("level", |level| {
            level.scope_concurrent("jobs", |jobs| {
                let r = std::thread::scope(|t| {
                    t.spawn(|| {
                        jobs.new_object(D(false));
                        jobs.new_object(D(true));
                        jobs.new_object(D(false));
                    });
                    t.spawn(|| {
                        jobs.new_object(D(false));
                        panic!("worker panics");
                    })
                    .join()
                });
                assert!(r.is_err());
                jobs.new_object(D(false));
            });
        });
    }));
    assert!(
        result.is_err(),
        "the destructor's panic comes out of the close"
    );
    assert_eq!(DROPS.load(Ordering::Relaxed), 5);
    assert_eq!(memory.used(), 0);
}

#[test]
fn budgets_cap_the_region_and_errors_name_the_scope() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        level.scope_concurrent_with_budget("jobs", 16 << 10, |jobs| {
            assert!(jobs.remaining() <= 16 << 10);
            let err = jobs.try_alloc_slice_copy(&[0u8; 20 << 10]).unwrap_err();
            assert_eq!(err.kind(), AllocErrorKind::BudgetExceeded);
            assert_eq!((err.scope_name(), err.budget()), ("jobs", Some(16 << 10)));
            let back = jobs.try_new_pod([0u8; 1000]);
            assert!(back.is_ok());
            let mut n = 0;
            while jobs.try_new_pod(0u64).is_ok() {
                n += 1;
            }
            assert!(n > 1000, "most of the budget is usable: {n}");
        });
        let err = level
            .scope_concurrent("all", |all| {
                all.try_alloc_slice_copy(&[0u8; 2 << 20]).map(|_| ())
            })
            .unwrap_err();
        assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(err.scope_name(), "all");
        let err = level
            .scope_concurrent("a", |a| {
                a.try_alloc_layout(std::alloc::Layout::from_size_align(8, 8192).unwrap())
            })
            .unwrap_err();
        assert_eq!(err.kind(), AllocErrorKind::AlignmentTooLarge);
    });
}

#[test]
fn collections_grow_per_thread_and_drop_across_threads() {
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        level.scope_concurrent("jobs", |jobs| {
            let vecs: Vec<AVec<u32, &_>> = std::thread::scope(|t| {
                let hs: Vec<_> = (0..THREADS as u32)
                    .map(|w| {
                        t.spawn(move || {
                            let mut v = AVec::new_in(jobs);
                            for i in 0..ITEMS as u32 {
                                v.push(w * 1000 + i);
                            }
                            let here = jobs.local();
                            let mut m = hashbrown::HashMap::new_in(&here);
                            for i in 0..50u32 {
                                m.insert(i, i * 2);
                            }
                            assert_eq!(m[&7], 14);
                            v
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            // Grown and dropped on another thread than the one that made them.
            for (w, mut v) in vecs.into_iter().enumerate() {
                assert_eq!(v[ITEMS - 1], w as u32 * 1000 + ITEMS as u32 - 1);
                v.extend(0..100);
                v.shrink_to_fit();
                drop(v);
            }
        });
    });
}

#[test]
fn reports_list_every_chunk_with_its_thread() {
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        level.new_pod([0u8; 100]);
        level.scope_concurrent_with("jobs", ConcurrentConfig::new().chunk_size(1024), |jobs| {
            let all_live = std::sync::Barrier::new(3); // so that no two share an index
            std::thread::scope(|t| {
                for _ in 0..3 {
                    t.spawn(|| {
                        all_live.wait();
                        for _ in 0..100 {
                            jobs.new_pod([1u64; 4]); // 32 bytes: about 3 chunks each
                        }
                        let map = jobs.report(); // on a worker, while others allocate
                        assert!(map.scopes[1].concurrent.is_some());
                        all_live.wait();
                    });
                }
            });
            let map = jobs.report();
            let row = &map.scopes[1];
            let c = row.concurrent.as_ref().unwrap();
            assert_eq!(c.chunk_size, 1024);
            let threads: std::collections::BTreeSet<u32> =
                c.chunks.iter().map(|c| c.thread).collect();
            assert_eq!(threads.len(), 3);
            let used: usize = c.chunks.iter().map(|c| c.used - 32).sum();
            assert_eq!(used, 3 * 100 * 32, "used bytes are exact");
            for ch in &c.chunks {
                assert_eq!(ch.used + ch.tail, ch.bytes);
                assert!(
                    ch.offset >= row.start && ch.offset + ch.bytes <= row.start + c.region_bytes
                );
            }
            assert_eq!(row.own_bytes, c.claimed_bytes);
            assert_eq!(map.used, row.start + c.claimed_bytes);
            assert_eq!(map.scopes[0].inclusive_bytes, map.used);
            // Each thread's chunks fold into one line: `3 chunks of thread N`.
            let text = map.to_string();
            for t in &threads {
                let n = c.chunks.iter().filter(|c| c.thread == *t).count();
                let line = if n == 1 {
                    format!("- chunk of thread {t} ")
                } else {
                    format!("- {n} chunks of thread {t} ")
                };
                assert_eq!(text.matches(&line).count(), 1, "{line:?} in {text}");
            }
            // The opener's view through the block agrees.
            let block_map = level_report_through_block(jobs);
            assert_eq!(block_map.used, map.used);
        });
        assert_eq!(level.used(), 100);
    });
    assert!(memory.high_water_mark() >= 100 + 3 * 100 * 32);
}

fn level_report_through_block(jobs: &scope_stack::ConcurrentScope<'_>) -> scope_stack::MemoryMap {
    jobs.report()
}

#[test]
fn statistics_count_the_regions_peak_after_the_close() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let claimed = level.scope_concurrent("jobs", |jobs| {
            jobs.alloc_slice_copy(&[0u8; 10_000]);
            jobs.report().scopes[1].own_bytes
        });
        assert!(claimed >= 10_000);
        assert_eq!(level.allocator().high_water_mark(), claimed);
    });
}

/// An out-of-memory panic in a concurrent scope prints the memory map, as a plain
/// scope's does, but only once per scope: the other jobs' panics point to it.
#[test]
fn out_of_memory_panics_print_the_map_once_per_scope() {
    let jobs = if cfg!(miri) { 3 } else { 8 };
    let mut memory = LinearAllocator::with_capacity(64 << 10).unwrap();
    let messages: Vec<String> = memory.scope("frame", |frame| {
        frame.scope_concurrent("jobs", |scope| {
            std::thread::scope(|t| {
                let handles: Vec<_> = (0..jobs)
                    .map(|_| {
                        t.spawn(|| {
                            let here = scope.local();
                            let err =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    here.alloc_slice_fill_copy(1 << 20, 0u8);
                                }))
                                .unwrap_err();
                            err.downcast_ref::<String>().cloned().unwrap_or_default()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            })
        })
    });
    assert_eq!(messages.len(), jobs);
    assert!(
        messages.iter().all(|m| m.contains("out of memory")),
        "{messages:?}"
    );
    let with_map = messages
        .iter()
        .filter(|m| m.contains("memory map:"))
        .count();
    assert_eq!(with_map, 1, "{messages:#?}");
    let pointing = messages
        .iter()
        .filter(|m| {
            m.contains("printed with the first out-of-memory panic in concurrent scope \"jobs\"")
        })
        .count();
    assert_eq!(pointing, jobs - 1);
}

/// A slice collected past the end of a thread's chunk grows by doubling wherever its
/// room comes from (direct claims from the region included): the memory it leaves
/// behind stays within a small multiple of the slice, and it grows in place while it is
/// the newest allocation of the thread's chunk.
#[test]
fn collected_slices_grow_by_doubling_in_chunks_and_direct_claims() {
    let n: u32 = if cfg!(miri) { 2_000 } else { 20_000 };
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("frame", |frame| {
        let config = ConcurrentConfig::new().chunk_size(1024).threads(4);
        frame.scope_concurrent_with("jobs", config, |jobs| {
            let before = jobs.remaining();
            let here = jobs.local();
            let odd = here.alloc_iter((0..2 * n).filter(|i| i % 2 == 1));
            assert_eq!(odd.len(), n as usize);
            assert!(odd.iter().enumerate().all(|(i, v)| *v == 2 * i as u32 + 1));
            let taken = before - jobs.remaining();
            let bytes = 4 * n as usize;
            assert!(
                taken <= 4 * bytes,
                "took {taken} bytes for a {bytes}-byte slice"
            );
            // Short slices stay in the thread's chunk, one after the other.
            let a = here.alloc_iter((0..8u32).filter(|i| i % 2 == 0));
            let b = here.alloc_iter((0..8u32).filter(|i| i % 2 == 1));
            assert_eq!((&*a, &*b), (&[0, 2, 4, 6][..], &[1, 3, 5, 7][..]));
            assert_eq!(a.as_ptr() as usize + 16, b.as_ptr() as usize);
        });
    });
}

/// A long collected slice whose iterator knows its length is claimed once, even where
/// its room comes from direct claims: a slice of half the region fits.
#[test]
fn a_collected_slice_of_known_length_is_claimed_once() {
    let half: usize = if cfg!(miri) { 16 << 10 } else { 256 << 10 };
    let mut memory = LinearAllocator::with_capacity(2 * half + (16 << 10)).unwrap();
    memory.scope("level", |level| {
        level.scope_concurrent("load", |load| {
            let a = vec![1u8; half / 2];
            let b = vec![2u8; half / 2];
            let tiles = load.alloc_iter(a.iter().chain(&b).copied());
            assert_eq!(tiles.len(), half);
            assert_eq!((tiles[0], tiles[half - 1]), (1, 2));
        });
    });
}

/// On a thread without a slot of its own, every collected slice is a direct claim from
/// the region; what it claims ahead goes back at the end, so one-item slices take no
/// more than twice what copies of the same items take, and a filtered iterator (which
/// promises nothing) stays within a small multiple of its slice.
#[test]
fn direct_claims_give_back_what_they_claimed_ahead() {
    let n: usize = if cfg!(miri) { 500 } else { 20_000 };
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("frame", |frame| {
        // No thread slots at all: every thread places by direct claims.
        let config = ConcurrentConfig::new().threads(0);
        frame.scope_concurrent_with("jobs", config, |jobs| {
            let here = jobs.local();
            let before = jobs.remaining();
            for i in 0..n {
                assert_eq!(here.alloc_iter(std::iter::once(i as u8)), [i as u8]);
            }
            let collected = before - jobs.remaining();
            let before = jobs.remaining();
            for i in 0..n {
                assert_eq!(here.alloc_slice_copy(&[i as u8]), [i as u8]);
            }
            let copied = before - jobs.remaining();
            assert!(
                collected <= 2 * copied,
                "{n} one-item alloc_iter took {collected} bytes, alloc_slice_copy {copied}"
            );

            let before = jobs.remaining();
            let odd = here.alloc_iter((0..2 * n as u32).filter(|i| i % 2 == 1));
            assert!(odd.iter().enumerate().all(|(i, v)| *v == 2 * i as u32 + 1));
            let taken = before - jobs.remaining();
            assert!(
                taken <= 4 * 4 * n,
                "took {taken} bytes for a {}-byte slice",
                4 * n
            );
        });
    });
}

/// Three workers on a concurrent scope with two thread slots and 512-byte chunks place
/// page-aligned values (too large for a chunk: direct claims) and collect five at a
/// time from an iterator that promises no length: the room each slice claims ahead as
/// it doubles goes back at the end, and it all fits in a 4 MiB block.
#[test]
fn page_aligned_slices_from_three_workers_fit_in_four_mib() {
    #[derive(Clone, Copy)]
    #[repr(C, align(4096))]
    struct Page([u8; 4096]);
    let rounds: u8 = if cfg!(miri) { 3 } else { 20 };
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("level", |level| {
        let config = ConcurrentConfig::new().threads(2).chunk_size(512);
        level.scope_concurrent_with("pages", config, |pages| {
            std::thread::scope(|t| {
                for w in 0..3u8 {
                    t.spawn(move || {
                        let here = pages.local();
                        for r in 0..rounds {
                            let one = here.new_pod(Page([w; 4096]));
                            // A filter promises no length: the slice grows as it goes.
                            let five = here.alloc_iter(
                                (0..10u8)
                                    .filter(|i| i % 2 == 0)
                                    .map(|i| Page([r ^ (i / 2); 4096])),
                            );
                            assert_eq!(five.len(), 5);
                            assert_eq!(one.0[4095], w);
                            assert!(five.iter().enumerate().all(|(i, p)| p.0[0] == r ^ i as u8));
                            assert_eq!(five.as_ptr() as usize % 4096, 0);
                        }
                    });
                }
            });
        });
    });
}
