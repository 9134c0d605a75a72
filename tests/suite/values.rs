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
        // A budget larger than the block's room is clamped to it: the block binds.
        systems.scope_with_budget("big", 1 << 20, |big| {
            assert_eq!(big.budget(), Some(4096 - 10));
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

// ----- slices from iterators -----

#[test]
fn alloc_iter_collects_an_iterator_of_unknown_length() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("a", |a| {
        let odd = (0..1000u32).filter(|n| n % 3 == 1);
        assert_eq!(odd.size_hint().0, 0, "the length is not known up front");
        let xs = a.alloc_iter(odd);
        let want: Vec<u32> = (0..1000).filter(|n| n % 3 == 1).collect();
        assert_eq!(xs, &want[..]);
        assert_eq!(a.used(), want.len() * 4, "no slack is kept");
        assert_eq!(a.finalizer_count(), 0);
        // Empty: no memory, no record.
        let used = a.used();
        assert!(a.alloc_iter(std::iter::empty::<String>()).is_empty());
        assert!(a.alloc_iter((0..10u64).filter(|_| false)).is_empty());
        assert_eq!((a.used(), a.finalizer_count()), (used, 0));
        // Zero-sized elements take no room.
        assert_eq!(a.alloc_iter((0..5).map(|_| ())).len(), 5);
        assert_eq!(a.used(), used);
        // Over-aligned elements are aligned.
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[repr(align(64))]
        struct Line(u8);
        a.new_pod(1u8);
        let lines = a.alloc_iter((0..3).map(Line));
        assert_eq!(lines.as_ptr() as usize % 64, 0);
        assert_eq!(lines, &[Line(0), Line(1), Line(2)]);
        // While the slice grows, `used` never counts the room claimed ahead (it may lag
        // behind the newest elements); afterwards it is exact.
        let before = a.used();
        let seen: Vec<usize> = a
            .alloc_iter((0..100u64).filter(|_| true).map(|_| a.used()))
            .iter()
            .map(|&u| u - before)
            .collect();
        for (i, &u) in seen.iter().enumerate() {
            assert!(u <= 8 * i, "element {i}: used {u}");
        }
        assert_eq!(a.used() - before, 800);
    });
}

#[test]
fn the_room_alloc_iter_claims_ahead_is_never_a_high_water_mark() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("a", |a| {
        let xs = a.alloc_iter((0..1000u32).filter(|n| n % 2 == 0));
        assert_eq!(xs.len(), 500);
        assert_eq!(a.used(), 2000);
        assert_eq!(a.allocator().high_water_mark(), 2000);
        assert_eq!(a.remaining(), (1 << 20) - 2000, "the tail was given back");
        // A slice that fails gives everything back and leaves no mark above the
        // elements it had built.
        a.scope_with_budget("b", 4096, |b| {
            assert!(b.try_alloc_iter((0..2000u32).filter(|_| true)).is_err());
            assert_eq!(b.used(), 0);
        });
        assert!(a.allocator().high_water_mark() <= 2000 + 4096);
    });
    assert_eq!(memory.used(), 0);
}

#[test]
fn alloc_iter_of_values_that_need_drop_links_one_record_and_drops_each_once() {
    let drops = Rc::new(Cell::new(0));
    thread_local!(static ZST_DROPS: Cell<usize> = const { Cell::new(0) });
    struct DropZst;
    impl Drop for DropZst {
        fn drop(&mut self) {
            ZST_DROPS.with(|d| d.set(d.get() + 1));
        }
    }
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("a", |a| {
        let d = drops.clone();
        let xs = a.alloc_iter((0..100).filter(|n| n % 2 == 0).map(|_| Counted(d.clone())));
        assert_eq!(xs.len(), 50);
        assert_eq!(a.finalizer_count(), 1, "one record for the whole slice");
        let zs = a.alloc_iter((0..7).map(|_| DropZst));
        assert_eq!(zs.len(), 7);
        assert_eq!(a.finalizer_count(), 2);
        assert_eq!(drops.get(), 0);
    });
    assert_eq!(drops.get(), 50);
    assert_eq!(ZST_DROPS.with(Cell::get), 7);
}

#[test]
fn alloc_iter_out_of_memory_drops_what_was_built_and_gives_the_room_back() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = LinearAllocator::with_capacity(256).unwrap();
    memory.scope("a", |a| {
        a.new_pod(1u8);
        let used = a.used();
        let d = drops.clone();
        let err = a
            .try_alloc_iter((0..1000).map(|_| Counted(d.clone())))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
        // Every element built was dropped, once; the one that did not fit too.
        assert!(drops.get() > 10, "{}", drops.get());
        assert_eq!(Rc::strong_count(&drops), 2, "no clone leaked");
        assert_eq!(a.used(), used);
        assert_eq!(a.finalizer_count(), 0);
        // Exactly the room left: fits; one more element does not.
        let n = a.remaining();
        assert_eq!(
            a.alloc_iter((0..n).map(|i| i as u8).filter(|_| true)).len(),
            n
        );
        assert!(a.try_alloc_iter((0..1u8).filter(|_| true)).is_err());
    });
    memory.scope("budget", |s| {
        s.scope_with_budget("b", 64, |b| {
            assert_eq!(b.alloc_iter((0..16u32).filter(|_| true)).len(), 16);
            assert_eq!(
                b.try_alloc_iter((0..1u32).filter(|_| true))
                    .unwrap_err()
                    .kind(),
                AllocErrorKind::BudgetExceeded
            );
        });
    });
}

#[test]
fn a_panicking_iterator_drops_what_was_built_exactly_once_and_rewinds() {
    let drops = Rc::new(Cell::new(0));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("a", |a| {
        a.new_pod(1u8);
        let used = a.used();
        let d = drops.clone();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.alloc_iter((0..10).map(|i| {
                if i == 6 {
                    panic!("boom");
                }
                Counted(d.clone())
            }));
        }));
        assert!(r.is_err());
        assert_eq!(drops.get(), 6);
        assert_eq!(a.used(), used);
        assert_eq!(a.finalizer_count(), 0);
        // The same through alloc_iter_exact, alloc_slice_fill_clone.
        let d = drops.clone();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.alloc_iter_exact((0..10).map(|i| {
                if i == 4 {
                    panic!("boom");
                }
                Counted(d.clone())
            }));
        }));
        assert!(r.is_err());
        assert_eq!(drops.get(), 10);
        assert_eq!(a.used(), used);

        struct Fussy(Rc<Cell<usize>>, Rc<Cell<usize>>);
        impl Clone for Fussy {
            fn clone(&self) -> Self {
                if self.1.get() == 3 {
                    panic!("clone");
                }
                self.1.set(self.1.get() + 1);
                Fussy(self.0.clone(), self.1.clone())
            }
        }
        impl Drop for Fussy {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let clones = Rc::new(Cell::new(0));
        let original = Fussy(drops.clone(), clones.clone());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.alloc_slice_fill_clone(8, &original);
        }));
        assert!(r.is_err());
        assert_eq!(drops.get(), 13, "the three clones were dropped");
        assert_eq!(a.used(), used);
        drop(original);
    });
    assert_eq!(drops.get(), 14);
}

#[test]
fn an_iterator_that_allocates_from_the_same_scope_is_handled() {
    let drops = Rc::new(Cell::new(0));
    let order = Rc::new(std::cell::RefCell::new(Vec::new()));
    struct Named(usize, Rc<std::cell::RefCell<Vec<usize>>>);
    impl Drop for Named {
        fn drop(&mut self) {
            self.1.borrow_mut().push(self.0);
        }
    }
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("a", |a| {
        // Plain data: each element's map step allocates a string in the scope.
        let names = std::cell::RefCell::new(Vec::new());
        let ns = a.alloc_iter((0..20u32).filter(|n| n % 2 == 0).inspect(|n| {
            names
                .borrow_mut()
                .push(&*a.alloc_fmt(format_args!("item-{n}")));
        }));
        assert_eq!(ns.len(), 10);
        let names = names.into_inner();
        for (i, n) in ns.iter().enumerate() {
            assert_eq!(*n, 2 * i as u32);
            assert_eq!(names[i], format!("item-{n}"));
        }
        // Enough elements that the claimed room runs out while the iterator's own
        // allocations lie above it: the built elements move, values intact.
        let wide = a.alloc_iter((0..300u64).filter(|_| true).map(|i| {
            let tag = a.new_pod(i * 3);
            [i, *tag, i + 1, i + 2]
        }));
        assert_eq!(wide.len(), 300);
        for (i, w) in wide.iter().enumerate() {
            let i = i as u64;
            assert_eq!(*w, [i, i * 3, i + 1, i + 2]);
        }
        let d = drops.clone();
        let many = a.alloc_iter((0..200).map(|_| {
            a.alloc_str("x");
            Counted(d.clone())
        }));
        assert_eq!(many.len(), 200);
        assert_eq!(drops.get(), 0, "moving the built elements drops nothing");
        // Values that need drop, while the iterator places finalized values too.
        let d = drops.clone();
        let o = order.clone();
        let xs = a.alloc_iter((0..5).map(|i| {
            a.new_object(Named(100 + i, o.clone()));
            if i % 2 == 0 {
                a.alloc_raw(3, 1);
            }
            Counted(d.clone())
        }));
        assert_eq!(xs.len(), 5);
        assert_eq!(drops.get(), 0, "moving the built elements drops nothing");
        a.new_object(Named(1, order.clone()));
        // Only scope memory is touched: everything is still readable.
        assert!(xs.iter().all(|c| Rc::ptr_eq(&c.0, &drops)));
    });
    assert_eq!(drops.get(), 205, "each element dropped exactly once");
    // Reverse order of completion: the slice was finished after the objects its
    // iterator placed, so it is dropped before them.
    assert_eq!(*order.borrow(), vec![1, 104, 103, 102, 101, 100]);
}

#[test]
fn alloc_iter_exact_and_the_fill_forms() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("a", |a| {
        let xs = a.alloc_iter_exact(vec![1u16, 2, 3]);
        assert_eq!(xs, &[1, 2, 3]);
        assert_eq!(a.used(), 6);
        let words = a.alloc_iter_exact(["a", "b"].map(String::from));
        assert_eq!(words, &["a", "b"]);
        assert_eq!(a.alloc_slice_fill_copy(4, 9u32), &[9; 4]);
        let refs = a.alloc_slice_fill_copy(2, &xs[0]); // not 'static: fine, it is Copy
        assert_eq!(*refs[1], 1);
        let rows = a.alloc_slice_fill_clone(3, &vec![7u8; 2]);
        assert_eq!(rows, &[vec![7, 7], vec![7, 7], vec![7, 7]]);
        let d = a.alloc_slice_fill_default::<String>(2);
        assert_eq!(d, &["", ""]);
        assert_eq!(a.alloc_slice_fill_default::<u64>(3), &[0; 3]);
        assert!(a.alloc_slice_fill_copy(0, 1u8).is_empty());
        // An ExactSizeIterator that lies: a clear panic, nothing leaked.
        struct Liar(u32);
        impl Iterator for Liar {
            type Item = String;
            fn next(&mut self) -> Option<String> {
                (self.0 > 0).then(|| {
                    self.0 -= 1;
                    String::from("x")
                })
            }
        }
        impl ExactSizeIterator for Liar {
            fn len(&self) -> usize {
                5
            }
        }
        let used = a.used();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.alloc_iter_exact(Liar(2));
        }));
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<String>().unwrap();
        assert!(
            msg.contains("said it had 5 items but ended after 2"),
            "{msg}"
        );
        assert_eq!(a.used(), used);
        // try_ forms.
        let left = a.remaining();
        assert_eq!(
            a.try_alloc_slice_fill_copy(left + 1, 3u8)
                .unwrap_err()
                .into_value(),
            3
        );
        assert!(a.try_alloc_iter_exact(vec![0u8; left + 1]).is_err());
        assert!(a.try_alloc_slice_fill_clone(left + 1, &0u8).is_err());
        assert!(a.try_alloc_slice_fill_default::<u8>(left + 1).is_err());
        assert_eq!(a.remaining(), left);
    });
}

// ----- owning boxes that drop early -----

#[test]
fn a_box_in_the_scope_drops_its_value_once_at_the_box_drop_not_at_unwind() {
    use allocator_api2::boxed::Box;
    let drops = Rc::new(Cell::new(0));
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("level", |level| {
        level.new_pod(1u64); // keeps the box's start aligned: no padding to account for
        let used = level.used();
        let b = Box::new_in(Counted(drops.clone()), &**level);
        assert!(level.used() > used, "the box lives in the scope");
        assert_eq!(level.finalizer_count(), 0, "no finalizer record");
        drop(b);
        assert_eq!(drops.get(), 1, "dropped at the box's drop");
        assert_eq!(
            level.used(),
            used,
            "the newest allocation gives its bytes back"
        );
        // A box that is not the newest allocation: dropped early too, bytes stay.
        let b = Box::new_in(Counted(drops.clone()), &**level);
        let kept = level.new_object(Counted(drops.clone()));
        let _ = kept;
        let before = level.used();
        drop(b);
        assert_eq!(drops.get(), 2);
        assert_eq!(level.used(), before);
        // Through `&Scope` as well, and a box kept to the end drops at its own drop.
        level.scope("child", |child| {
            let c = Box::new_in(Counted(drops.clone()), &**child);
            drop(c);
        });
        assert_eq!(drops.get(), 3);
        let _late = Box::new_in(Counted(drops.clone()), &*level);
    });
    // `kept` (a finalized object) and `_late` (a box dropped at the closure's end).
    assert_eq!(drops.get(), 5, "each value dropped exactly once");
}

#[test]
fn an_iterator_that_opens_scratch_scopes_on_the_same_arena_is_handled() {
    let drops = Rc::new(Cell::new(0));
    scope_stack::scratch(|outer| {
        let d = drops.clone();
        let xs = outer.alloc_iter((0..100u32).filter(|_| true).map(|i| {
            // A nested scratch scope on the same per-thread arena: it begins above the
            // room `alloc_iter` claimed, and rewinds before the next element.
            let n = scope_stack::scratch(|inner| inner.alloc_iter((0..i).filter(|_| true)).len());
            assert_eq!(n, i as usize);
            (i, Counted(d.clone()))
        }));
        assert_eq!(xs.len(), 100);
        assert!(xs.iter().enumerate().all(|(k, (i, _))| k as u32 == *i));
    });
    assert_eq!(drops.get(), 100);
}
