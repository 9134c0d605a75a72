//! Alignment from 1 to 4096, zero-sized types, exact out-of-memory boundaries, and the
//! errors for bad input.

use core::alloc::Layout;
use core::mem::MaybeUninit;

use scope_stack::{AllocErrorKind, LinearAllocator, MAX_ALIGN};

#[test]
fn every_power_of_two_alignment_up_to_4096() {
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    memory.scope("align", |s| {
        let mut align = 1;
        while align <= MAX_ALIGN {
            // Knock the bump pointer off alignment first.
            s.new_pod(0u8);
            let p = s.alloc_raw(3, align);
            assert_eq!(p.as_ptr() as usize % align, 0, "align {align}");
            let q = s.alloc_layout(Layout::from_size_align(align, align).unwrap());
            assert_eq!(q.as_ptr() as usize % align, 0, "align {align}");
            align *= 2;
        }
    });
}

#[test]
fn over_aligned_types_are_placed_aligned() {
    #[derive(Clone, Copy)]
    #[repr(align(64))]
    struct CacheLine([u8; 64]);
    #[derive(Clone, Copy)]
    #[repr(align(4096))]
    struct Page(u8);
    #[repr(align(4096))]
    struct EmptyPage;
    #[repr(align(512))]
    struct Finalized(String);

    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    memory.scope("types", |s| {
        s.new_pod(1u8);
        let c = s.new_pod(CacheLine([7; 64]));
        assert_eq!(c as *mut CacheLine as usize % 64, 0);
        assert_eq!(c.0[63], 7);
        s.new_pod(1u8);
        let p = s.new_pod(Page(9));
        assert_eq!(p as *mut Page as usize % 4096, 0);
        assert_eq!(p.0, 9);
        let e = s.new_pod(EmptyPage);
        assert_eq!(e as *mut EmptyPage as usize % 4096, 0);
        s.new_pod(1u8);
        let f = s.new_object(Finalized(String::from("x")));
        assert_eq!(f as *mut Finalized as usize % 512, 0);
        assert_eq!(f.0, "x");
        let pages = s.alloc_slice_copy(&[Page(1), Page(2)]);
        assert_eq!(pages.as_ptr() as usize % 4096, 0);
        assert_eq!(pages[1].0, 2);
    });
}

#[test]
fn alignment_errors_are_clear() {
    let mut memory = LinearAllocator::with_capacity(1024).unwrap();
    memory.scope("align", |s| {
        let e = s.try_alloc_raw(8, 3).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::InvalidAlignment);
        assert_eq!(e.align(), 3);
        let e = s.try_alloc_raw(8, 0).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::InvalidAlignment);
        let e = s.try_alloc_raw(8, MAX_ALIGN * 2).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::AlignmentTooLarge);
        assert!(e.to_string().contains("MAX_ALIGN"), "{e}");
        let e = s
            .try_alloc_layout(Layout::from_size_align(8, MAX_ALIGN * 4).unwrap())
            .unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::AlignmentTooLarge);
        let e = s.try_alloc_raw(usize::MAX, 1).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::CapacityOverflow);
        // Nothing was consumed by the failures.
        assert_eq!(s.used(), 0);
    });
}

#[test]
fn too_aligned_type_is_an_error_not_ub() {
    #[derive(Clone, Copy, Debug)]
    #[repr(align(8192))]
    struct Huge(u8);
    let mut memory = LinearAllocator::with_capacity(64 * 1024).unwrap();
    memory.scope("align", |s| {
        let err = s.try_new_pod(Huge(1)).unwrap_err();
        assert_eq!(err.error.kind(), AllocErrorKind::AlignmentTooLarge);
        assert_eq!(err.value.0, 1);
    });
}

#[test]
fn out_of_memory_at_the_exact_byte_boundary() {
    for cap in [1usize, 7, 64, 100, 4096] {
        let mut memory = LinearAllocator::with_capacity(cap).unwrap();
        memory.scope("edge", |s| {
            // Fill to exactly one byte short, then the last byte, then fail.
            if cap > 1 {
                s.alloc_raw(cap - 1, 1);
            }
            assert_eq!(s.allocator().remaining(), 1);
            let err = s.try_alloc_raw(2, 1).unwrap_err();
            assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
            assert_eq!(err.remaining(), 1);
            assert_eq!(err.capacity(), cap);
            assert_eq!(err.size(), 2);
            let last = s.new_pod(0xABu8);
            assert_eq!(*last, 0xAB);
            assert_eq!(s.allocator().remaining(), 0);
            assert_eq!(s.try_new_pod(1u8).unwrap_err().value, 1);
            // Zero-sized requests still succeed on a full block.
            s.new_pod(());
            s.alloc_raw(0, 8);
            assert_eq!(s.allocator().used(), cap);
        });
    }
}

#[test]
fn out_of_memory_because_of_alignment_padding() {
    let mut memory = LinearAllocator::with_capacity(16).unwrap();
    memory.scope("pad", |s| {
        s.new_pod(1u8); // 1 byte used; a u64 needs 7 bytes of padding first
        s.new_pod(2u64); // bytes 8..16
        assert_eq!(s.allocator().remaining(), 0);
    });
    memory.scope("pad", |s| {
        s.alloc_raw(9, 1);
        // 7 bytes left, but a u32 needs 3 bytes of padding + 4: exactly fits.
        s.new_pod(1u32);
        assert!(s.try_new_pod(1u8).is_err());
    });
    memory.scope("pad", |s| {
        s.alloc_raw(10, 1);
        // 6 bytes left: padding 2 + 4 = 6 fits; then nothing.
        s.new_pod(1u32);
        assert_eq!(s.allocator().remaining(), 0);
    });
    memory.scope("pad", |s| {
        s.alloc_raw(11, 1);
        // 5 bytes left, padding 1 + 8 does not fit.
        let err = s.try_new_pod(1u64).unwrap_err().error;
        assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(err.remaining(), 5);
        assert_eq!(s.used(), 11, "a failed allocation consumes nothing");
    });
}

#[test]
fn a_request_bigger_than_the_block_is_an_error() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("big", |s| {
        let err = s.try_alloc_slice_copy(&[0u8; 5000][..]).unwrap_err();
        assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
        assert_eq!(err.size(), 5000);
        assert!(s.try_alloc_str(&"x".repeat(4097)).is_err());
        assert!(s
            .try_alloc_slice_fill_with(usize::MAX / 2, |_| 0u64)
            .is_err());
        assert!(s
            .try_alloc_slice_fill_with(usize::MAX / 2, |_| String::new())
            .is_err());
        let err = s.try_new_object([0u64; 1024]).unwrap_err();
        assert_eq!(err.error.size(), 8192);
        assert_eq!(s.used(), 0);
    });
}

#[test]
fn bad_capacities_are_errors() {
    let e = LinearAllocator::with_capacity(0).unwrap_err();
    assert_eq!(e.kind(), AllocErrorKind::InvalidCapacity);
    assert!(e.to_string().contains("0 bytes"), "{e}");
    let e = LinearAllocator::with_capacity(isize::MAX as usize).unwrap_err();
    assert_eq!(e.kind(), AllocErrorKind::CapacityOverflow);
    let e = LinearAllocator::with_capacity(usize::MAX).unwrap_err();
    assert_eq!(e.kind(), AllocErrorKind::CapacityOverflow);
    assert_eq!(e.size(), usize::MAX);
    // Valid for Layout, but far more than the machine has: the heap says no, cleanly.
    #[cfg(not(miri))]
    {
        let e = LinearAllocator::with_capacity(isize::MAX as usize - 2 * MAX_ALIGN).unwrap_err();
        assert_eq!(e.kind(), AllocErrorKind::HeapExhausted);
    }
}

#[test]
fn errors_read_well() {
    let mut memory = LinearAllocator::with_capacity(100).unwrap();
    memory.scope("a rather long scope name for the level of doom", |s| {
        let e = s.try_alloc_raw(200, 16).unwrap_err();
        let text = e.to_string();
        assert_eq!(
            text,
            "scope-stack: out of memory in scope \"a rather long scope name\": \
             requested 200 bytes (align 16), 100 of 100 bytes remaining"
        );
        assert!(format!("{e:?}").contains("OutOfMemory"));
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(boxed.to_string().starts_with("scope-stack:"));
    });
}

#[test]
fn names_are_cut_at_a_char_boundary() {
    let mut memory = LinearAllocator::with_capacity(8).unwrap();
    let name = "ééééééééééééééééé"; // 34 bytes of 2-byte characters
    assert_eq!(scope_stack::MAX_ERROR_NAME_LEN, 24);
    memory.scope(name, |s| {
        let e = s.try_alloc_raw(9, 1).unwrap_err();
        assert_eq!(e.scope_name(), &name[..24]);
        assert_eq!(s.name(), name);
    });
}

#[repr(C, align(4096))]
struct Aligned([MaybeUninit<u8>; 8192]);

#[test]
fn from_static_uses_the_callers_buffer() {
    static mut BUF: Aligned = Aligned([MaybeUninit::uninit(); 8192]);
    // SAFETY: this test is the only user of `BUF` and runs once.
    let buf: &'static mut Aligned = unsafe { &mut *core::ptr::addr_of_mut!(BUF) };
    let range = buf.0.as_ptr_range();
    let mut memory = LinearAllocator::from_static(&mut buf.0[..]);
    assert_eq!(memory.capacity(), 8192);
    memory.scope("static", |s| {
        let x = s.new_pod(5u64) as *mut u64 as *const MaybeUninit<u8>;
        assert!(range.contains(&x));
        let page = s.alloc_raw(4096, 4096);
        assert_eq!(page.as_ptr() as usize % 4096, 0);
        assert!(s.try_alloc_raw(4096, 1).is_err());
    });
    assert_eq!(memory.high_water_mark(), 8192);
}

#[test]
fn from_static_with_an_empty_buffer_fails_cleanly() {
    static mut EMPTY: [MaybeUninit<u8>; 0] = [];
    // SAFETY: this test is the only user of `EMPTY` and runs once.
    let buf: &'static mut [MaybeUninit<u8>] = unsafe { &mut *core::ptr::addr_of_mut!(EMPTY) };
    let mut memory = LinearAllocator::from_static(buf);
    assert_eq!(memory.capacity(), 0);
    memory.scope("empty", |s| {
        assert_eq!(
            s.try_new_pod(1u8).unwrap_err().error.kind(),
            AllocErrorKind::OutOfMemory
        );
        s.new_pod(()); // zero-sized is fine
    });
}

#[test]
fn statistics_track_use_and_high_water() {
    let mut memory = LinearAllocator::with_capacity(1000).unwrap();
    assert_eq!((memory.used(), memory.remaining()), (0, 1000));
    memory.scope("a", |a| {
        a.alloc_raw(100, 1);
        a.scope("b", |b| {
            b.alloc_raw(300, 1);
            assert_eq!(b.allocator().used(), 400);
            assert_eq!(b.used(), 300);
            assert_eq!(b.start_offset(), 100);
        });
        assert_eq!(a.allocator().used(), 100);
        assert_eq!(a.allocator().high_water_mark(), 400);
        a.alloc_raw(50, 1);
    });
    assert_eq!(memory.used(), 0);
    assert_eq!(memory.high_water_mark(), 400);
    assert!(format!("{memory:?}").contains("high_water_mark: 400"));
}

#[test]
fn formatting_does_not_inflate_the_high_water_mark() {
    // alloc_fmt reserves the rest of the block while it formats; only the text it keeps
    // may count as used.
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("text", |s| {
        let t = s.alloc_fmt(format_args!("frame {}", 12));
        assert_eq!(t, "frame 12");
    });
    assert_eq!(memory.high_water_mark(), 8);
    // A text longer than the block (smaller under Miri, where each padding byte is
    // interpreted: the 120,000-byte text took a minute there).
    let (mut memory, pad) = if cfg!(miri) {
        (LinearAllocator::with_capacity(1 << 10).unwrap(), 600)
    } else {
        (memory, 60_000)
    };
    memory.scope("text", |s| {
        assert_eq!(s.alloc_str("frame 12"), "frame 12");
    });
    assert_eq!(memory.high_water_mark(), 8);
    memory.scope("text", |s| {
        assert!(s
            .try_alloc_fmt(format_args!("{:>pad$}{:>pad$}", 1, 2))
            .is_err());
    });
    assert_eq!(memory.high_water_mark(), 8);
}
