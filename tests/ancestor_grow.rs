//! No allocation is grown, shrunk or freed in place by a scope other than the one that
//! made it, on the surfaces where the borrow checker cannot see the nesting: a
//! collection of an outer scratch scope, still the newest block of its scope, is pushed
//! to while a nested scratch scope (opened by a called function, through the thread's
//! scratch, not through the outer handle) holds data above it. bump-scope's advisory
//! GHSA-xhx6-q96x-pf9c was this shape: the ancestor's block grew in place over the
//! child's memory. Here the outer scope is suspended while the child is open, so the
//! push cannot grow in place; it is refused with a panic that names the rule, and the
//! child's data stays intact. (On `ScopeStack` the same program does not compile:
//! `rules.rs`, rule 11.)
#![cfg(feature = "std")]

use std::panic::{catch_unwind, AssertUnwindSafe};

use scope_stack::scratch::scratch;

#[test]
fn an_outer_scratch_collection_cannot_grow_over_a_nested_scratch_scope() {
    scratch(|outer| {
        let mut v: allocator_api2::vec::Vec<u64, _> =
            allocator_api2::vec::Vec::with_capacity_in(4, &**outer);
        v.extend([1, 2, 3, 4]); // full: the next push must grow, and it is the newest block
        scratch(|inner| {
            let mine: &mut [u64] = inner.alloc_slice_fill_copy(64, 7);
            let pushed = catch_unwind(AssertUnwindSafe(|| v.push(5)));
            let text = pushed
                .err()
                .and_then(|p| p.downcast::<String>().ok())
                .expect("the push is refused with a message");
            assert!(text.contains("innermost"), "{text}");
            assert!(mine.iter().all(|&x| x == 7), "the child's data is intact");
        });
        // The child is gone: the outer collection grows again, in place.
        v.push(5);
        assert_eq!(v, [1, 2, 3, 4, 5]);
    });
}
