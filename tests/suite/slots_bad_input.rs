//! Bad inputs to `Slots`: each gets a clear error (the exact kind and the key words of
//! its message), and nothing is lost: what a failed load built is dropped exactly once,
//! the slot is free again, and the scope and the slots stay usable.

// `SlotError` keeps its names inline (no heap on the error path), so it is large.
#![allow(clippy::result_large_err)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use scope_stack::{slot_root, AllocErrorKind, LinearAllocator, SlotErrorKind};

slot_root!(struct Unit = for<'s> ());
slot_root!(struct Bytes = for<'s> &'s [u8]);
slot_root!(struct Big = for<'s> [u64; 1024]);

static DROPS: AtomicUsize = AtomicUsize::new(0);

/// Counts its drops in `DROPS`.
struct Counted;
impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_count_of_zero_is_an_invalid_capacity() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let used = game.allocator().used();
        let err = game.try_new_slots("levels", 0, 1024).unwrap_err();
        assert_eq!(err.kind(), AllocErrorKind::InvalidCapacity);
        assert!(err.to_string().contains("\"game\""), "{err}");
        assert_eq!(game.allocator().used(), used);
        assert_eq!(game.new_slots("levels", 1, 1024).count(), 1);
    });
}

#[test]
fn a_slot_size_of_zero_is_an_invalid_capacity() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let err = game.try_new_slots("levels", 3, 0).unwrap_err();
        assert_eq!(err.kind(), AllocErrorKind::InvalidCapacity);
        let panic = catch_unwind(AssertUnwindSafe(|| {
            game.new_slots("levels", 3, 0);
        }))
        .unwrap_err();
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains("invalid capacity"), "{message}");
    });
}

#[test]
fn sizes_that_overflow_are_a_capacity_overflow() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let used = game.allocator().used();
        for (count, each) in [
            (usize::MAX, 2),
            (2, usize::MAX),
            (2, usize::MAX - 10),
            (1 << 40, 1 << 40),
            (2, isize::MAX as usize),
        ] {
            let err = game.try_new_slots("levels", count, each).unwrap_err();
            assert_eq!(
                err.kind(),
                AllocErrorKind::CapacityOverflow,
                "{count} x {each}"
            );
        }
        assert_eq!(game.allocator().used(), used);
    });
}

#[test]
fn slots_larger_than_the_scope_are_out_of_memory() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let err = game.try_new_slots("levels", 4, 1 << 20).unwrap_err();
        assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
        assert!(err.to_string().contains("\"game\""), "{err}");
        assert_eq!(game.new_slots("levels", 2, 4096).count(), 2);
    });
}

#[test]
fn a_slot_too_small_for_its_root_is_an_alloc_error_and_the_slot_is_free() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 1024);
        let err = slots.load::<Big>("big", |_| [0; 1024]).unwrap_err();
        assert_eq!(err.kind(), SlotErrorKind::Alloc);
        assert_eq!(
            err.alloc_error().unwrap().kind(),
            AllocErrorKind::OutOfMemory
        );
        let text = err.to_string();
        assert!(
            text.contains("\"levels\" (1024 bytes) is too small for \"big\""),
            "{text}"
        );
        assert_eq!(slots.loaded(), 0);
        let err = slots
            .load_concurrent::<Big>("big frame", |_| [0; 1024])
            .unwrap_err();
        assert_eq!(err.kind(), SlotErrorKind::Alloc);
        assert_eq!(slots.loaded(), 0);
        assert!(slots.load::<Unit>("small", |_| ()).is_ok());
    });
}

#[test]
fn a_slot_too_small_for_its_build_drops_what_was_built() {
    DROPS.store(0, Ordering::SeqCst);
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 1024);
        // The `try_` form: the build's error comes back.
        let err = slots
            .try_load::<Bytes>("try", |s| {
                s.new_object(Counted);
                Ok(&*s.try_alloc_slice_copy(&[0u8; 2048])?)
            })
            .unwrap_err();
        assert_eq!(err.kind(), SlotErrorKind::Alloc);
        assert_eq!(err.alloc_error().unwrap().scope_name(), "try");
        assert_eq!(DROPS.load(Ordering::SeqCst), 1);
        // The panicking form: the panic names the slot's scope.
        let panic = catch_unwind(AssertUnwindSafe(|| {
            let _ = slots.load::<Bytes>("panics", |s| {
                s.new_object(Counted);
                &*s.alloc_slice_copy(&[0u8; 2048])
            });
        }))
        .unwrap_err();
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains("\"panics\""), "{message}");
        assert_eq!(DROPS.load(Ordering::SeqCst), 2);
        assert_eq!(slots.loaded(), 0);
        assert!(slots.load::<Unit>("after", |_| ()).is_ok());
    });
}

#[test]
fn a_load_on_a_full_set_names_every_holder() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("frames", 3, 1024);
        let held: Vec<_> = ["frame 1", "frame 2", "frame 3"]
            .iter()
            .map(|name| slots.load::<Unit>(name, |_| ()).unwrap())
            .collect();
        for err in [
            slots.load::<Unit>("frame 4", |_| ()).unwrap_err(),
            slots
                .load_concurrent::<Unit>("frame 4", |_| ())
                .unwrap_err(),
            slots.try_load::<Unit>("frame 4", |_| Ok(())).unwrap_err(),
        ] {
            assert_eq!(err.kind(), SlotErrorKind::Full);
            assert_eq!(err.count(), 3);
            assert_eq!(
                err.holders().collect::<Vec<_>>(),
                ["frame 1", "frame 2", "frame 3"]
            );
            assert_eq!(
                err.to_string(),
                "no free slot for \"frame 4\": all 3 slots of \"frames\" are busy (slot 0 holds \
                 \"frame 1\", slot 1 holds \"frame 2\", slot 2 holds \"frame 3\")"
            );
        }
        drop(held);
        assert_eq!(slots.loaded(), 0);
    });
}

#[test]
fn a_wait_that_times_out_says_so_and_names_the_holders() {
    let mut memory = LinearAllocator::with_capacity(1 << 20).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("frames", 2, 16 << 10);
        let _a = slots.load::<Unit>("a", |_| ()).unwrap();
        let _b = slots.load_concurrent::<Unit>("b", |_| ()).unwrap();
        let started = Instant::now();
        let err = slots
            .load_wait_timeout::<Unit>("c", Duration::from_millis(30), |_| ())
            .unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(30));
        assert_eq!(err.kind(), SlotErrorKind::TimedOut);
        assert!(err.to_string().contains("after waiting"), "{err}");
        assert_eq!(err.holders().collect::<Vec<_>>(), ["a", "b"]);
        let err = slots
            .load_concurrent_wait_timeout::<Unit>("c", Duration::from_millis(5), |_| ())
            .unwrap_err();
        assert_eq!(err.kind(), SlotErrorKind::TimedOut);
        // A zero timeout does not wait: it is one load.
        let err = slots
            .load_wait_timeout::<Unit>("c", Duration::ZERO, |_| ())
            .unwrap_err();
        assert_eq!(err.kind(), SlotErrorKind::Full);
    });
}

#[test]
fn long_names_are_cut_at_a_character_boundary() {
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 1024);
        let name = "é".repeat(40); // 80 bytes
        let loaded = slots.load::<Unit>(&name, |_| ()).unwrap();
        assert_eq!(loaded.name(), "é".repeat(24));
        let err = slots.load::<Unit>(&name, |_| ()).unwrap_err();
        assert_eq!(err.holders().next().unwrap(), "é".repeat(24));
    });
}

/// The longest prefix of `name` the table keeps: at most 48 bytes, cut at a character
/// boundary.
fn kept(name: &str) -> &str {
    let mut len = name.len().min(48);
    while !name.is_char_boundary(len) {
        len -= 1;
    }
    &name[..len]
}

#[test]
fn names_of_every_length_come_back_whole_from_the_slot_its_errors_and_reports() {
    // One-, two-, three- and four-byte characters, so every length of the last word
    // (1 to 8 bytes) and every cut point occur; lengths go up and then down, so a
    // shorter name follows a longer one on the same slot (under Miri the way down
    // takes every fifth length).
    let alphabet = ['a', 'é', '€', '𝄞', 'b'];
    let down = if cfg!(miri) { 5 } else { 1 };
    let mut memory = LinearAllocator::with_capacity(1 << 16).unwrap();
    memory.scope("game", |game| {
        let slots = game.new_slots("levels", 1, 1024);
        for chars in (0..=30).chain((0..=30).rev().step_by(down)) {
            for shift in 0..alphabet.len() {
                let name: String = (0..chars)
                    .map(|i| alphabet[(i + shift) % alphabet.len()])
                    .collect();
                let expected = kept(&name);
                let loaded = slots.load::<Unit>(&name, |_| ()).unwrap();
                assert_eq!(loaded.name(), expected);
                let err = slots.load::<Unit>("other", |_| ()).unwrap_err();
                assert_eq!(err.holders().collect::<Vec<_>>(), [expected]);
                let map = game.report();
                let holder = map.scopes[0].slots[0].slots[0].holder.clone();
                assert_eq!(
                    holder.as_deref(),
                    (!expected.is_empty()).then_some(expected)
                );
                drop(loaded);
                let map = game.report();
                assert_eq!(map.scopes[0].slots[0].slots[0].holder, None);
            }
        }
    });
}
