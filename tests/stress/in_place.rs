//! Big values never touch the stack: 8 MiB arrays built through `new_pod_with`,
//! `new_object_with`, `alloc_uninit`, `alloc_uninit_slice` and `Pool::insert_with` on a
//! thread whose whole stack is 256 KiB.
//!
//! The `_with` forms build in place only when the optimiser inlines the closure, so
//! those tests run in release builds (`.ci/run` runs the `stress` binary with
//! `--release`); in debug builds the closure's result goes through the stack and would
//! overflow it.
//! `alloc_uninit` never puts the value on the stack, so its tests run in every build
//! (and under Miri).

use scope_stack::LinearAllocator;

/// 8 MiB: 32 times the stack the tests run on.
const BIG: usize = 8 << 20;
/// The test thread's whole stack.
const SMALL_STACK: usize = 256 << 10;

/// Runs `f` on a thread with a 256 KiB stack; a stack overflow aborts the test binary.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn alloc_uninit_builds_an_8_mib_array_on_a_256_kib_stack() {
    on_small_stack(|| {
        let mut memory = LinearAllocator::with_capacity(BIG + 4096).unwrap();
        memory.scope("big", |s| {
            let slot = s.alloc_uninit::<[u8; BIG]>();
            // SAFETY: `slot` is `BIG` writable bytes.
            unsafe { slot.as_mut_ptr().cast::<u8>().write_bytes(0xAB, BIG) };
            // SAFETY: every byte was written.
            let bytes = unsafe { slot.assume_init_mut() };
            assert_eq!(
                (bytes[0], bytes[BIG / 2], bytes[BIG - 1]),
                (0xAB, 0xAB, 0xAB)
            );
        });
    });
}

#[test]
fn alloc_uninit_slice_builds_8_mib_on_a_256_kib_stack() {
    on_small_stack(|| {
        let mut memory = LinearAllocator::with_capacity(BIG + 4096).unwrap();
        memory.scope("big", |s| {
            let room = s.alloc_uninit_slice::<u64>(BIG / 8);
            // SAFETY: `room` is `BIG` writable bytes.
            unsafe { room.as_mut_ptr().cast::<u8>().write_bytes(0, BIG) };
            // SAFETY: every element was written (all-zero bytes are a valid `u64`).
            assert_eq!(unsafe { room[BIG / 8 - 1].assume_init() }, 0);
        });
    });
}

#[cfg(not(debug_assertions))]
mod release_only {
    use super::*;

    /// A value that needs drop, so `new_object_with` takes the finalizer path.
    struct Big {
        bytes: [u8; BIG],
        name: String,
    }

    #[test]
    fn new_pod_with_builds_an_8_mib_array_on_a_256_kib_stack() {
        on_small_stack(|| {
            let mut memory = LinearAllocator::with_capacity(BIG + 4096).unwrap();
            memory.scope("big", |s| {
                let bytes = s.new_pod_with(|| [0x5Au8; BIG]);
                assert_eq!((bytes[0], bytes[BIG - 1]), (0x5A, 0x5A));
                assert_eq!(s.used(), BIG);
            });
        });
    }

    #[test]
    fn new_object_with_builds_an_8_mib_value_on_a_256_kib_stack() {
        on_small_stack(|| {
            let mut memory = LinearAllocator::with_capacity(BIG + 4096).unwrap();
            memory.scope("big", |s| {
                let big = s.new_object_with(|| Big {
                    bytes: [7; BIG],
                    name: String::from("big"),
                });
                assert_eq!((big.bytes[0], big.bytes[BIG - 1]), (7, 7));
                assert_eq!(big.name, "big");
                assert_eq!(s.finalizer_count(), 1);
            });
        });
    }

    #[test]
    fn pool_insert_with_builds_an_8_mib_object_on_a_256_kib_stack() {
        on_small_stack(|| {
            let mut memory = LinearAllocator::with_capacity(BIG + (1 << 16)).unwrap();
            memory.scope("big", |s| {
                let pool = s.new_pool::<[u8; BIG]>(1);
                let b = pool.insert_with(|| [3u8; BIG]).ok().unwrap();
                assert_eq!((b[0], b[BIG - 1]), (3, 3));
                assert!(pool.insert_with(|| [4u8; BIG]).is_err());
                drop(b);
                let b = pool.insert_with(|| [4u8; BIG]).ok().unwrap();
                assert_eq!(b[BIG / 2], 4);
            });
        });
    }
}
