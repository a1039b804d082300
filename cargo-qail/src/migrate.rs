//! `cargo qail migrate …`: qail-migrate's operations on a migrations directory and the
//! database at `DATABASE_URL`, with their output for a terminal.

use std::io::Write;
use std::path::{Path, PathBuf};

use qail_migrate::{Migrator, Resolution, Step, Version};

/// What `cargo qail migrate` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Create a new migration file (a `.up.sql`/`.down.sql` pair when `reversible`).
    Add {
        /// Its name.
        name: String,
        /// Whether to create a reversible pair.
        reversible: bool,
    },
    /// Apply the pending migrations, up to `target` when given.
    Run {
        /// The last version to apply.
        target: Option<Version>,
    },
    /// Revert the latest migration, or every one above `target`.
    Revert {
        /// The version to revert down to (it stays applied); 0 reverts all.
        target: Option<Version>,
    },
    /// Print each migration's state; with `exit_code`, exit 1 unless all are applied.
    Status {
        /// Whether pending, edited, running or dirty migrations make the exit status 1.
        exit_code: bool,
    },
    /// Record the new checksums of edited applied files.
    Repair,
    /// Record in qail's history the migrations sqlx applied (`_sqlx_migrations`).
    ImportSqlx,
    /// Record how a dirty migration was fixed by hand.
    Resolve {
        /// The dirty migration's version.
        version: Version,
        /// What its fix came to.
        resolution: Resolution,
    },
}

/// Options of `cargo qail migrate`.
#[derive(Debug, Clone)]
pub struct Options {
    /// The migrations directory.
    pub source: PathBuf,
    /// The database's connection string (URL or key=value); `None` reads `DATABASE_URL`.
    pub database_url: Option<String>,
    /// What to do.
    pub action: Action,
}

/// Runs `options`, printing to `out`; returns the exit status (0, or 1 from
/// `status --exit-code` when something needs doing) or the error message.
///
/// # Errors
///
/// A message saying what failed and what to do next.
pub fn run(options: &Options, out: &mut impl Write) -> Result<u8, String> {
    let dir = options.source.as_path();
    if let Action::Add { name, reversible } = &options.action {
        let files = qail_migrate::add(dir, name, *reversible).map_err(|e| e.to_string())?;
        for file in files {
            line(out, format_args!("created {}", file.display()))?;
        }
        return Ok(0);
    }
    let migrator = migrator(dir)?;
    let url = match &options.database_url {
        Some(url) => url.clone(),
        None => std::env::var("DATABASE_URL").map_err(|_| {
            "no database to migrate: set DATABASE_URL or pass --database-url".to_owned()
        })?,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let mut conn = qail_pg::Connection::connect(&url).await.map_err(|e| {
            format!(
                "cannot connect to the database: {e}; check that the server runs and that the \
                 URL's host, port, user, password and database are right"
            )
        })?;
        let conn = &mut conn;
        match &options.action {
            Action::Add { .. } => Ok(0),
            Action::Run { target } => {
                let steps = migrator
                    .run_on(conn, *target)
                    .await
                    .map_err(|e| e.to_string())?;
                steps_done(
                    out,
                    "applied",
                    &steps,
                    "nothing to apply: every migration is applied",
                )?;
                Ok(0)
            }
            Action::Revert { target } => {
                let steps = migrator
                    .revert(conn, *target)
                    .await
                    .map_err(|e| e.to_string())?;
                steps_done(out, "reverted", &steps, "nothing to revert")?;
                Ok(0)
            }
            Action::Status { exit_code } => {
                let status = migrator.status(conn).await.map_err(|e| e.to_string())?;
                if status.migrations.is_empty() {
                    line(out, format_args!("no migrations in {}", dir.display()))?;
                }
                write!(out, "{status}").map_err(|e| e.to_string())?;
                Ok(u8::from(*exit_code && !status.is_up_to_date()))
            }
            Action::Repair => {
                let repaired = migrator.repair(conn).await.map_err(|e| e.to_string())?;
                if repaired.is_empty() {
                    line(
                        out,
                        format_args!("nothing to repair: no applied file was edited"),
                    )?;
                }
                for version in repaired {
                    line(
                        out,
                        format_args!("recorded the new checksum of migration {version}"),
                    )?;
                }
                Ok(0)
            }
            Action::ImportSqlx => {
                let imported = migrator
                    .import_sqlx(conn)
                    .await
                    .map_err(|e| e.to_string())?;
                if imported.is_empty() {
                    line(
                        out,
                        format_args!(
                            "nothing to import: qail's history has every migration sqlx applied"
                        ),
                    )?;
                }
                for version in imported {
                    line(
                        out,
                        format_args!("imported migration {version} from _sqlx_migrations"),
                    )?;
                }
                Ok(0)
            }
            Action::Resolve {
                version,
                resolution,
            } => {
                migrator
                    .resolve(conn, *version, *resolution)
                    .await
                    .map_err(|e| e.to_string())?;
                let what = match resolution {
                    Resolution::Applied => "applied",
                    Resolution::Pending => "pending (the next run applies it)",
                };
                line(out, format_args!("recorded migration {version} as {what}"))?;
                Ok(0)
            }
        }
    })
}

fn migrator(dir: &Path) -> Result<Migrator, String> {
    if !dir.is_dir() {
        return Err(format!(
            "no migrations directory at {}; create the first migration with `cargo qail migrate \
             add <name>`, or pass --source",
            dir.display()
        ));
    }
    Migrator::from_dir(dir).map_err(|e| e.to_string())
}

fn steps_done(out: &mut impl Write, verb: &str, steps: &[Step], none: &str) -> Result<(), String> {
    if steps.is_empty() {
        return line(out, format_args!("{none}"));
    }
    for step in steps {
        line(
            out,
            format_args!(
                "{verb} {} {} ({} ms)",
                step.version,
                step.name,
                step.duration.as_millis()
            ),
        )?;
    }
    Ok(())
}

fn line(out: &mut impl Write, text: std::fmt::Arguments<'_>) -> Result<(), String> {
    writeln!(out, "{text}").map_err(|e| format!("cannot write the output: {e}"))
}
