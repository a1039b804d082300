//! `cargo qail migrate check --deployed <ref>` on a scripted history in a temporary git
//! repository: a drop and a rename read by the deployed version, a query of the workspace the
//! migrations break, a type change and an index on a table with rows, each at its file and
//! line; and a clean expand/contract pair that passes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::text;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {:?}", text(&out));
}

fn write(dir: &Path, file: &str, content: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
    std::fs::write(path, content).expect("written");
}

/// A repository with the project's Cargo.toml and first migration, committed and tagged
/// `deployed` with `sources`.
fn repo(name: &str, sources: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qail-deploy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("repo dir");
    git(&dir, &["init", "-q"]);
    write(
        &dir,
        "Cargo.toml",
        "[package]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[package.metadata.qail]\nmigrations = \"migrations\"\n",
    );
    write(
        &dir,
        "migrations/0001_init.sql",
        "CREATE TABLE users (\n    id bigserial PRIMARY KEY,\n    email text NOT NULL,\n    nickname text,\n    age int\n);\nCREATE TABLE orders (id bigserial PRIMARY KEY, user_id bigint NOT NULL, total int);\n",
    );
    for (file, content) in sources {
        write(&dir, file, content);
    }
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "deployed"]);
    git(&dir, &["tag", "deployed"]);
    dir
}

fn check(dir: &Path, format: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args([
            "qail",
            "migrate",
            "check",
            "--deployed",
            "deployed",
            "--format",
            format,
        ])
        .current_dir(dir)
        .env_remove("DATABASE_URL")
        .output()
        .expect("run cargo-qail")
}

const PROFILE: &str = "pub async fn nickname(pool: &Pool, id: i64) {\n    let row = qail!(\"SELECT nickname FROM users WHERE id = {id}\")\n        .fetch_one(pool)\n        .await;\n}\n";
const ACCOUNT: &str = "pub async fn email(pool: &Pool, id: i64) {\n    let row = qail!(\"SELECT email FROM users WHERE id = {id}\").fetch_one(pool).await;\n}\n";

#[test]
fn breaking_migrations_are_found_at_their_lines() {
    let dir = repo(
        "breaking",
        &[("src/profile.rs", PROFILE), ("src/account.rs", ACCOUNT)],
    );
    write(
        &dir,
        "migrations/0002_drop_nickname.sql",
        "ALTER TABLE users DROP COLUMN nickname;\n",
    );
    write(
        &dir,
        "migrations/0003_rename_email.sql",
        "-- the column's new name\nALTER TABLE users RENAME COLUMN email TO email_address;\n",
    );
    write(
        &dir,
        "migrations/0004_age_bigint.sql",
        "ALTER TABLE users\n    ALTER COLUMN age TYPE bigint;\n",
    );
    write(
        &dir,
        "migrations/0005_orders_index.sql",
        "CREATE INDEX orders_user_id_idx ON orders (user_id);\n",
    );
    // The new code reads the new names, but one query still reads the dropped column.
    std::fs::remove_file(dir.join("src/profile.rs")).expect("removed");
    write(
        &dir,
        "src/account.rs",
        "pub async fn email(pool: &Pool, id: i64) {\n    let row = qail!(\"SELECT email_address FROM users WHERE id = {id}\").fetch_one(pool).await;\n}\n",
    );
    write(
        &dir,
        "src/report.rs",
        "fn report() {\n\n    let q = qail!(\"SELECT id, nickname FROM users\");\n}\n",
    );

    let out = check(&dir, "text");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let starts = |prefix: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting {prefix}:\n{stdout}"))
            .to_owned()
    };
    // (b) the deployed version's reads of the dropped and the renamed column.
    let drop = starts("src/profile.rs:2:");
    assert!(
        drop.contains(
            "migration 0002_drop_nickname.sql changes table public.users: column nickname removed"
        ) && drop.contains("in the deployed version (deployed)")
            && drop.contains("split it into expand and contract"),
        "{drop}"
    );
    let rename = starts("src/account.rs:2:");
    assert!(
        rename.contains("migration 0003_rename_email.sql"),
        "{rename}"
    );
    // (a) the workspace's query that still reads the dropped column.
    let current = starts("src/report.rs:3:");
    assert!(
        current.contains("fails against the schema after the pending migrations"),
        "{current}"
    );
    assert!(
        stdout.contains("  |  SELECT id, nickname FROM users\n  |             ^^^^^^^^"),
        "{stdout}"
    );
    // (c) the type change and the index, at their lines.
    let retype = starts("migrations/0004_age_bigint.sql:2:");
    assert!(retype.contains("rewrites public.users"), "{retype}");
    let index = starts("migrations/0005_orders_index.sql:1:1:");
    assert!(
        index.contains("CREATE INDEX without CONCURRENTLY on public.orders"),
        "{index}"
    );
    assert!(stdout.contains("3 errors, 2 warnings"), "{stdout}");

    let out = check(&dir, "json");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let findings = json["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 5, "{json:#}");
    assert!(
        findings.iter().any(|f| f["rule"] == "rolling-deploy"
            && f["file"] == "src/profile.rs"
            && f["line"] == 2)
    );

    let out = check(&dir, "sarif");
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).expect("SARIF");
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 5);
    assert!(results.iter().any(|r| r["ruleId"] == "lock-hazard"
        && r["level"] == "warning"
        && r["locations"][0]["physicalLocation"]["region"]["startLine"] == 1));
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

#[test]
fn a_clean_expand_and_contract_pair_passes() {
    let dir = repo("expand", &[("src/account.rs", ACCOUNT)]);
    // Expand: the new column next to the old one, filled; the deployed code reads the old one.
    write(
        &dir,
        "migrations/0002_add_email_address.sql",
        "ALTER TABLE users ADD COLUMN email_address text;\nUPDATE users SET email_address = email;\n",
    );
    write(
        &dir,
        "src/account.rs",
        "pub async fn email(pool: &Pool, id: i64) {\n    let row = qail!(\"SELECT coalesce(email_address, email) AS email FROM users WHERE id = {id}\").fetch_one(pool).await;\n}\n",
    );
    let out = check(&dir, "text");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("0 errors, 0 warnings"), "{stdout}");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "expand"]);
    git(&dir, &["tag", "-f", "deployed"]);

    // Contract, once the code that reads only the new column is deployed.
    write(
        &dir,
        "src/account.rs",
        "pub async fn email(pool: &Pool, id: i64) {\n    let row = qail!(\"SELECT email_address FROM users WHERE id = {id}\").fetch_one(pool).await;\n}\n",
    );
    git(&dir, &["commit", "-qam", "read the new column"]);
    git(&dir, &["tag", "-f", "deployed"]);
    write(
        &dir,
        "migrations/0003_drop_email.sql",
        "ALTER TABLE users DROP COLUMN email;\n",
    );
    let out = check(&dir, "text");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

/// With a database, the pending migrations are those its history lacks.
#[tokio::test]
async fn with_a_database_pending_means_not_in_its_history() {
    let name = format!("qail_cli_deploy_{}", std::process::id());
    drop(super::util::scratch_db(&name).await);
    let url = super::util::url_for(&name);
    let dir = repo("database", &[("src/profile.rs", PROFILE)]);
    let qail = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
            .args(args)
            .current_dir(&dir)
            .env("DATABASE_URL", &url)
            .output()
            .expect("run cargo-qail")
    };
    let out = qail(&["qail", "migrate", "run"]);
    assert!(out.status.success(), "{:?}", text(&out));
    write(
        &dir,
        "migrations/0002_drop_nickname.sql",
        "ALTER TABLE users DROP COLUMN nickname;\n",
    );
    let out = qail(&["qail", "migrate", "check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("src/profile.rs:2:29: this query fails against the schema after the pending migrations (migration 0002_drop_nickname.sql")
            && stdout.contains("migrate check (not in the database's history): 1 error, 0 warnings"),
        "{stdout}"
    );
    // `migrate run` rebuilt the configured snapshot too.
    let snapshot = std::fs::read_to_string(dir.join("qail.schema.json")).expect("the snapshot");
    assert!(snapshot.contains("\"nickname\""), "{snapshot}");
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}
