//! Task slots (`Slots::load_task`, kind `Task`): a slot that one task at a time uses and
//! that moves between threads. Loaded on one thread and dropped on another with every
//! destructor run once; filled on one thread and added to on another; a future that
//! holds its slot across an await, polled on one thread and finished on another (a
//! hand-written executor: no runtime in the core's dev-dependencies); waiting tasks on
//! several threads; the `Place` and `Carve` surface through a `TaskScope`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use scope_stack::{
    slot_root, Carve, LinearAllocator, Loaded, Place, Pool, SlotErrorKind, Slots, Task, TaskScope,
};

/// Counts drops in a counter shared by the test (`Send`, so a task slot takes it).
struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

struct Request<'s> {
    path: &'s str,
    parts: Vec<&'s str>,
    guards: &'s [Counted],
    pool: &'s mut Pool<'s, Counted>,
    _root_guard: Counted,
}
slot_root!(struct RequestRoot => Request);

slot_root!(struct Unit = for<'s> ());

// `Loaded<_, R, Task>` is `Send` (and, with a `Sync` root, `Sync`) when the root is.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Loaded<'static, RequestRoot, Task>>();
    send_sync::<Loaded<'static, Unit, Task>>();
};

fn build<'s>(arena: TaskScope<'s>, drops: &Arc<AtomicUsize>) -> Request<'s> {
    let pool = arena.new_pool(4);
    pool.insert(Counted(drops.clone()))
        .ok()
        .unwrap()
        .into_handle();
    Request {
        path: arena.alloc_str("/index"),
        parts: Vec::new(),
        guards: arena.alloc_iter((0..3).map(|_| Counted(drops.clone()))),
        pool,
        _root_guard: Counted(drops.clone()),
    }
}

#[test]
fn a_task_slot_loaded_on_one_thread_is_dropped_on_another_with_each_destructor_run_once() {
    let requests = Slots::leak("requests", 2, 16 << 10).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let request = requests
        .load_task::<RequestRoot>("GET /index", |arena| {
            let r = build(arena, &drops);
            arena.new_object(Counted(drops.clone()));
            r
        })
        .unwrap();
    assert_eq!(request.name(), "GET /index");
    assert!(request.used() > 0);
    let on_other = std::thread::spawn(move || {
        let seen = request.with(|r| (r.path.to_string(), r.guards.len(), r.pool.len()));
        assert_eq!(seen, ("/index".to_string(), 3, 1));
        drop(request);
        std::thread::current().id()
    })
    .join()
    .unwrap();
    assert_ne!(on_other, std::thread::current().id());
    // Three in the slice, one in the pool, one object, one in the root.
    assert_eq!(drops.load(Ordering::SeqCst), 6);
    assert_eq!(requests.loaded(), 0);
    // The slot is whole again: it loads at once, with nothing left from before.
    let again = requests.load_task::<Unit>("again", |_| ()).unwrap();
    assert!(again.used() < 64);
    drop(again);
    assert_eq!(drops.load(Ordering::SeqCst), 6);
}

#[test]
fn values_placed_on_one_thread_are_added_to_on_another() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("service", |service| {
        let requests = service.new_slots("requests", 2, 16 << 10);
        let drops = Arc::new(AtomicUsize::new(0));
        let mut request = requests
            .load_task::<RequestRoot>("r", |arena| build(arena, &drops))
            .unwrap();
        request.with_mut(|r, arena| r.parts.push(arena.alloc_str("thread A")));
        let a = std::thread::current().id();
        std::thread::scope(|t| {
            let drops = &drops;
            let request = &mut request;
            t.spawn(move || {
                assert_ne!(std::thread::current().id(), a);
                request.with_mut(|r, arena| {
                    r.parts
                        .push(arena.alloc_fmt(format_args!("thread {}", "B")));
                    r.pool
                        .insert(Counted(drops.clone()))
                        .ok()
                        .unwrap()
                        .into_handle();
                    arena.new_object(Counted(drops.clone()));
                    let mut v = arena.new_vec();
                    v.push(Counted(drops.clone()));
                    let _frozen: &mut [Counted] = v.into_slice();
                });
            });
        });
        request.with_mut(|r, _| r.parts.push(r.path));
        assert_eq!(
            request.with(|r| r.parts.join(", ")),
            "thread A, thread B, /index"
        );
        assert_eq!(request.with(|r| r.pool.len()), 2);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(request);
        // 3 + 2 in the pool + 1 object + 1 frozen vector + 1 root.
        assert_eq!(drops.load(Ordering::SeqCst), 8);
        assert_eq!(requests.loaded(), 0);
    });
}

#[test]
fn a_task_slot_costs_no_more_room_than_a_plain_one() {
    let requests = Slots::leak("requests", 2, 4096).unwrap();
    let plain = requests.load::<Unit>("plain", |s| {
        s.alloc_str("abc");
    });
    let task = requests.load_task::<Unit>("task", |s| {
        s.alloc_str("abc");
    });
    assert_eq!(plain.unwrap().used(), task.unwrap().used());
}

#[test]
fn errors_name_the_set_and_free_the_slot() {
    let requests = Slots::leak("requests", 1, 1024).unwrap();
    let err = requests
        .try_load_task::<Unit>("big", |s| {
            s.try_alloc_slice_fill_copy(4096, 0u8)?;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.kind(), SlotErrorKind::Alloc);
    assert_eq!(err.slots_name(), "requests");
    assert_eq!(requests.loaded(), 0);
    let held = requests.load_task::<Unit>("held", |_| ()).unwrap();
    let full = requests.load_task::<Unit>("next", |_| ()).unwrap_err();
    assert_eq!(full.kind(), SlotErrorKind::Full);
    assert!(full.to_string().contains("held"));
    drop(held);
    // A panicking build frees the slot and drops what it placed.
    let drops = Arc::new(AtomicUsize::new(0));
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = requests.load_task::<Unit>("panics", |s| {
            s.new_object(Counted(drops.clone()));
            panic!("build failed");
        });
    }));
    assert!(panicked.is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(requests.loaded(), 0);
}

/// Pending once (waking itself), then ready: an await point.
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

/// Counts its wakes.
#[derive(Default)]
struct Flag(AtomicUsize);
impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `f` once on this thread with a waker that only counts.
fn poll_once<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    let waker = Waker::from(Arc::new(Flag::default()));
    f.poll(&mut Context::from_waker(&waker))
}

async fn serve(requests: &'static Slots, n: u32, drops: Arc<AtomicUsize>) -> (String, bool) {
    let started_on = std::thread::current().id();
    let mut request = requests
        .load_task_async::<RequestRoot>("request", |arena| {
            let mut r = build(arena, &drops);
            r.parts.push(arena.alloc_fmt(format_args!("#{n}")));
            r
        })
        .await;
    YieldOnce(false).await; // the slot crosses this await (and, here, threads)
    let moved = std::thread::current().id() != started_on;
    request.with_mut(|r, arena| {
        r.parts.push(arena.alloc_str("resumed"));
        arena.new_object(Counted(drops.clone()));
    });
    (request.with(|r| r.parts.join(" ")), moved)
}

#[test]
fn a_future_holding_its_slot_across_an_await_moves_between_threads() {
    let requests = Slots::leak("requests", 1, 16 << 10).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let mut task: Pin<Box<dyn Future<Output = (String, bool)> + Send>> =
        Box::pin(serve(requests, 7, drops.clone()));
    // Thread A polls to the await: the slot is loaded and held by the future.
    let mut task = std::thread::spawn(move || {
        assert!(poll_once(task.as_mut()).is_pending());
        task
    })
    .join()
    .unwrap();
    assert_eq!(requests.loaded(), 1);
    // Thread B resumes it, adds to the slot and finishes (dropping the slot there).
    let (reply, moved) = std::thread::spawn(move || match poll_once(task.as_mut()) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("the task awaits once"),
    })
    .join()
    .unwrap();
    assert_eq!(reply, "#7 resumed");
    assert!(moved);
    assert_eq!(requests.loaded(), 0);
    assert_eq!(drops.load(Ordering::SeqCst), 6);
}

#[test]
fn tasks_handed_between_threads_share_few_slots_and_all_finish() {
    const TASKS: usize = if cfg!(miri) { 6 } else { 64 };
    const THREADS: usize = if cfg!(miri) { 2 } else { 4 };
    let requests = Slots::leak("requests", 3, 8 << 10).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    // A shared queue of tasks; each thread polls whichever task it pops, and puts it
    // back when it is pending, so tasks move between threads at every await.
    type Job = Pin<Box<dyn Future<Output = (String, bool)> + Send>>;
    let queue: Mutex<Vec<(usize, Job)>> = Mutex::new(
        (0..TASKS)
            .map(|n| (n, Box::pin(serve(requests, n as u32, drops.clone())) as Job))
            .collect(),
    );
    let done = Mutex::new(Vec::new());
    std::thread::scope(|t| {
        for _ in 0..THREADS {
            t.spawn(|| loop {
                let Some((n, mut job)) = queue.lock().unwrap().pop() else {
                    if done.lock().unwrap().len() == TASKS {
                        return;
                    }
                    std::thread::yield_now();
                    continue;
                };
                match poll_once(job.as_mut()) {
                    Poll::Ready((reply, _)) => done.lock().unwrap().push((n, reply)),
                    // Back at the far end: the others get a turn (and a free slot).
                    Poll::Pending => queue.lock().unwrap().insert(0, (n, job)),
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort();
    assert_eq!(done.len(), TASKS);
    for (n, reply) in done {
        assert_eq!(reply, format!("#{n} resumed"));
    }
    assert_eq!(requests.loaded(), 0);
    assert_eq!(drops.load(Ordering::SeqCst), 6 * TASKS);
}

#[test]
fn load_task_wait_gives_each_thread_a_slot_in_turn() {
    let requests = Slots::leak("requests", 2, 4096).unwrap();
    let total = AtomicUsize::new(0);
    std::thread::scope(|t| {
        for n in 0..6usize {
            let total = &total;
            t.spawn(move || {
                let r = requests.load_task_wait::<Unit>("job", |arena| {
                    arena.alloc_slice_fill_copy(n + 1, 1u8);
                });
                total.fetch_add(r.used(), Ordering::SeqCst);
            });
        }
    });
    assert!(total.load(Ordering::SeqCst) >= 21);
    assert_eq!(requests.loaded(), 0);
    let _held = requests.load_task::<Unit>("a", |_| ()).unwrap();
    let _held2 = requests.load_task::<Unit>("b", |_| ()).unwrap();
    let err = requests
        .load_task_wait_timeout::<Unit>("c", std::time::Duration::from_millis(5), |_| ())
        .unwrap_err();
    assert_eq!(err.kind(), SlotErrorKind::TimedOut);
}

/// A helper written once against `Carve` (and so `Place`) builds in a task slot too.
fn containers<'s>(into: impl Carve<'s> + Copy) -> (&'s str, usize) {
    let heap = into.new_heap(1024);
    let mut names: allocator_api2::vec::Vec<u32, _> = allocator_api2::vec::Vec::new_in(heap);
    names.push(1);
    let dense = into.new_dense_pool::<String>(4);
    dense.insert(String::from("x")).unwrap();
    let store = into.new_store::<u32>(4, 4);
    let _ = store;
    let mut s = into.new_string();
    s.push_str("text");
    (s.into_str(), names.len() + dense.len())
}

#[test]
fn the_task_surface_offers_place_and_carve() {
    let requests = Slots::leak("requests", 1, 64 << 10).unwrap();
    let r = requests
        .load_task::<Unit>("r", |arena| {
            assert_eq!(containers(arena), ("text", 2));
            assert!(format!("{arena:?}").contains("TaskScope"));
            // allocator-api2 through `&TaskScope`.
            let mut v: allocator_api2::vec::Vec<u64, &TaskScope<'_>> =
                allocator_api2::vec::Vec::new_in(&arena);
            v.extend([1, 2, 3]);
            assert_eq!(v.iter().sum::<u64>(), 6);
        })
        .unwrap();
    assert_eq!(r.with(|_| 1), 1);
}
