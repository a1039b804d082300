//! `cargo qail`: schema snapshot commands.
//!
//! Installed with `cargo install --path qail-schema`, it runs as `cargo qail …` (cargo passes
//! `qail` as the first argument) or directly as `cargo-qail …`.
//!
//! Exit status: 0 on success (`lsp`: after the client's `exit`), 1 when `schema check`/`schema diff` find differences,
//! `migrate check` finds a breaking change, `verify` finds a drifted statement,
//! `analyze` rejects a statement or `migrate status --exit-code` finds a migration pending,
//! edited, running or dirty, 2 on errors, 3 when `verify` cannot reach the server.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cargo_qail::config::Config;
use cargo_qail::report;
use clap::{Args, Parser, Subcommand};
use qail_schema::Snapshot;
use qail_schema::diff::{self, DiffOptions};

/// Compile-time checked PostgreSQL: manage the schema snapshot (qail.schema.json).
#[derive(Parser)]
#[command(name = "cargo qail", version, bin_name = "cargo qail")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create, check and compare schema snapshots.
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// Analyze the SQL statements of files: parameter and column types, nullability and why.
    Analyze(AnalyzeArgs),
    /// Apply, revert and inspect the migrations of a migrations directory.
    #[command(subcommand)]
    Migrate(MigrateCommand),
    /// Check every `qail!` statement of the workspace against a live database, without
    /// building: each is analyzed against its snapshot as the macro does, then the server
    /// describes them all in one round trip; exit 1 on a drifted statement.
    #[command(after_long_help = VERIFY_HELP)]
    Verify(VerifyArgs),
    /// Run the language server on standard input and output, for SQL in `qail!` strings and
    /// .sql files (completion, hover, go to definition, diagnostics).
    Lsp {
        /// The schema snapshot [default: $QAIL_SCHEMA, else the nearest qail.schema.json
        /// from each file's directory].
        #[arg(long)]
        snapshot: Option<PathBuf>,
    },
}

const VERIFY_HELP: &str = "\
Every `qail!` below the workspace's directory (the nearest Cargo.toml with [workspace]
above the current directory) is found in the sources and analyzed against its crate's
qail.schema.json; a query with optional clauses or sort choices is checked in its fullest
form. The server parses and describes each statement, and its parameter types, result
column types and the NOT NULL-ness of the table columns it returns are compared with what
the statement compiles to, by the rule `Pool::verify` follows at start-up.

Exit status: 0 when every statement matches, 1 when one or more drifted (each is printed
with its file:line), 2 on other errors, 3 when the server cannot be reached.";

#[derive(Args)]
struct VerifyArgs {
    /// Connection URL or key=value string [default: $DATABASE_URL].
    #[arg(long)]
    database_url: Option<String>,
    /// The schema snapshot for every source [default: $QAIL_SCHEMA, else the nearest
    /// qail.schema.json from each source's crate].
    #[arg(long)]
    snapshot: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
    /// Print how long finding and analyzing the statements and checking them on the server
    /// took (to standard error).
    #[arg(long)]
    timings: bool,
}

/// `cargo qail verify`.
fn verify(args: VerifyArgs) -> Result<ExitCode, Failure> {
    use cargo_qail::verify::{self, Failure as Why, Format};
    let url = args
        .database_url
        .or_else(|| std::env::var("DATABASE_URL").ok());
    let root = verify::workspace_root(&std::env::current_dir()?);
    let format = match args.format {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
    };
    let started = std::time::Instant::now();
    let outcome = verify::find(&root, args.snapshot.as_deref()).and_then(|found| {
        let found_in = started.elapsed();
        // Note: with nothing to check, no server is needed (nor connected to).
        let drifts = match &url {
            _ if found.statements.is_empty() => Vec::new(),
            Some(url) => verify::check(&found.statements, url)?,
            None => {
                return Err(Why::Input(
                    "no database to check against: set DATABASE_URL or pass --database-url"
                        .to_owned(),
                ));
            }
        };
        if args.timings {
            eprintln!(
                "timings: {} statements found and analyzed in {:.1} ms, checked on the server \
                 in {:.1} ms",
                found.statements.len(),
                found_in.as_secs_f64() * 1e3,
                (started.elapsed() - found_in).as_secs_f64() * 1e3
            );
        }
        Ok((found, drifts))
    });
    match outcome {
        Ok((found, drifts)) => {
            print!("{}", verify::render(&found, &drifts, format));
            Ok(ExitCode::from(u8::from(!drifts.is_empty())))
        }
        Err(Why::Unreachable(message)) => {
            eprintln!("error: {message}");
            Ok(ExitCode::from(3))
        }
        Err(e) => Err(Failure(e.to_string())),
    }
}

#[derive(Subcommand)]
enum MigrateCommand {
    /// Create a new migration file: `<timestamp>_<name>.sql` (or the next sequence number
    /// when the directory uses them).
    Add {
        /// The migration's name (`create_users`).
        name: String,
        /// Create a `.up.sql` and `.down.sql` pair, so that `revert` can undo it.
        #[arg(long, short)]
        reversible: bool,
        #[command(flatten)]
        dir: SourceArg,
    },
    /// Apply the pending migrations, each in its own transaction.
    Run {
        /// The last version to apply [default: all].
        #[arg(long)]
        target: Option<i64>,
        #[command(flatten)]
        db: MigrateDb,
    },
    /// Revert the latest migration with its .down.sql, or every one above --target.
    Revert {
        /// Revert down to this version (it stays applied); 0 reverts all.
        #[arg(long)]
        target: Option<i64>,
        #[command(flatten)]
        db: MigrateDb,
    },
    /// Show each migration's state: pending, applied, edited, running, dirty, missing file.
    Status {
        /// Exit 1 when a migration is pending, edited, running or dirty (for CI).
        #[arg(long)]
        exit_code: bool,
        #[command(flatten)]
        db: MigrateDb,
    },
    /// Record the new checksum of each applied migration whose file was edited on purpose.
    Repair {
        #[command(flatten)]
        db: MigrateDb,
    },
    /// Record the migrations sqlx applied (its table _sqlx_migrations) in qail's history,
    /// once, when a project moves from sqlx; each file is checked against sqlx's checksum.
    ImportSqlx {
        #[command(flatten)]
        db: MigrateDb,
    },
    /// Before deploying: the workspace's `qail!` queries the pending migrations break, the
    /// deployed version's queries that fail while they run (rolling deploys), and lock and
    /// rewrite hazards; exit 1 on a broken query.
    Check {
        /// The deployed git revision: its queries must survive the migrations, and without a
        /// database its migrations directory says which ones are pending.
        #[arg(long, value_name = "GIT_REF")]
        deployed: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: CheckFormat,
        #[command(flatten)]
        db: MigrateDb,
    },
    /// Record how a dirty migration was fixed by hand.
    Resolve {
        /// The dirty migration's version.
        version: i64,
        /// Its changes are in place now: record it as applied.
        #[arg(long, conflicts_with = "pending", required_unless_present = "pending")]
        applied: bool,
        /// Its changes were undone: forget it, so that the next run applies it again.
        #[arg(long)]
        pending: bool,
        #[command(flatten)]
        db: MigrateDb,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum CheckFormat {
    Text,
    Json,
    Sarif,
}

/// `cargo qail migrate check`.
fn deploy_check(
    deployed: Option<String>,
    format: CheckFormat,
    db: MigrateDb,
) -> Result<ExitCode, Failure> {
    use cargo_qail::deploy::{self, Format};
    let (source, config) = db.dir.resolve()?;
    let config = match config {
        Some(c) if c.migrations == source => c,
        _ => Config {
            manifest: std::env::current_dir()?.join("Cargo.toml"),
            snapshot: PathBuf::from(qail_schema::snapshot::FILE_NAME),
            migrations: source,
        },
    };
    let format = match format {
        CheckFormat::Text => Format::Text,
        CheckFormat::Json => Format::Json,
        CheckFormat::Sarif => Format::Sarif,
    };
    let options = deploy::Options {
        config,
        deployed,
        database_url: db.database_url,
        format,
    };
    let (findings, pending) = deploy::check(&options)?;
    print!("{}", deploy::render(&findings, &pending, format));
    Ok(if findings.iter().any(|f| f.breaking) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Args)]
struct SourceArg {
    /// The migrations directory [default: metadata.qail.migrations of the nearest Cargo.toml
    /// that has it, else `migrations`].
    #[arg(long)]
    source: Option<PathBuf>,
}

impl SourceArg {
    /// The directory, and the configuration when the project derives its snapshot from it.
    fn resolve(self) -> Result<(PathBuf, Option<Config>), Failure> {
        let config = Config::find(Path::new("."))?;
        let dir = match (self.source, &config) {
            (Some(dir), _) => dir,
            (None, Some(c)) => c.migrations.clone(),
            (None, None) => PathBuf::from("migrations"),
        };
        Ok((dir, config))
    }
}

#[derive(Args)]
struct MigrateDb {
    #[command(flatten)]
    dir: SourceArg,
    /// Connection URL or key=value string [default: $DATABASE_URL]; behind pgbouncer in
    /// transaction mode add `pooler=transaction`.
    #[arg(long)]
    database_url: Option<String>,
}

impl MigrateCommand {
    fn options(self) -> Result<(cargo_qail::migrate::Options, Option<Config>), Failure> {
        use cargo_qail::migrate::{Action, Options};
        let (db, action) = match self {
            MigrateCommand::Add {
                name,
                reversible,
                dir,
            } => {
                let action = Action::Add { name, reversible };
                let (source, config) = dir.resolve()?;
                let options = Options {
                    source,
                    database_url: None,
                    action,
                };
                return Ok((options, config));
            }
            MigrateCommand::Run { target, db } => (db, Action::Run { target }),
            MigrateCommand::Revert { target, db } => (db, Action::Revert { target }),
            MigrateCommand::Status { exit_code, db } => (db, Action::Status { exit_code }),
            MigrateCommand::Repair { db } => (db, Action::Repair),
            MigrateCommand::ImportSqlx { db } => (db, Action::ImportSqlx),
            MigrateCommand::Check { .. } => {
                unreachable!("`migrate check` is run by deploy_check before options are made")
            }
            MigrateCommand::Resolve {
                version,
                applied,
                db,
                ..
            } => {
                let resolution = if applied {
                    qail_migrate::Resolution::Applied
                } else {
                    qail_migrate::Resolution::Pending
                };
                (
                    db,
                    Action::Resolve {
                        version,
                        resolution,
                    },
                )
            }
        };
        let (source, config) = db.dir.resolve()?;
        let options = Options {
            source,
            database_url: db.database_url,
            action,
        };
        Ok((options, config))
    }
}

#[derive(Args)]
struct AnalyzeArgs {
    /// The schema snapshot [default: $QAIL_SCHEMA, else the nearest qail.schema.json].
    #[arg(long)]
    snapshot: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
    /// Explain the type and nullability of the result columns called NAME.
    #[arg(long, value_name = "NAME")]
    why: Option<String>,
    /// Print how long loading, analyzing and printing took (to standard error).
    #[arg(long)]
    timings: bool,
    /// SQL files with one or more statements separated by `;`; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    Text,
    Json,
}

impl From<AnalyzeArgs> for report::Options {
    fn from(a: AnalyzeArgs) -> report::Options {
        report::Options {
            snapshot: a.snapshot,
            format: match a.format {
                FormatArg::Text => report::Format::Text,
                FormatArg::Json => report::Format::Json,
            },
            why: a.why,
            timings: a.timings,
            files: a.files,
        }
    }
}

#[derive(Subcommand)]
enum SchemaCommand {
    /// Read a live database's catalog and write the snapshot file.
    Pull {
        #[command(flatten)]
        db: DbArgs,
        /// Where to write the snapshot.
        #[arg(long, default_value = "qail.schema.json")]
        out: PathBuf,
    },
    /// Check the snapshot file; exit 1 with the differences (for CI). With a migrations
    /// directory configured (metadata.qail.migrations in Cargo.toml): the file must equal the
    /// snapshot the migrations build offline and, when a database is given, what `schema
    /// pull` reads after the migrations run in a scratch database on that server. Without:
    /// the file must equal the database.
    Check {
        #[command(flatten)]
        db: DbArgs,
        /// The snapshot file to check [default: the configured one, else qail.schema.json].
        #[arg(long)]
        snapshot: Option<PathBuf>,
    },
    /// Build the snapshot from the migrations directory, without a database: each migration's
    /// (up) script imported in version order.
    Build {
        /// The migrations directory [default: metadata.qail.migrations in Cargo.toml].
        #[arg(long)]
        source: Option<PathBuf>,
        /// Where to write the snapshot [default: the configured one, else qail.schema.json].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Show the differences between two snapshot files; exit 1 when they differ.
    Diff {
        /// The old snapshot.
        old: PathBuf,
        /// The new snapshot.
        new: PathBuf,
    },
    /// Build a snapshot from DDL scripts, without a database.
    FromSql {
        /// .sql files, or directories whose .sql files are applied in name order.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Where to write the snapshot.
        #[arg(long, default_value = "qail.schema.json")]
        out: PathBuf,
    },
}

#[derive(Args)]
struct DbArgs {
    /// Connection URL or key=value string [default: $DATABASE_URL].
    #[arg(long)]
    database_url: Option<String>,
    /// A schema to read; repeat for several. Default for `pull`: every user schema (system
    /// schemas excluded; unqualified names still follow the database's search_path); for
    /// `check`: the schemas in the snapshot file.
    #[arg(long = "schema", value_name = "SCHEMA")]
    schemas: Vec<String>,
}

/// A failure, already worded for the user.
struct Failure(String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure(e.to_string())
    }
}

fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "qail") {
        args.remove(1);
    }
    let cli = Cli::parse_from(args);
    match run(cli.command) {
        Ok(code) => code,
        Err(Failure(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<ExitCode, Failure> {
    let cmd = match command {
        Command::Schema(cmd) => cmd,
        Command::Analyze(args) => {
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
            let code = report::run(&args.into(), &mut out, &mut err);
            return Ok(ExitCode::from(code));
        }
        Command::Migrate(MigrateCommand::Check {
            deployed,
            format,
            db,
        }) => return deploy_check(deployed, format, db),
        Command::Migrate(cmd) => {
            let (options, config) = cmd.options()?;
            let code = cargo_qail::migrate::run(&options, &mut std::io::stdout().lock())
                .map_err(Failure)?;
            let changes_schema = matches!(
                options.action,
                cargo_qail::migrate::Action::Add { .. } | cargo_qail::migrate::Action::Run { .. }
            );
            // The snapshot follows the migrations wherever the project says it derives from
            // them.
            if let Some(config) =
                config.filter(|c| changes_schema && c.migrations == options.source)
            {
                write_build(&config.migrations, &config.snapshot)?;
            }
            return Ok(ExitCode::from(code));
        }
        Command::Verify(args) => return verify(args),
        Command::Lsp { snapshot } => {
            cargo_qail::lsp::run_stdio(snapshot)?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    match cmd {
        SchemaCommand::Pull { db, out } => pull(&db, &out),
        SchemaCommand::Check { db, snapshot } => match Config::find(Path::new("."))? {
            Some(config) => check_migrations(&db, &config, snapshot),
            None => check(
                &db,
                &snapshot.unwrap_or_else(|| qail_schema::snapshot::FILE_NAME.into()),
            ),
        },
        SchemaCommand::Build { source, out } => {
            let config = Config::find(Path::new("."))?;
            let dir = source
                .or_else(|| config.as_ref().map(|c| c.migrations.clone()))
                .ok_or_else(|| {
                    Failure(
                        "no migrations directory configured: add `[package.metadata.qail]` with \
                     `migrations = \"migrations\"` to Cargo.toml, or pass --source"
                            .to_owned(),
                    )
                })?;
            let out = out
                .or_else(|| config.map(|c| c.snapshot))
                .unwrap_or_else(|| qail_schema::snapshot::FILE_NAME.into());
            write_build(&dir, &out)?;
            Ok(ExitCode::SUCCESS)
        }
        SchemaCommand::Diff { old, new } => {
            let (a, b) = (Snapshot::load(&old)?, Snapshot::load(&new)?);
            Ok(report(
                &a,
                &b,
                &format!("{} and {} differ", old.display(), new.display()),
                "",
            ))
        }
        SchemaCommand::FromSql { paths, out } => from_sql(&paths, &out),
    }
}

/// The `postgres` range declared in the snapshot `out` replaces, kept across a rewrite.
fn declared_target(out: &Path) -> Option<String> {
    Snapshot::load(out).ok().and_then(|s| s.postgres)
}

/// The DDL importer's warnings that matter to the versions the snapshot `out` targets (its
/// declared range, else the default one), printed on standard error; returns how many.
fn print_warnings(warnings: &[qail_schema::ddl::DdlWarning], out: &Path) -> usize {
    let declared = Snapshot {
        postgres: declared_target(out),
        ..Snapshot::new()
    };
    let target = declared
        .target()
        .unwrap_or(qail_schema::snapshot::DEFAULT_TARGET);
    let mut n = 0;
    for w in warnings.iter().filter(|w| w.applies_to(target)) {
        eprintln!("warning: {w}");
        n += 1;
    }
    n
}

fn pull(db: &DbArgs, out: &PathBuf) -> Result<ExitCode, Failure> {
    let mut snap = pull_live(db, &db.schemas)?;
    snap.postgres = declared_target(out);
    snap.save(out)?;
    println!(
        "wrote {}: {} relations, {} types, {} functions from schema(s) {}",
        out.display(),
        snap.relations.len(),
        snap.types.len(),
        snap.functions.len(),
        snap.schemas.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}

/// Builds the snapshot of the migrations in `dir` and writes it to `out`, with the importer's
/// warnings on standard error.
fn write_build(dir: &Path, out: &Path) -> Result<(), Failure> {
    let (snap, warnings) = cargo_qail::schema::build(dir, out)?;
    let warned = print_warnings(&warnings, out);
    snap.save(out)?;
    println!(
        "wrote {} from {}: {} relations, {} types, {} functions ({} warning{})",
        out.display(),
        dir.display(),
        snap.relations.len(),
        snap.types.len(),
        snap.functions.len(),
        warned,
        if warned == 1 { "" } else { "s" }
    );
    Ok(())
}

/// `schema check` of a project whose snapshot derives from its migrations.
fn check_migrations(
    db: &DbArgs,
    config: &Config,
    snapshot: Option<PathBuf>,
) -> Result<ExitCode, Failure> {
    let path = snapshot.unwrap_or_else(|| config.snapshot.clone());
    let file = Snapshot::load(&path)?;
    let (built, warnings) = cargo_qail::schema::build(&config.migrations, &path)?;
    print_warnings(&warnings, &path);
    let dir = config.migrations.display();
    let title = format!(
        "{} differs from the snapshot the migrations in {dir} build",
        path.display()
    );
    let mut code = report(
        &file,
        &built,
        &title,
        "run `cargo qail schema build` and commit the result",
    );
    if code == ExitCode::SUCCESS {
        println!("{} matches the migrations in {dir}", path.display());
    }
    let url = db
        .database_url
        .clone()
        .or_else(|| std::env::var("DATABASE_URL").ok());
    let Some(url) = url else {
        println!("no DATABASE_URL: the migrations were not applied to a server");
        return Ok(code);
    };
    let live = cargo_qail::schema::pull_after_migrations(&config.migrations, &url)?;
    let title = format!(
        "{} differs from what `schema pull` reads after the migrations run on the server",
        path.display()
    );
    let hint = "the offline import and PostgreSQL disagree: rewrite the statement the import \
                warns about, or report the difference";
    let live_code = report(&file, &live, &title, hint);
    if live_code == ExitCode::SUCCESS {
        println!(
            "{} matches the migrations applied to the server",
            path.display()
        );
    } else {
        code = live_code;
    }
    Ok(code)
}

fn check(db: &DbArgs, path: &PathBuf) -> Result<ExitCode, Failure> {
    let file = Snapshot::load(path)?;
    let schemas = if db.schemas.is_empty() {
        file.schemas.clone()
    } else {
        db.schemas.clone()
    };
    let live = pull_live(db, &schemas)?;
    let title = format!("{} differs from the database", path.display());
    let hint = "run `cargo qail schema pull` to update the snapshot (and commit it), or migrate \
                the database";
    let code = report(&file, &live, &title, hint);
    if code == ExitCode::SUCCESS {
        println!("{} matches the database", path.display());
    }
    Ok(code)
}

/// Prints the changes from `a` to `b` under `title`; exit 1 if there are any.
fn report(a: &Snapshot, b: &Snapshot, title: &str, hint: &str) -> ExitCode {
    let changes = diff::diff(a, b, &DiffOptions::default());
    if changes.is_empty() {
        return ExitCode::SUCCESS;
    }
    let n = changes.len();
    println!("{title} ({n} change{}):", if n == 1 { "" } else { "s" });
    print!("{}", diff::render(&changes));
    if !hint.is_empty() {
        println!("{hint}");
    }
    ExitCode::from(1)
}

fn from_sql(paths: &[PathBuf], out: &PathBuf) -> Result<ExitCode, Failure> {
    let (mut snap, warnings) = qail_analyzer::import_ddl(&qail_schema::ddl::read_paths(paths)?);
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
    qail_schema::ddl::relative_to(&mut snap, dir.unwrap_or(std::path::Path::new(".")));
    let warned = print_warnings(&warnings, out);
    snap.postgres = declared_target(out);
    snap.save(out)?;
    println!(
        "wrote {}: {} relations, {} types, {} functions ({} warning{})",
        out.display(),
        snap.relations.len(),
        snap.types.len(),
        snap.functions.len(),
        warned,
        if warned == 1 { "" } else { "s" }
    );
    Ok(ExitCode::SUCCESS)
}

fn pull_live(db: &DbArgs, schemas: &[String]) -> Result<Snapshot, Failure> {
    let url = match &db.database_url {
        Some(u) => u.clone(),
        None => std::env::var("DATABASE_URL").map_err(|_| {
            Failure("no database to read: set DATABASE_URL or pass --database-url".to_owned())
        })?,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let mut conn = qail_pg::Connection::connect(&url).await.map_err(|e| {
            Failure(format!(
                "cannot connect to the database: {e}; check that the server runs and that the \
                 URL's host, port, user, password and database are right"
            ))
        })?;
        let snap = qail_schema::introspect::pull(&mut conn, schemas).await?;
        for s in schemas.iter().filter(|s| !snap.has_schema(s)) {
            eprintln!("warning: schema {s} does not exist in the database");
        }
        Ok(snap)
    })
}
