//! Slot sets that live as long as the program (`Slots::leak`, `Slots::from_static`):
//! loads and unloads in any order, slot reuse, frames built and dropped on other
//! threads, `Loaded<'static, ..>` values kept in statics, spawned threads and engine
//! structs without a lifetime parameter, the error cases, drops counted exactly, and
//! the set's own memory map. Loops are scaled down under Miri.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};

use scope_stack::{
    slot_root, AllocErrorKind, LinearAllocator, Loaded, Plain, Shared, SlotErrorKind, SlotState,
    Slots,
};
use static_assertions::{assert_impl_all, assert_not_impl_any};

/// Rounds of loads, frames and threads, scaled down under Miri.
const ROUNDS: usize = if cfg!(miri) { 6 } else { 200 };
const FRAMES: u32 = if cfg!(miri) { 6 } else { 300 };
const THREADS: usize = if cfg!(miri) { 2 } else { 4 };

struct Level<'s> {
    name: &'s str,
    spawns: &'s [[f32; 2]],
}
slot_root!(struct LevelRoot => Level);

struct Frame<'s> {
    number: u32,
    draws: &'s [u32],
}
slot_root!(struct FrameRoot => Frame);

slot_root!(struct Unit = for<'s> ());

// A shared loaded slot of a `Sync` root is `Send + Sync` (a Bevy resource, a
// `OnceLock` in a `static`). A plain one is never `Send`; it is `Sync` when its root
// is (a `&Loaded` lends only `&root`), so scoped threads may read it, but a resource
// or a `OnceLock` (`Send + Sync`) cannot hold it.
assert_impl_all!(Loaded<'static, FrameRoot, Shared>: Send, Sync);
assert_not_impl_any!(Loaded<'static, FrameRoot, Plain>: Send);
assert_impl_all!(Loaded<'static, FrameRoot, Plain>: Sync);
assert_impl_all!(Slots: Send, Sync);

/// The same without the macro crate: a generic function with the bounds.
fn assert_send_sync<T: Send + Sync + 'static>() {}

#[test]
fn shared_loaded_of_a_sync_root_is_send_and_sync() {
    assert_send_sync::<Loaded<'static, FrameRoot, Shared>>();
    assert_send_sync::<&'static Slots>();
}

fn load_level<'a>(slots: &'a Slots, name: &str) -> Loaded<'a, LevelRoot> {
    slots
        .load::<LevelRoot>(name, |s| Level {
            name: s.alloc_str(name),
            spawns: s.alloc_slice_fill_with(16, |i| [i as f32, 0.0]),
        })
        .unwrap()
}

#[test]
fn a_leaked_set_loads_and_unloads_in_any_order() {
    let levels: &'static Slots = Slots::leak("levels", 3, 4096).unwrap();
    assert_eq!(
        (levels.name(), levels.count(), levels.bytes_each()),
        ("levels", 3, 4096)
    );
    let a: Loaded<'static, LevelRoot> = load_level(levels, "forest");
    let b = load_level(levels, "castle");
    let c = load_level(levels, "caves");
    assert_eq!((a.slot(), b.slot(), c.slot()), (0, 1, 2));
    assert_eq!(levels.loaded(), 3);
    let full = levels.load::<Unit>("one too many", |_| ()).unwrap_err();
    assert_eq!(full.kind(), SlotErrorKind::Full);
    drop(b); // the middle one goes first
    let d = load_level(levels, "desert");
    assert_eq!(d.slot(), 1, "the freed slot is reused");
    drop(a);
    drop(c);
    assert_eq!(d.with(|l| l.name.to_string()), "desert");
    assert_eq!(d.with(|l| l.spawns[15][0]), 15.0);
    drop(d);
    assert_eq!(levels.loaded(), 0);
}

#[test]
fn slots_are_reused_and_rewound_round_after_round() {
    let frames = Slots::leak("frames", 2, 2048).unwrap();
    let map = frames.map_handle().unwrap();
    let mut previous = None;
    for round in 0..ROUNDS {
        let frame = frames
            .load::<FrameRoot>("frame", |s| Frame {
                number: round as u32,
                draws: s.alloc_slice_fill_with(256, |i| i as u32),
            })
            .unwrap();
        let used = frame.used();
        assert!(used >= 1024, "{used}");
        // Every round holds the same bytes: the slot rewound in between.
        if let Some(p) = previous {
            assert_eq!(used, p);
        }
        previous = Some(used);
        assert_eq!(
            frame.with(|f| (f.number, f.draws[255])),
            (round as u32, 255)
        );
        // Keep one frame alive across the next load now and then: both slots serve.
        if round % 3 == 0 {
            let other = frames.load::<Unit>("beside", |_| ()).unwrap();
            assert_ne!(other.slot(), frame.slot());
        }
    }
    let set = &map.report().scopes[0].slots[0];
    let loads: usize = set.slots.iter().map(|s| s.loads).sum();
    assert_eq!(loads, ROUNDS + ROUNDS.div_ceil(3));
    assert!(set
        .slots
        .iter()
        .all(|s| s.state == SlotState::Free && s.used == 0));
    assert_eq!(set.most_loaded, 2);
}

/// Counts drops into the counter it points at.
struct Counted(&'static AtomicUsize);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

struct Holder<'s> {
    _own: Counted,
    _placed: &'s [Counted],
}
slot_root!(struct HolderRoot => Holder);

#[test]
fn every_destructor_runs_once_per_unload() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let set = Slots::leak("drops", 2, 4096).unwrap();
    for round in 1..=ROUNDS {
        let loaded = set
            .load::<HolderRoot>("holder", |s| {
                s.new_object(Counted(&DROPS));
                Holder {
                    _own: Counted(&DROPS),
                    _placed: s.alloc_slice_fill_with(3, |_| Counted(&DROPS)),
                }
            })
            .unwrap();
        assert_eq!(DROPS.load(Ordering::Relaxed), (round - 1) * 5);
        drop(loaded);
        assert_eq!(DROPS.load(Ordering::Relaxed), round * 5);
    }
    // A build that fails drops what it placed, and frees the slot.
    let before = DROPS.load(Ordering::Relaxed);
    let err = set
        .try_load::<Unit>("too big", |s| {
            s.new_object(Counted(&DROPS));
            s.try_alloc_raw(1 << 20, 1)?;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.kind(), SlotErrorKind::Alloc);
    assert_eq!(DROPS.load(Ordering::Relaxed), before + 1);
    assert_eq!(set.loaded(), 0);
}

#[test]
fn frames_built_by_threads_are_dropped_on_a_spawned_render_thread() {
    static FRAMES_SET: OnceLock<&'static Slots> = OnceLock::new();
    let frames = *FRAMES_SET.get_or_init(|| Slots::leak("frames", 3, 16 << 10).unwrap());
    let (send, receive) = mpsc::channel::<Loaded<'static, FrameRoot, Shared>>();
    // `std::thread::spawn` needs `'static`: the frames and the set are.
    let render = std::thread::spawn(move || {
        let mut drawn = 0;
        for frame in receive {
            drawn += frame.with(|f| f.draws.iter().map(|&d| d as usize).sum::<usize>());
            // dropping the frame here frees its slot for the game thread
        }
        drawn
    });
    for number in 0..FRAMES {
        let frame = frames.load_concurrent_wait::<FrameRoot>("frame", |jobs| {
            let parts: Vec<&[u32]> = std::thread::scope(|t| {
                let hs: Vec<_> = (0..THREADS)
                    .map(|w| t.spawn(move || &*jobs.alloc_slice_fill_with(8, |_| w as u32 + 1)))
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            Frame {
                number,
                draws: jobs.alloc_iter(parts.iter().flat_map(|p| p.iter().copied())),
            }
        });
        assert_eq!(frame.with(|f| f.number), number);
        send.send(frame).unwrap();
    }
    drop(send);
    let per_frame: usize = (1..=THREADS).map(|w| 8 * w).sum();
    assert_eq!(render.join().unwrap(), per_frame * FRAMES as usize);
    assert_eq!(frames.loaded(), 0);
}

#[test]
fn loads_from_many_threads_share_one_set() {
    let set: &'static Slots = Slots::leak("shared", THREADS, 4096).unwrap();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            std::thread::spawn(move || {
                for round in 0..ROUNDS {
                    let frame = set.load_concurrent_wait::<FrameRoot>("job", |jobs| Frame {
                        number: (t * 1000 + round) as u32,
                        draws: jobs.alloc_slice_fill_with(4, |i| i as u32),
                    });
                    assert_eq!(frame.with(|f| f.number), (t * 1000 + round) as u32);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(set.loaded(), 0);
}

#[test]
fn a_shared_loaded_slot_lives_in_a_static() {
    static CURRENT: OnceLock<Loaded<'static, FrameRoot, Shared>> = OnceLock::new();
    static NEXT: Mutex<Option<Loaded<'static, FrameRoot, Shared>>> = Mutex::new(None);
    let frames = Slots::leak("statics", 2, 8192).unwrap();
    let first = frames
        .load_concurrent::<FrameRoot>("first", |jobs| Frame {
            number: 1,
            draws: jobs.alloc_slice_copy(&[1, 2, 3]),
        })
        .unwrap();
    assert!(CURRENT.set(first).is_ok());
    // Read from other threads through the static.
    let sums: Vec<u32> = (0..THREADS)
        .map(|_| std::thread::spawn(|| CURRENT.get().unwrap().with(|f| f.draws.iter().sum())))
        .map(|h| h.join().unwrap())
        .collect();
    assert!(sums.iter().all(|&s| s == 6));
    // One that a thread swaps in and another drops.
    std::thread::spawn(move || {
        let next = frames
            .load_concurrent::<FrameRoot>("next", |jobs| Frame {
                number: 2,
                draws: jobs.alloc_slice_copy(&[4]),
            })
            .unwrap();
        *NEXT.lock().unwrap() = Some(next);
    })
    .join()
    .unwrap();
    assert_eq!(frames.loaded(), 2);
    std::thread::spawn(|| drop(NEXT.lock().unwrap().take()))
        .join()
        .unwrap();
    assert_eq!(frames.loaded(), 1, "the static one stays loaded");
}

/// An engine struct without a lifetime parameter holds its slot sets and what they
/// have loaded.
struct Engine {
    levels: &'static Slots,
    frames: &'static Slots,
    playing: Option<Loaded<'static, LevelRoot>>,
    in_flight: Vec<Loaded<'static, FrameRoot, Shared>>,
}

impl Engine {
    fn new() -> Engine {
        Engine {
            levels: Slots::leak("levels", 2, 8192).unwrap(),
            frames: Slots::leak("frames", 2, 8192).unwrap(),
            playing: None,
            in_flight: Vec::new(),
        }
    }

    fn play(&mut self, name: &str) {
        let next = load_level(self.levels, name); // loads while the old one plays
        self.playing = Some(next);
    }

    fn frame(&mut self, number: u32) {
        let spawns = self
            .playing
            .as_ref()
            .map_or(0, |l| l.with(|l| l.spawns.len()));
        if self.in_flight.len() == 2 {
            drop(self.in_flight.remove(0)); // the oldest frame is done
        }
        let frame = self
            .frames
            .load_concurrent::<FrameRoot>("frame", |jobs| Frame {
                number,
                draws: jobs.alloc_slice_fill_with(spawns, |i| i as u32),
            })
            .unwrap();
        self.in_flight.push(frame);
    }
}

#[test]
fn an_engine_struct_without_lifetimes_holds_static_slots() {
    let mut engine = Engine::new();
    engine.play("forest");
    for n in 0..4 {
        engine.frame(n);
    }
    engine.play("castle");
    assert_eq!(
        engine.levels.loaded(),
        1,
        "the forest unloaded when the castle came"
    );
    engine.frame(4);
    assert_eq!(engine.frames.loaded(), 2);
    // The frames in flight go to a render thread that `std::thread::spawn` starts (it
    // needs `'static`); the level, built through a plain scope, stays on this thread.
    let render = Render {
        frames: engine.frames,
        in_flight: std::mem::take(&mut engine.in_flight),
    };
    let numbers = std::thread::spawn(move || {
        let numbers: Vec<_> = render
            .in_flight
            .iter()
            .map(|f| f.with(|f| (f.number, f.draws.len())))
            .collect();
        drop(render.in_flight); // unloaded on the render thread
        (numbers, render.frames.loaded())
    })
    .join()
    .unwrap();
    assert_eq!(numbers, (vec![(3, 16), (4, 16)], 0));
    assert_eq!(
        engine.playing.as_ref().map(|l| l.with(|l| l.name.len())),
        Some(6)
    );
}

/// The render half of an engine: only shared frames, so it is `Send + Sync` (a Bevy
/// resource must be).
struct Render {
    frames: &'static Slots,
    in_flight: Vec<Loaded<'static, FrameRoot, Shared>>,
}
assert_impl_all!(Render: Send, Sync);
// A plain loaded slot stays on its thread, so a struct holding one stays there too.
assert_not_impl_any!(Engine: Send);

#[test]
fn leak_errors_name_the_set() {
    let e = Slots::leak("none", 0, 4096).unwrap_err();
    assert_eq!(
        (e.kind(), e.scope_name()),
        (AllocErrorKind::InvalidCapacity, "none")
    );
    let e = Slots::leak("empty", 4, 0).unwrap_err();
    assert_eq!(
        (e.kind(), e.scope_name()),
        (AllocErrorKind::InvalidCapacity, "empty")
    );
    let e = Slots::leak("huge", usize::MAX / 2, 1024).unwrap_err();
    assert_eq!(
        (e.kind(), e.scope_name()),
        (AllocErrorKind::CapacityOverflow, "huge")
    );
    let e = Slots::leak("wide", 2, usize::MAX - 10).unwrap_err();
    assert_eq!(
        (e.kind(), e.scope_name()),
        (AllocErrorKind::CapacityOverflow, "wide")
    );
    let e = Slots::leak("past isize", 1, isize::MAX as usize).unwrap_err();
    assert_eq!(e.kind(), AllocErrorKind::CapacityOverflow);
    assert!(e.to_string().contains("\"past isize\""), "{e}");
    // Valid for `Layout`, but far more than the machine has: the heap says no, cleanly.
    #[cfg(not(miri))]
    {
        let e = Slots::leak("planet", 1, isize::MAX as usize / 2).unwrap_err();
        assert_eq!(
            (e.kind(), e.scope_name()),
            (AllocErrorKind::HeapExhausted, "planet")
        );
    }
}

#[test]
fn a_leaked_block_has_little_room_to_spare() {
    for (name, count, bytes) in [
        ("a", 1, 1),
        ("a longer name for a slot set", 7, 1000),
        ("b", 64, 64),
    ] {
        let set = Slots::leak(name, count, bytes).unwrap();
        let map = set.map_handle().unwrap().report();
        let spare = map.capacity - map.used;
        assert!(
            spare < 1024,
            "{name}: {spare} bytes to spare of {}",
            map.capacity
        );
        assert_eq!(map.scopes.len(), 1);
        assert_eq!(map.scopes[0].name, name);
    }
}

/// A static buffer aligned for everything a slot's scope asks for here (the slots
/// start on cache lines, a concurrent scope's parts on 128 bytes; Miri's symbolic
/// alignment check needs the buffer to say so).
#[repr(align(128))]
struct Buffer<const N: usize>([MaybeUninit<u8>; N]);

#[test]
fn a_set_over_a_static_buffer() {
    static mut BUFFER: Buffer<16384> = Buffer([MaybeUninit::uninit(); 16384]);
    // SAFETY: the only use of `BUFFER`, in a test that runs once.
    let buffer = unsafe { &mut (*std::ptr::addr_of_mut!(BUFFER)).0 };
    let levels = Slots::from_static("static levels", buffer, 2, 4096).unwrap();
    let a = load_level(levels, "forest");
    let b = load_level(levels, "castle");
    drop(a);
    let c = load_level(levels, "caves");
    assert_eq!(c.slot(), 0);
    assert_eq!(b.with(|l| l.name.to_string()), "castle");
    let map = levels.map_handle().unwrap().report();
    assert!(
        map.capacity < 16384,
        "the home takes the start of the buffer"
    );
    let set = &map.scopes[0].slots[0];
    let holders: Vec<_> = set.slots.iter().map(|s| s.holder.as_deref()).collect();
    assert_eq!(holders, [Some("caves"), Some("castle")]);
}

#[test]
fn a_static_buffer_set_hands_frames_to_a_spawned_thread() {
    static mut RING: Buffer<65536> = Buffer([MaybeUninit::uninit(); 65536]);
    // SAFETY: the only use of `RING`, in a test that runs once.
    let buffer = unsafe { &mut (*std::ptr::addr_of_mut!(RING)).0 };
    let frames = Slots::from_static("static frames", buffer, 2, 16 << 10).unwrap();
    let render = std::thread::spawn(move || {
        (0..FRAMES.min(20))
            .map(|n| {
                let frame = frames.load_concurrent_wait::<FrameRoot>("frame", |jobs| Frame {
                    number: n,
                    draws: jobs.alloc_slice_fill_with(10, |i| i as u32),
                });
                // Dropped on yet another thread.
                std::thread::spawn(move || frame.with(|f| f.number + f.draws[9]))
            })
            .map(|h| h.join().unwrap())
            .sum::<u32>()
    });
    let n = FRAMES.min(20);
    assert_eq!(render.join().unwrap(), n * (n - 1) / 2 + 9 * n);
    assert_eq!(frames.loaded(), 0);
}

#[test]
fn static_buffer_errors_name_the_set() {
    static mut SMALL: Buffer<64> = Buffer([MaybeUninit::uninit(); 64]);
    static mut MEDIUM: Buffer<4096> = Buffer([MaybeUninit::uninit(); 4096]);
    static mut OTHER: Buffer<64> = Buffer([MaybeUninit::uninit(); 64]);
    // SAFETY: each buffer is used once, here.
    let (small, medium, other) = unsafe {
        (
            &mut (*std::ptr::addr_of_mut!(SMALL)).0,
            &mut (*std::ptr::addr_of_mut!(MEDIUM)).0,
            &mut (*std::ptr::addr_of_mut!(OTHER)).0,
        )
    };
    // Too small for the set's bookkeeping.
    let e = Slots::from_static("tiny", small, 1, 16).unwrap_err();
    assert_eq!(
        (e.kind(), e.scope_name()),
        (AllocErrorKind::OutOfMemory, "tiny")
    );
    // Room for the bookkeeping, not for the slots.
    let e = Slots::from_static("medium", medium, 2, 4096).unwrap_err();
    assert_eq!(
        (e.kind(), e.scope_name()),
        (AllocErrorKind::OutOfMemory, "medium")
    );
    assert!(e.to_string().contains("\"medium\""), "{e}");
    let e = Slots::from_static("zero", other, 0, 16).unwrap_err();
    assert_eq!(
        (e.kind(), e.scope_name()),
        (AllocErrorKind::InvalidCapacity, "zero")
    );
}

#[test]
fn the_sets_map_shows_what_its_slots_hold() {
    let levels = Slots::leak("levels", 3, 16 << 10).unwrap();
    let map = levels.map_handle().unwrap();
    let forest = levels
        .load::<LevelRoot>("forest", |s| {
            let _ = s.new_pool::<u64>(32);
            Level {
                name: s.alloc_str("forest"),
                spawns: s.alloc_slice_fill_with(100, |_| [0.0; 2]),
            }
        })
        .unwrap();
    let frame = levels
        .load_concurrent::<FrameRoot>("frame 7", |jobs| Frame {
            number: 7,
            draws: jobs.alloc_slice_copy(&[1, 2]),
        })
        .unwrap();
    // From another thread, as a debug overlay would.
    let report = std::thread::spawn(move || map.report()).join().unwrap();
    let set = &report.scopes[0].slots[0];
    assert_eq!(
        (set.name.as_str(), set.count, set.bytes_each, set.loaded),
        ("levels", 3, 16 << 10, 2)
    );
    let states: Vec<_> = set.slots.iter().map(|s| s.state).collect();
    assert_eq!(
        states,
        [SlotState::Loaded, SlotState::Loaded, SlotState::Free]
    );
    assert_eq!(set.slots[0].holder.as_deref(), Some("forest"));
    assert!(set.slots[0].used >= 100 * 8, "{}", set.slots[0].used);
    assert!(
        set.slots[0].contents.iter().any(|p| p.type_name == "u64"),
        "{:?}",
        set.slots[0].contents
    );
    assert_eq!(set.slots[1].holder.as_deref(), Some("frame 7"));
    assert!(set.slots[1].concurrent.is_some());
    let text = report.to_string();
    for word in ["levels", "forest", "frame 7", "Pool<u64>"] {
        assert!(text.contains(word), "{word} missing from\n{text}");
    }
    let svg = report.to_svg();
    assert!(svg.contains("forest") && svg.contains("levels"), "{svg}");
    drop(forest);
    drop(frame);
    let set = &map.report().scopes[0].slots[0];
    assert_eq!(set.loaded, 0);
    assert!(set
        .slots
        .iter()
        .all(|s| s.holder.is_none() && s.contents.is_empty()));
    assert!(set.slots[0].high_water_mark >= 800);
}

#[test]
fn a_set_carved_from_a_scope_has_no_map_of_its_own() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 4096);
        assert!(slots.map_handle().is_none());
    });
}

#[test]
fn a_waiting_load_wakes_when_another_thread_drops_a_static_slot() {
    let set = Slots::leak("ring", 1, 16 << 10).unwrap();
    let first = set.load_concurrent::<Unit>("first", |_| ()).unwrap();
    let waiter =
        std::thread::spawn(move || set.load_wait::<Unit>("second", |_| ()).name().to_string());
    std::thread::spawn(move || drop(first)).join().unwrap();
    assert_eq!(waiter.join().unwrap(), "second");
    assert_eq!(set.loaded(), 0);
}
