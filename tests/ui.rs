//! Compile-time behaviour of `qail!` and the derives (trybuild). The snapshot is the
//! workspace's `qail.schema.json`, found by walking up from the generated test crate.
//!
//! The cases under `tests/ui/missing-snapshot/` need a build without a snapshot: the test runs
//! itself again in a child process whose `QAIL_SCHEMA` names a file that does not exist.

use std::process::Command;

/// Set in the child process that builds the missing-snapshot cases.
const MISSING_SNAPSHOT_RUN: &str = "QAIL_UI_MISSING_SNAPSHOT";

#[test]
fn ui() {
    if std::env::var_os(MISSING_SNAPSHOT_RUN).is_some() {
        trybuild::TestCases::new().compile_fail("tests/ui/missing-snapshot/*.rs");
        return;
    }
    {
        let t = trybuild::TestCases::new();
        t.pass("tests/ui/pass/*.rs");
        t.compile_fail("tests/ui/fail/*/*.rs");
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let status = Command::new(exe)
        .args(["ui", "--exact", "--test-threads=1"])
        .env(MISSING_SNAPSHOT_RUN, "1")
        .env("QAIL_SCHEMA", "/nonexistent/qail.schema.json")
        .status()
        .expect("the test binary runs again");
    assert!(
        status.success(),
        "the missing-snapshot UI cases failed: see the output above"
    );
}
