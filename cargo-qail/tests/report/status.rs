//! Exit statuses, standard input, snapshot discovery and usage errors.

use serde_json::Value;

use crate::util::{SNAPSHOT, analyze, crate_dir, qail, stderr, stdout, temp_dir};

#[test]
fn every_statement_checks_exit_0() {
    let out = qail(
        &["analyze", "--snapshot", SNAPSHOT, "--timings", "-"],
        "SELECT id FROM harbors;\nSELECT name FROM operators WHERE id = $1;",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("2 statements in "),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("split and analyze: "),
        "{}",
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(text.contains("statement 1 at <stdin>:1\n"), "{text}");
    assert!(
        text.contains("statement 2 at <stdin>:2\n  params:\n    $1 uuid\n"),
        "{text}"
    );
    assert!(text.ends_with("2 statements: 2 ok, 0 failed\n"), "{text}");
}

#[test]
fn a_rejected_statement_exits_1_and_the_others_are_still_reported() {
    let out = qail(
        &["analyze", "--snapshot", SNAPSHOT, "--format", "json", "-"],
        "SELECT id FROM harbors;\nSELECT FROM WHERE;\nSELECT nme FROM harbors;\nSELECT 1 AS one",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let oks: Vec<bool> = json["statements"]
        .as_array()
        .expect("statements")
        .iter()
        .map(|s| s["ok"] == true)
        .collect();
    assert_eq!(oks, [true, false, false, true]);
    let err = &json["statements"][2]["errors"][0];
    assert_eq!(
        (err["line"].as_u64(), err["column"].as_u64()),
        (Some(3), Some(8))
    );
    assert_eq!(json["statements"][3]["columns"][0]["type"], "integer");
}

#[test]
fn several_files_are_reported_in_order() {
    let dir = temp_dir("files");
    let (a, b) = (dir.join("a.sql"), dir.join("b.sql"));
    std::fs::write(&a, "SELECT 1 AS x").expect("write");
    std::fs::write(&b, "\n\nSELECT 'a' AS y; SELECT true AS z;").expect("write");
    let (a, b) = (a.to_str().expect("UTF-8"), b.to_str().expect("UTF-8"));
    let out = analyze(&["--format", "json", a, b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let seen: Vec<(String, u64, u64)> = json["statements"]
        .as_array()
        .expect("statements")
        .iter()
        .map(|s| {
            let file = s["file"].as_str().expect("file").to_owned();
            (
                file,
                s["index"].as_u64().expect("index"),
                s["line"].as_u64().expect("line"),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (a.to_owned(), 1, 1),
            (b.to_owned(), 1, 3),
            (b.to_owned(), 2, 3)
        ]
    );
}

#[test]
fn usage_errors_exit_2() {
    let unknown = analyze(&["--frobnicate", "x.sql"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    let missing = analyze(&["no/such/file.sql"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("cannot read no/such/file.sql"),
        "{}",
        stderr(&missing)
    );
    let bad_format = analyze(&["--format", "yaml", "-"]);
    assert_eq!(bad_format.status.code(), Some(2));
    let no_files = analyze(&[]);
    assert_eq!(no_files.status.code(), Some(2));
    let why_json = analyze(&["--format", "json", "--why", "id", "-"]);
    assert_eq!(why_json.status.code(), Some(2));
}

#[test]
fn bad_snapshots_exit_2() {
    let dir = temp_dir("snapshots");
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"format_version\": 1, \"relations\": [").expect("write");
    let out = qail(
        &[
            "analyze",
            "--snapshot",
            broken.to_str().expect("UTF-8"),
            "-",
        ],
        "SELECT 1",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("broken schema snapshot"),
        "{}",
        stderr(&out)
    );
    let missing = dir.join("missing.json");
    let out = qail(
        &[
            "analyze",
            "--snapshot",
            missing.to_str().expect("UTF-8"),
            "-",
        ],
        "SELECT 1",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot access schema snapshot"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn snapshot_found_through_env_or_the_directory_tree() {
    let sql = "SELECT name FROM harbors";
    let env = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args(["analyze", "tests/report/golden/ferry.sql"])
        .current_dir(crate_dir())
        .env("QAIL_SCHEMA", SNAPSHOT)
        .output()
        .expect("run");
    assert_eq!(env.status.code(), Some(1), "{}", stderr(&env));
    assert!(stdout(&env).contains("Departures at"));

    let dir = temp_dir("discovery");
    let nested = dir.join("src/queries");
    std::fs::create_dir_all(&nested).expect("dirs");
    std::fs::copy(crate_dir().join(SNAPSHOT), dir.join("qail.schema.json")).expect("copy");
    std::fs::write(nested.join("q.sql"), sql).expect("write");
    let found = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args(["qail", "analyze", "q.sql"])
        .current_dir(&nested)
        .env_remove("QAIL_SCHEMA")
        .output()
        .expect("run");
    assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
    assert!(stdout(&found).contains("name  text"), "{}", stdout(&found));

    let wrong = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args(["analyze", "q.sql"])
        .current_dir(&nested)
        .env("QAIL_SCHEMA", "nowhere.json")
        .output()
        .expect("run");
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        stderr(&wrong).contains("QAIL_SCHEMA is set to") && stderr(&wrong).contains("--snapshot"),
        "{}",
        stderr(&wrong)
    );
}
