//! Async loads: a future waits for a free slot and is woken by the unload that frees
//! one, with any executor (here: a thread-parking `block_on` and a small round-robin
//! executor written in this file), and a dropped future leaves nothing behind.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use scope_stack::{slot_root, LinearAllocator};

slot_root!(struct Number = for<'s> &'s u64);

const THREADS: usize = if cfg!(miri) { 2 } else { 4 };
const LOADS: usize = if cfg!(miri) { 5 } else { 300 };

/// Wakes a parked thread.
struct Unpark(std::thread::Thread);
impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs one future on this thread, parking while it is pending.
fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
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

/// Pending once, then ready (hands the executor back its turn).
struct YieldOnce(bool);
impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// A round-robin executor: polls each unfinished task whose waker fired.
fn run_all(tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>>) {
    let flags: Vec<Arc<Counting>> = tasks
        .iter()
        .map(|_| Arc::new(Counting::default()))
        .collect();
    let mut tasks: Vec<Option<_>> = tasks.into_iter().map(Some).collect();
    for f in &flags {
        f.0.store(1, Ordering::SeqCst);
    }
    let mut idle_rounds = 0;
    while tasks.iter().any(Option::is_some) {
        let mut progressed = false;
        for (task, flag) in tasks.iter_mut().zip(&flags) {
            if task.is_none() || flag.0.swap(0, Ordering::SeqCst) == 0 {
                continue;
            }
            progressed = true;
            let waker = Waker::from(flag.clone());
            let mut cx = Context::from_waker(&waker);
            if task.as_mut().unwrap().as_mut().poll(&mut cx).is_ready() {
                *task = None;
            }
        }
        idle_rounds = if progressed { 0 } else { idle_rounds + 1 };
        assert!(
            idle_rounds < 1000,
            "every task waits and no wake is coming: lost wake-up"
        );
    }
}

#[test]
fn a_task_waits_for_a_full_set_and_the_unload_on_another_thread_wakes_it() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("service", |service| {
        let slots = service.new_slots("requests", 1, 4096);
        let held = slots
            .load_concurrent::<Number>("held", |s| &*s.new_pod(1u64))
            .unwrap();
        let woken = Arc::new(Counting::default());
        let waker = Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        let mut wait = pin!(slots.load_concurrent_async::<Number>("next", |s| &*s.new_pod(2u64)));
        assert!(wait.as_mut().poll(&mut cx).is_pending());
        assert!(wait.as_mut().poll(&mut cx).is_pending(), "still full");
        std::thread::scope(|t| {
            t.spawn(move || drop(held)).join().unwrap();
        });
        assert_eq!(
            woken.0.load(Ordering::SeqCst),
            1,
            "the unload woke the task"
        );
        let Poll::Ready(next) = wait.as_mut().poll(&mut cx) else {
            panic!("a slot is free")
        };
        assert_eq!(next.with(|n| **n), 2);
    });
}

#[test]
fn a_dropped_waiting_future_is_not_woken_and_claims_nothing() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("service", |service| {
        let slots = service.new_slots("requests", 1, 4096);
        let held = slots.load::<Number>("held", |s| &*s.new_pod(1u64)).unwrap();
        let woken = Arc::new(Counting::default());
        let waker = Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        {
            let mut wait = pin!(slots.load_async::<Number>("never", |s| &*s.new_pod(2u64)));
            assert!(wait.as_mut().poll(&mut cx).is_pending());
        } // dropped while waiting
        drop(held);
        assert_eq!(
            woken.0.load(Ordering::SeqCst),
            0,
            "its waker was taken back"
        );
        assert_eq!(slots.loaded(), 0, "it claimed nothing");
        // The set works as before.
        let again = slots
            .load::<Number>("again", |s| &*s.new_pod(3u64))
            .unwrap();
        assert_eq!(again.with(|n| **n), 3);
    });
}

#[test]
fn the_newest_waker_is_the_one_woken() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("service", |service| {
        let slots = service.new_slots("requests", 1, 4096);
        let held = slots.load::<Number>("held", |s| &*s.new_pod(1u64)).unwrap();
        let (first, second) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
        let mut wait = pin!(slots.load_async::<Number>("next", |s| &*s.new_pod(2u64)));
        let w1 = Waker::from(first.clone());
        assert!(wait
            .as_mut()
            .poll(&mut Context::from_waker(&w1))
            .is_pending());
        // The executor moved the task: it polls with another waker.
        let w2 = Waker::from(second.clone());
        assert!(wait
            .as_mut()
            .poll(&mut Context::from_waker(&w2))
            .is_pending());
        drop(held);
        assert_eq!(
            (
                first.0.load(Ordering::SeqCst),
                second.0.load(Ordering::SeqCst)
            ),
            (0, 1)
        );
        assert!(wait.as_mut().poll(&mut Context::from_waker(&w2)).is_ready());
    });
}

#[test]
fn many_tasks_share_few_slots_on_one_thread_and_all_finish() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("service", |service| {
        let slots = service.new_slots("requests", 2, 4096);
        let most = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = (0..LOADS.min(40) as u64)
            .map(|n| {
                let (slots, most, done) = (&slots, &most, &done);
                Box::pin(async move {
                    let request = slots
                        .load_async::<Number>("request", |s| &*s.new_pod(n))
                        .await;
                    most.fetch_max(slots.loaded(), Ordering::SeqCst);
                    YieldOnce(false).await; // holds the slot across an await
                    assert_eq!(request.with(|v| **v), n);
                    drop(request);
                    done.fetch_add(1, Ordering::SeqCst);
                }) as Pin<Box<dyn Future<Output = ()> + '_>>
            })
            .collect();
        let count = tasks.len();
        run_all(tasks);
        assert_eq!(done.load(Ordering::SeqCst), count);
        assert_eq!(
            most.load(Ordering::SeqCst),
            2,
            "both slots were in use at once"
        );
        assert_eq!(slots.loaded(), 0);
    });
}

#[test]
fn tasks_on_several_threads_wait_for_two_slots_without_losing_a_wake_up() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("service", |service| {
        let slots = service.new_slots("requests", 2, 4096);
        let sum = AtomicUsize::new(0);
        std::thread::scope(|t| {
            for thread in 0..THREADS {
                let (slots, sum) = (&slots, &sum);
                t.spawn(move || {
                    for i in 0..LOADS {
                        let n = (thread * LOADS + i) as u64;
                        let request =
                            block_on(slots.load_concurrent_async::<Number>("request", move |s| {
                                &*s.new_pod(n)
                            }));
                        sum.fetch_add(request.with(|v| **v) as usize, Ordering::Relaxed);
                    }
                });
            }
        });
        let total = THREADS * LOADS;
        assert_eq!(sum.load(Ordering::Relaxed), total * (total - 1) / 2);
        assert_eq!(slots.loaded(), 0);
    });
}

#[test]
fn a_panicking_async_build_frees_the_slot() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("service", |service| {
        let slots = service.new_slots("requests", 1, 4096);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            block_on(slots.load_async::<Number>("bad", |_| panic!("bad request")))
        }));
        assert!(caught.is_err());
        assert_eq!(slots.loaded(), 0);
        let log = Mutex::new(Vec::new());
        let ok = block_on(slots.load_async::<Number>("good", |s| &*s.new_pod(7u64)));
        log.lock().unwrap().push(ok.with(|n| **n));
        assert_eq!(*log.lock().unwrap(), [7]);
    });
}

#[test]
fn the_loaded_slot_outlives_the_name_it_was_loaded_with() {
    let requests = scope_stack::Slots::leak("requests", 1, 4096).unwrap();
    let loaded: scope_stack::Loaded<'static, Number, scope_stack::Shared> = {
        let name = String::from("request 1"); // dropped before the slot is
        block_on(requests.load_concurrent_async::<Number>(&name, |s| &*s.new_pod(5u64)))
    };
    let on_another_thread = std::thread::spawn(move || loaded.with(|n| **n))
        .join()
        .unwrap();
    assert_eq!(on_another_thread, 5);
    assert_eq!(requests.loaded(), 0);
}
