//! Slot file loads with a build step (`load_from_with` and its concurrent and task
//! forms) and the waiting file loads (`load_wait_from`, `load_wait_timeout_from`,
//! `load_async_from` and theirs): the build step fills a field the file does not hold,
//! a failing step or file frees the slot with every value dropped once, and the waits
//! wait for a slot (features `serde` and `derive`).
#![cfg(all(feature = "serde", feature = "derive"))]

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use allocator_api2::vec::Vec as HeapVec;
use scope_stack::serde::{BuildError, DeserializeIn, PoolIn, Serde};
use scope_stack::{slot_root, AllocError, Handle, Heap, Place, SlotErrorKind, Slots};
use serde::Deserialize;

/// An enemy in the file: its name and health.
type Enemy<'s> = (&'s str, u32);
/// Enemy names and their handles, sorted, in a heap of the slot.
type NameIndex<'s> = HeapVec<(&'s str, Handle<Enemy<'s>>), &'s Heap>;

#[derive(DeserializeIn)]
struct Level<'s> {
    name: &'s str,
    enemies: PoolIn<'s, (&'s str, u32)>,
    /// Not in the file: enemy names to their handles, sorted, in a heap of the slot.
    #[serde(skip)]
    index: Option<NameIndex<'s>>,
}
slot_root!(struct LevelRoot => Level);

const LEVEL: &str = r#"{"name": "forest", "enemies": [["wolf", 30], ["bear", 80], ["fox", 10]]}"#;

/// The build step: indexes the pool the file filled, in a heap carved from the slot.
fn index<'s>(
    level: &mut Level<'s>,
    scope: impl Place<'s> + scope_stack::Carve<'s>,
) -> Result<(), AllocError> {
    let heap = scope.try_new_heap(2048)?;
    let mut index = HeapVec::new_in(heap);
    for &h in level.enemies.file_handles() {
        index.push((level.enemies.get(h).unwrap().0, h));
    }
    index.sort_unstable_by_key(|e| e.0);
    level.index = Some(index);
    Ok(())
}

fn hp(level: &Level<'_>, name: &str) -> Option<u32> {
    let index = level.index.as_ref()?;
    let at = index.binary_search_by_key(&name, |e| e.0).ok()?;
    level.enemies.get(index[at].1).map(|e| e.1)
}

#[test]
fn the_build_step_indexes_the_pool_it_read_for_every_slot_kind() {
    let slots = Slots::leak("levels", 2, 32 << 10).unwrap();
    let json = || serde_json::Deserializer::from_str(LEVEL);

    let plain = slots
        .load_from_with::<LevelRoot, _, _>("plain", &mut json(), |l, s| index(l, s))
        .unwrap();
    assert_eq!(
        plain.with(|l| (l.name.len(), hp(l, "bear"), hp(l, "cat"))),
        (6, Some(80), None)
    );
    drop(plain);

    let shared = slots
        .load_concurrent_from_with::<LevelRoot, _, _>("shared", &mut json(), |l, s| {
            index(l, s.local())
        })
        .unwrap();
    let task = slots
        .load_task_from_with::<LevelRoot, _, _>("task", &mut json(), |l, s| index(l, s))
        .unwrap();
    let (a, b) = std::thread::scope(|t| {
        let a = t.spawn(move || shared.with(|l| hp(l, "wolf")));
        let b = t.spawn(move || task.with(|l| hp(l, "fox")));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!((a, b), (Some(30), Some(10)));
    assert_eq!(slots.loaded(), 0);
}

thread_local! {
    static MADE: Cell<usize> = const { Cell::new(0) };
    static DROPPED: Cell<usize> = const { Cell::new(0) };
}

/// Counts its values made and dropped on this thread.
struct Counted(#[allow(dead_code)] u32);
impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(d)?;
        MADE.with(|m| m.set(m.get() + 1));
        Ok(Counted(n))
    }
}
impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.with(|d| d.set(d.get() + 1));
    }
}
fn made() -> usize {
    MADE.with(Cell::get)
}
fn dropped() -> usize {
    DROPPED.with(Cell::get)
}

#[derive(DeserializeIn)]
struct Crates<'s> {
    crates: &'s [Serde<Counted>],
    one: Serde<Counted>,
    #[serde(skip)]
    extra: Option<&'s Counted>,
}
slot_root!(struct CratesRoot => Crates);

#[test]
fn a_failing_build_step_frees_the_slot_and_drops_everything_once() {
    let slots = Slots::leak("crates", 1, 8 << 10).unwrap();
    let file = r#"{"crates": [1, 2, 3], "one": 4}"#;
    let (made0, dropped0) = (made(), dropped());
    let err = slots
        .load_from_with::<CratesRoot, _, _>(
            "crates",
            &mut serde_json::Deserializer::from_str(file),
            |c, s| {
                c.extra = Some(s.new_object(Counted(5)));
                MADE.with(|m| m.set(m.get() + 1));
                Err("refused")
            },
        )
        .unwrap_err();
    assert!(matches!(err, BuildError::Build("refused")));
    assert_eq!(slots.loaded(), 0);
    assert_eq!((made() - made0, dropped() - dropped0), (5, 5));

    // The slot is loadable again at once, and this time the step succeeds.
    let loaded = slots
        .load_from_with::<CratesRoot, _, ()>(
            "crates",
            &mut serde_json::Deserializer::from_str(file),
            |c, s| {
                c.extra = Some(s.new_object(Counted(6)));
                MADE.with(|m| m.set(m.get() + 1));
                Ok(())
            },
        )
        .unwrap();
    assert_eq!(
        loaded.with(|c| c.crates.len() + c.extra.is_some() as usize + c.one.0 .0 as usize),
        8
    );
    drop(loaded);
    assert_eq!(made() - made0, dropped() - dropped0);
    assert_eq!(made() - made0, 10);
}

#[test]
fn a_file_error_runs_no_build_step() {
    let slots = Slots::leak("crates", 1, 8 << 10).unwrap();
    let (made0, dropped0) = (made(), dropped());
    let ran = Cell::new(false);
    let err = slots
        .load_from_with::<CratesRoot, _, ()>(
            "bad",
            &mut serde_json::Deserializer::from_str(r#"{"crates": [1, 2, "x"], "one": 4}"#),
            |_, _| {
                ran.set(true);
                Ok(())
            },
        )
        .unwrap_err();
    assert!(!ran.get());
    let load = err.load_error().unwrap();
    assert!(load.format_error().is_data() && load.slot_error().is_none());
    assert_eq!(made() - made0, dropped() - dropped0);
    assert_eq!(slots.loaded(), 0);

    // A slot too small: a load error with the slot's side, and no step.
    let small = Slots::leak("small", 1, 256).unwrap();
    let big = serde_json::to_string(&vec![7u32; 200]).unwrap();
    let file = format!(r#"{{"crates": {big}, "one": 4}}"#);
    let err = small
        .load_concurrent_from_with::<CratesRoot, _, ()>(
            "big",
            &mut serde_json::Deserializer::from_str(&file),
            |_, _| {
                ran.set(true);
                Ok(())
            },
        )
        .unwrap_err();
    assert!(!ran.get());
    assert_eq!(
        err.load_error().unwrap().slot_error().unwrap().kind(),
        SlotErrorKind::Alloc
    );
    assert_eq!(small.loaded(), 0);
}

slot_root!(struct Names = for<'s> &'s [&'s str]);

#[test]
fn load_wait_from_waits_until_another_thread_frees_a_slot() {
    let slots = Slots::leak("levels", 1, 4096).unwrap();
    let held = slots
        .load_from::<Names, _>("first", &mut serde_json::Deserializer::from_str(r#"["a"]"#))
        .unwrap();
    std::thread::scope(|t| {
        let (started, waiting) = std::sync::mpsc::channel();
        let waiter = t.spawn(move || {
            started.send(()).unwrap();
            let mut de = serde_json::Deserializer::from_str(r#"["b", "c"]"#);
            let next = slots.load_wait_from::<Names, _>("second", &mut de).unwrap();
            (next.with(|n| n.concat()), next.name().to_string())
        });
        waiting.recv().unwrap();
        std::thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 20 }));
        drop(held);
        assert_eq!(
            waiter.join().unwrap(),
            ("bc".to_string(), "second".to_string())
        );
    });
    // The concurrent and task forms wait the same way.
    for round in 0..if cfg!(miri) { 2 } else { 20 } {
        let held = slots
            .load_task_from::<Names, _>("held", &mut serde_json::Deserializer::from_str("[]"))
            .unwrap();
        std::thread::scope(|t| {
            let w = t.spawn(move || {
                let text = format!(r#"["{round}"]"#);
                let mut de = serde_json::Deserializer::from_str(&text);
                if round % 2 == 0 {
                    slots
                        .load_concurrent_wait_from::<Names, _>("c", &mut de)
                        .unwrap()
                        .with(|n| n[0].to_string())
                } else {
                    slots
                        .load_task_wait_from::<Names, _>("t", &mut de)
                        .unwrap()
                        .with(|n| n[0].to_string())
                }
            });
            drop(held);
            assert_eq!(w.join().unwrap(), round.to_string());
        });
    }
    // A bad file after the wait: the error, and the slot free.
    let err = slots
        .load_wait_from::<Names, _>("bad", &mut serde_json::Deserializer::from_str("[1]"))
        .unwrap_err();
    assert!(err.format_error().is_data());
    assert_eq!(slots.loaded(), 0);
}

#[test]
fn the_timeout_forms_time_out_with_the_holders_named() {
    let slots = Slots::leak("levels", 1, 16 << 10).unwrap();
    let _held = slots
        .load_from::<Names, _>(
            "playing",
            &mut serde_json::Deserializer::from_str(r#"["a"]"#),
        )
        .unwrap();
    let wait = Duration::from_millis(10);
    let json = || serde_json::Deserializer::from_str(r#"["b"]"#);
    let started = Instant::now();
    let e1 = slots
        .load_wait_timeout_from::<Names, _>("b", wait, &mut json())
        .unwrap_err();
    let e2 = slots
        .load_concurrent_wait_timeout_from::<Names, _>("b", wait, &mut json())
        .unwrap_err();
    let e3 = slots
        .load_task_wait_timeout_from::<Names, _>("b", wait, &mut json())
        .unwrap_err();
    if !cfg!(miri) {
        assert!(started.elapsed() >= 3 * wait);
    }
    for e in [e1, e2, e3] {
        assert_eq!(e.slot_error().unwrap().kind(), SlotErrorKind::TimedOut);
        assert!(e.to_string().contains("slot 0 holds \"playing\""), "{e}");
    }
    // A zero timeout is one load: `Full`.
    let e = slots
        .load_wait_timeout_from::<Names, _>("b", Duration::ZERO, &mut json())
        .unwrap_err();
    assert_eq!(e.slot_error().unwrap().kind(), SlotErrorKind::Full);
    // A slot too small after the wait is an error, not a panic.
    let small = Slots::leak("small", 1, 256).unwrap();
    let big = serde_json::to_string(&vec!["x"; 200]).unwrap();
    let e = small
        .load_wait_timeout_from::<Names, _>(
            "big",
            wait,
            &mut serde_json::Deserializer::from_str(&big),
        )
        .unwrap_err();
    assert_eq!(e.slot_error().unwrap().kind(), SlotErrorKind::Alloc);
    assert!(e.alloc_error().is_some());
    assert_eq!(small.loaded(), 0);
}

/// Counts the wakes it gets.
struct Count(std::sync::atomic::AtomicUsize);
impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn the_async_forms_wait_for_a_slot_and_return_errors() {
    let slots = Slots::leak("requests", 1, 4096).unwrap();
    let count = Arc::new(Count(0.into()));
    let waker = Waker::from(count.clone());
    let mut cx = Context::from_waker(&waker);

    for kind in 0..3 {
        let held = slots
            .load_from::<Names, _>("held", &mut serde_json::Deserializer::from_str(r#"["a"]"#))
            .unwrap();
        let mut de = serde_json::Deserializer::from_str(r#"["GET", "/"]"#);
        let woken = count.0.load(std::sync::atomic::Ordering::SeqCst);
        let len = match kind {
            0 => {
                let mut f = pin!(slots.load_async_from::<Names, _>("plain", &mut de));
                assert!(f.as_mut().poll(&mut cx).is_pending());
                drop(held);
                assert!(count.0.load(std::sync::atomic::Ordering::SeqCst) > woken);
                match f.as_mut().poll(&mut cx) {
                    Poll::Ready(l) => l.unwrap().with(|n| n.len()),
                    Poll::Pending => panic!("woken with a free slot"),
                }
            }
            1 => {
                let mut f = pin!(slots.load_concurrent_async_from::<Names, _>("shared", &mut de));
                assert!(f.as_mut().poll(&mut cx).is_pending());
                drop(held);
                match f.as_mut().poll(&mut cx) {
                    Poll::Ready(l) => l.unwrap().with(|n| n.len()),
                    Poll::Pending => panic!("woken with a free slot"),
                }
            }
            _ => {
                let mut f = pin!(slots.load_task_async_from::<Names, _>("task", &mut de));
                assert!(f.as_mut().poll(&mut cx).is_pending());
                drop(held);
                match f.as_mut().poll(&mut cx) {
                    Poll::Ready(l) => l.unwrap().with(|n| n.len()),
                    Poll::Pending => panic!("woken with a free slot"),
                }
            }
        };
        assert_eq!(len, 2);
        assert_eq!(slots.loaded(), 0);
    }

    // A request too big for its slot, and a bad one: errors, not panics, and the
    // slot is free after each.
    let big = serde_json::to_string(&vec!["x"; 1000]).unwrap();
    let mut de = serde_json::Deserializer::from_str(&big);
    let mut f = pin!(slots.load_task_async_from::<Names, _>("big", &mut de));
    let Poll::Ready(Err(e)) = f.as_mut().poll(&mut cx) else {
        panic!("a request too big for its slot is an error");
    };
    assert_eq!(e.slot_error().unwrap().kind(), SlotErrorKind::Alloc);
    let mut de = serde_json::Deserializer::from_str("[1]");
    let mut f = pin!(slots.load_async_from::<Names, _>("bad", &mut de));
    let Poll::Ready(Err(e)) = f.as_mut().poll(&mut cx) else {
        panic!("a bad request is an error");
    };
    assert!(e.format_error().is_data() && e.slot_error().is_none());
    assert_eq!(slots.loaded(), 0);

    // A future dropped while it waits claims nothing and reads nothing.
    let held = slots
        .load_from::<Names, _>("held", &mut serde_json::Deserializer::from_str(r#"["a"]"#))
        .unwrap();
    let mut de = serde_json::Deserializer::from_str(r#"["b"]"#);
    {
        let mut f = pin!(slots.load_concurrent_async_from::<Names, _>("dropped", &mut de));
        assert!(f.as_mut().poll(&mut cx).is_pending());
    }
    drop(held);
    assert_eq!(slots.loaded(), 0);
}

#[test]
fn the_waiting_forms_with_a_build_step_wait_build_and_free_on_errors() {
    let slots = Slots::leak("levels", 1, 32 << 10).unwrap();
    let json = || serde_json::Deserializer::from_str(LEVEL);
    let playing = slots
        .load_from_with::<LevelRoot, _, _>("playing", &mut json(), |l, s| index(l, s))
        .unwrap();
    // Every form waits for the one slot, then reads and builds in it.
    std::thread::scope(|t| {
        let loader = t.spawn(|| {
            let plain = slots
                .load_wait_from_with::<LevelRoot, _, _>("plain", &mut json(), |l, s| index(l, s))
                .unwrap();
            let a = plain.with(|l| hp(l, "bear"));
            drop(plain);
            let shared = slots
                .load_concurrent_wait_from_with::<LevelRoot, _, _>("shared", &mut json(), |l, s| {
                    index(l, s.local())
                })
                .unwrap();
            let b = shared.with(|l| hp(l, "wolf"));
            drop(shared);
            let task = slots
                .load_task_wait_from_with::<LevelRoot, _, _>("task", &mut json(), |l, s| {
                    index(l, s)
                })
                .unwrap();
            (a, b, task.with(|l| hp(l, "fox")))
        });
        std::thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 20 }));
        drop(playing);
        assert_eq!(loader.join().unwrap(), (Some(80), Some(30), Some(10)));
    });
    assert_eq!(slots.loaded(), 0);

    // A step's error, a file's error and a time-out: each frees (or never takes) the slot.
    let (made0, dropped0) = (made(), dropped());
    let file = r#"{"crates": [1, 2], "one": 3}"#;
    let crates = Slots::leak("crates", 1, 8 << 10).unwrap();
    let err = crates
        .load_concurrent_wait_from_with::<CratesRoot, _, _>(
            "crates",
            &mut serde_json::Deserializer::from_str(file),
            |_, _| Err("refused"),
        )
        .unwrap_err();
    assert!(matches!(err, BuildError::Build("refused")));
    assert_eq!((made() - made0, dropped() - dropped0), (3, 3));
    let err = crates
        .load_task_wait_from_with::<CratesRoot, _, &str>(
            "cut",
            &mut serde_json::Deserializer::from_str(r#"{"crates": [1, 2"#),
            |_, _| panic!("no step after a bad file"),
        )
        .unwrap_err();
    assert!(err.load_error().unwrap().format_error().is_eof());
    assert_eq!(made() - made0, dropped() - dropped0);
    assert_eq!(crates.loaded(), 0);

    let held = crates
        .load_from::<CratesRoot, _>("held", &mut serde_json::Deserializer::from_str(file))
        .unwrap();
    let start = Instant::now();
    let err = crates
        .load_wait_timeout_from_with::<CratesRoot, _, &str>(
            "late",
            Duration::from_millis(5),
            &mut serde_json::Deserializer::from_str(file),
            |_, _| panic!("no step without a slot"),
        )
        .unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(5));
    let slot = err.load_error().unwrap().slot_error().unwrap();
    assert_eq!(slot.kind(), SlotErrorKind::TimedOut);
    assert!(err.to_string().contains("\"held\""), "{err}");
    drop(held);
    assert_eq!(made() - made0, dropped() - dropped0);
}

#[test]
fn a_level_too_big_for_its_slot_is_a_load_error_naming_the_set_with_a_build_step() {
    let slots = Slots::leak("tiny levels", 1, 256).unwrap();
    let names: Vec<String> = (0..64).map(|i| format!("\"enemy number {i}\"")).collect();
    let file = format!("[{}]", names.join(","));
    let err = slots
        .load_concurrent_wait_from_with::<Names, _, &str>(
            "big",
            &mut serde_json::Deserializer::from_str(&file),
            |_, _| panic!("no step after a file that did not fit"),
        )
        .unwrap_err();
    let slot = err.load_error().unwrap().slot_error().unwrap();
    assert_eq!(slot.kind(), SlotErrorKind::Alloc);
    let text = err.to_string();
    assert!(text.contains("\"tiny levels\" (256 bytes)"), "{text}");
    assert!(text.contains("too small for \"big\""), "{text}");
    assert_eq!(slots.loaded(), 0);
}
