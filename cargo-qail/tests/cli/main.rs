//! `cargo-qail` end to end: the binary against the real server.

use std::path::PathBuf;
use std::process::{Command, Output};

use qail_schema::Snapshot;

#[allow(
    dead_code,
    reason = "the scratch-database helpers shared with the other crates' tests; the CLI tests use a part"
)]
#[path = "../../../qail-schema/tests/it/util.rs"]
mod util;

mod deploy;
mod histories;
mod migrate;
mod verify;

fn qail(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args(args)
        .env("DATABASE_URL", util::url())
        .output()
        .expect("run cargo-qail")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qail-schema-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// A schema of its own in the main database, dropped and re-created.
async fn fresh_schema(name: &str, ddl: &str) -> qail_pg::Connection {
    let mut conn = util::connect(&util::url()).await;
    conn.batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
        .await
        .expect("drop");
    conn.batch_execute(&format!(
        "CREATE SCHEMA {name}; SET search_path TO {name}; {ddl}"
    ))
    .await
    .expect("create schema");
    conn
}

#[tokio::test]
async fn pull_then_check_passes_and_fails_after_alter_table() {
    let schema = "qail_cli_check";
    let mut conn = fresh_schema(
        schema,
        "CREATE TABLE harbors (id serial PRIMARY KEY, name text NOT NULL, depth int);",
    )
    .await;
    let out = tmp("check.json");
    let path = out.to_str().expect("utf-8 path");
    let pull = qail(&["qail", "schema", "pull", "--schema", schema, "--out", path]);
    assert!(pull.status.success(), "{:?}", text(&pull));
    let first = std::fs::read_to_string(&out).expect("snapshot written");

    let pull = qail(&["schema", "pull", "--schema", schema, "--out", path]);
    assert!(pull.status.success());
    assert_eq!(
        std::fs::read_to_string(&out).expect("read"),
        first,
        "pulling twice differs"
    );

    let check = qail(&["qail", "schema", "check", "--snapshot", path]);
    assert_eq!(check.status.code(), Some(0), "{:?}", text(&check));
    assert!(text(&check).0.contains("matches the database"));

    conn.batch_execute(&format!(
        "ALTER TABLE {schema}.harbors ALTER COLUMN name TYPE varchar(40), DROP COLUMN depth"
    ))
    .await
    .expect("alter");
    let check = qail(&["qail", "schema", "check", "--snapshot", path]);
    let (stdout, _) = text(&check);
    assert_eq!(check.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("differs from the database (2 changes)"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "table {schema}.harbors: column name: type text → varchar"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("table {schema}.harbors: column depth removed")),
        "{stdout}"
    );
    assert!(stdout.contains("cargo qail schema pull"), "{stdout}");
    conn.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .expect("clean up");
}

#[test]
fn missing_database_url_says_what_to_do() {
    let o = Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args([
            "schema",
            "pull",
            "--out",
            tmp("none.json").to_str().expect("utf-8"),
        ])
        .env_remove("DATABASE_URL")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o)
            .1
            .contains("set DATABASE_URL or pass --database-url"),
        "{:?}",
        text(&o)
    );
}

#[test]
fn unreachable_server_is_reported() {
    let o = qail(&[
        "schema",
        "pull",
        "--database-url",
        "postgres://postgres@127.0.0.1:1/x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("cannot connect to the database"),
        "{:?}",
        text(&o)
    );
}

#[test]
fn from_sql_and_diff() {
    let dir = tmp("ddl");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("02-more.sql"), "ALTER TABLE t ADD COLUMN b text;").expect("write");
    std::fs::write(
        dir.join("01-init.sql"),
        "CREATE TABLE t (a int PRIMARY KEY);",
    )
    .expect("write");
    let (a, b) = (tmp("a.json"), tmp("b.json"));
    let o = qail(&[
        "qail",
        "schema",
        "from-sql",
        dir.to_str().expect("utf-8"),
        "--out",
        a.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let snap = Snapshot::load(&a).expect("load");
    assert_eq!(
        snap.relation(None, "t").expect("t").columns.len(),
        2,
        "files applied in name order"
    );

    let init = dir.join("01-init.sql");
    let o = qail(&[
        "schema",
        "from-sql",
        init.to_str().expect("utf-8"),
        "--out",
        b.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success());
    let o = qail(&[
        "schema",
        "diff",
        a.to_str().expect("utf-8"),
        b.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).0.contains("table public.t: column b removed"),
        "{:?}",
        text(&o)
    );
    let o = qail(&[
        "schema",
        "diff",
        a.to_str().expect("utf-8"),
        a.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn from_sql_reports_unparsable_statements_by_file_and_line() {
    let file = tmp("bad.sql");
    std::fs::write(
        &file,
        "CREATE TABLE ok (a int);\nCREATE TABLE bad (a int) WITH BROKEN (;\n",
    )
    .expect("write");
    let o = qail(&[
        "schema",
        "from-sql",
        file.to_str().expect("utf-8"),
        "--out",
        tmp("bad.json").to_str().expect("utf-8"),
    ]);
    assert!(o.status.success());
    let (_, stderr) = text(&o);
    assert!(stderr.contains("bad.sql:2: statement skipped"), "{stderr}");
}

#[test]
fn broken_snapshot_reports_line_and_column() {
    let file = tmp("broken.json");
    std::fs::write(
        &file,
        "{\n  \"format_version\": 1,\n  \"schemas\": [\"public\",]\n}\n",
    )
    .expect("write");
    let o = qail(&[
        "schema",
        "diff",
        file.to_str().expect("utf-8"),
        file.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let (_, stderr) = text(&o);
    assert!(stderr.contains("broken.json:3:"), "{stderr}");
}

#[test]
fn every_command_has_help() {
    for args in [
        &["--help"][..],
        &["qail", "schema", "--help"],
        &["schema", "pull", "--help"],
        &["schema", "check", "--help"],
        &["schema", "diff", "--help"],
        &["schema", "from-sql", "--help"],
        &["qail", "verify", "--help"],
    ] {
        let o = qail(args);
        assert!(o.status.success(), "{args:?}");
        assert!(
            text(&o).0.contains("Usage: cargo qail"),
            "{args:?}: {:?}",
            text(&o)
        );
    }
}
