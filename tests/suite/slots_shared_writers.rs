//! Rule 13: several threads add to one shared slot at once through
//! `Loaded::with_scope` (no `&mut`), while a report reads it; what they place lives
//! until the slot unloads and is dropped then, once each.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use scope_stack::{slot_root, LinearAllocator, Pool, SlotState};

const WRITERS: usize = if cfg!(miri) { 2 } else { 4 };
const ROUNDS: usize = if cfg!(miri) { 3 } else { 200 };

static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// A placed value with a destructor (`Send`, as a concurrent scope requires).
struct Counted(#[allow(dead_code)] usize);
impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

struct Frame<'s> {
    draws: &'s Pool<'s, [u32; 4]>,
    labels: Mutex<Vec<&'s str>>,
    counted: Mutex<Vec<&'s Counted>>,
}
slot_root!(struct FrameRoot = for<'s> Frame<'s>);

#[test]
fn writers_on_several_threads_add_to_one_frame_and_everything_drops_at_unload() {
    DROPPED.store(0, Ordering::Relaxed);
    let mut memory = LinearAllocator::with_capacity(4 << 20).unwrap();
    memory.scope("renderer", |renderer| {
        let frames = renderer.new_slots("frames", 2, 1 << 20);
        let map = renderer.map_handle();
        let frame = frames
            .load_concurrent::<FrameRoot>("frame", |jobs| Frame {
                draws: jobs.new_pool(WRITERS * ROUNDS),
                labels: Mutex::new(Vec::new()),
                counted: Mutex::new(Vec::new()),
            })
            .unwrap();
        let before = frame.used();
        let writing = AtomicUsize::new(WRITERS);
        std::thread::scope(|t| {
            for writer in 0..WRITERS {
                let (frame, writing) = (&frame, &writing);
                t.spawn(move || {
                    for round in 0..ROUNDS {
                        frame.with_scope(|f, jobs| {
                            let _ = f
                                .draws
                                .insert([writer as u32, round as u32, 0, 0])
                                .unwrap()
                                .into_handle();
                            let label = jobs.alloc_fmt(format_args!("w{writer} r{round}"));
                            f.labels.lock().unwrap().push(label);
                            let c = jobs.new_object(Counted(writer * ROUNDS + round));
                            f.counted.lock().unwrap().push(c);
                        });
                    }
                    writing.fetch_sub(1, Ordering::Release);
                });
            }
            // A reader takes maps while the writers place values.
            t.spawn(|| {
                let mut maps = 0;
                while maps == 0 || writing.load(Ordering::Acquire) != 0 {
                    let m = map.report();
                    let set = &m.scopes[0].slots[0];
                    for slot in &set.slots {
                        assert!(slot.used <= set.bytes_each);
                        if slot.state == SlotState::Loaded {
                            assert!(slot.used >= before);
                        }
                    }
                    maps += 1;
                }
            });
        });
        let total = WRITERS * ROUNDS;
        frame.with(|f| {
            assert_eq!(f.draws.len(), total);
            assert_eq!(f.labels.lock().unwrap().len(), total);
            let mut labels: Vec<&str> = f.labels.lock().unwrap().clone();
            labels.sort_unstable();
            labels.dedup();
            assert_eq!(labels.len(), total, "every placed label is its own");
        });
        // Each writer's last `with_scope` published the slot's use.
        assert!(frame.used() > before);
        assert_eq!(
            DROPPED.load(Ordering::Relaxed),
            0,
            "nothing drops while loaded"
        );
        drop(frame);
        assert_eq!(
            DROPPED.load(Ordering::Relaxed),
            total,
            "each placed value drops once"
        );
        assert_eq!(frames.loaded(), 0);
    });
}

#[test]
fn with_scope_and_with_mut_take_turns_and_both_grow_the_same_slot() {
    slot_root!(struct Lines = for<'s> Mutex<Vec<&'s str>>);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("chat", 1, 64 << 10);
        let mut chat = slots
            .load_concurrent::<Lines>("chat", |_| Mutex::new(Vec::new()))
            .unwrap();
        chat.with_scope(|lines, jobs| lines.lock().unwrap().push(jobs.alloc_str("hello")));
        chat.with_mut(|lines, jobs| lines.get_mut().unwrap().push(jobs.alloc_str("there")));
        chat.with_scope(|lines, jobs| lines.lock().unwrap().push(jobs.alloc_str("again")));
        assert_eq!(
            chat.with(|l| l.lock().unwrap().join(" ")),
            "hello there again"
        );
    });
}
