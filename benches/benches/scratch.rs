//! Scratch benchmarks: per-thread scratch scopes against the heap, in one run.
//!
//! ```text
//! cargo bench -p benches --bench scratch            # full run
//! cargo bench -p benches --bench scratch -- --test  # smoke mode
//! ```
//!
//! - `format`: `scratch(|s| s.alloc_fmt(format_args!("foo/bar/{}", n)))` against
//!   `format!` (a heap `String`, freed at once).
//! - `vec100`: a function that builds a temporary vector of 100 items in scratch, against
//!   `Vec::new()` on the heap.
//! - `scope_open_close`: the cost of the run-time innermost-scope check. A nested scratch
//!   scope (thread-local lookup, suspend and resume of the outer cursor) against a
//!   borrow-nested child scope (checked at compile time) and against a bare
//!   `LinearAllocator::scope`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use scope_stack::{scratch, LinearAllocator};

fn format(c: &mut Criterion) {
    let mut g = c.benchmark_group("scratch/format");
    let mut n = 0u64;
    g.bench_function("scope_stack_scratch", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            scratch(|s| black_box(s.alloc_fmt(format_args!("foo/bar/{}", black_box(n)))).len())
        })
    });
    g.bench_function("heap_format", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            black_box(format!("foo/bar/{}", black_box(n))).len()
        })
    });
    g.finish();
}

/// Sums 100 derived values after collecting them: a typical temporary buffer.
fn vec100(c: &mut Criterion) {
    let mut g = c.benchmark_group("scratch/vec100");
    g.bench_function("scope_stack_scratch", |b| {
        b.iter(|| {
            scratch(|s| {
                let mut v = allocator_api2::vec::Vec::new_in(&**s);
                for i in 0..100u64 {
                    v.push(black_box(i) * 3);
                }
                black_box(&v).iter().sum::<u64>()
            })
        })
    });
    g.bench_function("scope_stack_scratch_slice", |b| {
        b.iter(|| {
            scratch(|s| {
                let v = s.alloc_slice_fill_with(100, |i| black_box(i as u64) * 3);
                black_box(&*v).iter().sum::<u64>()
            })
        })
    });
    g.bench_function("heap_vec", |b| {
        b.iter(|| {
            let mut v = Vec::new();
            for i in 0..100u64 {
                v.push(black_box(i) * 3);
            }
            black_box(&v).iter().sum::<u64>()
        })
    });
    g.finish();
}

fn scope_open_close(c: &mut Criterion) {
    let mut g = c.benchmark_group("scratch/scope_open_close");
    g.bench_function("nested_scratch_runtime_checked", |b| {
        scratch(|_outer| {
            b.iter(|| scratch(|inner| black_box(inner.used())));
        })
    });
    let mut block = LinearAllocator::with_capacity(1 << 16).unwrap();
    g.bench_function("child_scope_compile_time_checked", |b| {
        block.scope("outer", |outer| {
            b.iter(|| outer.scope("child", |child| black_box(child.used())));
        })
    });
    g.bench_function("outermost_scope", |b| {
        b.iter(|| block.scope("root", |root| black_box(root.used())));
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = format, vec100, scope_open_close
}
criterion_main!(benches);
