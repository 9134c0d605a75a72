//! allocator-api2 0.3 and 0.4 (features `allocator-api2-03`, `allocator-api2-04`): each
//! version's `Vec` lives in every surface that has the 0.2 impl (`&ScopeStack`, `&Scope`,
//! `&LocalScope`, `&ConcurrentScope`, a task slot's `&TaskScope`), grows in place while it is the newest
//! allocation, and gives its bytes back when it is dropped as the newest.
#![cfg(all(feature = "allocator-api2-03", feature = "allocator-api2-04"))]

use scope_stack::LinearAllocator;

/// Pushes `n` values into a `Vec` of one version in `$alloc`, checks them, and that
/// the scope grew by about the vector's bytes only (it grew in place).
macro_rules! fill_and_check {
    ($vec:ty, $alloc:expr, $used:expr) => {{
        let before = $used;
        let n = if cfg!(miri) { 40 } else { 1000 };
        let mut v = <$vec>::new_in($alloc);
        for i in 0..n {
            v.push(i as u64);
        }
        assert!(v.iter().enumerate().all(|(i, x)| *x == i as u64));
        let grown = $used - before;
        // In place: the final buffer (at least n words, at most twice that), no copies
        // left behind.
        assert!(
            grown >= n * 8 && grown <= 2 * n * 8 + 64,
            "{grown} bytes for {n} words"
        );
        drop(v);
        assert_eq!($used, before, "the newest block is given back when dropped");
    }};
}

#[test]
fn each_version_s_vec_lives_in_a_scope_and_grows_in_place() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        fill_and_check!(allocator_api2_03::vec::Vec<u64, _>, &**level, level.used());
        fill_and_check!(allocator_api2_04::vec::Vec<u64, _>, &**level, level.used());
        fill_and_check!(allocator_api2_03::vec::Vec<u64, _>, &*level, level.used());
        fill_and_check!(allocator_api2_04::vec::Vec<u64, _>, &*level, level.used());
    });
}

#[test]
fn each_version_s_vec_lives_in_a_concurrent_scope() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("frame", |frame| {
        frame.scope_concurrent("jobs", |jobs| {
            std::thread::scope(|t| {
                t.spawn(|| {
                    let local = jobs.local();
                    let mut a = allocator_api2_03::vec::Vec::new_in(&local);
                    let mut b = allocator_api2_04::vec::Vec::new_in(&local);
                    for i in 0..100u32 {
                        a.push(i);
                        b.push(i * 2);
                    }
                    assert_eq!(a.iter().sum::<u32>() * 2, b.iter().sum::<u32>());
                });
            });
            let mut c = allocator_api2_04::vec::Vec::new_in(jobs);
            c.extend_from_slice(&[1u8, 2, 3]);
            let mut d = allocator_api2_03::vec::Vec::new_in(jobs);
            d.extend_from_slice(&[4u8, 5]);
            assert_eq!((c.len(), d.len()), (3, 2));
        });
    });
}

#[test]
fn each_version_s_vec_lives_in_a_task_slot_and_grows_in_place() {
    scope_stack::slot_root!(struct Unit = for<'s> ());
    let slots = scope_stack::Slots::leak("requests", 1, 1 << 16).unwrap();
    let mut request = slots.load_task::<Unit>("request", |_| ()).unwrap();
    request.with_mut(|_, arena| {
        let used = || (1 << 16) - arena.remaining();
        fill_and_check!(allocator_api2_03::vec::Vec<u64, _>, &arena, used());
        fill_and_check!(allocator_api2_04::vec::Vec<u64, _>, &arena, used());
    });
}

#[test]
fn out_of_room_is_an_error_of_the_version() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("small", |small| {
        let mut v = allocator_api2_04::vec::Vec::<u8, _>::new_in(&**small);
        assert!(v.try_reserve(1 << 20).is_err());
        let mut w = allocator_api2_03::vec::Vec::<u8, _>::new_in(&**small);
        assert!(w.try_reserve(1 << 20).is_err());
        w.push(1);
        assert_eq!(w, [1]);
    });
}

#[test]
fn each_version_s_vec_lives_in_a_heap() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("level", |level| {
        let heap = level.new_heap(if cfg!(miri) { 16 << 10 } else { 64 << 10 });
        let mut a = allocator_api2_03::vec::Vec::new_in(heap);
        let mut b = allocator_api2_04::vec::Vec::new_in(heap);
        for i in 0..200u32 {
            a.push(i);
            b.push(i);
        }
        assert_eq!(heap.live(), 2);
        a.shrink_to_fit();
        drop(b);
        assert_eq!((heap.live(), heap.used()), (1, 800));
        drop(a);
        assert_eq!(heap.live(), 0);
    });
}
