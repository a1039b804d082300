//! `cargo qail migrate check`: what the pending migrations break before they run.
//!
//! The pending migrations are those the database's history lacks (with a database) or those
//! newer than the deployed git revision's migrations directory (`--deployed`). The schemas
//! before and after them are built offline ([`crate::schema`]), and three things are reported:
//!
//! - every `qail!` query of the workspace (found by the language server's reading of Rust
//!   sources) that the schema after the migrations rejects;
//! - rolling-deploy safety: every query of the deployed version (its sources read with `git
//!   show`) that works before the migrations and fails after them, with the migration that
//!   breaks it — the old binary still serves while the migration runs;
//! - lock and rewrite hazards of the pending statements on tables that hold rows.
//!
//! Broken queries are errors (exit 1); hazards are warnings.

mod git;
mod hazards;
mod output;

use std::path::{Path, PathBuf};

use qail_migrate::Migration;
use qail_schema::Snapshot;
use qail_schema::diff::{self, DiffOptions};

use crate::config::Config;
pub use output::{Format, render};

/// Options of `cargo qail migrate check`.
#[derive(Debug, Clone)]
pub struct Options {
    /// The project: its migrations directory and snapshot.
    pub config: Config,
    /// The deployed git revision (commit, tag, branch).
    pub deployed: Option<String>,
    /// A database whose history says what is pending; wins over `deployed` for that.
    pub database_url: Option<String>,
    /// Output format.
    pub format: Format,
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A query of the workspace rejected after the migrations.
    Query,
    /// A query of the deployed version that works before the migrations and not after.
    Deployed,
    /// A lock or rewrite hazard of a pending statement.
    Hazard,
}

impl Kind {
    /// The rule's id in JSON and SARIF output.
    pub fn id(self) -> &'static str {
        match self {
            Kind::Query => "broken-query",
            Kind::Deployed => "rolling-deploy",
            Kind::Hazard => "lock-hazard",
        }
    }
}

/// One finding, at a file and line.
#[derive(Debug, Clone)]
pub struct Finding {
    /// What it is about.
    pub kind: Kind,
    /// Whether it fails the check.
    pub breaking: bool,
    /// The file, relative to the project's directory.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The message.
    pub message: String,
    /// The SQL line with a caret under the offending bytes, and the fix.
    pub snippet: String,
}

/// Runs the check; returns the findings (the caller prints them with [`Format`]).
///
/// # Errors
///
/// The migrations, the database's history or the deployed revision cannot be read.
pub fn check(options: &Options) -> Result<(Vec<Finding>, String), String> {
    let config = &options.config;
    let root = config
        .manifest
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let all = crate::schema::migrations(&config.migrations)?;
    let (pending, what) = pending(options, &root, &all)?;
    let applied: Vec<Migration> = all
        .iter()
        .filter(|m| !pending.contains(&m.version()))
        .cloned()
        .collect();
    let todo: Vec<&Migration> = all
        .iter()
        .filter(|m| pending.contains(&m.version()))
        .collect();
    let dir = &config.migrations;
    let build = |list: &[Migration]| crate::schema::build_from(dir, list, &root).0;
    let before = build(&applied);
    // The schema after each pending migration, to name the one that breaks a query.
    let mut steps: Vec<Snapshot> = Vec::new();
    let mut so_far = applied.clone();
    for m in &todo {
        so_far.push((*m).clone());
        steps.push(build(&so_far));
    }
    let after = steps.last().cloned().unwrap_or_else(|| before.clone());
    let rel = |p: &Path| {
        p.strip_prefix(&root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let mut findings = Vec::new();

    // (a) The workspace's queries.
    for (path, text) in workspace_sources(&root)? {
        for r in crate::lsp::rejected(&text, &after) {
            let cause = culprit(&todo, &before, &steps, &text, &r)
                .map(|c| format!(" ({c})"))
                .unwrap_or_default();
            findings.push(Finding {
                kind: Kind::Query,
                breaking: true,
                file: rel(&path),
                line: r.line,
                column: r.column,
                message: format!(
                    "this query fails against the schema after the pending migrations{cause}: {}",
                    r.diagnostic.message
                ),
                snippet: qail_analyzer::render(&r.sql, &r.diagnostic),
            });
        }
    }

    // (b) The deployed version's queries.
    if let Some(rev) = &options.deployed {
        let top = git::toplevel(&root)?;
        let prefix = relative(&top, &root);
        for (path, text) in git::sources_at(&top, rev, &prefix)? {
            let ok_before = crate::lsp::rejected(&text, &before);
            for r in crate::lsp::rejected(&text, &after) {
                let failed_before = ok_before.iter().any(|b| b.line == r.line && b.sql == r.sql);
                if failed_before {
                    continue;
                }
                let cause = culprit(&todo, &before, &steps, &text, &r)
                    .unwrap_or_else(|| "the pending migrations".to_owned());
                let file = Path::new(&path)
                    .strip_prefix(&prefix)
                    .map_or(path.clone(), |p| p.to_string_lossy().into_owned());
                findings.push(Finding {
                    kind: Kind::Deployed,
                    breaking: true,
                    file: file.clone(),
                    line: r.line,
                    column: r.column,
                    message: format!(
                        "{cause}, read by {file}:{} in the deployed version ({rev}): {}; the \
                         deployed binary still serves while the migration runs: split it into \
                         expand and contract (add the new, deploy code that uses it, then \
                         remove the old in a later migration)",
                        r.line, r.diagnostic.message
                    ),
                    snippet: qail_analyzer::render(&r.sql, &r.diagnostic),
                });
            }
        }
    }

    // (c) Hazards of the pending statements.
    for m in &todo {
        let sql = m.up().sql();
        let file = rel(&dir.join(m.up().file()));
        for piece in qail_schema::script::split(sql) {
            let stmt = &sql[piece.range.clone()];
            for h in hazards::find(stmt, &before) {
                let at = piece.range.start + h.range.start;
                let line = sql[..at].matches('\n').count() + 1;
                let column = at - sql[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
                let d = qail_analyzer::Diagnostic {
                    message: h.message.clone(),
                    range: h.range.clone(),
                    hint: Some(h.hint.clone()),
                };
                let snippet = qail_analyzer::render(stmt, &d);
                let snippet = snippet
                    .strip_prefix("error: ")
                    .map_or(snippet.clone(), |s| format!("warning: {s}"));
                findings.push(Finding {
                    kind: Kind::Hazard,
                    breaking: false,
                    file: file.clone(),
                    line,
                    column,
                    message: h.message,
                    snippet,
                });
            }
        }
    }
    findings.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    Ok((findings, what))
}

/// The versions of the pending migrations and how they were chosen.
fn pending(
    options: &Options,
    root: &Path,
    all: &[Migration],
) -> Result<(Vec<i64>, String), String> {
    let url = options
        .database_url
        .clone()
        .or_else(|| std::env::var("DATABASE_URL").ok());
    if let Some(url) = url {
        let migrator = qail_migrate::Migrator::new(all.to_vec()).map_err(|e| e.to_string())?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the async runtime: {e}"))?;
        let status = runtime.block_on(async {
            let mut conn = qail_pg::Connection::connect(&url)
                .await
                .map_err(|e| format!("cannot connect to the database: {e}"))?;
            migrator.status(&mut conn).await.map_err(|e| e.to_string())
        })?;
        let pending = status
            .with_state(qail_migrate::State::Pending)
            .map(|m| m.version)
            .collect();
        return Ok((pending, "not in the database's history".to_owned()));
    }
    let Some(rev) = &options.deployed else {
        return Err(
            "no way to tell which migrations are pending: set DATABASE_URL (the database's \
             history) or pass --deployed <git revision> (the deployed version's migrations)"
                .to_owned(),
        );
    };
    let top = git::toplevel(root)?;
    let dir = relative(&top, &options.config.migrations);
    let deployed: Vec<i64> = git::files_at(&top, rev, &dir)?
        .iter()
        .filter(|f| qail_migrate::is_migration_file(f))
        .filter_map(|f| {
            let digits: String = f.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect();
    let pending = all
        .iter()
        .map(Migration::version)
        .filter(|v| !deployed.contains(v))
        .collect();
    Ok((pending, format!("newer than {rev}")))
}

/// `path` relative to `top`, `/`-separated; empty when they are the same.
fn relative(top: &Path, path: &Path) -> String {
    let full = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let top = top.canonicalize().unwrap_or_else(|_| top.to_owned());
    full.strip_prefix(&top)
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_default()
}

/// The first pending migration after which the query of `r` fails, with what it changes
/// (`migration 0042_drop_nickname.sql drops …`); `None` when it failed before them all.
fn culprit(
    todo: &[&Migration],
    before: &Snapshot,
    steps: &[Snapshot],
    text: &str,
    r: &crate::lsp::Rejected,
) -> Option<String> {
    let fails = |snap: &Snapshot| {
        crate::lsp::rejected(text, snap)
            .iter()
            .any(|x| x.line == r.line && x.sql == r.sql)
    };
    if fails(before) {
        return None;
    }
    let k = steps.iter().position(fails)?;
    let previous = if k == 0 { before } else { &steps[k - 1] };
    let changes: Vec<String> = diff::diff(previous, &steps[k], &DiffOptions::default())
        .iter()
        .take(3)
        .map(ToString::to_string)
        .collect();
    let m = todo.get(k)?;
    Some(format!(
        "migration {} changes {}",
        m.up().file(),
        if changes.is_empty() {
            "the schema".to_owned()
        } else {
            changes.join("; ")
        }
    ))
}

/// The `.rs` files under `root` that mention `qail!` (not under `target/` or hidden
/// directories).
pub(crate) fn workspace_sources(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let mut entries: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        entries.sort();
        for path in entries {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    dirs.push(path);
                }
            } else if name.ends_with(".rs")
                && let Ok(text) = std::fs::read_to_string(&path)
                && text.contains("qail!")
            {
                out.push((path, text));
            }
        }
    }
    out.sort();
    Ok(out)
}
