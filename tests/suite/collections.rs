//! allocator-api2 collections living in scope memory.

use allocator_api2::vec::Vec;
use scope_stack::LinearAllocator;

#[test]
fn vec_and_hashmap_live_in_the_scope() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    let range = memory.scope("level", |level| {
        let block = level.allocator();
        let mut names: Vec<&str, _> = Vec::new_in(&**level);
        names.extend(["frog", "toad", "newt"]);
        let mut by_name = hashbrown::HashMap::new_in(&**level);
        for (i, n) in names.iter().enumerate() {
            by_name.insert(*n, i);
        }
        assert_eq!(by_name["toad"], 1);
        assert!(block.used() > 0);
        // The Vec's buffer lies inside the block.
        let p = names.as_ptr() as usize;
        let base = level.new_pod(0u8) as *mut u8 as usize;
        (p, base, block.capacity())
    });
    let (p, after, cap) = range;
    assert!(p < after && after - p < cap);
    assert_eq!(memory.used(), 0);
}

#[test]
fn the_last_allocation_grows_and_shrinks_in_place() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("grow", |s| {
        let mut v: Vec<u32, _> = Vec::with_capacity_in(4, &**s);
        v.extend([1, 2, 3, 4]);
        let before = v.as_ptr();
        for i in 5..=1000 {
            v.push(i);
        }
        assert_eq!(
            v.as_ptr(),
            before,
            "grew in place: it is the last allocation"
        );
        assert_eq!(v.iter().sum::<u32>(), 500_500);
        let used_big = s.used();
        v.truncate(10);
        v.shrink_to_fit();
        assert_eq!(v.as_ptr(), before);
        assert!(
            s.used() < used_big,
            "shrinking the last allocation gives memory back"
        );
        assert_eq!(s.used(), 40);
        drop(v);
        assert_eq!(s.used(), 0, "freeing the last allocation rewinds");
    });
}

#[test]
fn a_vec_that_is_not_last_moves_when_it_grows() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("grow", |s| {
        let mut v: Vec<u64, _> = Vec::with_capacity_in(2, &**s);
        v.extend([7, 8]);
        let blocker = s.new_pod(99u64);
        let before = v.as_ptr();
        v.push(9);
        assert_ne!(v.as_ptr(), before);
        assert_eq!(&v[..], &[7, 8, 9]);
        assert_eq!(*blocker, 99, "the value above the old buffer is untouched");
        // [0, 16) old buffer, [16, 24) blocker, [24, 56) the grown buffer (capacity 4).
        assert_eq!(s.used(), 56);
        drop(v);
        assert_eq!(
            s.used(),
            24,
            "the moved buffer was last: freed; the old one stays"
        );
    });
}

#[test]
fn running_out_inside_a_collection_is_an_error_not_ub() {
    let mut memory = LinearAllocator::with_capacity(256).unwrap();
    memory.scope("small", |s| {
        let mut v: Vec<u8, _> = Vec::new_in(&**s);
        assert!(v.try_reserve(1000).is_err());
        assert!(v.try_reserve(100).is_ok());
        assert_eq!(v.capacity(), 100);
    });
}

#[test]
fn scope_handle_is_an_allocator_too() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("handle", |s| {
        // `&Scope` (the closure's handle) works as well as `&ScopeStack`.
        let mut v = Vec::new_in(&*s);
        v.push(1u16);
        let mut w = allocator_api2::vec::Vec::new_in(&**s);
        w.push(2u16);
        assert_eq!(v[0] + w[0], 3);
    });
}
