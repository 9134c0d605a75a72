//! The `try_` async loads (`try_load_async`, `try_load_task_async`,
//! `try_load_concurrent_async`; issue 47, item 3): a request too big for its slot is an
//! error, not a panic, and the slot is free again; a request that fits loads; a future
//! that waits gets the slot another thread frees; a waiting future that is dropped
//! claims nothing and never builds. With the `serde` feature, the async file loads,
//! which go through them, give an error (not a panic) for a root that no longer fits
//! after the file.
//!
//! Futures are polled by hand (a `block_on` that parks the thread); no runtime is
//! needed. Loops are scaled down under Miri.

// A `SlotError` is large (its names are inline, no heap), as in the crate's own loads.
#![allow(clippy::result_large_err)]

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use scope_stack::{
    slot_root, AllocError, AllocErrorKind, LinearAllocator, Place, SlotError, SlotErrorKind, Slots,
};

slot_root!(struct Bytes = for<'s> &'s [u8]);
slot_root!(struct Big = for<'s> [u64; 512]);
slot_root!(struct Number = for<'s> u32);

/// Wakes by unparking the thread that polls.
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `f` on this thread until it is ready, parking between polls.
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

/// Counts its wakes.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Wake for Counting {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// What the three forms have in common, to run each check on each.
#[derive(Clone, Copy, Debug)]
enum Form {
    Plain,
    Task,
    Concurrent,
}

const FORMS: [Form; 3] = [Form::Plain, Form::Task, Form::Concurrent];

/// A `try_` async load of form `form` that copies `len` bytes into the slot and
/// returns their length (the `Loaded` is dropped before the future ends).
fn copy_in<'a>(
    slots: &'a Slots,
    form: Form,
    name: &'a str,
    len: usize,
) -> std::pin::Pin<Box<dyn Future<Output = Result<usize, SlotError>> + 'a>> {
    let src = vec![7u8; len];
    match form {
        Form::Plain => Box::pin(async move {
            let src = src;
            let loaded = slots
                .try_load_async::<Bytes>(name, |s| Ok(&*s.try_alloc_slice_copy(&src)?))
                .await?;
            Ok(loaded.with(|b| b.len()))
        }),
        Form::Task => Box::pin(async move {
            let loaded = slots
                .try_load_task_async::<Bytes>(name, move |s| Ok(&*s.try_alloc_slice_copy(&src)?))
                .await?;
            Ok(loaded.with(|b| b.len()))
        }),
        Form::Concurrent => Box::pin(async move {
            let loaded = slots
                .try_load_concurrent_async::<Bytes>(name, move |s| {
                    Ok(&*s.try_alloc_slice_copy(&src)?)
                })
                .await?;
            Ok(loaded.with(|b| b.len()))
        }),
    }
}

/// A build too big for the slot: an `Alloc` error that names the set, the slot's size
/// and the load, holds the allocation error, and leaves the slot free; the same set
/// then loads a request that fits.
#[test]
fn a_request_too_big_for_its_slot_is_an_error_and_frees_the_slot() {
    let slots = Slots::leak("requests", 1, 16 << 10).unwrap();
    for form in FORMS {
        let err = block_on(copy_in(slots, form, "upload", 64 << 10)).unwrap_err();
        assert_eq!(err.kind(), SlotErrorKind::Alloc, "{form:?}");
        assert_eq!(
            (err.slots_name(), err.load_name(), err.count()),
            ("requests", "upload", 1)
        );
        assert_eq!(err.holders().count(), 0);
        let alloc = err.alloc_error().expect("the allocation that did not fit");
        assert_eq!(alloc.kind(), AllocErrorKind::OutOfMemory, "{form:?}");
        assert_eq!(alloc.size(), 64 << 10, "{form:?}: the bytes asked for");
        assert!(alloc.remaining() <= 16 << 10, "{form:?}");
        let text = err.to_string();
        assert!(
            text.starts_with("a slot of \"requests\" (16384 bytes) is too small for \"upload\": "),
            "{form:?}: {text}"
        );
        assert_eq!(slots.loaded(), 0, "{form:?}: the slot is free again");

        assert_eq!(
            block_on(copy_in(slots, form, "small", 100)),
            Ok(100),
            "{form:?}"
        );
        assert_eq!(slots.loaded(), 0);
    }
}

/// The same error as the sync `try_load` family gives, field for field.
#[test]
fn the_error_is_the_one_try_load_gives() {
    let slots = Slots::leak("chunks", 1, 1024).unwrap();
    let big = [1u8; 4096];
    let sync = slots
        .try_load::<Bytes>("big", |s| Ok(&*s.try_alloc_slice_copy(&big)?))
        .unwrap_err();
    let plain =
        block_on(slots.try_load_async::<Bytes>("big", |s| Ok(&*s.try_alloc_slice_copy(&big)?)))
            .unwrap_err();
    assert_eq!(sync, plain);
    let sync = slots
        .try_load_task::<Bytes>("big", |s| Ok(&*s.try_alloc_slice_copy(&big)?))
        .unwrap_err();
    let task = block_on(
        slots.try_load_task_async::<Bytes>("big", |s| Ok(&*s.try_alloc_slice_copy(&big)?)),
    )
    .unwrap_err();
    assert_eq!(sync, task);
    assert_eq!(sync.to_string(), task.to_string());
    assert_eq!(slots.loaded(), 0);
}

/// A build that succeeds but a root too big for the slot: an error too (the panicking
/// forms panic here), and the value `build` returned is dropped once.
#[test]
fn a_root_too_big_for_its_slot_is_an_error() {
    let slots = Slots::leak("frames", 1, 1024).unwrap();
    let err = block_on(slots.try_load_async::<Big>("plain", |_| Ok([0; 512]))).unwrap_err();
    assert_eq!(
        (err.kind(), err.alloc_error().map(AllocError::size)),
        (SlotErrorKind::Alloc, Some(4096))
    );
    let err = block_on(slots.try_load_task_async::<Big>("task", |_| Ok([0; 512]))).unwrap_err();
    assert_eq!(err.kind(), SlotErrorKind::Alloc);
    let err =
        block_on(slots.try_load_concurrent_async::<Big>("shared", |_| Ok([0; 512]))).unwrap_err();
    assert_eq!(err.kind(), SlotErrorKind::Alloc);
    assert_eq!(slots.loaded(), 0);

    // The panicking form still panics, with the same message.
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block_on(slots.load_async::<Big>("plain", |_| [0; 512]))
    }))
    .map(drop)
    .unwrap_err();
    let message = panic.downcast_ref::<String>().expect("a formatted message");
    assert!(
        message.starts_with("a slot of \"frames\" (1024 bytes) is too small for \"plain\""),
        "{message}"
    );
    assert_eq!(slots.loaded(), 0);
}

/// A future that finds every slot held waits; another thread drops its `Loaded`, the
/// task is woken and loads, through each form.
#[test]
fn a_waiting_request_loads_when_another_thread_frees_a_slot() {
    let rounds = if cfg!(miri) { 1 } else { 20 };
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("service", |service| {
        let slots = service.new_slots("requests", 1, 16 << 10);
        for _ in 0..rounds {
            for form in FORMS {
                let held = slots.load::<Number>("held", |_| 1).unwrap();
                std::thread::scope(|t| {
                    let waiter = t.spawn(|| block_on(copy_in(slots, form, "waiter", 64)));
                    std::thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 5 }));
                    drop(held); // frees the slot and wakes the task
                    assert_eq!(waiter.join().unwrap(), Ok(64), "{form:?}");
                });
                assert_eq!(slots.loaded(), 0);
            }
        }
    });
}

/// Polled by hand: pending while the slot is held, woken by the unload, then an error
/// for a request that does not fit (the wait ends in an error, not a panic), and the
/// slot is free; then one that waits and fits.
#[test]
fn a_woken_request_that_does_not_fit_is_an_error() {
    let slots = Slots::leak("requests", 1, 8 << 10).unwrap();
    let counting = Arc::new(Counting::default());
    let waker = Waker::from(counting.clone());
    let mut cx = Context::from_waker(&waker);
    for form in FORMS {
        for (len, fits) in [(64 << 10, false), (10, true)] {
            let held = slots.load::<Number>("held", |_| 1).unwrap();
            let mut load = copy_in(slots, form, "woken", len);
            assert!(load.as_mut().poll(&mut cx).is_pending(), "{form:?}");
            let wakes = counting.0.load(Ordering::SeqCst);
            drop(held);
            assert_eq!(counting.0.load(Ordering::SeqCst), wakes + 1, "woken once");
            match load.as_mut().poll(&mut cx) {
                Poll::Ready(Ok(n)) => assert!(fits && n == len, "{form:?}"),
                Poll::Ready(Err(e)) => {
                    assert!(!fits, "{form:?}: {e}");
                    assert_eq!((e.kind(), e.load_name()), (SlotErrorKind::Alloc, "woken"));
                }
                Poll::Pending => panic!("{form:?}: woken with a free slot, yet pending"),
            }
            assert_eq!(slots.loaded(), 0, "{form:?}");
        }
    }
}

/// A future dropped while it waits claims nothing: its build never runs, what it
/// captured is dropped once, the set's only slot stays with its holder and is free
/// after it, and the next load takes it at once.
#[test]
fn a_dropped_waiting_request_claims_nothing() {
    /// Counts its drops.
    struct Flag<'a>(&'a AtomicUsize);
    impl Drop for Flag<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    let slots = Slots::leak("requests", 1, 4096).unwrap();
    let waker = Waker::from(Arc::new(Counting::default()));
    let mut cx = Context::from_waker(&waker);
    for form in FORMS {
        let built = AtomicBool::new(false);
        let drops = AtomicUsize::new(0);
        let held = slots.load::<Number>("held", |_| 1).unwrap();
        {
            let flag = Flag(&drops);
            let built = &built;
            let mut load: std::pin::Pin<Box<dyn Future<Output = bool>>> = match form {
                Form::Plain => Box::pin(async move {
                    let r = slots
                        .try_load_async::<Number>("dropped", move |_| {
                            let _flag = flag;
                            built.store(true, Ordering::SeqCst);
                            Ok(2)
                        })
                        .await;
                    r.is_ok()
                }),
                Form::Task => Box::pin(async move {
                    let r = slots
                        .try_load_task_async::<Number>("dropped", move |_| {
                            let _flag = flag;
                            built.store(true, Ordering::SeqCst);
                            Ok(2)
                        })
                        .await;
                    r.is_ok()
                }),
                Form::Concurrent => Box::pin(async move {
                    let r = slots
                        .try_load_concurrent_async::<Number>("dropped", move |_| {
                            let _flag = flag;
                            built.store(true, Ordering::SeqCst);
                            Ok(2)
                        })
                        .await;
                    r.is_ok()
                }),
            };
            assert!(load.as_mut().poll(&mut cx).is_pending(), "{form:?}");
            assert!(load.as_mut().poll(&mut cx).is_pending(), "{form:?}");
        }
        assert!(!built.load(Ordering::SeqCst), "{form:?}: never built");
        assert_eq!(
            drops.load(Ordering::SeqCst),
            1,
            "{form:?}: build dropped once"
        );
        assert_eq!(slots.loaded(), 1, "{form:?}: only the holder");
        drop(held);
        assert_eq!(
            slots.loaded(),
            0,
            "{form:?}: nothing claimed the freed slot"
        );
        // The slot is free: a new load takes it without waiting.
        let now = slots.load::<Number>("next", |_| 3).unwrap();
        assert_eq!(now.with(|n| *n), 3);
    }
}

/// The futures of the task and concurrent forms are `Send` when their builds are, and
/// the error is answered on whichever thread polled last.
#[test]
fn task_and_concurrent_futures_are_send() {
    fn spawnable<F: Future + Send + 'static>(f: F) -> F {
        f
    }
    let slots = Slots::leak("requests", 1, 8 << 10).unwrap();
    let body = vec![0u8; 64 << 10];
    let task = spawnable(async move {
        slots
            .try_load_task_async::<Bytes>("upload", move |s| Ok(&*s.try_alloc_slice_copy(&body)?))
            .await
            .map(drop)
    });
    let shared = spawnable(async move {
        slots
            .try_load_concurrent_async::<Number>("frame", |_| Ok(1))
            .await
            .map(|l| l.with(|n| *n))
    });
    let err = std::thread::spawn(move || block_on(task))
        .join()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), SlotErrorKind::Alloc);
    assert_eq!(
        std::thread::spawn(move || block_on(shared)).join().unwrap(),
        Ok(1)
    );
    assert_eq!(slots.loaded(), 0);
}

/// The async file loads go through the `try_` forms: for every file size around the
/// largest that fits, each load is `Ok` or an error, never a panic, including the
/// sizes where the file fits but the root does not fit after it; the slot is free
/// after each error.
#[cfg(feature = "serde")]
#[test]
fn async_file_loads_never_panic_at_the_edge_of_the_slot() {
    slot_root!(struct Names = for<'s> &'s [&'s str]);
    let slots = Slots::leak("levels", 1, 4096).unwrap();
    // The length of the one string in the file, or the load's error.
    let load = |form: Form, len: usize| -> Result<usize, String> {
        let text = format!("[\"{}\"]", "x".repeat(len));
        let mut de = serde_json::Deserializer::from_str(&text);
        let got = match form {
            Form::Plain => block_on(slots.load_async_from::<Names, _>("names", &mut de))
                .map(|l| l.with(|n| n[0].len())),
            Form::Task => block_on(slots.load_task_async_from::<Names, _>("names", &mut de))
                .map(|l| l.with(|n| n[0].len())),
            Form::Concurrent => {
                block_on(slots.load_concurrent_async_from::<Names, _>("names", &mut de))
                    .map(|l| l.with(|n| n[0].len()))
            }
        };
        assert_eq!(slots.loaded(), 0, "{form:?} {len}");
        got.map_err(|e| {
            let slot = e.slot_error().expect("the slot was the reason");
            assert_eq!(
                (slot.kind(), slot.slots_name(), slot.load_name()),
                (SlotErrorKind::Alloc, "levels", "names"),
                "{form:?} {len}"
            );
            assert!(e.alloc_error().is_some(), "{form:?} {len}: {e}");
            assert!(e.to_string().contains("out of memory"), "{e}");
            e.to_string()
        })
    };
    for form in FORMS {
        // The largest string that loads: a binary search.
        let (mut fits, mut too_big) = (0, 4096);
        assert_eq!(load(form, fits), Ok(0));
        assert!(load(form, too_big).is_err());
        while too_big - fits > 1 {
            let mid = (fits + too_big) / 2;
            match load(form, mid) {
                Ok(n) => {
                    assert_eq!(n, mid);
                    fits = mid;
                }
                Err(_) => too_big = mid,
            }
        }
        // Every size around it: the file's bytes, its slice, then the root, in turn
        // stop fitting (alignment makes some sizes fit again).
        let step = if cfg!(miri) { 5 } else { 1 };
        for len in (fits.saturating_sub(40)..fits + 8).step_by(step) {
            match load(form, len) {
                Ok(n) => assert_eq!(n, len),
                Err(_) => assert!(len > fits - 24, "{form:?}: {len} failed, {fits} fits"),
            }
        }
    }
}
