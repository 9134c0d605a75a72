//! Scratch from a thread-local's destructor: the closure runs with a working scratch
//! scope whether this thread's scratch arenas are still there or already destroyed.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use scope_stack::{scratch, ScratchPads};

/// Sums in a scratch scope when dropped and records the result.
struct ScratchOnDrop(Arc<Mutex<Vec<u32>>>);

impl Drop for ScratchOnDrop {
    fn drop(&mut self) {
        let sum = scratch(|s| {
            let v = s.alloc_slice_copy(&[1u32, 2, 3]);
            let nested = scratch(|inner| inner.alloc_slice_copy(v).len() as u32);
            v.iter().sum::<u32>() + nested
        });
        self.0.lock().unwrap().push(sum);
    }
}

thread_local! {
    static LATE: RefCell<Option<ScratchOnDrop>> = const { RefCell::new(None) };
}

#[test]
fn scratch_works_in_a_destructor_that_runs_after_the_arenas_are_gone() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    std::thread::spawn(move || {
        // `LATE` is registered first, the scratch arenas after it: thread-locals are
        // destroyed in reverse order, so the arenas go first.
        LATE.with(|l| *l.borrow_mut() = Some(ScratchOnDrop(s)));
        scratch(|s| {
            s.alloc_raw(100, 1);
        });
    })
    .join()
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), [9]);
}

#[test]
fn scratch_works_in_a_destructor_that_runs_before_the_arenas_go() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    std::thread::spawn(move || {
        scratch(|s| {
            s.alloc_raw(100, 1);
        });
        LATE.with(|l| *l.borrow_mut() = Some(ScratchOnDrop(s)));
    })
    .join()
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), [9]);
}

#[test]
fn scratch_works_in_a_destructor_on_a_thread_that_never_used_it() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    std::thread::spawn(move || {
        LATE.with(|l| *l.borrow_mut() = Some(ScratchOnDrop(s)));
    })
    .join()
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), [9]);
}

/// Uses a `ScratchPads` when dropped.
struct PadsOnDrop(Arc<ScratchPads>, Arc<Mutex<Vec<usize>>>);

impl Drop for PadsOnDrop {
    fn drop(&mut self) {
        let n = self.0.with(|s| s.alloc_slice_copy(&[7u8; 5]).len());
        self.1.lock().unwrap().push(n);
    }
}

thread_local! {
    static LATE_PADS: RefCell<Option<PadsOnDrop>> = const { RefCell::new(None) };
}

#[test]
fn scratch_pads_work_in_a_thread_local_destructor() {
    let pads = Arc::new(ScratchPads::new(4096));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (p, s) = (pads.clone(), seen.clone());
    std::thread::spawn(move || {
        LATE_PADS.with(|l| *l.borrow_mut() = Some(PadsOnDrop(p.clone(), s)));
        p.with(|s| {
            s.alloc_raw(10, 1);
        });
    })
    .join()
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), [5]);
}
