//! `cargo qail migrate`: the binary through a migration's life — add, status, run, an edited
//! file, repair, a reversible pair and revert, a dirty non-transactional file and resolve —
//! in a database of the test's own.

use std::path::Path;
use std::process::{Command, Output};

use super::{text, util};

fn migrate(db_url: &str, dir: &Path, args: &[&str]) -> Output {
    let source = dir.to_str().expect("a UTF-8 path");
    let mut all = vec!["qail", "migrate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--source", source]);
    Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args(&all)
        .env("DATABASE_URL", db_url)
        .output()
        .expect("run cargo-qail")
}

/// The one file of `dir` whose name ends with `suffix`.
fn file_ending(dir: &Path, suffix: &str) -> std::path::PathBuf {
    let found: Vec<_> = std::fs::read_dir(dir)
        .expect("the directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.to_str().is_some_and(|p| p.ends_with(suffix)))
        .collect();
    assert_eq!(found.len(), 1, "one file ending {suffix}: {found:?}");
    found.into_iter().next().expect("one file")
}

#[tokio::test]
async fn a_migration_s_life() {
    let name = format!("qail_cli_migrate_{}", std::process::id());
    let conn = util::scratch_db(&name).await;
    drop(conn);
    let url = util::url_for(&name);
    let dir = std::env::temp_dir().join(&name);
    let _ = std::fs::remove_dir_all(&dir);

    // add: a timestamped file in a new directory.
    let out = migrate(&url, &dir, &["add", "create harbors"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("created ") && stdout.contains("_create_harbors.sql"),
        "{stdout}"
    );
    let first = file_ending(&dir, "_create_harbors.sql");
    std::fs::write(
        &first,
        "CREATE TABLE harbors (id int PRIMARY KEY, name text);\n",
    )
    .expect("written");

    // status --exit-code: 1 while pending.
    let out = migrate(&url, &dir, &["status", "--exit-code"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("pending"), "{stdout}");

    let out = migrate(&url, &dir, &["run"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("applied ") && stdout.contains("create_harbors"),
        "{stdout}"
    );
    let out = migrate(&url, &dir, &["status", "--exit-code"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));

    // An edited applied file: status says so and exits 1; run refuses, naming the file.
    std::fs::write(
        &first,
        "CREATE TABLE harbors (id bigint PRIMARY KEY, name text);\n",
    )
    .expect("written");
    let out = migrate(&url, &dir, &["status", "--exit-code"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("edited"), "{stdout}");
    let out = migrate(&url, &dir, &["run"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let file_name = first.file_name().and_then(|n| n.to_str()).expect("a name");
    assert!(
        stderr.contains(file_name) && stderr.contains("repair"),
        "{stderr}"
    );
    let out = migrate(&url, &dir, &["repair"]);
    let (stdout, _) = text(&out);
    assert!(
        out.status.success() && stdout.contains("recorded the new checksum"),
        "{stdout}"
    );

    // A reversible pair, applied and reverted.
    let out = migrate(&url, &dir, &["add", "--reversible", "country"]);
    assert!(out.status.success(), "{:?}", text(&out));
    std::fs::write(
        file_ending(&dir, "_country.up.sql"),
        "ALTER TABLE harbors ADD COLUMN country text;\n",
    )
    .expect("written");
    std::fs::write(
        file_ending(&dir, "_country.down.sql"),
        "ALTER TABLE harbors DROP COLUMN country;\n",
    )
    .expect("written");
    let out = migrate(&url, &dir, &["run"]);
    assert!(out.status.success(), "{:?}", text(&out));
    let out = migrate(&url, &dir, &["revert"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("reverted ") && stdout.contains("country"),
        "{stdout}"
    );

    // A non-transactional file that fails: dirty, run blocked, resolved by hand.
    let out = migrate(&url, &dir, &["add", "index"]);
    assert!(out.status.success(), "{:?}", text(&out));
    let index = file_ending(&dir, "_index.sql");
    std::fs::write(
        &index,
        "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY harbors_depth ON harbors (depth);\n",
    )
    .expect("written");
    let out = migrate(&url, &dir, &["run"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("fix the database by hand"), "{stderr}");
    let out = migrate(&url, &dir, &["status", "--exit-code"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("dirty"), "{stdout}");
    let version = index
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('_').next())
        .expect("a version")
        .to_owned();
    let out = migrate(&url, &dir, &["resolve", &version, "--pending"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    // The file fixed (it stays unapplied, so editing it is fine), the run applies it.
    std::fs::write(
        &index,
        "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY harbors_name ON harbors (name);\n",
    )
    .expect("written");
    let out = migrate(&url, &dir, &["run"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("applied ") && stdout.contains("index"),
        "{stdout}"
    );
    let out = migrate(&url, &dir, &["status", "--exit-code"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));

    let _ = std::fs::remove_dir_all(&dir);
    util::drop_db(&name).await;
}
