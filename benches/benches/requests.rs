//! Request per task: each request of a tokio service gets an arena, formats a few
//! strings and a small slice into it, awaits once (`tokio::task::yield_now`, so a
//! work-stealing runtime may resume it on another worker), builds a reply in the same
//! arena and drops the arena.
//!
//! ```text
//! cargo bench -p benches --bench requests -- --warm-up-time 1 --measurement-time 3
//! cargo bench -p benches --bench requests -- --test   # smoke mode: each point once
//! ```
//!
//! Contenders (group `requests/<workers>w`, one per worker count: 1, 2 and the
//! machine's available parallelism):
//! - `task_slot`: a slot of a `Slots::leak` set, `Slots::load_task_async` (kind
//!   `Task`: the slot's plain scope, `Send`);
//! - `concurrent_slot`: the same set's slots through `Slots::load_concurrent_async`
//!   (a concurrent scope opened and closed in the slot per request);
//! - `bumpalo_pool`: a `bumpalo::Bump` taken from a `Mutex<Vec<Bump>>`, reset and put
//!   back after the reply;
//! - `heap`: `String`s and a `Vec` on the global heap.
//!
//! One measured iteration spawns `IN_FLIGHT` requests as tokio tasks and awaits them
//! all (the set has as many slots, so no request waits for one). After a full run the
//! medians are printed per request, with their ratio to the task slot's.

mod common;

use std::hint::black_box;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use bumpalo::Bump;
use criterion::{BenchmarkId, Criterion, Throughput};
use scope_stack::{slot_root, Place, Slots};

/// Requests in flight per measured iteration (and slots in the set).
const IN_FLIGHT: usize = 64;
/// Bytes of each slot: a concurrent scope's per-thread table fits with room to spare.
const SLOT_BYTES: usize = 32 << 10;

/// What a request keeps in its arena across the await.
struct Request<'s> {
    path: &'s str,
    user: &'s str,
    ids: &'s [u32],
}
slot_root!(struct RequestRoot => Request);

fn slots() -> &'static Slots {
    static SLOTS: OnceLock<&'static Slots> = OnceLock::new();
    SLOTS.get_or_init(|| Slots::leak("requests", IN_FLIGHT, SLOT_BYTES).expect("slots"))
}

fn bumps() -> &'static Mutex<Vec<Bump>> {
    static BUMPS: OnceLock<Mutex<Vec<Bump>>> = OnceLock::new();
    BUMPS.get_or_init(|| {
        Mutex::new(
            (0..IN_FLIGHT)
                .map(|_| Bump::with_capacity(SLOT_BYTES))
                .collect(),
        )
    })
}

fn ids(n: u32) -> [u32; 8] {
    core::array::from_fn(|i| n.wrapping_mul(31).wrapping_add(i as u32))
}

async fn task_slot(n: u32) -> usize {
    let mut request = slots()
        .load_task_async::<RequestRoot>("request", move |arena| Request {
            path: arena.alloc_fmt(format_args!("/items/{n}/detail")),
            user: arena.alloc_fmt(format_args!("user-{}", n % 97)),
            ids: arena.alloc_slice_copy(&ids(n)),
        })
        .await;
    tokio::task::yield_now().await;
    request.with_mut(|r, arena| {
        let sum: u32 = r.ids.iter().sum();
        let reply = arena.alloc_fmt(format_args!("200 OK {} for {} ({sum})", r.path, r.user));
        black_box(reply).len()
    })
}

async fn concurrent_slot(n: u32) -> usize {
    let mut request = slots()
        .load_concurrent_async::<RequestRoot>("request", move |arena| Request {
            path: arena.alloc_fmt(format_args!("/items/{n}/detail")),
            user: arena.alloc_fmt(format_args!("user-{}", n % 97)),
            ids: arena.alloc_slice_copy(&ids(n)),
        })
        .await;
    tokio::task::yield_now().await;
    request.with_mut(|r, arena| {
        let sum: u32 = r.ids.iter().sum();
        let reply = arena.alloc_fmt(format_args!("200 OK {} for {} ({sum})", r.path, r.user));
        black_box(reply).len()
    })
}

async fn bumpalo_pool(n: u32) -> usize {
    let mut bump = bumps()
        .lock()
        .unwrap()
        .pop()
        .unwrap_or_else(|| Bump::with_capacity(SLOT_BYTES));
    let len = {
        // References into the bump are `Send`; the `&Bump` itself is not held across the
        // await (a `Bump` is not `Sync`).
        let path: &str = bumpalo::format!(in &bump, "/items/{}/detail", n).into_bump_str();
        let user: &str = bumpalo::format!(in &bump, "user-{}", n % 97).into_bump_str();
        let ids: &[u32] = bump.alloc_slice_copy(&ids(n));
        tokio::task::yield_now().await;
        let sum: u32 = ids.iter().sum();
        let reply = bumpalo::format!(in &bump, "200 OK {} for {} ({})", path, user, sum);
        black_box(reply).len()
    };
    bump.reset();
    bumps().lock().unwrap().push(bump);
    len
}

async fn heap(n: u32) -> usize {
    let path = format!("/items/{n}/detail");
    let user = format!("user-{}", n % 97);
    let ids = ids(n).to_vec();
    tokio::task::yield_now().await;
    let sum: u32 = ids.iter().sum();
    let reply = format!("200 OK {path} for {user} ({sum})");
    black_box(reply).len()
}

/// Spawns `IN_FLIGHT` requests made by `request` and awaits them, `iters` times.
fn run<F, Fut>(rt: &tokio::runtime::Runtime, iters: u64, request: F) -> Duration
where
    F: Fn(u32) -> Fut,
    Fut: std::future::Future<Output = usize> + Send + 'static,
{
    rt.block_on(async {
        let mut handles = Vec::with_capacity(IN_FLIGHT);
        let started = Instant::now();
        for i in 0..iters {
            for n in 0..IN_FLIGHT as u32 {
                handles.push(tokio::spawn(request(n.wrapping_add(i as u32))));
            }
            for h in handles.drain(..) {
                black_box(h.await.unwrap());
            }
        }
        started.elapsed()
    })
}

/// 1, 2 and the available parallelism, without repeats.
fn worker_counts() -> Vec<usize> {
    let all = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut counts = vec![1, 2, all];
    counts.sort_unstable();
    counts.dedup();
    counts
}

const CONTENDERS: [&str; 4] = ["task_slot", "concurrent_slot", "bumpalo_pool", "heap"];

fn bench(c: &mut Criterion) {
    // Made before any measurement, so no iteration pays for them.
    slots();
    bumps();
    for workers in worker_counts() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .build()
            .expect("runtime");
        let mut g = c.benchmark_group("requests");
        g.throughput(Throughput::Elements(IN_FLIGHT as u64));
        let id = |name: &str| BenchmarkId::new(name, format!("{workers}w"));
        g.bench_function(id("task_slot"), |b| {
            b.iter_custom(|iters| run(&rt, iters, task_slot))
        });
        g.bench_function(id("concurrent_slot"), |b| {
            b.iter_custom(|iters| run(&rt, iters, concurrent_slot))
        });
        g.bench_function(id("bumpalo_pool"), |b| {
            b.iter_custom(|iters| run(&rt, iters, bumpalo_pool))
        });
        g.bench_function(id("heap"), |b| b.iter_custom(|iters| run(&rt, iters, heap)));
        g.finish();
        assert_eq!(slots().loaded(), 0, "every request's slot was unloaded");
    }
}

/// Prints each median per request and its ratio to the task slot's (a contender's time
/// / the task slot's: above 1 means the task slot is faster).
fn summary(run_started: SystemTime) {
    let Some(dir) = common::criterion_dir() else {
        return;
    };
    println!("\nmedians per request ({IN_FLIGHT} in flight), ratio = contender / task_slot");
    for workers in worker_counts() {
        // Criterion's folders: requests/<contender>/<workers>w.
        let point = |name: &str| {
            common::fresh_median(
                &dir.join("requests"),
                name,
                &format!("{workers}w"),
                run_started,
            )
        };
        let Some(ours) = point("task_slot") else {
            continue;
        };
        for name in CONTENDERS {
            if let Some(t) = point(name) {
                println!(
                    "{workers}w {name:16} {:>8.1} ns  {:>5.2}x",
                    t / IN_FLIGHT as f64,
                    t / ours
                );
            }
        }
    }
}

fn main() {
    let run_started = SystemTime::now() - Duration::from_secs(1);
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
    if common::measuring() {
        summary(run_started);
    }
}
