//! The heap benchmark: collections that grow, shrink and free, in four allocators.
//!
//! ```text
//! cargo bench -p benches --bench heap            # full run
//! cargo bench -p benches --bench heap -- --test  # smoke mode: every benchmark runs once
//! ```
//!
//! Contenders, each an allocator-api2 `Allocator` behind the same collection code:
//! - `global`: the global allocator (`allocator_api2::alloc::Global`);
//! - `scope_stack_heap`: `&Heap` carved from a scope (TLSF with a lock and counters);
//! - `bumpalo`: `&Bump`, reset after each iteration (frees nothing, so it shows what
//!   not freeing costs and saves);
//! - `rlsf`: rlsf's TLSF used directly through a `RefCell`, no lock and no counters
//!   (what the heap adds on top of it).
//!
//! Workloads, one measured iteration each:
//! - `map`: a `hashbrown::HashMap<u64, u64>` with 100,000 operations, inserts and
//!   removes (the map grows to about 50,000 entries, rehashing as it grows);
//! - `vecs`: 64 `Vec<u32>`s fed 100,000 operations: pushes, pops, and every so often a
//!   `shrink_to_fit` or a fresh vector (grow, shrink and free in place or by moving).
//!
//! After a full run the medians are printed with their ratio to the heap's.

mod common;

use std::cell::RefCell;
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::time::{Duration, SystemTime};

use allocator_api2::alloc::{AllocError, Allocator, Global};
use allocator_api2::vec::Vec as AVec;
use core::alloc::Layout;
use criterion::Criterion;
use hashbrown::{DefaultHashBuilder, HashMap};
use scope_stack::LinearAllocator;

/// Operations per measured iteration.
const OPS: usize = 100_000;
/// Bytes for every region-based contender: far more than one iteration keeps live.
const REGION: usize = 32 << 20;
/// Vectors in the `vecs` workload.
const VECS: usize = 64;

/// rlsf used directly: no lock, no statistics.
struct Direct {
    tlsf: RefCell<rlsf::Tlsf<'static, u32, u16, 28, 16>>,
}

impl Direct {
    fn new(region: &'static mut [MaybeUninit<u8>]) -> Direct {
        let mut tlsf = rlsf::Tlsf::new();
        tlsf.insert_free_block(region);
        Direct {
            tlsf: RefCell::new(tlsf),
        }
    }
}

// SAFETY: blocks come from the TLSF's region (leaked, so it lives for the program), each
// handed to one caller until it is freed; `Direct` is used from one thread (`RefCell`).
unsafe impl Allocator for &Direct {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.size() == 0 {
            return Ok(NonNull::slice_from_raw_parts(NonNull::dangling(), 0));
        }
        let p = self.tlsf.borrow_mut().allocate(layout).ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(p, layout.size()))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() != 0 {
            // SAFETY: the caller's contract: `ptr` came from this TLSF with `layout`.
            unsafe { self.tlsf.borrow_mut().deallocate(ptr, layout.align()) }
        }
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if old.size() == 0 || old.align() != new.align() {
            let fresh = self.allocate(new)?;
            // SAFETY: `old.size()` bytes of `ptr` are the caller's; `fresh` is new.
            unsafe {
                ptr.as_ptr()
                    .copy_to_nonoverlapping(fresh.cast().as_ptr(), old.size());
                self.deallocate(ptr, old);
            }
            return Ok(fresh);
        }
        // SAFETY: `ptr` came from this TLSF with `new.align()`.
        let p = unsafe { self.tlsf.borrow_mut().reallocate(ptr, new) }.ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(p, new.size()))
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if new.size() == 0 || old.align() != new.align() {
            let fresh = self.allocate(new)?;
            // SAFETY: the first `new.size()` bytes of `ptr` are the caller's.
            unsafe {
                ptr.as_ptr()
                    .copy_to_nonoverlapping(fresh.cast().as_ptr(), new.size());
                self.deallocate(ptr, old);
            }
            return Ok(fresh);
        }
        // SAFETY: `ptr` came from this TLSF with `new.align()`.
        let p = unsafe { self.tlsf.borrow_mut().reallocate(ptr, new) }.ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(p, new.size()))
    }
}

/// The `map` workload: inserts, and from the halfway point on, a remove for every
/// other insert.
fn map_ops<A: Allocator>(alloc: A) -> usize {
    let mut map: HashMap<u64, u64, DefaultHashBuilder, A> =
        HashMap::with_hasher_in(DefaultHashBuilder::default(), alloc);
    let mut oldest = 0u64;
    let mut next = 0u64;
    for i in 0..OPS {
        if i % 3 == 2 {
            map.remove(&black_box(oldest));
            oldest += 1;
        } else {
            map.insert(next, next ^ 0x5555);
            next += 1;
        }
    }
    black_box(map.len())
}

/// The `vecs` workload: pushes and pops over `VECS` vectors, with a `shrink_to_fit`
/// and a fresh vector now and then.
fn vec_ops<A: Allocator + Copy>(alloc: A) -> usize {
    let mut vecs: Vec<AVec<u32, A>> = (0..VECS).map(|_| AVec::new_in(alloc)).collect();
    let mut x = 0x2545_F491u32;
    let mut total = 0;
    for i in 0..OPS {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let v = &mut vecs[x as usize % VECS];
        match x % 16 {
            0..=9 => v.push(i as u32),
            10..=13 => {
                v.pop();
            }
            14 => v.shrink_to_fit(),
            _ => {
                total += v.len();
                *v = AVec::new_in(alloc);
            }
        }
    }
    black_box(total + vecs.iter().map(|v| v.len()).sum::<usize>())
}

/// One iteration of a workload.
fn run<A: Allocator + Copy>(is_map: bool, alloc: A) -> usize {
    if is_map {
        map_ops(alloc)
    } else {
        vec_ops(alloc)
    }
}

fn bench(c: &mut Criterion) {
    let mut memory = LinearAllocator::with_capacity(REGION + (1 << 20)).expect("block");
    let mut bump = bumpalo::Bump::with_capacity(REGION);
    let direct = Direct::new(Box::leak(
        vec![MaybeUninit::uninit(); REGION].into_boxed_slice(),
    ));

    for (name, is_map) in [("heap/map", true), ("heap/vecs", false)] {
        let mut g = c.benchmark_group(name);
        g.sample_size(10);
        g.bench_function("global", |b| b.iter(|| run(is_map, Global)));
        memory.scope("bench", |level| {
            let heap = level.new_heap(REGION);
            g.bench_function("scope_stack_heap", |b| b.iter(|| run(is_map, heap)));
            assert_eq!(heap.live(), 0);
        });
        g.bench_function("bumpalo", |b| {
            b.iter(|| {
                let n = run(is_map, &bump);
                bump.reset();
                n
            })
        });
        g.bench_function("rlsf", |b| b.iter(|| run(is_map, &direct)));
        g.finish();
    }
}

/// Prints each median and its ratio to the heap's (a contender's time / the heap's:
/// above 1 means the heap is faster).
fn summary(run_started: SystemTime) {
    let Some(dir) = common::criterion_dir() else {
        return;
    };
    println!("\nmedians per iteration ({OPS} operations), ratio = contender / scope_stack_heap");
    for group in ["heap/map", "heap/vecs"] {
        let Some(ours) = common::fresh_median(&dir, group, "scope_stack_heap", run_started) else {
            continue;
        };
        for peer in ["scope_stack_heap", "global", "bumpalo", "rlsf"] {
            if let Some(t) = common::fresh_median(&dir, group, peer, run_started) {
                println!(
                    "{group:10} {peer:17} {:>10.3} ms  {:>5.2}x",
                    t / 1e6,
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
