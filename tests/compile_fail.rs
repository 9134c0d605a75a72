//! Compile-time proofs of the soundness rules (see `scope_stack::rules`): each file in
//! `tests/compile_fail/` must be rejected with the recorded error, and each file in
//! `tests/compile_pass/` (the allowed twin of a rejected case) must build.
//!
//! Regenerate the expected errors after a compiler upgrade with
//! `TRYBUILD=overwrite cargo test --test compile_fail`, and read the diff.

#[cfg(not(miri))] // Miri cannot run the compiler.
#[test]
fn soundness_rules_are_enforced_at_compile_time() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
    t.pass("tests/compile_pass/*.rs");
}
