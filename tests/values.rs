//! The values API (issue 11): room left in a scope, in-place construction, slices from
//! iterators, and owning boxes that drop before their scope ends.


use scope_stack::{AllocErrorKind, LinearAllocator};

// ----- room left in a scope -----

#[test]
fn a_scope_fills_to_exactly_remaining_then_fails_by_one_byte() {
    let mut memory = LinearAllocator::with_capacity(1000).unwrap();
    memory.scope("outer", |outer| {
        assert_eq!(outer.remaining(), 1000);
        assert_eq!(outer.budget(), None);
        outer.new_pod(7u64);
        assert_eq!(outer.remaining(), 992);
        outer.scope("inner", |inner| {
            assert_eq!(inner.remaining(), 992);
            inner.alloc_raw(inner.remaining(), 1);
            assert_eq!(inner.remaining(), 0);
            let err = inner.try_alloc_raw(1, 1).unwrap_err();
            assert_eq!(err.kind(), AllocErrorKind::OutOfMemory);
            assert_eq!(err.remaining(), 0);
        });
        assert_eq!(outer.remaining(), 992);
        // The same at the top level, with a value that is exactly the room left.
        let n = outer.remaining();
        assert!(outer.try_alloc_slice_copy(&vec![1u8; n + 1]).is_err());
        assert_eq!(outer.remaining(), n);
        outer.alloc_slice_copy(&vec![1u8; n]);
        assert_eq!(outer.remaining(), 0);
        assert!(outer.try_new_pod(0u8).is_err());
    });
}

#[test]
fn a_budget_binds_remaining_and_the_next_byte_fails() {
    let mut memory = LinearAllocator::with_capacity(4096).unwrap();
    memory.scope("systems", |systems| {
        systems.alloc_raw(10, 1);
        systems.scope_with_budget("audio", 100, |audio| {
            assert_eq!(audio.budget(), Some(100));
            assert_eq!(audio.remaining(), 100);
            audio.alloc_raw(30, 1);
            assert_eq!(audio.remaining(), 70);
            audio.scope("voice", |voice| {
                assert_eq!(voice.budget(), None);
                assert_eq!(voice.remaining(), 70, "the outer budget still applies");
                voice.alloc_raw(voice.remaining(), 1);
                let err = voice.try_alloc_raw(1, 1).unwrap_err();
                assert_eq!(err.kind(), AllocErrorKind::BudgetExceeded);
                assert_eq!(err.budget(), Some(100));
            });
            assert_eq!(audio.remaining(), 70);
            audio.alloc_raw(70, 1);
            assert_eq!(audio.remaining(), 0);
            assert_eq!(
                audio.try_alloc_raw(1, 1).unwrap_err().kind(),
                AllocErrorKind::BudgetExceeded
            );
        });
        // A budget larger than the block's room: the block binds.
        systems.scope_with_budget("big", 1 << 20, |big| {
            assert_eq!(big.budget(), Some(1 << 20));
            assert_eq!(big.remaining(), 4096 - 10);
            big.alloc_raw(big.remaining(), 1);
            assert_eq!(
                big.try_alloc_raw(1, 1).unwrap_err().kind(),
                AllocErrorKind::OutOfMemory
            );
        });
        assert_eq!(systems.remaining(), 4096 - 10);
    });
}
