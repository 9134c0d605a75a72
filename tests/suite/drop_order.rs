//! Rule 3: destructors run in exact reverse order of construction, then the block
//! rewinds; values that need no drop get no finalizer record.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use scope_stack::LinearAllocator;

/// Appends its id to a shared log when dropped.
struct Logged {
    id: u32,
    log: Arc<Mutex<Vec<u32>>>,
}

impl Drop for Logged {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(self.id);
    }
}

fn new_log() -> Arc<Mutex<Vec<u32>>> {
    Arc::new(Mutex::new(Vec::new()))
}

#[test]
fn destructors_run_in_reverse_order_of_construction() {
    let log = new_log();
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    let n = if cfg!(miri) { 20 } else { 500 };
    memory.scope("level", |level| {
        for id in 0..n {
            level.new_object(Logged {
                id,
                log: log.clone(),
            });
            // Interleave plain data: it must not disturb the chain.
            level.new_pod(id as u64);
        }
        assert_eq!(level.finalizer_count(), n as usize);
        assert!(log.lock().unwrap().is_empty(), "nothing dropped early");
    });
    let expected: Vec<u32> = (0..n).rev().collect();
    assert_eq!(*log.lock().unwrap(), expected);
    assert_eq!(memory.used(), 0);
}

#[test]
fn nested_scopes_unwind_innermost_first_and_rewind_to_their_start() {
    let log = new_log();
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    let mk = |id| Logged {
        id,
        log: log.clone(),
    };
    memory.scope("systems", |systems| {
        systems.new_object(mk(1));
        let systems_used = systems.allocator().used();
        systems.scope("level", |level| {
            level.new_object(mk(2));
            let level_used = level.allocator().used();
            level.scope("frame", |frame| {
                frame.new_object(mk(3));
                frame.scope("function", |function| {
                    function.new_object(mk(4));
                    function.new_object(mk(5));
                    assert_eq!(function.depth(), 3);
                });
                assert_eq!(*log.lock().unwrap(), vec![5, 4]);
                frame.new_object(mk(6));
            });
            assert_eq!(*log.lock().unwrap(), vec![5, 4, 6, 3]);
            assert_eq!(level.allocator().used(), level_used);
        });
        assert_eq!(*log.lock().unwrap(), vec![5, 4, 6, 3, 2]);
        assert_eq!(systems.allocator().used(), systems_used);
    });
    assert_eq!(*log.lock().unwrap(), vec![5, 4, 6, 3, 2, 1]);
    assert_eq!(memory.used(), 0);
}

#[test]
fn a_second_level_reuses_the_same_memory() {
    // "Same pointers every time": after a rewind the next scope starts at the same place.
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    let mut addrs = Vec::new();
    memory.scope("systems", |systems| {
        systems.new_pod([0u8; 100]);
        for _ in 0..3 {
            systems.scope("level", |level| {
                let a = level.new_pod(1u64) as *mut u64 as usize;
                let b = level.alloc_str("frogs").as_ptr() as usize;
                addrs.push((a, b));
            });
        }
    });
    assert!(addrs.windows(2).all(|w| w[0] == w[1]), "{addrs:?}");
}

#[test]
fn plain_data_gets_no_finalizer_record() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("plain", |s| {
        let n = if cfg!(miri) { 100 } else { 10_000 };
        for i in 0..n {
            s.new_pod(i as u32);
            s.new_object(i as u64); // no drop: same as new_pod
        }
        s.alloc_slice_fill_with(100, |i| i as u16);
        s.alloc_slice_copy(&[1u8, 2, 3]);
        assert_eq!(s.finalizer_count(), 0);
        // u32 then u64 repeated: 4 + 4 padding + 8 per round, plus the slices.
        assert_eq!(s.used(), n * 16 + 200 + 3);
    });
}

#[test]
fn new_pod_has_zero_overhead_beyond_alignment() {
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    memory.scope("pod", |s| {
        let a = s.new_pod(1u8) as *mut u8 as usize;
        let b = s.new_pod(2u8) as *mut u8 as usize;
        assert_eq!(b - a, 1);
        let c = s.new_pod(3u32) as *mut u32 as usize;
        assert_eq!(c % 4, 0);
        assert!(c - b <= 4);
        assert_eq!(s.used(), c + 4 - a);
    });
}

#[test]
fn finalized_slices_drop_every_element_in_reverse_scope_order() {
    let log = new_log();
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    memory.scope("s", |s| {
        s.new_object(Logged {
            id: 100,
            log: log.clone(),
        });
        let slice = s.alloc_slice_fill_with(3, |i| Logged {
            id: i as u32,
            log: log.clone(),
        });
        assert_eq!(slice.len(), 3);
        let names = s.alloc_slice_clone(&[String::from("a"), String::from("b")]);
        assert_eq!(names.concat(), "ab");
        assert_eq!(s.finalizer_count(), 3);
    });
    // The slice is newer than object 100, so it goes first; its elements in index order.
    assert_eq!(*log.lock().unwrap(), vec![0, 1, 2, 100]);
}

#[test]
fn nothing_is_dropped_twice_and_nothing_leaks() {
    let tracker = Rc::new(RefCell::new(0i64));
    struct Counted(Rc<RefCell<i64>>);
    impl Counted {
        fn new(c: &Rc<RefCell<i64>>) -> Counted {
            *c.borrow_mut() += 1;
            Counted(c.clone())
        }
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            *self.0.borrow_mut() -= 1;
        }
    }
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    memory.scope("a", |a| {
        a.new_object(Counted::new(&tracker));
        let v = a.new_object(Some(Counted::new(&tracker)));
        drop(v.take()); // moved out: dropped now, the record drops the `None` later
        a.scope("b", |b| {
            b.alloc_slice_fill_with(5, |_| Counted::new(&tracker));
            let replaced = b.new_object(Counted::new(&tracker));
            *replaced = Counted::new(&tracker); // old value dropped by assignment
        });
        assert_eq!(*tracker.borrow(), 1);
    });
    assert_eq!(*tracker.borrow(), 0);
}

#[test]
fn zero_sized_values_cost_nothing_and_still_drop() {
    let log = new_log();
    struct Zst;
    #[derive(Clone, Copy)]
    struct PlainZst;
    struct LoudZst(Arc<Mutex<Vec<u32>>>);
    impl Drop for LoudZst {
        fn drop(&mut self) {
            self.0.lock().unwrap().push(7);
        }
    }
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    memory.scope("zst", |s| {
        s.new_pod(Zst);
        s.new_pod(());
        s.alloc_slice_copy(&[PlainZst; 1000]);
        s.alloc_slice_fill_with(1000, |_| ());
        assert_eq!(s.used(), 0);
        s.new_object(LoudZst(log.clone()));
        assert_eq!(s.finalizer_count(), 1);
    });
    assert_eq!(*log.lock().unwrap(), vec![7]);
}

#[test]
fn consecutive_objects_of_one_type_share_a_run_and_still_drop_in_reverse() {
    let log = new_log();
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    memory.scope("runs", |s| {
        let mk = |id| Logged {
            id,
            log: log.clone(),
        };
        let first = s.new_object(mk(0)) as *mut Logged as usize;
        let used_after_first = s.used();
        for id in 1..5 {
            let p = s.new_object(mk(id)) as *mut Logged as usize;
            // Back to back, no record in between.
            assert_eq!(p, first + id as usize * core::mem::size_of::<Logged>());
        }
        assert_eq!(
            s.used(),
            used_after_first + 4 * core::mem::size_of::<Logged>()
        );
        s.new_object(String::from("breaks the run"));
        s.new_object(mk(5)); // a new run
        s.new_pod(1u8);
        s.new_object(mk(6)); // not adjacent: a new run
        assert_eq!(s.finalizer_count(), 8, "counts values, not records");
        assert_eq!(
            s.report().scopes[0].finalizer_offsets.len(),
            4,
            "four records"
        );
    });
    assert_eq!(*log.lock().unwrap(), vec![6, 5, 4, 3, 2, 1, 0]);
}

#[test]
fn a_run_counts_its_values_while_open_and_after_a_child_scope() {
    let log = new_log();
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    memory.scope("runs", |s| {
        let mk = |id| Logged {
            id,
            log: log.clone(),
        };
        s.new_object(mk(0));
        s.new_object(mk(1));
        assert_eq!(s.finalizer_count(), 2);
        // A child scope allocates above the run and rewinds to its end: the run goes on.
        s.scope("child", |c| {
            c.new_object(mk(10));
            assert_eq!(c.finalizer_count(), 1);
        });
        let before = s.used();
        s.new_object(mk(2));
        assert_eq!(
            s.used(),
            before + core::mem::size_of::<Logged>(),
            "appended"
        );
        assert_eq!(s.finalizer_count(), 3);
        s.new_object(String::from("seals the run"));
        assert_eq!(s.finalizer_count(), 4);
        assert_eq!(s.report().scopes[0].finalizer_offsets.len(), 2);
    });
    assert_eq!(*log.lock().unwrap(), vec![10, 2, 1, 0]);
}

#[test]
fn zero_sized_values_that_need_drop_each_drop_once_newest_first() {
    static ORDER: Mutex<Vec<&str>> = Mutex::new(Vec::new());
    struct Zst;
    impl Drop for Zst {
        fn drop(&mut self) {
            ORDER.lock().unwrap().push("zst");
        }
    }
    struct Word(&'static str);
    impl Drop for Word {
        fn drop(&mut self) {
            ORDER.lock().unwrap().push(self.0);
        }
    }
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    memory.scope("zst", |s| {
        for _ in 0..3 {
            s.new_object(Zst);
        }
        s.new_object(Word("word"));
        s.new_object(Zst);
        assert_eq!(s.finalizer_count(), 5);
    });
    assert_eq!(
        *ORDER.lock().unwrap(),
        vec!["zst", "word", "zst", "zst", "zst"]
    );
}
