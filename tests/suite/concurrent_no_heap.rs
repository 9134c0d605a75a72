//! A concurrent scope touches the global heap neither to open, nor to place values, nor
//! to close: its per-thread state lives in the block (rule 6).

use crate::counting_alloc::heap_calls_during;

use scope_stack::LinearAllocator;

#[test]
fn opening_placing_reporting_free_and_closing_use_no_global_heap() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    let calls = heap_calls_during(|| {
        memory.scope("level", |level| {
            for _ in 0..3 {
                level.scope_concurrent("jobs", |jobs| {
                    let here = jobs.local();
                    for i in 0..500u32 {
                        jobs.new_pod(i);
                        here.new_pod(u64::from(i));
                    }
                    jobs.new_object(String::from_utf8(Vec::new()).unwrap());
                    jobs.alloc_slice_fill_with(100, |i| i as u16);
                    jobs.alloc_iter((0..300u32).filter(|i| i % 3 == 0));
                    jobs.alloc_fmt(format_args!("frame {}", 3));
                    jobs.alloc_slice_copy(&[0u8; 10_000]);
                    let mut v = allocator_api2::vec::Vec::new_in(jobs);
                    v.extend(0..1000u32);
                });
            }
        });
    });
    assert_eq!(calls, 0);
}
