//! Waker code that re-enters the slot set (issue 45, item 4).
//!
//! A waker's `clone` and `drop` are user code. The common hand-written waker is an
//! `Arc<Task>` (through `std::task::Wake`) where the task owns its future; when the
//! slot set holds the last reference, dropping that waker drops the task's future, and
//! if that future is another pending `load_*_async` of the same set, its drop gives
//! its ticket back, which takes the set's waker lock. Before the fix the set cloned and
//! dropped wakers while it held that lock, so the thread locked it twice and hung.
//! Each route below used to hang; the body runs on a thread of its own and the test
//! fails (instead of hanging) when it does not finish in time.
//!
//! The last tests are about futures that are `mem::forget`-ed while they wait: the set
//! must keep working, and the forgotten task's waker is woken once and let go.
//!
//! Futures are polled by hand; no runtime is needed. Loops are scaled down under Miri.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Wake, Waker};
use std::time::Duration;

use scope_stack::{slot_root, Loaded, Slots};

slot_root!(struct Number = for<'s> u32);

/// Long enough for a slow machine (or Miri's clock), short enough to report a hang.
const DEADLINE: Duration = Duration::from_secs(if cfg!(miri) { 600 } else { 20 });

/// Rounds of the forget test, scaled down under Miri.
const ROUNDS: usize = if cfg!(miri) { 4 } else { 200 };

/// A pending async load, boxed so a task can own it.
type Pending = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Runs `body` on a thread of its own and fails if it has not finished after
/// [`DEADLINE`] (a re-entered lock hangs that thread; this one reports it). A panic in
/// `body` is passed on.
fn finishes(route: &str, body: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    match finished.recv_timeout(DEADLINE) {
        Ok(()) => worker.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The body panicked (the sender went without sending): pass it on.
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{route}: still running after {DEADLINE:?}; the waker lock was re-entered")
        }
    }
}

/// Counts its wakes; its `clone` and `drop` run no code of the test's.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Wake for Counting {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Counting {
    fn wakes(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// The usual hand-written task: it owns its future, and its waker is the task itself.
/// Dropping the last waker drops the task, and with it the future. (These tests never
/// wake it: what matters is what its drop does, so its `wake` is empty.)
struct Task {
    _future: Mutex<Pending>,
    dropped: Arc<AtomicBool>,
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {}
}

impl Drop for Task {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

/// An async load of `slots` (full) polled once with `waker`: it waits, holding a ticket.
fn registered(slots: &'static Slots, name: &'static str, waker: &Waker) -> Pending {
    let mut future: Pending = Box::pin(async move {
        drop(slots.load_async::<Number>(name, |_| 2).await);
    });
    let polled = future.as_mut().poll(&mut Context::from_waker(waker));
    assert!(polled.is_pending(), "the set is full: {name} must wait");
    future
}

/// Polls `future` with `waker` once.
fn poll_once<F: Future + ?Sized>(future: Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(waker))
}

/// A full set of one slot (the returned `Loaded` holds it), and a task that owns a
/// second, waiting load of the set: the returned waker is the only reference to that
/// task. The inner load was polled with `quiet`'s waker.
struct Setup {
    slots: &'static Slots,
    held: Loaded<'static, Number>,
    task_waker: Waker,
    task_dropped: Arc<AtomicBool>,
    quiet: Arc<Counting>,
}

fn full_set_and_a_task() -> Setup {
    let slots = Slots::leak("reentry", 1, 4096).unwrap();
    let held = slots.load::<Number>("held", |_| 1).unwrap();
    let quiet = Arc::new(Counting::default());
    let inner = registered(slots, "inner", &Waker::from(quiet.clone()));
    let task_dropped = Arc::new(AtomicBool::new(false));
    let task = Arc::new(Task {
        _future: Mutex::new(inner),
        dropped: task_dropped.clone(),
    });
    Setup {
        slots,
        held,
        task_waker: Waker::from(task),
        task_dropped,
        quiet,
    }
}

/// Route (a): a waiting future polled again with another waker. The set swaps in the
/// new waker and drops the old one, the last reference to a task whose future is
/// another waiting load of the set.
#[test]
fn a_new_waker_replaces_the_last_reference_to_a_task_that_owns_another_load() {
    finishes("route (a)", || {
        let Setup {
            slots,
            held,
            task_waker,
            task_dropped,
            quiet,
        } = full_set_and_a_task();
        let mut outer = registered(slots, "outer", &task_waker);
        drop(task_waker); // the set now holds the task's last reference
        assert!(!task_dropped.load(Ordering::SeqCst));

        let other = Arc::new(Counting::default());
        let other_waker = Waker::from(other.clone());
        assert!(poll_once(outer.as_mut(), &other_waker).is_pending());
        assert!(
            task_dropped.load(Ordering::SeqCst),
            "the old waker was let go"
        );

        // The set still works: the unload wakes the outer future, which gets the slot.
        drop(held);
        assert_eq!(other.wakes(), 1);
        assert_eq!(quiet.wakes(), 0, "the dropped inner load is not woken");
        assert!(poll_once(outer.as_mut(), &other_waker).is_ready());
        assert_eq!(slots.loaded(), 0);
    });
}

/// Route (b): a waiting future dropped. Its ticket's waker is the last reference to a
/// task whose future is another waiting load of the set.
#[test]
fn a_dropped_future_lets_go_of_the_last_reference_to_a_task_that_owns_another_load() {
    finishes("route (b)", || {
        let Setup {
            slots,
            held,
            task_waker,
            task_dropped,
            quiet,
        } = full_set_and_a_task();
        let outer = registered(slots, "outer", &task_waker);
        drop(task_waker);
        drop(outer);
        assert!(
            task_dropped.load(Ordering::SeqCst),
            "the stored waker was let go"
        );

        // Both tickets are back: the unload wakes nobody, and a new load gets the slot.
        drop(held);
        assert_eq!(quiet.wakes(), 0);
        let again = slots.load::<Number>("again", |_| 4).unwrap();
        assert_eq!(again.with(|n| *n), 4);
        drop(again);
        assert_eq!(slots.loaded(), 0);
    });
}

/// A waker (hand-written `RawWaker`) whose `clone` drops a pending load that it owns:
/// the set clones the waker it is polled with to keep it.
struct CloneDrops {
    victim: Mutex<Option<Pending>>,
    clones: AtomicUsize,
}

/// Its `wake` does nothing but give the waker's reference back (as `drop`).
static CLONE_DROPS: RawWakerVTable = RawWakerVTable::new(
    clone_drops_clone,
    clone_drops_drop,
    clone_drops_by_ref,
    clone_drops_drop,
);

/// The waker of `hook` (one more reference to it).
fn clone_drops_waker(hook: &Arc<CloneDrops>) -> Waker {
    let data = Arc::into_raw(hook.clone()).cast::<()>();
    // SAFETY: `data` is an `Arc<CloneDrops>` reference this waker now owns, and every
    // function of `CLONE_DROPS` treats it as one (clone adds one, drop gives it back).
    unsafe { Waker::from_raw(RawWaker::new(data, &CLONE_DROPS)) }
}

unsafe fn clone_drops_clone(data: *const ()) -> RawWaker {
    // SAFETY: `data` came from `Arc::into_raw` in `clone_drops_waker` (or here), and
    // the waker being cloned still owns that reference.
    let hook = unsafe { &*data.cast::<CloneDrops>() };
    hook.clones.fetch_add(1, Ordering::SeqCst);
    // User code inside `clone`: drop the pending load this waker owns.
    let victim = hook.victim.lock().unwrap().take();
    drop(victim);
    // SAFETY: as above; the new waker owns the reference added here.
    unsafe { Arc::increment_strong_count(data.cast::<CloneDrops>()) };
    RawWaker::new(data, &CLONE_DROPS)
}

unsafe fn clone_drops_by_ref(_: *const ()) {}

unsafe fn clone_drops_drop(data: *const ()) {
    // SAFETY: the waker being dropped owns one reference made by `Arc::into_raw` or
    // `increment_strong_count`.
    drop(unsafe { Arc::from_raw(data.cast::<CloneDrops>()) });
}

/// Route (c): the set clones the waker it is polled with, and that `clone` drops
/// another waiting load of the same set.
#[test]
fn a_waker_whose_clone_drops_another_load_of_the_set() {
    finishes("route (c)", || {
        let slots = Slots::leak("reentry", 1, 4096).unwrap();
        let held = slots.load::<Number>("held", |_| 1).unwrap();
        let quiet = Arc::new(Counting::default());
        let victim = registered(slots, "victim", &Waker::from(quiet.clone()));
        let hook = Arc::new(CloneDrops {
            victim: Mutex::new(Some(victim)),
            clones: AtomicUsize::new(0),
        });
        let waker = clone_drops_waker(&hook);
        let mut outer: Pending = Box::pin(async move {
            drop(slots.load_async::<Number>("outer", |_| 3).await);
        });
        assert!(poll_once(outer.as_mut(), &waker).is_pending());
        assert!(hook.clones.load(Ordering::SeqCst) >= 1);
        assert!(
            hook.victim.lock().unwrap().is_none(),
            "the clone dropped the victim"
        );

        drop(held);
        assert_eq!(quiet.wakes(), 0, "the dropped victim is not woken");
        assert!(poll_once(outer.as_mut(), &waker).is_ready());
        drop(outer);
        drop(waker);
        assert_eq!(
            Arc::strong_count(&hook),
            1,
            "the set keeps no clone of the waker"
        );
        assert_eq!(slots.loaded(), 0);
    });
}

/// Forgets `future`: its drop never runs. Under Miri it goes into a static instead, as
/// a leaked box is an error there; for the set the two are the same.
fn forget(future: Pending) {
    static KEPT: Mutex<Vec<Pending>> = Mutex::new(Vec::new());
    if cfg!(miri) {
        KEPT.lock().unwrap().push(future);
    } else {
        std::mem::forget(future);
    }
}

/// A waiting future that is forgotten keeps its ticket (nothing runs to give it back).
/// The next unload wakes its waker once and lets go of it; after that, later waiters
/// are woken as before, and the forgotten task is never woken again.
#[test]
fn a_forgotten_waiting_future_is_woken_once_and_the_set_goes_on() {
    finishes("forget", || {
        let slots = Slots::leak("forget", 1, 4096).unwrap();
        let held = slots.load::<Number>("held", |_| 1).unwrap();
        let forgotten = Arc::new(Counting::default());
        forget(registered(
            slots,
            "forgotten",
            &Waker::from(forgotten.clone()),
        ));
        assert_eq!(Arc::strong_count(&forgotten), 2, "the set keeps its waker");
        drop(held);
        assert_eq!(forgotten.wakes(), 1);
        assert_eq!(
            Arc::strong_count(&forgotten),
            1,
            "the woken waker is let go"
        );

        for round in 0..ROUNDS {
            let held = slots.load::<Number>("held", |_| 1).unwrap();
            let waiter = Arc::new(Counting::default());
            let waker = Waker::from(waiter.clone());
            let mut load = registered(slots, "waiter", &waker);
            drop(held);
            assert_eq!(waiter.wakes(), 1, "round {round}: the waiter is woken");
            assert!(poll_once(load.as_mut(), &waker).is_ready());
            // A plain load and unload with nobody waiting.
            drop(slots.load::<Number>("plain", |_| 5).unwrap());
        }
        assert_eq!(
            forgotten.wakes(),
            1,
            "the forgotten task is not woken again"
        );
        assert_eq!(slots.loaded(), 0);
    });
}
