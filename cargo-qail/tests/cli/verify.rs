//! `cargo qail verify` on a small workspace (sources with `qail!` calls and the snapshot
//! pulled from a scratch database): a clean start exits 0; each kind of drift made in the
//! database afterwards exits 1 and is named with its file:line and the difference.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{text, util};

const SCHEMA: &str = "
    CREATE EXTENSION IF NOT EXISTS citext;
    CREATE TABLE users (id int8 PRIMARY KEY, email text NOT NULL, nick text, age int4, token text);
    CREATE TABLE orders (id int8 PRIMARY KEY, user_id int8 NOT NULL REFERENCES users, name text NOT NULL);
    CREATE FUNCTION greet(text) RETURNS text LANGUAGE sql AS $$ SELECT 'hi ' || $1 $$;";

const USERS: &str = r#"use qail::qail;

pub async fn profile(pool: &qail::Pool, id: i64) {
    let user = qail!("SELECT id, email, nick FROM users WHERE id = {id}")
        .fetch_one(pool)
        .await;
}

pub async fn of_age(pool: &qail::Pool, age: i32) {
    let ids = qail!("SELECT id FROM users WHERE age = $1", age).fetch_all(pool).await;
}

pub async fn by_token(pool: &qail::Pool, token: &str) {
    let email = qail!(
        "SELECT email FROM users WHERE token = {token}"
    )
    .fetch_optional(pool)
    .await;
}
"#;

const ORDERS: &str = r#"pub async fn names(pool: &qail::Pool) {
    let names = qail::qail!("SELECT name FROM orders ORDER BY id").fetch_all(pool).await;
    // qail!("SELECT nothing FROM nowhere") in a comment is no statement.
}
"#;

const GREET: &str = r#"pub async fn greet(pool: &qail::Pool, name: &str) {
    let hi = qail::qail!("SELECT greet($1) AS greeting", name).fetch_one(pool).await;
}
"#;

const SEARCH: &str = r#"pub async fn search(pool: &qail::Pool, email: Option<&str>, min_age: Option<i32>) {
    let found = qail::qail!(
        "SELECT id, email FROM users WHERE true {? AND email = {email}} {? AND age > {min_age}}"
    )
    .fetch_all(pool)
    .await;
}
"#;

/// A workspace of its own (`[workspace]` in its Cargo.toml) with the sources above, and a
/// database `qail_verify_<name>` with [`SCHEMA`] whose snapshot it pulls; returns the
/// directory and the database's URL.
async fn workspace(name: &str) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("qail-verify-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("workspace dir");
    let write = |file: &str, content: &str| {
        std::fs::write(dir.join(file), content).expect("written");
    };
    write(
        "Cargo.toml",
        "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
    );
    write("src/users.rs", USERS);
    write("src/orders.rs", ORDERS);
    write("src/greet.rs", GREET);
    write("src/search.rs", SEARCH);
    let db = format!("qail_verify_{name}_{}", std::process::id());
    let mut conn = util::scratch_db(&db).await;
    conn.batch_execute(SCHEMA).await.expect("schema");
    conn.close().await;
    let url = util::url_for(&db);
    let pull = run(&dir, &url, &["qail", "schema", "pull"]);
    assert!(pull.status.success(), "{:?}", text(&pull));
    (dir, url)
}

fn run(dir: &Path, url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args(args)
        .current_dir(dir)
        .env("DATABASE_URL", url)
        .env_remove("QAIL_SCHEMA")
        .output()
        .expect("run cargo-qail")
}

/// Verifies the workspace after `change` is made to its database; the exit code and output.
async fn after(name: &str, change: &str) -> (Option<i32>, String) {
    let (dir, url) = workspace(name).await;
    if !change.is_empty() {
        let mut conn = util::connect(&url).await;
        conn.batch_execute(change).await.expect("change");
        conn.close().await;
    }
    let out = run(&dir, &url, &["qail", "verify"]);
    let (stdout, stderr) = text(&out);
    util::drop_db(&format!("qail_verify_{name}_{}", std::process::id())).await;
    let _ = std::fs::remove_dir_all(&dir);
    assert!(stderr.is_empty(), "{stderr}");
    (out.status.code(), stdout)
}

#[tokio::test]
async fn a_clean_start_exits_0() {
    let (code, out) = after("clean", "").await;
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out,
        "verify: the 6 statements of 4 files match the database (1 with optional clauses or \
         sort choices, checked in their fullest form)\n"
    );
}

#[tokio::test]
async fn a_dropped_column_is_named_with_file_and_line() {
    let (code, out) = after("dropped", "ALTER TABLE users DROP COLUMN nick").await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            "`SELECT id, email, nick FROM users WHERE id = $1`:\n  the server refuses it \
             (column \"nick\" does not exist): src/users.rs:4\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("verify: 1 of the 6 statements no longer match the database"),
        "{out}"
    );
}

#[tokio::test]
async fn a_changed_type_is_named_with_file_and_line() {
    let (code, out) = after(
        "retyped",
        "ALTER TABLE users ALTER COLUMN email TYPE citext",
    )
    .await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("column `email` of `users` is now citext, compiled as text: src/users.rs:4"),
        "{out}"
    );
    // The optional clause comparing `email` with a text parameter is in the fullest form.
    assert!(
        out.contains("parameter $1 is now citext, compiled as text: src/search.rs:2"),
        "{out}"
    );
    assert!(
        out.contains("verify: 3 of the 6 statements no longer match the database"),
        "{out}"
    );
}

#[tokio::test]
async fn a_new_not_null_is_named_with_file_and_line() {
    let (code, out) = after(
        "not_null",
        "ALTER TABLE users ALTER COLUMN nick SET NOT NULL",
    )
    .await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            "column `nick` of `users` is now NOT NULL, compiled as nullable: src/users.rs:4"
        ),
        "{out}"
    );
    let (code, out) = after(
        "nullable",
        "ALTER TABLE orders ALTER COLUMN name DROP NOT NULL",
    )
    .await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            "column `name` of `orders` is now nullable, compiled as NOT NULL: src/orders.rs:2"
        ),
        "{out}"
    );
}

#[tokio::test]
async fn a_missing_table_is_named_with_file_and_line() {
    let (code, out) = after("no_table", "DROP TABLE orders").await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("the server refuses it (relation \"orders\" does not exist): src/orders.rs:2"),
        "{out}"
    );
    assert!(!out.contains("src/users.rs"), "{out}");
}

#[tokio::test]
async fn a_missing_function_is_named_with_file_and_line() {
    let (code, out) = after("no_function", "DROP FUNCTION greet(text)").await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("the server refuses it (function greet(text) does not exist): src/greet.rs:2"),
        "{out}"
    );
}

#[tokio::test]
async fn a_changed_parameter_type_is_named_with_file_and_line() {
    // Parsed with the compiled int4 the statement still runs; the schema now says int8.
    let (code, out) = after("param_int8", "ALTER TABLE users ALTER COLUMN age TYPE int8").await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            "`SELECT id FROM users WHERE age = $1`:\n  parameter $1 is now int8, compiled as \
             int4: src/users.rs:10\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("parameter $2 is now int8, compiled as int4: src/search.rs:2"),
        "{out}"
    );
    // text to uuid: the compiled statement is refused too, and the line is the `qail!`'s
    // (the SQL is on the next one).
    let (code, out) = after(
        "param_uuid",
        "ALTER TABLE users ALTER COLUMN token TYPE uuid USING NULL",
    )
    .await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            "  parameter $1 is now uuid, compiled as text: src/users.rs:14\n  the server \
             refuses it (operator does not exist: uuid = text): src/users.rs:14\n"
        ),
        "{out}"
    );
}

#[tokio::test]
async fn json_output_lists_each_drifted_statement() {
    let (dir, url) = workspace("json").await;
    let mut conn = util::connect(&url).await;
    conn.batch_execute("DROP FUNCTION greet(text)")
        .await
        .expect("change");
    conn.close().await;
    let out = run(&dir, &url, &["qail", "verify", "--format", "json"]);
    util::drop_db(&format!("qail_verify_json_{}", std::process::id())).await;
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["statements"], 6);
    assert_eq!(
        doc["drifted"],
        serde_json::json!([{
            "file": "src/greet.rs",
            "line": 2,
            "sql": "SELECT greet($1) AS greeting",
            "differences": ["the server refuses it (function greet(text) does not exist)"],
        }])
    );
}

#[tokio::test]
async fn a_statement_that_does_not_build_is_named_and_not_checked() {
    let (dir, url) = workspace("unbuilt").await;
    std::fs::write(
        dir.join("src/typo.rs"),
        "fn f() {\n    let q = qail::qail!(\"SELECT nickname FROM users\");\n}\n",
    )
    .expect("written");
    let out = run(&dir, &url, &["qail", "verify"]);
    util::drop_db(&format!("qail_verify_unbuilt_{}", std::process::id())).await;
    let _ = std::fs::remove_dir_all(&dir);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("src/typo.rs:2: not checked, it does not build: column \"nickname\""),
        "{stdout}"
    );
    assert!(stdout.contains("; 1 not checked"), "{stdout}");
}

#[tokio::test]
async fn a_statement_that_cannot_be_sent_is_named_and_the_rest_checked() {
    let (dir, url) = workspace("unsendable").await;
    std::fs::write(
        dir.join("src/nul.rs"),
        "fn f() {\n    let q = qail::qail!(\"SELECT email FROM users WHERE nick = 'a\\0b'\");\n}\n",
    )
    .expect("written");
    let out = run(&dir, &url, &["qail", "verify"]);
    let json = run(&dir, &url, &["qail", "verify", "--format", "json"]);
    util::drop_db(&format!("qail_verify_unsendable_{}", std::process::id())).await;
    let _ = std::fs::remove_dir_all(&dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("src/nul.rs:2: not checked, it cannot be sent: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("the 6 statements of 5 files match the database"),
        "{stdout}"
    );
    assert!(stdout.contains("; 1 not checked"), "{stdout}");
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(doc["statements"], 6);
    assert_eq!(doc["skipped"][0]["file"], "src/nul.rs");
    assert_eq!(doc["skipped"][0]["cause"], "it cannot be sent");
}

#[test]
fn nothing_to_check_exits_0_without_connecting() {
    let dir = std::env::temp_dir().join(format!("qail-verify-nothing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("dir");
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"empty\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )
    .expect("written");
    std::fs::write(dir.join("src/lib.rs"), "pub fn f() {}\n").expect("written");
    // A server that cannot be reached: connecting would exit 3.
    let out = run(
        &dir,
        "postgres://postgres@127.0.0.1:1/x",
        &["qail", "verify"],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert_eq!(stdout, "verify: no statements to check\n");
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args(["qail", "verify"])
        .current_dir(&dir)
        .env_remove("DATABASE_URL")
        .output()
        .expect("run cargo-qail");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
}

#[tokio::test]
async fn an_unreachable_server_exits_3() {
    let (dir, url) = workspace("unreachable").await;
    let out = run(
        &dir,
        &url,
        &[
            "qail",
            "verify",
            "--database-url",
            "postgres://postgres@127.0.0.1:1/x",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
    assert!(
        stderr.starts_with("error: cannot connect to the database: "),
        "{stderr}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args(["qail", "verify"])
        .current_dir(&dir)
        .env_remove("DATABASE_URL")
        .output()
        .expect("run cargo-qail");
    util::drop_db(&format!("qail_verify_unreachable_{}", std::process::id())).await;
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out)
            .1
            .contains("set DATABASE_URL or pass --database-url"),
        "{:?}",
        text(&out)
    );
}
