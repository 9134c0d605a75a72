//! loom model of the heap's lock (`src/heap/lock.rs`).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom loom_heap::`.
//!
//! Under loom the heap's state (its TLSF and counters) sits in a loom `UnsafeCell`, so
//! two threads inside the lock at once, or a holder whose writes the next holder does
//! not see (a missing Acquire/Release edge), fail the model; the counters are then
//! checked exact. Each thread makes one allocation and frees it, and the main thread
//! holds one across the race: four lock holds in flight, so the model stays small.
//!
//! The heap lives in a scope, but loom's threads need `'static` data: the model extends
//! the heap reference's lifetime and joins its thread before the scope ends.
#![cfg(loom)]

use allocator_api2::boxed::Box as HBox;
use loom::thread;
use scope_stack::{Heap, LinearAllocator};

use crate::harness::model;

#[test]
fn two_threads_allocate_and_free_through_one_heap() {
    model(|| {
        let mut memory = LinearAllocator::with_capacity(1 << 14).unwrap();
        memory.scope("loom", |scope| {
            let heap: &Heap = scope.new_heap(1024);
            // SAFETY: the spawned thread is joined below, before the scope ends, and
            // the heap outlives this closure; the `'static` is never observed past it.
            let heap: &'static Heap = unsafe { &*(heap as *const Heap) };
            let other = thread::spawn(move || {
                let b = HBox::new_in(7u64, heap);
                assert_eq!(*b, 7);
                drop(b);
            });
            let kept = HBox::new_in([1u32; 4], heap);
            other.join().unwrap();
            assert_eq!((heap.used(), heap.live()), (16, 1));
            assert_eq!(*kept, [1; 4]);
            drop(kept);
            assert_eq!(
                (heap.used(), heap.live(), heap.high_water() >= 16),
                (0, 0, true)
            );
        });
    });
}
