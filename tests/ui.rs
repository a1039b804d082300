//! Compile-time behaviour of `qail!` and the derives (trybuild). The snapshot is the
//! workspace's `qail.schema.json`, found by walking up from the generated test crate.
//!
//! The cases under `tests/ui/missing-snapshot/` need a build without a snapshot: the test runs
//! itself again in a child process whose `QAIL_SCHEMA` names a file that does not exist.
//!
//! The cases under `tests/ui/after-migration/` are checked against the snapshot built offline
//! (no database) from `tests/ui/after-migration/migrations/`, as `cargo qail schema build`
//! builds it: a query the migrations break stops compiling.

use std::process::Command;

/// Set in the child process that builds the missing-snapshot cases.
const MISSING_SNAPSHOT_RUN: &str = "QAIL_UI_MISSING_SNAPSHOT";

/// Set in the child process that builds the after-migration cases.
const AFTER_MIGRATION_RUN: &str = "QAIL_UI_AFTER_MIGRATION";

/// The snapshot of `tests/ui/after-migration/migrations/`, built offline, written to a file.
fn snapshot_from_migrations() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ui/after-migration/migrations");
    let files: Vec<(String, String)> = qail_migrate::read(&dir)
        .expect("the migrations")
        .iter()
        .map(|m| (m.up().file().to_owned(), m.up().sql().to_owned()))
        .collect();
    let (snapshot, warnings) = qail_analyzer::import_ddl(&files);
    assert!(warnings.is_empty(), "{warnings:?}");
    let path =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("after-migration.schema.json");
    snapshot.save(&path).expect("snapshot written");
    path
}

#[test]
fn ui() {
    if std::env::var_os(MISSING_SNAPSHOT_RUN).is_some() {
        trybuild::TestCases::new().compile_fail("tests/ui/missing-snapshot/*.rs");
        return;
    }
    if std::env::var_os(AFTER_MIGRATION_RUN).is_some() {
        trybuild::TestCases::new().compile_fail("tests/ui/after-migration/*.rs");
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
    let exe = std::env::current_exe().expect("the test binary's path");
    let status = Command::new(exe)
        .args(["ui", "--exact", "--test-threads=1"])
        .env(AFTER_MIGRATION_RUN, "1")
        .env("QAIL_SCHEMA", snapshot_from_migrations())
        .status()
        .expect("the test binary runs again");
    assert!(
        status.success(),
        "the after-migration UI cases failed: see the output above"
    );
}
