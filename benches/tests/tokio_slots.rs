//! Async slot loads on a real multi-thread tokio runtime: more tasks than slots, so
//! most wait for a slot as tasks (woken by the unloads), and each task's slot crosses
//! an await on which the runtime may move it to another worker. Every task must finish,
//! with its own reply, and no slot may stay held.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use scope_stack::{slot_root, Place, Slots};

struct Request<'s> {
    path: &'s str,
    ids: &'s [u32],
}
slot_root!(struct RequestRoot => Request);

const SLOTS: usize = 4;
const TASKS: u32 = 200;

/// Counts its drops: a `Send` value with a destructor, placed in each slot.
struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn check_all_free(slots: &Slots) {
    assert_eq!(slots.loaded(), 0, "a slot leaked");
    // Every slot loads again, at once.
    let held: Vec<_> = (0..SLOTS)
        .map(|_| {
            slots
                .load::<RequestRoot>("again", |_| Request { path: "", ids: &[] })
                .unwrap()
        })
        .collect();
    assert_eq!(held.len(), SLOTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn load_concurrent_async_serves_more_tasks_than_slots() {
    let slots = Slots::leak("requests", SLOTS, 32 << 10).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|n| {
            let drops = drops.clone();
            tokio::spawn(async move {
                let mut request = slots
                    .load_concurrent_async::<RequestRoot>("request", move |arena| {
                        arena.new_object(Counted(drops));
                        Request {
                            path: arena.alloc_fmt(format_args!("/items/{n}")),
                            ids: arena.alloc_slice_copy(&[n, n + 1, n + 2]),
                        }
                    })
                    .await;
                tokio::task::yield_now().await;
                tokio::time::sleep(std::time::Duration::from_micros(50)).await;
                request.with_mut(|r, arena| {
                    let sum: u32 = r.ids.iter().sum();
                    arena
                        .alloc_fmt(format_args!("{} {sum}", r.path))
                        .to_string()
                })
            })
        })
        .collect();
    for (n, task) in (0..TASKS).zip(tasks) {
        assert_eq!(task.await.unwrap(), format!("/items/{n} {}", 3 * n + 3));
    }
    assert_eq!(drops.load(Ordering::SeqCst), TASKS as usize);
    check_all_free(slots);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn load_task_async_serves_more_tasks_than_slots() {
    let slots = Slots::leak("requests", SLOTS, 8 << 10).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|n| {
            let drops = drops.clone();
            tokio::spawn(async move {
                let mut request = slots
                    .load_task_async::<RequestRoot>("request", move |arena| {
                        arena.new_object(Counted(drops));
                        Request {
                            path: arena.alloc_fmt(format_args!("/items/{n}")),
                            ids: arena.alloc_slice_copy(&[n, n + 1, n + 2]),
                        }
                    })
                    .await;
                tokio::task::yield_now().await;
                tokio::time::sleep(std::time::Duration::from_micros(50)).await;
                request.with_mut(|r, arena| {
                    let sum: u32 = r.ids.iter().sum();
                    arena
                        .alloc_fmt(format_args!("{} {sum}", r.path))
                        .to_string()
                })
            })
        })
        .collect();
    for (n, task) in (0..TASKS).zip(tasks) {
        assert_eq!(task.await.unwrap(), format!("/items/{n} {}", 3 * n + 3));
    }
    assert_eq!(drops.load(Ordering::SeqCst), TASKS as usize);
    check_all_free(slots);
}
