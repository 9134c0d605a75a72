//! Compile errors of `#[derive(DeserializeIn)]`: each file in `tests/ui/` must fail to
//! build with the message (and the span) in its `.stderr` file. Regenerate them with
//! `TRYBUILD=overwrite cargo test -p scope-stack-derive --test ui` after a deliberate
//! change, and read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
