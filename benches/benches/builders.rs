//! Builders that grow in place: push `N` `u64`s into a growable vector and freeze it
//! into a slice, and build a string with `write!` and freeze it, in each allocator's own
//! growable type: scope-stack's `ScopeVec` / `ScopeString`, bump-scope's `MutBumpVec` /
//! `MutBumpString`, bumpalo's `collections::Vec` / `String`, and std's `Vec` / `String`
//! (global heap; "freezing" is `into_boxed_slice`, which shrinks).
//!
//! ```text
//! cargo bench -p benches --bench builders            # full run
//! cargo bench -p benches --bench builders -- --test  # smoke mode: each runs once
//! ```
//!
//! Every contender starts with no capacity, so each doubles its way up; the memory is
//! given back each iteration the allocator's way (a child scope, `scoped`, `reset`,
//! dropping the box).
use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use scope_stack::LinearAllocator;

/// Elements pushed per iteration.
const N: usize = 1_000;
/// Pieces written per string.
const PIECES: usize = 100;
/// Arena size: far more than one iteration needs.
const ARENA: usize = 1 << 20;

fn vec_push(c: &mut Criterion) {
    let mut g = c.benchmark_group("builders_vec_push_u64");
    g.throughput(Throughput::Elements(N as u64));

    let mut arena = LinearAllocator::with_capacity(ARENA).expect("arena");
    g.bench_function("scope_stack", |b| {
        arena.scope("bench", |root| {
            b.iter(|| {
                root.scope("batch", |batch| {
                    let mut v = batch.new_vec::<u64>();
                    for i in 0..N as u64 {
                        v.push(black_box(i));
                    }
                    black_box(v.into_slice());
                })
            })
        })
    });

    let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(ARENA);
    g.bench_function("bump_scope", |b| {
        b.iter(|| {
            bump.scoped(|mut scope| {
                let mut v = bump_scope::MutBumpVec::new_in(&mut scope);
                for i in 0..N as u64 {
                    v.push(black_box(i));
                }
                black_box(v.into_slice());
            })
        })
    });

    let mut bump = bumpalo::Bump::with_capacity(ARENA);
    g.bench_function("bumpalo", |b| {
        b.iter(|| {
            {
                let mut v = bumpalo::collections::Vec::new_in(&bump);
                for i in 0..N as u64 {
                    v.push(black_box(i));
                }
                black_box(v.into_bump_slice());
            }
            bump.reset();
        })
    });

    g.bench_function("std_vec", |b| {
        b.iter(|| {
            let mut v = Vec::new();
            for i in 0..N as u64 {
                v.push(black_box(i));
            }
            black_box(v.into_boxed_slice());
        })
    });
    g.finish();
}

fn string_write(c: &mut Criterion) {
    let mut g = c.benchmark_group("builders_string_write");
    g.throughput(Throughput::Elements(PIECES as u64));

    let mut arena = LinearAllocator::with_capacity(ARENA).expect("arena");
    g.bench_function("scope_stack", |b| {
        arena.scope("bench", |root| {
            b.iter(|| {
                root.scope("batch", |batch| {
                    let mut s = batch.new_string();
                    for i in 0..PIECES {
                        write!(s, "{},", black_box(i)).unwrap();
                    }
                    black_box(s.into_str());
                })
            })
        })
    });

    let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(ARENA);
    g.bench_function("bump_scope", |b| {
        b.iter(|| {
            bump.scoped(|mut scope| {
                let mut s = bump_scope::MutBumpString::new_in(&mut scope);
                for i in 0..PIECES {
                    write!(s, "{},", black_box(i)).unwrap();
                }
                black_box(s.into_str());
            })
        })
    });

    let mut bump = bumpalo::Bump::with_capacity(ARENA);
    g.bench_function("bumpalo", |b| {
        b.iter(|| {
            {
                let mut s = bumpalo::collections::String::new_in(&bump);
                for i in 0..PIECES {
                    write!(s, "{},", black_box(i)).unwrap();
                }
                black_box(s.into_bump_str());
            }
            bump.reset();
        })
    });

    g.bench_function("std_string", |b| {
        b.iter(|| {
            let mut s = String::new();
            for i in 0..PIECES {
                write!(s, "{},", black_box(i)).unwrap();
            }
            black_box(s.into_boxed_str());
        })
    });
    g.finish();
}

criterion_group!(benches, vec_push, string_write);
criterion_main!(benches);
