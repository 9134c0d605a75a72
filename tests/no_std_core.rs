//! The core without the `alloc` feature: blocks come from caller buffers
//! (`LinearAllocator::from_static`). CI runs this file with `--no-default-features`.

use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicUsize, Ordering};

use scope_stack::{AllocErrorKind, LinearAllocator};

#[repr(C, align(4096))]
struct Block([MaybeUninit<u8>; 16 * 1024]);

static DROPS: AtomicUsize = AtomicUsize::new(0);

struct Noisy(u8);
impl Drop for Noisy {
    fn drop(&mut self) {
        DROPS.fetch_add(self.0 as usize, Ordering::SeqCst);
    }
}

#[test]
fn the_core_works_on_a_static_buffer() {
    static mut BLOCK: Block = Block([MaybeUninit::uninit(); 16 * 1024]);
    // SAFETY: this test is the only user of `BLOCK` and runs once.
    let block: &'static mut Block = unsafe { &mut *core::ptr::addr_of_mut!(BLOCK) };
    let buffer = &mut block.0[..];
    let mut memory = LinearAllocator::from_static(buffer);
    assert_eq!(memory.capacity(), 16 * 1024);
    memory.scope("systems", |systems| {
        systems.new_object(Noisy(1));
        let ids = systems.alloc_slice_fill_with(10, |i| i as u16);
        systems.scope("level", |level| {
            level.new_object(Noisy(10));
            let name = level.alloc_fmt(format_args!("level-{}", ids[3]));
            assert_eq!(&*name, "level-3");
            let page = level.alloc_raw(4096, 4096);
            assert_eq!(page.as_ptr() as usize % 4096, 0);
            let err = level.try_alloc_raw(1 << 20, 1).unwrap_err();
            assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
        });
        assert_eq!(DROPS.load(Ordering::SeqCst), 10);
    });
    assert_eq!(DROPS.load(Ordering::SeqCst), 11);
    assert_eq!(memory.used(), 0);
}
