//! `cargo qail verify`: the workspace's `qail!` statements against a live server, without
//! building the application.
//!
//! Every `qail!` of the workspace's Rust sources is found by the language server's reading of
//! them ([`crate::lsp::statements`]) and analyzed against its crate's snapshot as the macro
//! does (a query with optional clauses or sort choices in its fullest form); then the server
//! describes them all in one pipelined round trip and qail-pg compares each with what it
//! compiles to ([`qail_pg::Connection::drifts`], the rule `Pool::verify` follows), naming each
//! difference with the statement's `file:line`, in the words `Pool::verify` uses.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use qail_analyzer::wire;
use qail_pg::template::{Drift, Expectation, ExpectedResult, NotNull, report};
use qail_schema::Snapshot;
use serde_json::json;

/// Options of `cargo qail verify`.
#[derive(Debug, Clone)]
pub struct Options {
    /// The workspace's directory: sources are read below it, and named relative to it.
    pub root: PathBuf,
    /// The snapshot for every source; else `QAIL_SCHEMA`, else the nearest
    /// `qail.schema.json` from each source's crate, as the macro finds it.
    pub snapshot: Option<PathBuf>,
    /// The server.
    pub database_url: String,
    /// Output format.
    pub format: Format,
}

/// How the result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For a terminal and CI logs: each drifted statement and its differences, a summary.
    Text,
    /// `{"statements", "drifted": [{"file", "line", "sql", "differences"}], "skipped"}`.
    Json,
}

/// A statement as the macro compiles it.
#[derive(Debug, Clone)]
pub struct Statement {
    /// The file, relative to the workspace's directory, `/`-separated (as `file!()` says).
    pub file: String,
    /// The line of its `qail!`.
    pub line: usize,
    /// `file:line`.
    pub source: String,
    /// The SQL sent, with `$n` placeholders.
    pub sql: String,
    /// Whether it has optional clauses or sort choices (checked in its fullest form).
    pub dynamic: bool,
    /// Parameter type OIDs.
    pub params: Vec<u32>,
    /// Result columns.
    pub columns: Vec<wire::WireColumn>,
}

impl Statement {
    /// What qail-pg compares with the server.
    fn expectation(&self) -> Expectation<'_> {
        Expectation {
            sql: &self.sql,
            param_oids: &self.params,
            columns: self
                .columns
                .iter()
                .map(|c| ExpectedResult {
                    name: &c.name,
                    type_oid: c.type_oid,
                    type_name: &c.type_name,
                    not_null: match c.not_null {
                        Some(true) => NotNull::Yes,
                        Some(false) => NotNull::No,
                        None => NotNull::Unknown,
                    },
                })
                .collect(),
            source: &self.source,
        }
    }
}

/// A `qail!` that was not checked, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// The file, as in [`Statement::file`].
    pub file: String,
    /// The line of its `qail!`.
    pub line: usize,
    /// What kind of reason.
    pub cause: Cause,
    /// Why.
    pub reason: String,
}

/// Why a `qail!` was not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// It does not analyze against its snapshot (so it does not build either).
    DoesNotBuild,
    /// It analyzes, but its SQL cannot be sent to a server (a NUL byte in it, too many
    /// parameters): the driver refuses it before sending, so it fails where it runs.
    CannotBeSent,
}

impl Cause {
    /// The words of the report: `not checked, <words>: <reason>`.
    pub fn words(self) -> &'static str {
        match self {
            Cause::DoesNotBuild => "it does not build",
            Cause::CannotBeSent => "it cannot be sent",
        }
    }
}

/// The workspace's statements.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The statements to check.
    pub statements: Vec<Statement>,
    /// The `qail!` invocations that do not analyze.
    pub skipped: Vec<Skipped>,
    /// The number of files read.
    pub files: usize,
}

/// Why `cargo qail verify` could not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The sources or a snapshot cannot be read (exit 2).
    Input(String),
    /// The server cannot be reached (exit 3).
    Unreachable(String),
    /// The server was reached but the check did not finish (exit 2).
    Server(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Input(m) | Failure::Unreachable(m) | Failure::Server(m) => f.write_str(m),
        }
    }
}

/// Finds and analyzes every `qail!` statement below `root`.
///
/// # Errors
///
/// A directory cannot be read, or the snapshot named by `snapshot` or `QAIL_SCHEMA` cannot
/// be loaded.
pub fn find(root: &Path, snapshot: Option<&Path>) -> Result<Found, Failure> {
    let mut found = Found::default();
    let mut snapshots = Snapshots::default();
    let forced = snapshot
        .map(|p| snapshots.load(p))
        .transpose()
        .map_err(Failure::Input)?;
    let env = std::env::var_os(qail_schema::snapshot::ENV_VAR);
    for (path, text) in crate::deploy::workspace_sources(root).map_err(Failure::Input)? {
        found.files += 1;
        let file = relative(root, &path);
        let snapshot = match &forced {
            Some(s) => Arc::clone(s),
            None => {
                let start = crate_dir(&path, root);
                let located = qail_schema::snapshot::discover(env.as_deref(), &start)
                    .map_err(|e| e.to_string())
                    .and_then(|p| snapshots.load(&p));
                match located {
                    Ok(s) => s,
                    Err(reason) => {
                        // Note: a file without a snapshot does not build; a stray `qail!` in
                        // a file of no crate is named rather than failing the whole check.
                        for s in crate::lsp::statements(&text, &Snapshot::default()) {
                            found.skipped.push(Skipped {
                                file: file.clone(),
                                line: s.line,
                                cause: Cause::DoesNotBuild,
                                reason: reason.clone(),
                            });
                        }
                        continue;
                    }
                }
            }
        };
        for s in crate::lsp::statements(&text, &snapshot) {
            match s.analyzed {
                Ok((scanned, analysis)) => {
                    let statement = Statement {
                        source: format!("{file}:{}", s.line),
                        file: file.clone(),
                        line: s.line,
                        dynamic: scanned.is_dynamic(),
                        params: wire::param_oids(&analysis),
                        columns: wire::columns(&analysis, &snapshot),
                        sql: scanned.sql,
                    };
                    match unsendable(&statement) {
                        None => found.statements.push(statement),
                        Some(reason) => found.skipped.push(Skipped {
                            file: file.clone(),
                            line: s.line,
                            cause: Cause::CannotBeSent,
                            reason,
                        }),
                    }
                }
                Err(reason) => found.skipped.push(Skipped {
                    file: file.clone(),
                    line: s.line,
                    cause: Cause::DoesNotBuild,
                    reason,
                }),
            }
        }
    }
    Ok(found)
}

/// Why the driver would refuse to send `statement` (the Parse message the check sends does
/// not encode), or `None`: such a statement is reported rather than failing the whole check.
fn unsendable(statement: &Statement) -> Option<String> {
    qail_pg::proto::message::Parse {
        name: "",
        query: &statement.sql,
        param_types: &statement.params,
    }
    .encode(&mut Vec::new())
    .err()
    .map(|e| e.to_string())
}

/// Snapshots loaded once each.
#[derive(Default)]
struct Snapshots(HashMap<PathBuf, Arc<Snapshot>>);

impl Snapshots {
    fn load(&mut self, path: &Path) -> Result<Arc<Snapshot>, String> {
        let key = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        if let Some(s) = self.0.get(&key) {
            return Ok(Arc::clone(s));
        }
        let snapshot = Arc::new(Snapshot::load(path).map_err(|e| e.to_string())?);
        self.0.insert(key, Arc::clone(&snapshot));
        Ok(snapshot)
    }
}

/// The directory of the crate `file` belongs to (the nearest Cargo.toml above it, not above
/// `root`), where the macro starts looking for the snapshot.
fn crate_dir(file: &Path, root: &Path) -> PathBuf {
    file.ancestors()
        .skip(1)
        .take_while(|d| d.starts_with(root))
        .find(|d| d.join("Cargo.toml").is_file())
        .unwrap_or(root)
        .to_owned()
}

/// `path` relative to `root`, `/`-separated.
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The workspace's directory for `start`: the nearest directory above it whose Cargo.toml
/// has a `[workspace]` table, else the nearest one with a Cargo.toml (paths in `file!()`
/// are relative to it), else `start`.
pub fn workspace_root(start: &Path) -> PathBuf {
    let manifests: Vec<&Path> = start
        .ancestors()
        .filter(|d| d.join("Cargo.toml").is_file())
        .collect();
    let workspace = manifests.iter().find(|d| {
        std::fs::read_to_string(d.join("Cargo.toml"))
            .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
    });
    workspace
        .or(manifests.first())
        .map_or_else(|| start.to_owned(), |d| d.to_path_buf())
}

/// Describes `statements` on the server at `url` and compares them; with no statements,
/// connects to nothing.
///
/// # Errors
///
/// The server cannot be reached ([`Failure::Unreachable`]) or the connection fails while
/// checking ([`Failure::Server`]).
pub fn check(statements: &[Statement], url: &str) -> Result<Vec<Drift>, Failure> {
    if statements.is_empty() {
        return Ok(Vec::new());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Server(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let mut conn = qail_pg::Connection::connect(url)
            .await
            .map_err(|e| Failure::Unreachable(format!("cannot connect to the database: {e}")))?;
        let expected: Vec<Expectation<'_>> =
            statements.iter().map(Statement::expectation).collect();
        let drifts = conn
            .drifts(&expected)
            .await
            .map_err(|e| Failure::Server(format!("the check did not finish: {e}; run it again")))?;
        conn.close().await;
        Ok(drifts)
    })
}

/// The result in `format`.
pub fn render(found: &Found, drifts: &[Drift], format: Format) -> String {
    match format {
        Format::Text => text(found, drifts),
        Format::Json => {
            let drifted: Vec<_> = drifts
                .iter()
                .filter_map(|d| {
                    let s = found.statements.get(d.index)?;
                    Some(json!({
                        "file": s.file,
                        "line": s.line,
                        "sql": s.sql,
                        "differences": d.differences,
                    }))
                })
                .collect();
            let skipped: Vec<_> = found
                .skipped
                .iter()
                .map(|s| {
                    json!({
                        "file": s.file,
                        "line": s.line,
                        "cause": s.cause.words(),
                        "reason": s.reason,
                    })
                })
                .collect();
            let doc = json!({
                "statements": found.statements.len(),
                "drifted": drifted,
                "skipped": skipped,
            });
            format!("{doc:#}\n")
        }
    }
}

fn text(found: &Found, drifts: &[Drift]) -> String {
    let expected: Vec<Expectation<'_>> = found
        .statements
        .iter()
        .map(Statement::expectation)
        .collect();
    let mut out = report(&expected, drifts);
    for s in &found.skipped {
        out.push_str(&format!(
            "{}:{}: not checked, {}: {}\n",
            s.file,
            s.line,
            s.cause.words(),
            s.reason
        ));
    }
    let n = found.statements.len();
    let dynamic = found.statements.iter().filter(|s| s.dynamic).count();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut summary = if n == 0 {
        "verify: no statements to check".to_owned()
    } else if drifts.is_empty() {
        format!(
            "verify: the {n} statement{} of {} file{} match the database",
            plural(n),
            found.files,
            plural(found.files)
        )
    } else {
        format!(
            "verify: {} of the {n} statement{} no longer match the database",
            drifts.len(),
            plural(n)
        )
    };
    if dynamic > 0 {
        summary.push_str(&format!(
            " ({dynamic} with optional clauses or sort choices, checked in their fullest form)"
        ));
    }
    if !found.skipped.is_empty() {
        summary.push_str(&format!("; {} not checked", found.skipped.len()));
    }
    out.push_str(&summary);
    out.push('\n');
    if !drifts.is_empty() {
        out.push_str(
            "run the migrations the database lacks, or change the queries to the database's \
             schema\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_root_is_the_nearest_workspace() {
        let dir = std::env::temp_dir().join(format!("qail-verify-root-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("member/src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"member\"]\n",
        )
        .unwrap();
        std::fs::write(dir.join("member/Cargo.toml"), "[package]\nname = \"m\"\n").unwrap();
        assert_eq!(workspace_root(&dir.join("member/src")), dir);
        assert_eq!(
            crate_dir(&dir.join("member/src/lib.rs"), &dir),
            dir.join("member")
        );
        assert_eq!(
            relative(&dir, &dir.join("member/src/lib.rs")),
            "member/src/lib.rs"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
