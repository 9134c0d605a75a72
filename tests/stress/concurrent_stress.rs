//! Stress: more threads than cores place values of every kind into one concurrent
//! scope, over many frames (a concurrent scope opened and closed each frame). Checks
//! that every value is intact after the join, that every destructor runs exactly once,
//! and that the block rewinds. Run in release by CI; Miri runs a few frames.

use std::sync::atomic::{AtomicUsize, Ordering};

use scope_stack::{ConcurrentConfig, LinearAllocator};

const THREADS: usize = if cfg!(miri) { 3 } else { 16 };
const FRAMES: usize = if cfg!(miri) { 2 } else { 60 };
const OPS: usize = if cfg!(miri) { 30 } else { 3_000 };

static DROPS: AtomicUsize = AtomicUsize::new(0);

struct Counted(u64);
impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn many_threads_many_frames_every_value_intact_every_drop_once() {
    let mut memory = LinearAllocator::with_capacity(64 << 20).unwrap();
    let mut made = 0;
    memory.scope("level", |level| {
        for frame in 0..FRAMES {
            // Small chunks and fewer slots than threads: chunk refills and the shared
            // path are both exercised.
            let config = ConcurrentConfig::new()
                .chunk_size(2048)
                .threads(THREADS / 2);
            made += level.scope_concurrent_with("frame", config, |jobs| {
                std::thread::scope(|t| {
                    let hs: Vec<_> = (0..THREADS)
                        .map(|w| {
                            t.spawn(move || {
                                let here = jobs.local();
                                let mut pods = Vec::new();
                                let mut objs = Vec::new();
                                let mut texts = Vec::new();
                                let key = (frame * 1000 + w) as u64;
                                for i in 0..OPS as u64 {
                                    match i % 5 {
                                        0 => pods.push(here.new_pod([key, i, key ^ i])),
                                        1 => objs.push(jobs.new_object(Counted(key * i))),
                                        2 => texts.push(jobs.alloc_fmt(format_args!("{key}:{i}"))),
                                        3 => {
                                            let s = here
                                                .alloc_slice_fill_with((i % 37) as usize, |j| {
                                                    key + j as u64
                                                });
                                            assert!(s
                                                .iter()
                                                .enumerate()
                                                .all(|(j, v)| *v == key + j as u64));
                                        }
                                        _ => {
                                            let big = jobs.alloc_slice_copy(&[i as u8; 1500]);
                                            assert!(big.iter().all(|b| *b == i as u8));
                                        }
                                    }
                                }
                                for (n, p) in pods.iter().enumerate() {
                                    let i = n as u64 * 5;
                                    assert_eq!(**p, [key, i, key ^ i]);
                                }
                                for (n, o) in objs.iter().enumerate() {
                                    assert_eq!(o.0, key * (n as u64 * 5 + 1));
                                }
                                for (n, s) in texts.iter().enumerate() {
                                    assert_eq!(**s, format!("{key}:{}", n * 5 + 2));
                                }
                                objs.len()
                            })
                        })
                        .collect();
                    hs.into_iter().map(|h| h.join().unwrap()).sum::<usize>()
                })
            });
            assert_eq!(level.used(), 0, "frame {frame} rewound");
            assert_eq!(
                DROPS.load(Ordering::Relaxed),
                made,
                "frame {frame}: each drop once"
            );
        }
    });
    assert!(made >= FRAMES * THREADS * (OPS / 5));
}
