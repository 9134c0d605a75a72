//! The waiting and async in-place loads (features `rkyv` and `std`): a loader thread
//! blocks only while every slot is held and wakes when another thread frees one; a time
//! limit gives an error naming the holders; a bad archive, a slot too small, a failing
//! reader and a build step that refuses each free the slot under every form; an async
//! load waits as a task. Futures are polled by a hand-made `block_on`. Scaled down under
//! Miri (run it with Tree Borrows: rkyv's relative pointers are outside Stacked Borrows).
#![cfg(all(feature = "rkyv", feature = "std"))]
// A `LoadError` is large (its names are inline, no heap), as in the crate's own loads.
#![allow(clippy::result_large_err)]

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use rkyv::{Archive, Serialize};
use scope_stack::inplace::{BuildError, FromReader, LoadError, LoadErrorKind};
use scope_stack::{slot_root, LinearAllocator, Place, Pool, SlotErrorKind, Slots};

#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
struct Level {
    name: String,
    spawns: Vec<(String, u32)>,
}

/// Spawns in a cooked level (fewer under Miri).
const SPAWNS: usize = if cfg!(miri) { 3 } else { 200 };
/// A short time limit (the wait forms sleep on a futex; Miri's clock is virtual).
const SHORT: Duration = Duration::from_millis(5);

fn cook(name: &str, spawns: usize) -> Vec<u8> {
    let level = Level {
        name: name.into(),
        spawns: (0..spawns)
            .map(|i| (format!("enemy {i}"), i as u32))
            .collect(),
    };
    rkyv::to_bytes::<rkyv::rancor::Error>(&level)
        .unwrap()
        .to_vec()
}

/// Parks the thread between polls; the waker unparks it.
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        match f.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// Polls `f` once: `None` while it waits.
fn poll_once<F: Future + Unpin>(f: &mut F) -> Option<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    match std::pin::Pin::new(f).poll(&mut cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

slot_root!(struct Total = for<'s> u32);
slot_root!(struct Live = for<'s> &'s Pool<'s, u32>);

/// The sum of the archived hit points: the runtime half of the `Total` loads.
fn total(level: &ArchivedLevel) -> u32 {
    level.spawns.iter().map(|s| s.1.to_native()).sum()
}

#[test]
fn a_loader_thread_waits_for_a_slot_another_thread_frees() {
    let forest = cook("forest", SPAWNS);
    let castle = cook("castle", SPAWNS);
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 64 << 10);
        // Each form: the game thread plays a level, a loader thread waits for its slot.
        for form in 0..6 {
            let playing = levels.load_archived::<Level>("forest", &forest).unwrap();
            std::thread::scope(|t| {
                let loader = t.spawn(|| match form {
                    0 => levels
                        .load_archived_wait::<Level>("castle", &castle)
                        .unwrap()
                        .with(|l| l.name.to_string()),
                    1 => levels
                        .load_archived_concurrent_wait::<Level>("castle", &castle)
                        .unwrap()
                        .with(|l| l.name.to_string()),
                    2 => levels
                        .load_archived_task_wait::<Level>("castle", &castle)
                        .unwrap()
                        .with(|l| l.name.to_string()),
                    3 => levels
                        .load_archived_wait_with::<Level, Total, ()>("castle", &castle, |l, _| {
                            Ok(total(l))
                        })
                        .unwrap()
                        .with(|l| format!("{} {}", l.archived.name, l.runtime)),
                    4 => levels
                        .load_archived_concurrent_wait_with::<Level, Total, ()>(
                            "castle",
                            &castle,
                            |l, _| Ok(total(l)),
                        )
                        .unwrap()
                        .with(|l| format!("{} {}", l.archived.name, l.runtime)),
                    _ => levels
                        .load_archived_task_wait_with::<Level, Total, ()>(
                            "castle",
                            &castle,
                            |l, _| Ok(total(l)),
                        )
                        .unwrap()
                        .with(|l| format!("{} {}", l.archived.name, l.runtime)),
                });
                // The loader is blocked on the slot before the game lets go of it.
                while game.report().scopes[0].slots[0].waiting == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
                assert_eq!(levels.loaded(), 1);
                drop(playing);
                let got = loader.join().unwrap();
                let sum: u32 = (0..SPAWNS as u32).sum();
                if form < 3 {
                    assert_eq!(got, "castle", "form {form}");
                } else {
                    assert_eq!(got, format!("castle {sum}"), "form {form}");
                }
            });
            assert_eq!(levels.loaded(), 0);
        }
    });
}

#[test]
fn a_loader_thread_sends_levels_through_a_ring_of_slots() {
    let levels = Slots::leak("levels", 2, 64 << 10).unwrap();
    let rounds = if cfg!(miri) { 4 } else { 50 };
    let (send, receive) = std::sync::mpsc::channel();
    let loader = std::thread::spawn(move || {
        for n in 0..rounds {
            let file = cook(&format!("level {n}"), 2);
            let level = levels
                .load_archived_concurrent_wait::<Level>("level", &file)
                .unwrap();
            send.send(level).unwrap();
        }
    });
    let names: Vec<String> = receive
        .iter()
        .map(|l| l.with(|l| l.name.to_string()))
        .collect();
    loader.join().unwrap();
    assert_eq!(names.len(), rounds);
    assert_eq!(names[rounds - 1], format!("level {}", rounds - 1));
    assert!(levels.loaded() == 0);
}

/// Checks a time-out's error: it names the set, the load and the holder, and the
/// held slot is still held.
fn timed_out(levels: &Slots, err: &LoadError) {
    assert_eq!(err.kind(), LoadErrorKind::TimedOut);
    assert_eq!((err.slots_name(), err.load_name()), ("levels", "castle"));
    let slot = err.slot_error().unwrap();
    assert_eq!(slot.kind(), SlotErrorKind::TimedOut);
    assert_eq!(slot.holders().collect::<Vec<_>>(), ["forest"]);
    assert!(err.to_string().contains("slot 0 holds \"forest\""), "{err}");
    assert_eq!(levels.loaded(), 1);
}

#[test]
fn a_wait_that_times_out_names_the_holders() {
    let forest = cook("forest", SPAWNS);
    let castle = cook("castle", SPAWNS);
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let playing = levels.load_archived::<Level>("forest", &forest).unwrap();
    timed_out(
        levels,
        &levels
            .load_archived_wait_timeout::<Level>("castle", SHORT, &castle)
            .unwrap_err(),
    );
    timed_out(
        levels,
        &levels
            .load_archived_concurrent_wait_timeout::<Level>("castle", SHORT, &castle)
            .unwrap_err(),
    );
    timed_out(
        levels,
        &levels
            .load_archived_task_wait_timeout::<Level>("castle", SHORT, &castle)
            .unwrap_err(),
    );
    let with = levels
        .load_archived_wait_timeout_with::<Level, Total, ()>("castle", SHORT, &castle, |l, _| {
            Ok(total(l))
        })
        .unwrap_err();
    timed_out(levels, with.load_error().unwrap());
    let with = levels
        .load_archived_concurrent_wait_timeout_with::<Level, Total, ()>(
            "castle",
            SHORT,
            &castle,
            |l, _| Ok(total(l)),
        )
        .unwrap_err();
    timed_out(levels, with.load_error().unwrap());
    let with = levels
        .load_archived_task_wait_timeout_with::<Level, Total, ()>(
            "castle",
            SHORT,
            &castle,
            |l, _| Ok(total(l)),
        )
        .unwrap_err();
    timed_out(levels, with.load_error().unwrap());
    // A zero time limit is one plain load: `Full`, with the same names.
    let full = levels
        .load_archived_wait_timeout::<Level>("castle", Duration::ZERO, &castle)
        .unwrap_err();
    assert_eq!(full.kind(), LoadErrorKind::Full);
    // An async load that cannot have the slot waits; dropped, it claims nothing.
    let mut waiting = Box::pin(levels.load_archived_async::<Level>("castle", &castle[..]));
    assert!(poll_once(&mut waiting).is_none());
    drop(waiting);
    drop(playing);
    assert_eq!(levels.loaded(), 0);
    let castle = levels
        .load_archived_wait_timeout::<Level>("castle", SHORT, &castle)
        .unwrap();
    assert_eq!(castle.with(|l| l.spawns.len()), SPAWNS);
}

/// A reader that fails after a few bytes.
struct Broken(usize);

impl io::Read for Broken {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.0 == 0 {
            return Err(io::Error::other("disk gone"));
        }
        let n = buf.len().min(self.0);
        buf[..n].fill(0);
        self.0 -= n;
        Ok(n)
    }
}

/// Runs every waiting and async form with a fresh source from `$src` (an expression
/// evaluated once per form), checks the error's kind and names, and that the slot is
/// free again after each.
macro_rules! every_form_refuses {
    ($levels:expr, $src:expr, $kind:expr) => {{
        let levels: &Slots = $levels;
        let errors: Vec<LoadError> = vec![
            levels.load_archived_wait::<Level>("bad", $src).unwrap_err(),
            levels
                .load_archived_wait_timeout::<Level>("bad", SHORT, $src)
                .unwrap_err(),
            levels
                .load_archived_concurrent_wait::<Level>("bad", $src)
                .unwrap_err(),
            levels
                .load_archived_concurrent_wait_timeout::<Level>("bad", SHORT, $src)
                .unwrap_err(),
            levels
                .load_archived_task_wait::<Level>("bad", $src)
                .unwrap_err(),
            levels
                .load_archived_task_wait_timeout::<Level>("bad", SHORT, $src)
                .unwrap_err(),
            block_on(levels.load_archived_async::<Level>("bad", $src)).unwrap_err(),
            block_on(levels.load_archived_concurrent_async::<Level>("bad", $src)).unwrap_err(),
            block_on(levels.load_archived_task_async::<Level>("bad", $src)).unwrap_err(),
            load(
                levels
                    .load_archived_wait_with::<Level, Total, ()>("bad", $src, |l, _| Ok(total(l))),
            ),
            load(
                levels.load_archived_concurrent_wait_with::<Level, Total, ()>(
                    "bad",
                    $src,
                    |l, _| Ok(total(l)),
                ),
            ),
            load(
                levels.load_archived_task_wait_with::<Level, Total, ()>("bad", $src, |l, _| {
                    Ok(total(l))
                }),
            ),
            load(block_on(
                levels
                    .load_archived_async_with::<Level, Total, ()>("bad", $src, |l, _| Ok(total(l))),
            )),
            load(block_on(
                levels.load_archived_concurrent_async_with::<Level, Total, ()>(
                    "bad",
                    $src,
                    |l, _| Ok(total(l)),
                ),
            )),
            load(block_on(
                levels.load_archived_task_async_with::<Level, Total, ()>("bad", $src, |l, _| {
                    Ok(total(l))
                }),
            )),
        ];
        for (form, err) in errors.iter().enumerate() {
            assert_eq!(err.kind(), $kind, "form {form}: {err}");
            assert_eq!((err.slots_name(), err.load_name()), ("levels", "bad"));
        }
        assert_eq!(levels.loaded(), 0);
    }};
}

/// The load's error of a load with a build step that failed before the step ran.
fn load<L>(got: Result<L, BuildError<()>>) -> LoadError {
    match got {
        Err(BuildError::Load(e)) => e,
        Err(BuildError::Build(())) => panic!("the step ran"),
        Ok(_) => panic!("loaded"),
    }
}

#[test]
fn a_bad_archive_frees_the_slot_under_every_form() {
    let file = cook("forest", SPAWNS);
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    // Cut short, and the root's spawn count raised past the archive's end.
    every_form_refuses!(levels, &file[..file.len() - 3], LoadErrorKind::Invalid);
    let mut flipped = file.clone();
    let last = flipped.len() - 1;
    flipped[last] = 0x7f;
    every_form_refuses!(levels, &flipped, LoadErrorKind::Invalid);
    // Too big for the slot.
    let big = cook("big", if cfg!(miri) { 200 } else { 5000 });
    let small = Slots::leak("levels", 1, 1024).unwrap();
    every_form_refuses!(small, &big, LoadErrorKind::TooSmall);
    // A reader that fails midway.
    every_form_refuses!(
        levels,
        FromReader::new(Broken(10), file.len()),
        LoadErrorKind::Read
    );
    // After all of them, the slot loads a good archive, at the front as before.
    let good = levels.load_archived_wait::<Level>("good", &file).unwrap();
    assert_eq!(good.with(|l| l.spawns.len()), SPAWNS);
}

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_step_that_refuses_frees_the_slot_and_drops_what_it_placed_once() {
    let file = cook("forest", SPAWNS);
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let err = levels.load_archived_wait_with::<Level, Total, _>("forest", &file, |l, s| {
        s.new_object(Counted(drops.clone()));
        if l.spawns.is_empty() {
            Ok(0)
        } else {
            Err("refused")
        }
    });
    assert!(matches!(err, Err(BuildError::Build("refused"))));
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    let err = levels.load_archived_concurrent_wait_timeout_with::<Level, Total, _>(
        "forest",
        SHORT,
        &file,
        |_, s| {
            s.new_object(Counted(drops.clone()));
            Err("refused")
        },
    );
    assert!(matches!(err, Err(BuildError::Build("refused"))));
    assert_eq!(drops.load(Ordering::Relaxed), 2);
    let err = levels.load_archived_task_wait_timeout_with::<Level, Total, _>(
        "forest",
        SHORT,
        &file,
        |_, s| {
            s.new_object(Counted(drops.clone()));
            Err("refused")
        },
    );
    assert!(matches!(err, Err(BuildError::Build("refused"))));
    assert_eq!(drops.load(Ordering::Relaxed), 3);
    assert_eq!(levels.loaded(), 0);
    // A step that succeeds: its pool lives beside the archive until the unload.
    let level = levels
        .load_archived_wait_with::<Level, Live, &str>("forest", &file, |l, s| {
            let pool = s.try_new_pool(l.spawns.len()).map_err(|_| "no room")?;
            for spawn in l.spawns.iter() {
                let _ = pool
                    .insert(spawn.1.to_native())
                    .map_err(|_| "full")?
                    .into_handle();
            }
            Ok(&*pool)
        })
        .unwrap();
    assert_eq!(level.with(|l| l.runtime.len()), SPAWNS);
}

#[test]
fn the_archive_sits_at_the_front_of_the_slot_under_every_form() {
    let file = cook("forest", SPAWNS);
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let plain = levels.load_archived::<Level>("plain", &file).unwrap();
    let (at, used) = (
        plain.with(|l| *l as *const ArchivedLevel as usize),
        plain.used(),
    );
    drop(plain);
    let addr = |a: &ArchivedLevel| a as *const ArchivedLevel as usize;
    let got = [
        levels
            .load_archived_wait::<Level>("l", &file)
            .map(|l| (l.with(|l| addr(l)), l.used())),
        levels
            .load_archived_wait_timeout::<Level>("l", SHORT, &file)
            .map(|l| (l.with(|l| addr(l)), l.used())),
        levels
            .load_archived_task_wait::<Level>("l", &file)
            .map(|l| (l.with(|l| addr(l)), l.used())),
        block_on(levels.load_archived_async::<Level>("l", &file))
            .map(|l| (l.with(|l| addr(l)), l.used())),
        block_on(levels.load_archived_task_async::<Level>("l", &file))
            .map(|l| (l.with(|l| addr(l)), l.used())),
    ];
    for (form, g) in got.into_iter().enumerate() {
        assert_eq!(g.unwrap(), (at, used), "form {form}");
    }
    // The concurrent forms place the archive where `load_archived_concurrent` does.
    let shared = levels
        .load_archived_concurrent::<Level>("l", &file)
        .unwrap();
    let at = shared.with(|l| addr(l));
    drop(shared);
    let waited = levels
        .load_archived_concurrent_wait::<Level>("l", &file)
        .unwrap();
    assert_eq!(waited.with(|l| addr(l)), at);
    drop(waited);
    let awaited = block_on(levels.load_archived_concurrent_async::<Level>("l", &file)).unwrap();
    assert_eq!(awaited.with(|l| addr(l)), at);
}

#[test]
fn an_async_load_waits_as_a_task_until_another_thread_frees_a_slot() {
    let forest = cook("forest", SPAWNS);
    let castle = cook("castle", SPAWNS);
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    for form in 0..3 {
        let playing = levels
            .load_archived_task::<Level>("forest", &forest)
            .unwrap();
        let freer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            drop(playing);
        });
        let name = match form {
            0 => block_on(levels.load_archived_async::<Level>("castle", &castle))
                .unwrap()
                .with(|l| l.name.to_string()),
            1 => block_on(levels.load_archived_concurrent_async::<Level>("castle", &castle))
                .unwrap()
                .with(|l| l.name.to_string()),
            _ => block_on(levels.load_archived_task_async::<Level>("castle", &castle))
                .unwrap()
                .with(|l| l.name.to_string()),
        };
        freer.join().unwrap();
        assert_eq!(name, "castle");
        assert_eq!(levels.loaded(), 0);
    }
}

#[test]
fn a_task_load_future_is_send_and_its_level_crosses_threads() {
    fn send<T: Send>(t: T) -> T {
        t
    }
    let file = cook("forest", SPAWNS);
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let future = send(levels.load_archived_task_async::<Level>("forest", &file[..]));
    let level = std::thread::scope(|t| t.spawn(|| block_on(future)).join().unwrap()).unwrap();
    let spawns = std::thread::spawn(move || level.with(|l| l.spawns.len()))
        .join()
        .unwrap();
    assert_eq!(spawns, SPAWNS);
}

/// Awaits each async form with a build step (`form` 0: plain, 1: concurrent, 2: task)
/// and gives the level's name and its runtime half, or the error. The step places
/// `placed` values that count their drops in `drops`, then `step` decides.
fn async_with(
    levels: &Slots,
    form: usize,
    file: &[u8],
    (drops, placed): (&Arc<AtomicUsize>, usize),
    step: fn(&ArchivedLevel) -> Result<u32, &'static str>,
) -> Result<(String, u32), BuildError<&'static str>> {
    let read = |l: &scope_stack::inplace::InPlace<'_, Level, u32>| {
        (l.archived.name.to_string(), l.runtime)
    };
    // The step, on any of the three surfaces.
    fn build<'s>(scope: impl Place<'s>, (drops, placed): (&Arc<AtomicUsize>, usize)) {
        for _ in 0..placed {
            scope.new_object(Counted(drops.clone()));
        }
    }
    let counted = (drops, placed);
    match form {
        0 => {
            block_on(
                levels.load_archived_async_with::<Level, Total, _>("castle", file, |l, s| {
                    build(s, counted);
                    step(l)
                }),
            )
            .map(|l| l.with(read))
        }
        1 => block_on(
            levels.load_archived_concurrent_async_with::<Level, Total, _>(
                "castle",
                file,
                |l, s| {
                    build(s, counted);
                    step(l)
                },
            ),
        )
        .map(|l| l.with(read)),
        _ => block_on(levels.load_archived_task_async_with::<Level, Total, _>(
            "castle",
            file,
            |l, s| {
                build(s, counted);
                step(l)
            },
        ))
        .map(|l| l.with(read)),
    }
}

#[test]
fn an_async_load_with_a_step_waits_for_a_held_slot_then_builds() {
    let forest = cook("forest", SPAWNS);
    let castle = cook("castle", SPAWNS);
    let sum: u32 = (0..SPAWNS as u32).sum();
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    for form in 0..3 {
        let playing = levels
            .load_archived_task::<Level>("forest", &forest)
            .unwrap();
        let freer = std::thread::spawn(move || {
            std::thread::sleep(SHORT);
            drop(playing);
        });
        // The step places a value that lives as long as the level does.
        let got = async_with(levels, form, &castle, (&drops, 1), |l| Ok(total(l)));
        freer.join().unwrap();
        assert_eq!(got.unwrap(), ("castle".to_string(), sum), "form {form}");
        assert_eq!(
            drops.load(Ordering::Relaxed),
            form + 1,
            "form {form}: dropped with the level"
        );
        assert_eq!(levels.loaded(), 0);
    }
    // Each form waits while the slot is held: a first poll is pending.
    let playing = levels.load_archived::<Level>("forest", &forest).unwrap();
    let mut plain = Box::pin(levels.load_archived_async_with::<Level, Total, ()>(
        "castle",
        &castle[..],
        |l, _| Ok(total(l)),
    ));
    assert!(poll_once(&mut plain).is_none());
    let mut shared = Box::pin(
        levels.load_archived_concurrent_async_with::<Level, Total, ()>(
            "castle",
            &castle[..],
            |l, _| Ok(total(l)),
        ),
    );
    assert!(poll_once(&mut shared).is_none());
    let mut task = Box::pin(levels.load_archived_task_async_with::<Level, Total, ()>(
        "castle",
        &castle[..],
        |l, _| Ok(total(l)),
    ));
    assert!(poll_once(&mut task).is_none());
    drop(playing);
    // The first in line gets the slot; each of the others in turn once it is free.
    let plain = block_on(plain).unwrap();
    assert_eq!(plain.with(|l| l.runtime), sum);
    drop(plain);
    assert_eq!(block_on(shared).unwrap().with(|l| l.runtime), sum);
    assert_eq!(block_on(task).unwrap().with(|l| l.runtime), sum);
    assert_eq!(levels.loaded(), 0);
}

#[test]
fn an_async_step_that_refuses_frees_the_slot_and_drops_what_it_placed_once() {
    let file = cook("castle", SPAWNS);
    let levels = Slots::leak("levels", 1, 64 << 10).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    for form in 0..3 {
        let err = async_with(levels, form, &file, (&drops, 2), |_| Err("refused"));
        assert!(
            matches!(err, Err(BuildError::Build("refused"))),
            "form {form}"
        );
        // Both values placed by the step are dropped, once each, before the error.
        assert_eq!(drops.load(Ordering::Relaxed), 2 * (form + 1), "form {form}");
        assert_eq!(levels.loaded(), 0, "form {form}");
        // The slot is free at once: a plain load has it, at the front as before.
        let next = levels.load_archived::<Level>("next", &file).unwrap();
        assert_eq!(next.with(|l| l.spawns.len()), SPAWNS);
    }
    assert_eq!(drops.load(Ordering::Relaxed), 6);
}

#[test]
fn a_dropped_async_load_with_a_step_leaves_nothing_behind() {
    let forest = cook("forest", SPAWNS);
    let castle = cook("castle", SPAWNS);
    let ran = AtomicUsize::new(0);
    let step = |l: &ArchivedLevel| {
        ran.fetch_add(1, Ordering::Relaxed);
        Ok::<u32, ()>(total(l))
    };
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let levels = game.new_slots("levels", 1, 64 << 10);
        let playing = levels.load_archived::<Level>("forest", &forest).unwrap();
        let used = playing.used();
        {
            let mut plain = Box::pin(levels.load_archived_async_with::<Level, Total, ()>(
                "castle",
                &castle[..],
                |l, _| step(l),
            ));
            let mut shared = Box::pin(
                levels.load_archived_concurrent_async_with::<Level, Total, ()>(
                    "castle",
                    &castle[..],
                    |l, _| step(l),
                ),
            );
            let mut task = Box::pin(levels.load_archived_task_async_with::<Level, Total, ()>(
                "castle",
                &castle[..],
                |l, _| step(l),
            ));
            assert!(poll_once(&mut plain).is_none());
            assert!(poll_once(&mut shared).is_none());
            assert!(poll_once(&mut task).is_none());
            assert_eq!(game.report().scopes[0].slots[0].waiting, 3);
            // Cancelled while the slot is held: dropped before a slot frees.
        }
        assert_eq!(game.report().scopes[0].slots[0].waiting, 0);
        assert_eq!(ran.load(Ordering::Relaxed), 0, "no step ran");
        assert_eq!((levels.loaded(), playing.used()), (1, used));
        drop(playing);
        // Nothing claimed, nothing held: the slot is free and the next load has it.
        assert_eq!(levels.loaded(), 0);
        let next = block_on(levels.load_archived_async_with::<Level, Total, ()>(
            "castle",
            &castle,
            |l, _| step(l),
        ))
        .unwrap();
        assert_eq!(next.with(|l| l.archived.name.to_string()), "castle");
        assert_eq!(ran.load(Ordering::Relaxed), 1);
    });
}
