//! loom models of the slots' free/wait handshake: a thread that waits for a slot is
//! never left asleep after another thread frees one.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom loom_slots::`.
//!
//! Under loom time does not pass (a timed wait never times out), so a lost wake-up
//! shows as a deadlock, which loom reports.
#![cfg(loom)]

use std::time::Duration;

use loom::model::Builder;
use loom::thread;
use scope_stack::{slot_root, LinearAllocator, Slots};

slot_root!(struct Number = for<'s> u32);

/// Runs `f` with fresh slots (`count` of 256 bytes), lent as `'static` (loom's threads
/// need `'static` data); then checks that every slot is free again.
fn with_slots(count: usize, f: impl FnOnce(&'static Slots)) {
    with_slots_of(count, 256, f)
}

/// [`with_slots`] with slots of `bytes` each (a concurrent load needs room for its
/// per-thread table).
fn with_slots_of(count: usize, bytes: usize, f: impl FnOnce(&'static Slots)) {
    let mut memory = LinearAllocator::with_capacity(64 << 10).unwrap();
    memory.scope("loom", |scope| {
        let slots: &Slots = scope.new_slots("slots", count, bytes);
        // SAFETY: `f` joins every thread it spawns before returning, and the slots
        // outlive this closure; the `'static` is never observed past it.
        let slots: &'static Slots = unsafe { &*(slots as *const Slots) };
        f(slots);
        assert_eq!(slots.loaded(), 0);
    });
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

/// A waiter on a full set gets the slot that another thread frees.
#[test]
fn load_wait_is_woken_by_a_drop() {
    model(|| {
        with_slots(1, |slots| {
            let held = slots.load::<Number>("held", |_| 1).unwrap();
            let waiter =
                thread::spawn(move || slots.load_wait::<Number>("waiter", |_| 2).with(|n| *n));
            drop(held);
            assert_eq!(waiter.join().unwrap(), 2);
        });
    });
}

/// The same with a time limit (which never runs out under loom).
#[test]
fn load_wait_timeout_is_woken_by_a_drop() {
    model(|| {
        with_slots(1, |slots| {
            let held = slots.load::<Number>("held", |_| 1).unwrap();
            let waiter = thread::spawn(move || {
                slots
                    .load_wait_timeout::<Number>("waiter", Duration::from_secs(1), |_| 2)
                    .map(|l| l.with(|n| *n))
                    .ok()
            });
            drop(held);
            assert_eq!(waiter.join().unwrap(), Some(2));
        });
    });
}

/// Two waiters, two frees on another thread: both get a slot.
#[test]
fn two_waiters_both_get_a_slot() {
    let mut builder = Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    builder.check(|| {
        with_slots(1, |slots| {
            let held = slots.load::<Number>("held", |_| 1).unwrap();
            let a = thread::spawn(move || slots.load_wait::<Number>("a", |_| 2).with(|n| *n));
            let b = thread::spawn(move || slots.load_wait::<Number>("b", |_| 3).with(|n| *n));
            drop(held);
            let got = a.join().unwrap() + b.join().unwrap();
            assert_eq!(got, 5);
        });
    });
}

/// A holder's name published while another thread reads it (through the holders of a
/// failed load) is read whole or not at all: the name copy's sequence lock never lets a
/// reader mix two holders' words. The names are 16 bytes, two words each.
#[test]
fn a_name_published_while_read_is_never_torn() {
    slot_root!(struct Unit = for<'s> ());
    const A: &str = "AAAAAAAAAAAAAAAA";
    const B: &str = "BBBBBBBBBBBBBBBB";
    model(|| {
        with_slots(1, |slots| {
            let first = slots.load::<Unit>(A, |_| ()).unwrap();
            let writer = thread::spawn(move || {
                drop(first);
                if let Ok(second) = slots.load::<Unit>(B, |_| ()) {
                    drop(second);
                }
            });
            match slots.load::<Unit>("reader", |_| ()) {
                Ok(mine) => drop(mine),
                Err(e) => {
                    for name in e.holders() {
                        // "" is a holder whose name is not (or no longer) readable.
                        assert!(
                            name.is_empty() || name == A || name == B,
                            "torn name {name:?}"
                        );
                    }
                }
            }
            writer.join().unwrap();
        });
    });
}

/// A report that reads a loaded slot's contents races the slot's unload on another
/// thread: the unload waits for the report's read pin, and the report sees the slot
/// either loaded with its pool or not at all.
#[test]
fn a_report_reading_a_slot_races_its_unload() {
    struct Level<'s> {
        // Never read: it is there so the slot holds a pool, which the report shows.
        #[allow(dead_code)]
        pool: &'s mut scope_stack::Pool<'s, u32>,
    }
    slot_root!(struct LevelRoot => Level);
    let mut builder = Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    builder.check(|| {
        let mut memory = LinearAllocator::with_capacity(16 << 10).unwrap();
        memory.scope("loom", |scope| {
            let slots: &Slots = scope.new_slots("slots", 1, 4096);
            // SAFETY: the thread is joined before the scope ends.
            let slots: &'static Slots = unsafe { &*(slots as *const Slots) };
            let level = slots
                .load_concurrent::<LevelRoot>("level", |s| Level {
                    pool: s.new_pool(2),
                })
                .unwrap();
            level.with(|l| l.pool.insert(7).ok().unwrap().into_handle());
            let dropper = thread::spawn(move || drop(level));
            let map = scope.report();
            let slot = &map.scopes[0].slots[0].slots[0];
            if !slot.contents.is_empty() {
                let pool = slot.contents.iter().find(|p| p.kind == "Pool").unwrap();
                assert_eq!((pool.len, pool.capacity), (1, 2));
            }
            dropper.join().unwrap();
            assert_eq!(slots.loaded(), 0);
        });
    });
}

/// The read-pin protocol on its own (issue 37): a report pins a slot and reads its
/// memory while the holder unloads it, frees it, and a new holder claims it and builds
/// into the same memory. The slot's memory is a cell that loom watches, so a read that
/// is not ordered after the build it reads and before the unload that follows is a
/// causality error. The report either reads a whole build's contents or nothing.
///
/// Before the fix the free stored `closing = 0` (relaxed) before `state = FREE`, and a
/// pin could pair that 0 with the old `LOADED`: a pin on memory being rebuilt.
#[test]
fn a_pin_races_an_unload_and_the_next_load() {
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use scope_stack::LoomSlotRecord;

    struct Slot {
        record: LoomSlotRecord,
        /// The slot's memory: which build wrote it.
        memory: UnsafeCell<u32>,
    }
    // SAFETY (of the test's own type): the cell is reached only under the protocol
    // being checked, and loom reports any access the protocol does not order.
    unsafe impl Sync for Slot {}

    // Small enough to explore without a preemption bound (every interleaving).
    let builder = Builder::new();
    builder.check(|| {
        let slot = Arc::new(Slot {
            record: LoomSlotRecord::new(),
            memory: UnsafeCell::new(0),
        });
        // The first holder builds and loads.
        assert!(slot.record.try_claim());
        slot.memory.with_mut(|m| unsafe { *m = 1 });
        slot.record.publish_open();
        slot.record.mark_loaded();
        let holder = {
            let slot = slot.clone();
            thread::spawn(move || {
                // Unload: close, drop and rewind (writes the memory), free.
                slot.record.close_for_readers();
                slot.memory.with_mut(|m| unsafe { *m = 0 });
                slot.record.free();
                // The next load: claim, build into the same memory, publish.
                assert!(slot.record.try_claim());
                slot.memory.with_mut(|m| unsafe { *m = 2 });
                slot.record.publish_open();
                slot.record.mark_loaded();
            })
        };
        let seen = slot.record.read(|| slot.memory.with(|m| unsafe { *m }));
        assert!(matches!(seen, None | Some(1) | Some(2)), "read {seen:?}");
        holder.join().unwrap();
    });
}

/// A report pins a slot while it is being built (issue 47: the map shows what a build
/// has placed and carved so far), and the build then ends (loaded) or fails (unloads
/// at once), and the slot is loaded again. The pin succeeds only once the holder has
/// published its fields (`OPEN`), so it never reads them half-written; the move to
/// loaded keeps its count; and the unload waits for it before it rewrites the memory.
#[test]
fn a_pin_taken_during_a_build_races_its_end_and_the_next_load() {
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use scope_stack::LoomSlotRecord;

    struct Slot {
        record: LoomSlotRecord,
        /// The holder's published fields: which build wrote them.
        fields: UnsafeCell<u32>,
    }
    // SAFETY (of the test's own type): the cell is reached only under the protocol
    // being checked, and loom reports any access the protocol does not order.
    unsafe impl Sync for Slot {}

    for fails in [false, true] {
        Builder::new().check(move || {
            let slot = Arc::new(Slot {
                record: LoomSlotRecord::new(),
                fields: UnsafeCell::new(0),
            });
            assert!(slot.record.try_claim());
            let holder = {
                let slot = slot.clone();
                thread::spawn(move || {
                    // The open: write the fields, then publish them.
                    slot.fields.with_mut(|m| unsafe { *m = 1 });
                    slot.record.publish_open();
                    if !fails {
                        slot.record.mark_loaded();
                    }
                    // The unload (of the loaded slot, or of the failed build).
                    slot.record.close_for_readers();
                    slot.fields.with_mut(|m| unsafe { *m = 0 });
                    slot.record.free();
                    // The next load writes the same fields.
                    assert!(slot.record.try_claim());
                    slot.fields.with_mut(|m| unsafe { *m = 2 });
                })
            };
            let seen = slot.record.read(|| slot.fields.with(|m| unsafe { *m }));
            assert!(matches!(seen, None | Some(1)), "read {seen:?}");
            holder.join().unwrap();
        });
    }
}

/// The same race through the public API: a report reads a loaded slot's contents while
/// another thread unloads it and loads it again with other contents. The report sees
/// the first load's pool, the second's, or no contents, and each row it sees agrees
/// with the state it shows.
#[test]
fn a_report_races_an_unload_and_the_next_load() {
    struct Level<'s> {
        // Never read: it is there so the slot holds a pool, which the report shows.
        #[allow(dead_code)]
        pool: &'s mut scope_stack::Pool<'s, u32>,
    }
    slot_root!(struct LevelRoot => Level);
    let mut builder = Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    builder.check(|| {
        let mut memory = LinearAllocator::with_capacity(16 << 10).unwrap();
        memory.scope("loom", |scope| {
            let slots: &Slots = scope.new_slots("slots", 1, 4096);
            // SAFETY: the thread is joined before the scope ends.
            let slots: &'static Slots = unsafe { &*(slots as *const Slots) };
            let first = slots
                .load::<LevelRoot>("first", |s| Level {
                    pool: s.new_pool(2),
                })
                .unwrap();
            let reloader = thread::spawn(move || {
                drop(first);
                let second = slots
                    .load::<LevelRoot>("second", |s| Level {
                        pool: s.new_pool(3),
                    })
                    .unwrap();
                drop(second);
            });
            let map = scope.report();
            let slot = &map.scopes[0].slots[0].slots[0];
            if let Some(pool) = slot.contents.first() {
                // Read under a pin: loaded, or being built with the pool carved.
                assert_ne!(slot.state, scope_stack::SlotState::Free);
                let expect = match slot.holder.as_deref() {
                    Some("first") => 2,
                    Some("second") => 3,
                    other => panic!("holder {other:?} with contents"),
                };
                assert_eq!((pool.kind, pool.capacity), ("Pool", expect));
            }
            reloader.join().unwrap();
            assert_eq!(slots.loaded(), 0);
        });
    });
}

/// A task that waits for a full set (async load) is woken by the drop on another
/// thread: if its poll returned `Pending`, the drop's wake reaches its waker, so a
/// second poll gets the slot. Polled by hand with a waker that counts its wakes.
#[test]
fn an_async_load_is_woken_by_a_drop() {
    use std::future::Future;
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    struct Flag(loom::sync::atomic::AtomicUsize);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, loom::sync::atomic::Ordering::SeqCst);
        }
    }

    model(|| {
        with_slots_of(1, 16 << 10, |slots| {
            let held = slots.load_concurrent::<Number>("held", |_| 1).unwrap();
            let dropper = thread::spawn(move || drop(held));
            let flag = Arc::new(Flag(loom::sync::atomic::AtomicUsize::new(0)));
            let waker = Waker::from(flag.clone());
            let mut cx = Context::from_waker(&waker);
            let mut wait = Box::pin(slots.load_concurrent_async::<Number>("task", |_| 2));
            let got = match wait.as_mut().poll(&mut cx) {
                Poll::Ready(l) => {
                    dropper.join().unwrap();
                    l.with(|n| *n)
                }
                Poll::Pending => {
                    dropper.join().unwrap();
                    // The drop came after the task counted itself: it must have woken it.
                    assert_eq!(flag.0.load(loom::sync::atomic::Ordering::SeqCst), 1);
                    match wait.as_mut().poll(&mut cx) {
                        Poll::Ready(l) => l.with(|n| *n),
                        Poll::Pending => panic!("woken, yet no slot is free"),
                    }
                }
            };
            assert_eq!(got, 2);
            drop(wait);
        });
    });
}
