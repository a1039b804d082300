//! The importer's fidelity on migration histories written in the manner of real projects
//! (tests/histories/, made by its generate.py): each history's snapshot built offline equals
//! what `schema pull` reads after the migrations run on the server. A difference that is not
//! fixed is listed here with its reason.

use std::path::{Path, PathBuf};
use std::process::Command;

use qail_schema::diff::{self, DiffOptions};

use super::{text, util};

fn history(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/histories")
        .join(name)
        .join("migrations")
}

/// Builds `name` offline and on the server; returns the differences and the import's warnings
/// (file name and line, message start).
fn compare(name: &str) -> (Vec<String>, Vec<String>) {
    let dir = history(name);
    let files = std::fs::read_dir(&dir).expect("the history").count();
    assert!(files >= 50, "{name} has {files} files");
    let (offline, warnings) =
        cargo_qail::schema::build(&dir, Path::new("qail.schema.json")).expect("offline build");
    let live = cargo_qail::schema::pull_after_migrations(&dir, &util::url()).expect("applied");
    let changes = diff::diff(&offline, &live, &DiffOptions::default())
        .iter()
        .map(ToString::to_string)
        .collect();
    let warnings = warnings
        .iter()
        .map(|w| {
            let file = Path::new(&w.file).file_name().expect("a file name");
            format!("{}:{}", file.to_string_lossy(), w.line)
        })
        .collect();
    (changes, warnings)
}

#[test]
fn shop_history_imports_as_the_server_applies_it() {
    let (changes, warnings) = compare("shop");
    assert_eq!(changes, Vec::<String>::new());
    assert_eq!(warnings, Vec::<String>::new());
}

#[test]
fn saas_history_imports_as_the_server_applies_it() {
    let (changes, warnings) = compare("saas");
    assert_eq!(changes, Vec::<String>::new());
    // A DO block with IF NOT EXISTS is reported, not imported: it adds a CHECK constraint,
    // which a snapshot does not hold, so no difference follows from it.
    assert_eq!(warnings, ["20230211120000_invites_fk_guard.up.sql:1"]);
}

#[test]
fn telemetry_history_imports_as_the_server_applies_it() {
    let (changes, warnings) = compare("telemetry");
    assert_eq!(changes, Vec::<String>::new());
    assert_eq!(warnings, Vec::<String>::new());
}

/// The binary: `schema build` writes the snapshot where Cargo.toml says, `schema check`
/// passes on it (offline and on the server) and fails, exit 1, once it is edited.
#[test]
fn schema_build_then_check_in_a_configured_project() {
    let project = std::env::temp_dir().join(format!("qail-histories-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(&project).expect("project dir");
    let manifest = format!(
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[package.metadata.qail]\nmigrations = \"{}\"\n",
        history("shop").display()
    );
    std::fs::write(project.join("Cargo.toml"), manifest).expect("Cargo.toml");
    let qail = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
            .args(args)
            .current_dir(&project)
            .env("DATABASE_URL", util::url())
            .output()
            .expect("run cargo-qail")
    };
    let out = qail(&["qail", "schema", "build"]);
    assert!(out.status.success(), "{:?}", text(&out));
    let snapshot = project.join("qail.schema.json");
    let written = std::fs::read_to_string(&snapshot).expect("written");
    assert!(written.contains("\"order_totals\""), "{written}");

    let out = qail(&["qail", "schema", "check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("matches the migrations applied to the server"),
        "{stdout}"
    );

    std::fs::write(&snapshot, written.replace("\"display_name\"", "\"name\"")).expect("edit");
    let out = qail(&["qail", "schema", "check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("differs from the snapshot the migrations in")
            && stdout.contains("table public.users: column display_name added"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&project).expect("cleaned up");
}
