//! The values API (issue 11): room left in a scope, in-place construction, slices from
//! iterators, and owning boxes that drop before their scope ends.

use std::cell::Cell;
use std::rc::Rc;

use scope_stack::{AllocErrorKind, LinearAllocator};

// ----- room left in a scope -----

#[test]
fn a_scope_fills_to_exactly_remaining_then_fails_by_one_byte() {
    let mut memory = LinearAllocator::with_capacity(1000).unwrap();
    memory.scope("outer", |outer| {
        assert_eq!(outer.remaining(), 1000);
        assert_eq!(outer.budget(), None);
        outer.new_pod(7u64);
        assert_eq!(outer.remaining(), 992);
        outer.scope("inner", |inner| {
            assert_eq!(inner.remaining(), 992);
            inner.alloc_raw(inner.remaining(), 1);
            assert_eq!(inner.remaining(), 0);
            let err = inner.try_alloc_raw(1, 1).unwrap_err();
            assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
            assert_eq!(err.remaining(), 0);
        });
        assert_eq!(outer.remaining(), 992);
        // The same at the top level, with a value that is exactly the room left.
        let n = outer.remaining();
        assert!(outer.try_alloc_slice_copy(&vec![1u8; n + 1]).is_err());
        assert_eq!(outer.remaining(), n);
        outer.alloc_slice_copy(&vec![1u8; n]);
        assert_eq!(outer.remaining(), 0);
        assert!(outer.try_new_pod(0u8).is_err());
    });
}

#[test]
fn a_budget_binds_remaining_and_the_next_byte_fails() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("systems", |systems| {
        systems.alloc_raw(10, 1);
        systems.scope_with_budget("audio", 100, |audio| {
            assert_eq!(audio.budget(), Some(100));
            assert_eq!(audio.remaining(), 100);
            audio.alloc_raw(30, 1);
            assert_eq!(audio.remaining(), 70);
            audio.scope("voice", |voice| {
                assert_eq!(voice.budget(), None);
                assert_eq!(voice.remaining(), 70, "the outer budget still applies");
                voice.alloc_raw(voice.remaining(), 1);
                let err = voice.try_alloc_raw(1, 1).unwrap_err();
                assert_eq!(err.kind(), AllocErrorKind::BudgetExceeded);
                assert_eq!(err.budget(), Some(100));
            });
            assert_eq!(audio.remaining(), 70);
            audio.alloc_raw(70, 1);
            assert_eq!(audio.remaining(), 0);
            assert_eq!(
                audio.try_alloc_raw(1, 1).unwrap_err().kind(),
                AllocErrorKind::BudgetExceeded
            );
        });
        // A budget larger than the block's room: the block binds.
        systems.scope_with_budget("big", 1 << 20, |big| {
            assert_eq!(big.budget(), Some(1 << 20));
            assert_eq!(big.remaining(), 4096 - 10);
            big.alloc_raw(big.remaining(), 1);
            assert_eq!(
                big.try_alloc_raw(1, 1).unwrap_err().kind(),
                AllocErrorKind::OutOfMemory
            );
        });
        assert_eq!(systems.remaining(), 4096 - 10);
    });
}

// ----- in-place construction -----

/// Counts drops into a shared counter.
struct Counted(Rc<Cell<usize>>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

#[test]
fn new_pod_with_and_new_object_with_place_values() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("a", |a| {
        let x = a.new_pod_with(|| 41u32);
        *x += 1;
        assert_eq!(*x, 42);
        assert_eq!(a.used(), 4);
        assert_eq!(*a.new_pod_with(|| ()), ());
        assert_eq!(a.used(), 4, "a zero-sized value takes no room");
        // Plain data through new_object_with takes no record.
        let before = a.finalizer_count();
        assert_eq!(*a.new_object_with(|| [3u8; 5]), [3; 5]);
        assert_eq!(a.finalizer_count(), before);
        // A value that needs drop gets one, and is dropped exactly once, at unwind.
        let d = drops.clone();
        let c = a.new_object_with(move || Counted(d));
        assert_eq!(Rc::strong_count(&c.0), 2);
        assert_eq!(a.finalizer_count(), before + 1);
        // A following new_object of the same type joins its run: no second record, so
        // it costs exactly its size.
        let used = a.used();
        a.new_object(Counted(drops.clone()));
        assert_eq!(a.used() - used, core::mem::size_of::<Counted>());
        assert_eq!(a.finalizer_count(), before + 2);
        assert_eq!(drops.get(), 0);
    });
    assert_eq!(drops.get(), 2);
}

#[test]
fn the_closure_is_not_called_when_there_is_no_room() {
    let mut memory = LinearAllocator::with_capacity(8).unwrap();
    memory.scope("tiny", |s| {
        let err = s
            .try_new_pod_with(|| -> [u8; 9] { panic!("must not be called") })
            .unwrap_err();
        assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(err.size(), 9);
        let err = s
            .try_new_object_with(|| -> String { panic!("must not be called") })
            .unwrap_err();
        assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(s.used(), 0);
        assert_eq!(*s.try_new_pod_with(|| 5u64).unwrap(), 5);
    });
}

#[test]
fn a_panicking_closure_gives_its_room_back_and_links_nothing() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("a", |a| {
        a.new_pod(1u8);
        let used = a.used();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.new_pod_with(|| -> [u64; 4] { panic!("boom") });
        }));
        assert!(r.is_err());
        assert_eq!(a.used(), 8, "only the alignment padding stays taken");
        let used_after_pod = a.used();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.new_object_with(|| -> Counted { panic!("boom") });
        }));
        assert!(r.is_err());
        assert_eq!(a.used(), used_after_pod);
        assert_eq!(a.finalizer_count(), 0);
        // A panic after the closure placed a value of its own: that value stays, and is
        // dropped once at unwind.
        let d = drops.clone();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.new_object_with(|| -> Counted {
                a.new_object(Counted(d));
                panic!("boom")
            });
        }));
        assert!(r.is_err());
        assert_eq!(a.finalizer_count(), 1);
        assert!(a.used() > used);
    });
    assert_eq!(drops.get(), 1);
}

#[test]
fn a_closure_that_places_values_of_the_same_type_keeps_drop_order() {
    let order = Rc::new(std::cell::RefCell::new(Vec::new()));
    struct Named(u32, Rc<std::cell::RefCell<Vec<u32>>>);
    impl Drop for Named {
        fn drop(&mut self) {
            self.1.borrow_mut().push(self.0);
        }
    }
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("a", |a| {
        a.new_object(Named(1, order.clone()));
        let outer = a.new_object_with(|| {
            // Finished before the outer value: destroyed after it.
            a.new_object(Named(2, order.clone()));
            a.new_object_with(|| Named(3, order.clone()));
            Named(4, order.clone())
        });
        assert_eq!(outer.0, 4);
        a.new_object(Named(5, order.clone()));
    });
    assert_eq!(*order.borrow(), vec![5, 4, 3, 2, 1]);
}

#[test]
fn alloc_uninit_hands_out_aligned_room_that_is_never_dropped() {
    #[repr(align(64))]
    struct Line([u8; 64]);
    let drops = Rc::new(Cell::new(0));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("a", |a| {
        a.new_pod(1u8);
        let line = a.alloc_uninit::<Line>();
        assert_eq!(line.as_ptr() as usize % 64, 0);
        let line = line.write(Line([9; 64]));
        assert_eq!(line.0[63], 9);
        let zst = a.alloc_uninit::<()>();
        zst.write(());
        // A value that needs drop is the caller's to drop.
        let c = a.alloc_uninit::<Counted>();
        c.write(Counted(drops.clone()));
        assert_eq!(a.finalizer_count(), 0);
        // SAFETY: written just above, dropped once here.
        unsafe { c.assume_init_drop() };
        let room = a.alloc_uninit_slice::<u16>(10);
        assert_eq!(room.len(), 10);
        assert_eq!(room.as_ptr() as usize % 2, 0);
        for (i, x) in room.iter_mut().enumerate() {
            x.write(i as u16);
        }
        // SAFETY: every element was written.
        assert_eq!(unsafe { room[9].assume_init() }, 9);
        assert_eq!(a.alloc_uninit_slice::<u64>(0).len(), 0);
        assert_eq!(
            a.try_alloc_uninit_slice::<u64>(usize::MAX / 4)
                .unwrap_err()
                .kind(),
            AllocErrorKind::CapacityOverflow
        );
        let left = a.remaining();
        assert_eq!(
            a.try_alloc_uninit_slice::<u8>(left + 1).unwrap_err().kind(),
            AllocErrorKind::OutOfMemory
        );
        assert_eq!(a.alloc_uninit_slice::<u8>(left).len(), left);
        assert!(a.try_alloc_uninit::<u8>().is_err());
    });
    assert_eq!(
        drops.get(),
        1,
        "only the caller dropped it: alloc_uninit never drops"
    );
}

#[test]
fn pool_insert_with_builds_in_the_slot_and_hands_the_closure_back_when_full() {
    let calls = Cell::new(0);
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let pool = level.new_pool::<String>(2);
        let a = pool
            .insert_with(|| String::from("a"))
            .unwrap_or_else(|_| unreachable!());
        let b = pool
            .insert_with(|| String::from("b"))
            .unwrap_or_else(|_| unreachable!());
        assert!(pool.is_full());
        let back = pool
            .insert_with(|| {
                calls.set(calls.get() + 1);
                String::from("c")
            })
            .expect_err("the pool is full");
        assert_eq!(calls.get(), 0, "the closure is handed back un-called");
        drop(a);
        let c = pool.insert_with(back).ok().expect("a slot was freed");
        assert_eq!(calls.get(), 1);
        assert_eq!((b.as_str(), c.as_str()), ("b", "c"));
        // A panicking closure gives its slot back.
        drop(b);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = pool.insert_with(|| -> String { panic!("boom") });
        }));
        assert!(r.is_err());
        assert_eq!(pool.len(), 1);
        let d = pool.insert_with(|| String::from("d")).ok().unwrap();
        assert_eq!(&*d, "d");
        assert!(pool.is_full());
    });
}
