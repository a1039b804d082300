//! The text and JSON reports of a small file of queries, compared with committed expected
//! output. Regenerate the expected files with
//! `QAIL_BLESS=1 cargo test -p qail-schema --test report` and review the diff.

use std::path::Path;

use crate::util::{analyze, crate_dir, stderr, stdout};

const SQL: &str = "tests/report/golden/ferry.sql";

/// Compares `actual` with the file `expected` (relative to the crate), or writes it when
/// `QAIL_BLESS` is set.
fn compare(actual: &str, expected: &str) {
    let path = crate_dir().join(expected);
    if std::env::var_os("QAIL_BLESS").is_some() {
        std::fs::write(&path, actual).expect("write the expected output");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; create it with QAIL_BLESS=1",
            Path::new(expected).display()
        )
    });
    assert!(
        actual == want,
        "{expected} differs (QAIL_BLESS=1 rewrites it; review the diff)\n--- actual ---\n{actual}"
    );
}

#[test]
fn text_report() {
    let out = analyze(&[SQL]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    compare(&stdout(&out), "tests/report/golden/ferry.txt");
}

#[test]
fn why_report() {
    let out = analyze(&["--why", "origin", SQL]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    compare(&stdout(&out), "tests/report/golden/ferry.why-origin.txt");
    let out = analyze(&["--why", "destination", SQL]);
    compare(
        &stdout(&out),
        "tests/report/golden/ferry.why-destination.txt",
    );
    let out = analyze(&["--why", "spent", SQL]);
    compare(&stdout(&out), "tests/report/golden/ferry.why-spent.txt");
    let out = analyze(&["--why", "nonesuch", SQL]);
    assert!(stderr(&out).contains("no statement has a result column named \"nonesuch\""));
}

#[test]
fn json_report() {
    let out = analyze(&["--format", "json", SQL]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    compare(&stdout(&out), "tests/report/golden/ferry.json");
}
