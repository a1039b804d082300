//! Compile-time behaviour of `qail!` and the derives (trybuild). The snapshot is the
//! workspace's `qail.schema.json`, found by walking up from the generated test crate.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*/*.rs");
}
