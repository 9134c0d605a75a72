//! Regression tests for bugs found after release (issue 13, "Hardening"): each test
//! describes the behaviour that was broken.

use std::panic::{catch_unwind, AssertUnwindSafe};

use scope_stack::{LinearAllocator, MemoryMap};

// ----- reports read only addresses inside the block -----

/// Every offset a report shows lies inside the block, and the text and the picture can
/// be drawn.
fn assert_map_inside_block(map: &MemoryMap) {
    for scope in &map.scopes {
        assert!(scope.start <= map.capacity, "{map:?}");
        assert!(
            scope.start + scope.inclusive_bytes <= map.capacity,
            "{map:?}"
        );
        for &off in &scope.finalizer_offsets {
            assert!(off < map.capacity, "{map:?}");
        }
        for pool in &scope.pools {
            assert!(pool.offset <= map.capacity, "{map:?}");
            assert!(pool.offset + pool.bytes <= map.capacity, "{map:?}");
        }
    }
    let text = map.to_string();
    assert!(text.starts_with("memory map:"), "{text}");
    let svg = map.to_svg();
    assert!(svg.trim_end().ends_with("</svg>"));
}

#[test]
fn a_pool_of_a_zero_sized_type_has_an_offset_inside_its_scope() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("systems", |systems| {
        systems.alloc_raw(100, 1);
        systems.scope("level", |level| {
            level.alloc_raw(24, 1);
            let before = level.start_offset() + level.used();
            let markers = level.new_pool::<()>(4);
            let _a = markers.insert(()).unwrap();
            let map = level.report();
            assert_map_inside_block(&map);
            let scope = &map.scopes[1];
            let pool = &scope.pools[0];
            assert_eq!((pool.type_name, pool.len, pool.capacity), ("()", 1, 4));
            // The slots take no bytes; what the pool does take was carved in `level`,
            // after what the scope held before.
            assert!(pool.offset >= before, "{map:?}");
            assert!(pool.offset + pool.bytes <= scope.start + scope.own_bytes);
            let text = map.to_string();
            assert!(text.contains("Pool<()>"), "{text}");
        });
    });
}

#[test]
fn out_of_memory_after_a_zero_sized_pool_still_panics_with_the_memory_map() {
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| {
        memory.scope("level", |level| {
            level.new_pool::<()>(4);
            level.alloc_raw(4096, 1);
        })
    }));
    let payload = result.unwrap_err();
    let msg = payload
        .downcast_ref::<String>()
        .expect("the out-of-memory panic, not an arithmetic one");
    assert!(msg.contains("out of memory"), "{msg}");
    assert!(msg.contains("Pool<()>"), "{msg}");
    assert_eq!(memory.used(), 0);
}

#[test]
fn zero_sized_dense_pools_stores_and_empty_slices_keep_the_map_inside_the_block() {
    #[derive(Clone, Debug)]
    struct Marker;
    impl Drop for Marker {
        fn drop(&mut self) {}
    }
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("level", |level| {
        let dense = level.new_dense_pool::<()>(4);
        dense.insert(()).unwrap();
        let dense_drop = level.new_dense_pool::<Marker>(4);
        dense_drop.insert(Marker).unwrap();
        let store = level.new_store::<()>(4, 4);
        store.create(()).unwrap();
        let empty: &mut [String] = level.alloc_slice_fill_with(0, |_| String::new());
        assert!(empty.is_empty());
        assert!(level.alloc_slice_copy::<u64>(&[]).is_empty());
        assert!(level.alloc_slice_clone::<Marker>(&[]).is_empty());
        assert_eq!(level.alloc_slice_clone(&[Marker, Marker]).len(), 2);
        level.alloc_slice_fill_with(3, |_| ());
        level.new_object(Marker);
        level.new_object(());
        assert_eq!(level.alloc_str(""), "");
        level.scope("empty child", |child| {
            let map = child.report();
            assert_map_inside_block(&map);
            assert_eq!(map.scopes[1].own_bytes, 0);
        });
        assert_map_inside_block(&level.report());
    });
}
