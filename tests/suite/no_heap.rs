//! Rule 6: after a `LinearAllocator` is built, nothing touches the global heap.
//!
//! A counting global allocator counts calls made on this test's thread while counting is
//! switched on (counter and switch are thread-local). The whole workload (scopes, objects, slices, text, collections) runs in
//! that window, and the count must stay at zero.

use std::collections::hash_map::DefaultHasher;
use std::hash::BuildHasherDefault;

use scope_stack::LinearAllocator;

use crate::counting_alloc::heap_calls_during;

/// A type that needs drop but owns no heap memory.
struct Handle(u32);
impl Drop for Handle {
    fn drop(&mut self) {
        std::hint::black_box(self.0);
    }
}

#[test]
fn the_counter_sees_heap_use() {
    // Guard against a test that cannot fail: the counter does count.
    let n = heap_calls_during(|| drop(std::hint::black_box(Box::new(1u8))));
    assert_eq!(n, 2);
}

#[test]
fn no_heap_after_construction() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    let rounds = if cfg!(miri) { 3 } else { 100 };
    let calls = heap_calls_during(|| {
        for round in 0..rounds {
            memory.scope("systems", |systems| {
                systems.new_object(Handle(round));
                systems.scope("level", |level| {
                    let xs = level.alloc_slice_fill_with(64, |i| Handle(i as u32));
                    level.alloc_slice_copy(&[1u64; 32]);
                    let name = level.alloc_fmt(format_args!("level-{round}-{}", xs.len()));
                    assert!(name.starts_with("level-"));
                    level.alloc_str("frogs");
                    let mut v = allocator_api2::vec::Vec::new_in(&**level);
                    for i in 0..200u32 {
                        v.push(i);
                    }
                    // A fixed-key hasher: hashbrown's default one seeds itself from the
                    // heap once per process, which is not ours to count.
                    let hasher = BuildHasherDefault::<DefaultHasher>::default();
                    let mut map =
                        hashbrown::HashMap::with_capacity_and_hasher_in(16, hasher, &**level);
                    map.insert(1u32, 2u32);
                    assert_eq!(v.len() + map.len(), 201);
                });
            });
        }
    });
    assert_eq!(calls, 0, "the global heap was used after construction");
}

#[test]
fn from_static_needs_no_heap_at_all() {
    use std::mem::MaybeUninit;
    #[repr(align(4096))]
    struct Buf([MaybeUninit<u8>; 4096]);
    static mut BUF: Buf = Buf([MaybeUninit::uninit(); 4096]);
    // SAFETY: this test is the only user of `BUF` and runs once.
    let buf: &'static mut Buf = unsafe { &mut *std::ptr::addr_of_mut!(BUF) };
    let calls = heap_calls_during(|| {
        let mut memory = LinearAllocator::from_static(&mut buf.0[..]);
        memory.scope("boot", |boot| {
            boot.new_object(Handle(1));
            boot.alloc_fmt(format_args!("{}", 42));
        });
    });
    assert_eq!(calls, 0);
}

#[test]
fn scratch_uses_no_heap_after_the_threads_first_use() {
    scope_stack::scratch(|s| {
        s.new_pod(0u8);
    }); // first use: the arenas are reserved here
    let pads = scope_stack::ScratchPads::new(64 * 1024);
    pads.with(|_| ()); // this thread's pad is reserved here
    let rounds = if cfg!(miri) { 3 } else { 100 };
    let calls = heap_calls_during(|| {
        for round in 0..rounds {
            scope_stack::scratch(|outer| {
                let name = outer.alloc_fmt(format_args!("foo/bar/{round}"));
                scope_stack::scratch_for(outer, |tmp| {
                    tmp.alloc_slice_fill_with(100, |i| Handle(i as u32));
                    let mut v = allocator_api2::vec::Vec::new_in(&**tmp);
                    v.extend(0..100u32);
                    assert_eq!(v.len(), 100);
                });
                scope_stack::scratch(|inner| inner.alloc_str(name).len());
            });
            pads.with(|p| p.alloc_slice_copy(&[1u8; 64]).len());
        }
    });
    assert_eq!(calls, 0, "scratch used the global heap after first use");
}
