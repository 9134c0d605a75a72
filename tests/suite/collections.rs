//! allocator-api2 collections living in scope memory.

use core::alloc::Layout;

use allocator_api2::alloc::Allocator;
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

/// Allocates through `a`, then grows (zeroed, then plain) and shrinks the newest block:
/// each call must keep the pointer, keep the old bytes, and change `used()` by exactly
/// the difference; `grow_zeroed` must zero the new tail even over dirty memory.
fn newest_block_resizes_in_place<A: Allocator>(surface: &str, a: A, used: impl Fn() -> usize) {
    let base = used();
    // Dirty the room above the block first, so zeroes cannot come from a fresh block.
    let dirty = Layout::from_size_align(64, 8).unwrap();
    let d = a.allocate(dirty).unwrap().cast::<u8>();
    // SAFETY: `d` is 64 fresh bytes, given back at once (the newest block: rewinds).
    unsafe {
        d.as_ptr().write_bytes(0xAA, 64);
        a.deallocate(d, dirty);
    }
    assert_eq!(used(), base, "{surface}: freeing the newest block rewinds");

    let l4 = Layout::from_size_align(4, 4).unwrap();
    let l8 = Layout::from_size_align(8, 4).unwrap();
    let l16 = Layout::from_size_align(16, 4).unwrap();
    let l2 = Layout::from_size_align(2, 4).unwrap();
    let p = a.allocate(l4).unwrap().cast::<u8>();
    // SAFETY: `p` is 4 fresh bytes.
    unsafe {
        p.as_ptr()
            .copy_from_nonoverlapping([1, 2, 3, 4].as_ptr(), 4)
    };
    let u4 = used();
    assert_eq!(u4 - base, 4, "{surface}: allocate");

    // SAFETY: `p` was allocated here with `l4`; 8 >= 4.
    let g = unsafe { a.grow_zeroed(p, l4, l8) }.unwrap();
    assert_eq!(
        g.cast::<u8>(),
        p,
        "{surface}: grow_zeroed moved the newest block"
    );
    assert_eq!(g.len(), 8);
    // SAFETY: `g` is 8 initialised bytes (4 kept, 4 zeroed).
    let bytes = unsafe { core::slice::from_raw_parts(p.as_ptr(), 8) };
    assert_eq!(
        bytes,
        [1, 2, 3, 4, 0, 0, 0, 0],
        "{surface}: grow_zeroed bytes"
    );
    assert_eq!(
        used() - u4,
        4,
        "{surface}: grow_zeroed took more than the difference"
    );

    // SAFETY: `p` is now the block of `l8`; 16 >= 8.
    let g = unsafe { a.grow(p, l8, l16) }.unwrap();
    assert_eq!(g.cast::<u8>(), p, "{surface}: grow moved the newest block");
    // SAFETY: the first 8 bytes of the grown block are the kept ones.
    let bytes = unsafe { core::slice::from_raw_parts(p.as_ptr(), 8) };
    assert_eq!(
        bytes,
        [1, 2, 3, 4, 0, 0, 0, 0],
        "{surface}: grow kept the bytes"
    );
    assert_eq!(
        used() - u4,
        12,
        "{surface}: grow took more than the difference"
    );

    // SAFETY: `p` is now the block of `l16`; 2 <= 16.
    let s = unsafe { a.shrink(p, l16, l2) }.unwrap();
    assert_eq!(
        s.cast::<u8>(),
        p,
        "{surface}: shrink moved the newest block"
    );
    // SAFETY: the first 2 bytes are kept.
    let bytes = unsafe { core::slice::from_raw_parts(p.as_ptr(), 2) };
    assert_eq!(bytes, [1, 2], "{surface}: shrink kept the bytes");
    assert_eq!(
        used() - base,
        2,
        "{surface}: shrink gave back exactly the tail"
    );

    // SAFETY: `p` is the block of `l2`, given up.
    unsafe { a.deallocate(p, l2) };
    assert_eq!(used(), base, "{surface}: freeing the shrunk block rewinds");
}

#[test]
fn the_newest_block_grows_zeroed_grows_and_shrinks_in_place_on_every_surface() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("stack", |s| {
        newest_block_resizes_in_place("&ScopeStack", &**s, || s.used());
    });
    memory.scope("handle", |s| {
        newest_block_resizes_in_place("&Scope", &*s, || s.used());
    });
    memory.scope("frame", |frame| {
        frame.scope_concurrent("jobs", |jobs| {
            // A concurrent scope counts what is left to this thread: bytes taken in its
            // chunk lower `remaining()` one for one.
            let here = jobs.local();
            here.new_pod(0u64); // claim this thread's chunk first (the top stays 8-aligned)
            let total = here.remaining();
            newest_block_resizes_in_place("&LocalScope", &here, || total - here.remaining());
            newest_block_resizes_in_place("&ConcurrentScope", jobs, || total - jobs.remaining());
        });
    });
}
