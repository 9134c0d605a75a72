//! A counting global allocator shared by the tests that prove "no global heap after
//! construction". Counter and switch are thread-local, so tests running in parallel do
//! not see each other's calls. It installs itself as the test binary's global allocator,
//! so a binary includes it once: `tests/suite/main.rs` does, and its modules use
//! `crate::counting_alloc::heap_calls_during`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static HEAP_CALLS: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    if COUNTING.with(Cell::get) {
        HEAP_CALLS.with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: forwards to the system allocator; counting has no effect on the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note();
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns how many global-heap calls it made on this thread.
pub fn heap_calls_during(f: impl FnOnce()) -> usize {
    let before = HEAP_CALLS.with(Cell::get);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    HEAP_CALLS.with(Cell::get) - before
}
