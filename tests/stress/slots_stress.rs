//! Stress: many producers load frames into one ring of slots (plain and concurrent
//! loads, builds with worker threads), many consumers read and drop them, with more
//! threads than cores. Every frame arrives intact, every finalizer runs once, and the
//! ring never holds more than its slots.
//!
//! Run in release (CI does): `cargo test --release --test stress slots_stress::`.
//! Scaled down in debug builds and under Miri.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use scope_stack::{slot_root, LinearAllocator, Loaded, Shared};

static MADE: AtomicUsize = AtomicUsize::new(0);
static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// Counts itself made and dropped.
struct Counted(u64);
impl Counted {
    fn new(v: u64) -> Counted {
        MADE.fetch_add(1, Ordering::Relaxed);
        Counted(v)
    }
}
impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

struct Frame<'s> {
    producer: usize,
    number: u64,
    draws: &'s [u64],
    tags: &'s [&'s str],
    owned: &'s Counted,
}
slot_root!(struct FrameRoot = for<'s> Frame<'s>);

fn frames_each() -> u64 {
    if cfg!(miri) {
        4
    } else if cfg!(debug_assertions) {
        200
    } else {
        4000
    }
}

#[test]
fn producers_and_consumers_share_one_ring() {
    let producers = if cfg!(miri) { 2 } else { 6 };
    let consumers = if cfg!(miri) { 2 } else { 4 };
    let received = AtomicUsize::new(0);
    let most_held = AtomicUsize::new(0);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("renderer", |renderer| {
        let ring = renderer.new_slots("frames", 4, 64 << 10);
        std::thread::scope(|t| {
            let (send, receive) = mpsc::channel::<Loaded<'_, FrameRoot, Shared>>();
            let receive = Arc::new(Mutex::new(receive));
            for _ in 0..consumers {
                let receive = receive.clone();
                let received = &received;
                t.spawn(move || loop {
                    let frame = receive.lock().unwrap().recv();
                    let Ok(frame) = frame else { break };
                    frame.with(|f| {
                        let expect = f.producer as u64 * 1_000_000 + f.number;
                        assert!(f.draws.iter().all(|&d| d == expect));
                        assert_eq!(f.owned.0, expect);
                        assert_eq!(f.tags.len(), 3);
                        assert_eq!(f.tags[1], format!("tag {}", (f.number + 6) % 7));
                    });
                    received.fetch_add(1, Ordering::Relaxed);
                    drop(frame);
                });
            }
            for p in 0..producers {
                let send = send.clone();
                let most_held = &most_held;
                t.spawn(move || {
                    for n in 0..frames_each() {
                        let value = p as u64 * 1_000_000 + n;
                        let frame = ring.load_concurrent_wait::<FrameRoot>("frame", |jobs| {
                            let workers = 1 + (n % 2) as usize;
                            let parts: Vec<&[u64]> = std::thread::scope(|w| {
                                let hs: Vec<_> = (0..workers)
                                    .map(|_| {
                                        w.spawn(|| &*jobs.alloc_slice_fill_with(50, |_| value))
                                    })
                                    .collect();
                                hs.into_iter().map(|h| h.join().unwrap()).collect()
                            });
                            let tags: Vec<&str> = (0..3)
                                .map(|i| &*jobs.alloc_fmt(format_args!("tag {}", (n + 6 * i) % 7)))
                                .collect();
                            Frame {
                                producer: p,
                                number: n,
                                draws: jobs
                                    .alloc_iter(parts.iter().flat_map(|d| d.iter().copied())),
                                tags: jobs.alloc_slice_copy(&tags),
                                owned: jobs.new_object(Counted::new(value)),
                            }
                        });
                        most_held.fetch_max(ring.loaded(), Ordering::Relaxed);
                        send.send(frame).unwrap();
                    }
                });
            }
            drop(send);
        });
        assert_eq!(ring.loaded(), 0);
    });
    let total = producers * frames_each() as usize;
    assert_eq!(received.load(Ordering::Relaxed), total);
    assert!(most_held.load(Ordering::Relaxed) <= 4);
    assert_eq!(MADE.load(Ordering::Relaxed), total);
    assert_eq!(DROPPED.load(Ordering::Relaxed), total);
}

slot_root!(struct Number = for<'s> u64);

#[test]
fn plain_loads_from_many_threads_never_share_a_slot() {
    let threads = if cfg!(miri) { 3 } else { 8 };
    let rounds = frames_each();
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 3, 4096);
        let owners: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(usize::MAX)).collect();
        std::thread::scope(|t| {
            for id in 0..threads {
                let owners = &owners;
                t.spawn(move || {
                    for r in 0..rounds {
                        let l = slots.load_wait::<Number>("level", |s| {
                            *s.new_pod(id as u64 * 1_000_000 + r)
                        });
                        let slot = l.slot();
                        // Nobody else holds this slot while we do.
                        assert_eq!(owners[slot].swap(id, Ordering::SeqCst), usize::MAX);
                        assert_eq!(l.with(|n| *n), id as u64 * 1_000_000 + r);
                        assert_eq!(owners[slot].swap(usize::MAX, Ordering::SeqCst), id);
                        drop(l);
                    }
                });
            }
        });
        assert_eq!(slots.loaded(), 0);
    });
}

/// Holder names are never torn: writers load and drop slots under names of 40 bytes
/// made of one repeated letter each, while readers take every name they can see (the
/// holders of a failed load, which reports read the same way) and check each against
/// the set of names written. A torn read would mix two letters. The writers go on past
/// their rounds until a reader has seen a name: on a loaded machine (this binary runs
/// the other stress tests beside it) the readers may get no time while they write.
#[test]
fn holder_names_are_never_torn() {
    slot_root!(struct Unit = for<'s> ());
    const WRITERS: usize = 3;
    const READERS: usize = 3;
    let rounds: usize = if cfg!(miri) {
        20
    } else if cfg!(debug_assertions) {
        5_000
    } else {
        100_000
    };
    let names: Vec<String> = (0..WRITERS * 2)
        .map(|i| char::from(b'A' + i as u8).to_string().repeat(40))
        .collect();
    let is_written = |name: &str| name.is_empty() || names.iter().any(|n| n == name);

    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("names", |scope| {
        let slots = scope.new_slots("slots", 2, 1024);
        let done = std::sync::atomic::AtomicBool::new(false);
        let reader_saw_a_name = std::sync::atomic::AtomicBool::new(false);
        let (seen, torn) = std::thread::scope(|t| {
            let readers: Vec<_> = (0..READERS)
                .map(|_| {
                    let (done, reader_saw_a_name) = (&done, &reader_saw_a_name);
                    t.spawn(move || {
                        let (mut seen, mut torn) = (0usize, Vec::new());
                        while !done.load(Ordering::Relaxed) {
                            if let Err(e) = slots.load::<Unit>("reader", |_| ()) {
                                for name in e.holders() {
                                    seen += 1;
                                    if !is_written(name) && name != "reader" {
                                        torn.push(name.to_string());
                                    }
                                }
                                if seen > 0 {
                                    reader_saw_a_name.store(true, Ordering::Relaxed);
                                }
                            }
                        }
                        (seen, torn)
                    })
                })
                .collect();
            let writers: Vec<_> = (0..WRITERS)
                .map(|w| {
                    let (names, reader_saw_a_name) = (&names, &reader_saw_a_name);
                    t.spawn(move || {
                        let mut i = 0;
                        while i < rounds || !reader_saw_a_name.load(Ordering::Relaxed) {
                            let name = &names[w * 2 + i % 2];
                            if let Ok(loaded) = slots.load::<Unit>(name, |_| ()) {
                                assert_eq!(loaded.name(), name);
                            }
                            i += 1;
                        }
                    })
                })
                .collect();
            for w in writers {
                w.join().unwrap();
            }
            done.store(true, Ordering::Relaxed);
            readers.into_iter().map(|r| r.join().unwrap()).fold(
                (0, Vec::new()),
                |(s, mut t), (s2, t2)| {
                    t.extend(t2);
                    (s + s2, t)
                },
            )
        });
        assert!(seen > 0, "the readers saw no names");
        assert!(
            torn.is_empty(),
            "torn names: {:?}",
            &torn[..torn.len().min(5)]
        );
    });
}

/// `Full` means full: as many threads as slots, each loading a slot, dropping it, and
/// loading again. No thread ever holds more than one, so at any moment at least one
/// slot is free or being freed, and no load may fail with `Full`. (One pass over the
/// ring missed a slot freed behind it while another thread took the one ahead: 0 to 5
/// `Full` errors per run of a 64-slot service before the fix.)
#[test]
fn a_load_is_never_full_while_a_slot_is_free() {
    slot_root!(struct Unit = for<'s> ());
    let slots_n = if cfg!(miri) { 3 } else { 8 };
    let rounds = if cfg!(miri) {
        20
    } else if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("service", |scope| {
        let slots = scope.new_slots("requests", slots_n, 1024);
        let full = AtomicUsize::new(0);
        std::thread::scope(|t| {
            for _ in 0..slots_n {
                let full = &full;
                t.spawn(move || {
                    for _ in 0..rounds {
                        match slots.load::<Unit>("request", |_| ()) {
                            Ok(held) => drop(held),
                            Err(e) => {
                                assert_eq!(e.kind(), scope_stack::SlotErrorKind::Full);
                                full.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(
            full.load(Ordering::Relaxed),
            0,
            "loads that said Full with a slot free"
        );
        assert_eq!(slots.loaded(), 0);
    });
}
