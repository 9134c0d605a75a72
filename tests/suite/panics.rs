//! Rule 5: panics neither leak nor double-drop.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use scope_stack::LinearAllocator;

struct Logged {
    id: u32,
    log: Arc<Mutex<Vec<u32>>>,
    panic_on_drop: bool,
}

impl Logged {
    fn new(id: u32, log: &Arc<Mutex<Vec<u32>>>) -> Logged {
        Logged {
            id,
            log: log.clone(),
            panic_on_drop: false,
        }
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(self.id);
        if self.panic_on_drop {
            panic!("destructor {} panics", self.id);
        }
    }
}

#[test]
fn a_panic_inside_the_closure_still_runs_finalizers_and_rewinds() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| {
        memory.scope("systems", |systems| {
            systems.new_object(Logged::new(1, &log));
            systems.scope("level", |level| {
                level.new_object(Logged::new(2, &log));
                level.new_object(Logged::new(3, &log));
                panic!("level load failed");
            })
        })
    }));
    assert!(result.is_err());
    assert_eq!(*log.lock().unwrap(), vec![3, 2, 1]);
    assert_eq!(memory.used(), 0);
    // The allocator is still fully usable.
    memory.scope("again", |s| assert_eq!(*s.new_pod(5u8), 5));
}

#[test]
fn a_panicking_destructor_does_not_skip_the_others() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| {
        memory.scope("level", |level| {
            for id in 0..5 {
                let obj = level.new_object(Logged::new(id, &log));
                obj.panic_on_drop = id == 2;
            }
        })
    }));
    let payload = result.unwrap_err();
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("destructor 2 panics")
    );
    // Every destructor ran exactly once, newest first.
    assert_eq!(*log.lock().unwrap(), vec![4, 3, 2, 1, 0]);
    assert_eq!(memory.used(), 0);
}

#[test]
fn a_panicking_element_destructor_does_not_skip_the_rest() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| {
        memory.scope("level", |level| {
            level.new_object(Logged::new(10, &log));
            let xs = level.alloc_slice_fill_with(4, |i| Logged::new(i as u32, &log));
            xs[1].panic_on_drop = true;
            level.new_object(Logged::new(20, &log));
        })
    }));
    assert!(result.is_err());
    assert_eq!(*log.lock().unwrap(), vec![20, 0, 1, 2, 3, 10]);
    assert_eq!(memory.used(), 0);
}

#[test]
fn a_panic_while_filling_a_slice_drops_what_was_built_once() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| {
        memory.scope("level", |level| {
            level.alloc_slice_fill_with(5, |i| {
                if i == 3 {
                    panic!("element 3 failed");
                }
                Logged::new(i as u32, &log)
            });
        })
    }));
    assert!(result.is_err());
    // Elements 0..3 were built and are dropped exactly once (by the fill guard); the
    // slice never got a finalizer record, so nothing runs twice.
    assert_eq!(*log.lock().unwrap(), vec![0, 1, 2]);
    assert_eq!(memory.used(), 0);
}

#[test]
fn a_panicking_display_impl_gives_the_reserved_memory_back() {
    struct Bomb;
    impl fmt::Display for Bomb {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("partial ")?;
            panic!("display failed");
        }
    }
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("text", |s| {
        s.new_pod(1u32);
        let before = s.used();
        let r = catch_unwind(AssertUnwindSafe(|| {
            s.alloc_fmt(format_args!("{}", Bomb));
        }));
        assert!(r.is_err());
        assert_eq!(s.used(), before);
        assert_eq!(s.alloc_fmt(format_args!("{}-{}", 1, 2)), "1-2");
    });
}

#[test]
fn an_erroring_display_impl_is_a_format_error_not_a_leak() {
    struct Refuses;
    impl fmt::Display for Refuses {
        fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
            Err(fmt::Error)
        }
    }
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("text", |s| {
        let err = s.try_alloc_fmt(format_args!("x{}", Refuses)).unwrap_err();
        assert_eq!(err.kind(), scope_stack::AllocErrorKind::Format);
        assert_eq!(s.used(), 0);
    });
}

#[test]
fn allocating_from_inside_alloc_fmt_cannot_overlap_the_text() {
    // A Display impl that allocates from the same scope while it is being formatted into.
    struct Sneaky<'a, 's>(&'a scope_stack::ScopeStack<'s>);
    impl fmt::Display for Sneaky<'_, '_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            // The rest of the block is reserved, so this fails instead of overlapping.
            assert!(self.0.try_new_pod(0xFFu8).is_err());
            f.write_str("ok")
        }
    }
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("text", |s| {
        let text = s.alloc_fmt(format_args!("<{}>", Sneaky(s)));
        assert_eq!(text, "<ok>");
        let after = s.new_pod(1u8);
        assert_eq!(text, "<ok>");
        assert_eq!(*after, 1);
    });
}

#[test]
fn out_of_memory_panics_with_a_readable_message_and_unwinds() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(256).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| {
        memory.scope("audio", |audio| {
            audio.new_object(Logged::new(1, &log));
            audio.new_pod([0u8; 1024]);
        })
    }));
    let payload = result.unwrap_err();
    let msg = payload.downcast_ref::<String>().unwrap();
    assert!(msg.contains("out of memory"), "{msg}");
    assert!(msg.contains("\"audio\""), "{msg}");
    assert!(msg.contains("requested 1024 bytes"), "{msg}");
    assert_eq!(*log.lock().unwrap(), vec![1]);
    assert_eq!(memory.used(), 0);
}

#[test]
fn a_panicking_destructor_inside_a_run_does_not_skip_the_rest_of_the_run() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| {
        memory.scope("level", |level| {
            level.new_object(String::from("before the run"));
            for id in 0..6 {
                level.new_object(Logged::new(id, &log)).panic_on_drop = id == 3;
            }
            assert_eq!(level.report().scopes[0].finalizer_offsets.len(), 2);
        })
    }));
    assert!(result.is_err());
    assert_eq!(*log.lock().unwrap(), vec![5, 4, 3, 2, 1, 0]);
    assert_eq!(memory.used(), 0);
}
