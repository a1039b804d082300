//! The run-time side of `#[qail::test]`: a database per test, cloned from a template built
//! once from the crate's migrations, with the connections all tests hold bounded.
//!
//! Each test:
//! 1. takes a *slot*: a lock on one of N files, held for the whole test, then connects to the
//!    maintenance database. N is what bounds the connections of every test process of a run
//!    at once, cargo test's threads and cargo-nextest's processes alike;
//! 2. makes sure the template exists: `qail_tpl_<crate>_<hash>`, named by a
//!    hash of the migrations' content, built once (under a lock, under a private name, then
//!    renamed), so that other processes either see it complete or not at all;
//! 3. claims a *free* database of the template (a passed test's, emptied back to what a
//!    fresh clone is: `qail_free_<crate>_<hash>_<id>`) by renaming it to its own name, or
//!    else clones the template (`CREATE DATABASE … TEMPLATE`); applies its fixtures and runs;
//! 4. when it passes, marks its database passed and returns: the process's dropper, in the
//!    background and in the test's slot, recycles it into a free database when its catalogs
//!    are the template's and the rows of the tables the template seeded are unchanged, and
//!    drops it otherwise (see `recycle.rs`); the process waits for its dropper at exit (what
//!    a killed process left, the next process's first test sweeps; see `dropper.rs`); when
//!    it fails, keeps it and prints its URL.
//!
//! Up to N free databases per template (N the slot count) stay on the server between runs,
//! for the next run's tests; the template's next build (a migration changed) drops them with
//! the older template.
//!
//! Environment: `DATABASE_URL` (the server, default `postgres://postgres@127.0.0.1:5432/postgres`),
//! `QAIL_TEST_MAX_CONNECTIONS` (the bound, default half the server's `max_connections`),
//! `QAIL_TEST_POOL_SIZE` (connections of a test's pool, default 2), `QAIL_TEST_RECYCLE`
//! (`0`: passed tests' databases are dropped, none recycled or claimed), `QAIL_TEST_BUILD_LOG`
//! (a file that gets a line per template build), `QAIL_TEST_TRACE` (a line on stderr per
//! step).

mod at_exit;
mod dropper;
mod flock;
mod pristine;
mod recycle;
mod slots;
mod template;

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::Path;
use std::time::Instant;

use qail_pg::{Config, Connection, Pool};

pub use dropper::{PASSED, wait_for_drops};

/// What `#[qail::test]` passes about the test: where the crate is, its fixtures, its name.
#[derive(Debug, Clone, Copy)]
pub struct Args {
    /// `CARGO_MANIFEST_DIR` of the crate under test: `migrations/`, `schema.sql` and
    /// `fixtures/` are read from there.
    pub manifest_dir: &'static str,
    /// Fixture names: `fixtures/<name>.sql`, applied in order.
    pub fixtures: &'static [&'static str],
    /// The test function's name, part of its database's name.
    pub name: &'static str,
}

/// The server the tests run against, from `DATABASE_URL`.
pub(crate) fn server_url() -> String {
    std::env::var("DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// The URL of database `db` on the server `url` names (a URL's path replaced).
pub(crate) fn with_dbname(url: &str, db: &str) -> String {
    let Some(scheme) = url.find("://") else {
        return format!("{url} dbname={db}");
    };
    let rest = &url[scheme + 3..];
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let (authority, query) = rest.split_at(end);
    let host = authority.split('/').next().unwrap_or(authority);
    format!("{}://{host}/{db}{query}", &url[..scheme])
}

/// The application name every connection of the tests carries (what a run's connections
/// are counted by in `pg_stat_activity`).
pub const APPLICATION_NAME: &str = "qail-test";

pub(crate) fn config(url: &str, db: Option<&str>) -> Config {
    let config = Config::parse(url)
        .unwrap_or_else(|e| panic!("qail::test: DATABASE_URL `{url}` is not usable: {e}"))
        .application_name(APPLICATION_NAME);
    match db {
        Some(db) => config.dbname(db),
        None => config,
    }
}

/// A test's database: where it is, and how to reach it in the form the test asks for.
#[derive(Debug)]
pub struct TestDb {
    url: String,
    name: String,
    pool_size: usize,
}

impl TestDb {
    /// The database's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What a `#[qail::test]` function may take: a [`Pool`], a [`Connection`] or the database's
/// URL as a `String`.
pub trait FromTestDb: Sized {
    /// Opens the value on the test's database.
    fn from_test_db(db: &TestDb) -> impl Future<Output = Self>;
}

impl FromTestDb for Pool {
    async fn from_test_db(db: &TestDb) -> Pool {
        Pool::builder()
            .max_size(db.pool_size)
            .connect_with(config(&db.url, None))
            .await
            .unwrap_or_else(|e| panic!("qail::test: connecting a pool to {}: {e}", db.url))
    }
}

impl FromTestDb for Connection {
    async fn from_test_db(db: &TestDb) -> Connection {
        Connection::connect_with(&config(&db.url, None))
            .await
            .unwrap_or_else(|e| panic!("qail::test: connecting to {}: {e}", db.url))
    }
}

impl FromTestDb for String {
    async fn from_test_db(db: &TestDb) -> String {
        db.url.clone()
    }
}

/// What a test function may return: nothing, or a `Result` whose `Err` fails the test.
pub trait Outcome {
    /// `Err` with the message of a failed test.
    fn into_result(self) -> Result<(), String>;
}

impl Outcome for () {
    fn into_result(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: std::fmt::Debug> Outcome for Result<(), E> {
    fn into_result(self) -> Result<(), String> {
        self.map_err(|e| format!("{e:?}"))
    }
}

/// Runs one test: takes a slot, makes sure the template exists, claims a free database of
/// it or clones it, applies the fixtures, runs `body` on the database, and, if `body` passed,
/// marks the database passed and hands it to the dropper (or keeps it and prints its URL).
/// Panics, failing the test, when any step fails.
pub fn run<F, Fut>(args: Args, body: F)
where
    F: FnOnce(TestDb) -> Fut,
    Fut: Future,
    Fut::Output: Outcome,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime builds");
    let server = server_url();
    let dir = Path::new(args.manifest_dir);
    let (mut admin, db, tpl) = rt.block_on(async {
        let mut admin = slots::take(&server).await;
        let tpl = template::ensure(&mut admin.conn, &server, dir).await;
        let db = create(&mut admin.conn, &server, &tpl, args).await;
        dropper::sweep(&mut admin.conn, &server).await;
        (admin, db, tpl)
    });
    let name = db.name.clone();
    let url = db.url.clone();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        rt.block_on(async { body(db).await.into_result() })
    }));
    match outcome {
        Ok(Ok(())) => {
            let marked = rt.block_on(dropper::mark_passed(&mut admin.conn, &name));
            match marked {
                Ok(()) => {
                    let slot = rt.block_on(admin.into_lock());
                    dropper::hand_over(&server, name, tpl, slot);
                }
                Err(e) => {
                    eprintln!("qail::test: could not mark {name} passed, so it is kept: {e}");
                    rt.block_on(admin.release());
                }
            }
        }
        Ok(Err(message)) => {
            rt.block_on(admin.release());
            panic!("{message}\nqail::test: the test's database is kept: {url}");
        }
        Err(panic) => {
            eprintln!("qail::test: the test's database is kept: {url}");
            rt.block_on(admin.release());
            resume_unwind(panic);
        }
    }
}

/// Creates the test's database (claims a free one of the template, else clones the template)
/// and applies its fixtures.
async fn create(admin: &mut Connection, server: &str, tpl: &str, args: Args) -> TestDb {
    let started = Instant::now();
    let short: String = args
        .name
        .rsplit("::")
        .next()
        .unwrap_or(args.name)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    let name = format!("qail_t_{short}_{}", unique());
    // Note: no STRATEGY, so WAL_LOG on PostgreSQL 15 and later (the only way before 15 is
    // FILE_COPY). Measured on a 12 MB template of 100 tables (PostgreSQL 15, loaded machine),
    // FILE_COPY took 1.9–3.1 s a clone alone and 0.7–1.0 s each with 8 in parallel, against
    // 80–280 ms and 190–390 ms for WAL_LOG: FILE_COPY checkpoints before and after its copy,
    // and that checkpoint writes every buffer the other tests dirtied.
    let claimed = recycle::enabled() && recycle::claim(admin, tpl, &name).await;
    if !claimed {
        let create = format!("CREATE DATABASE {} TEMPLATE {}", ident(&name), ident(tpl));
        admin
            .batch_execute(&create)
            .await
            .unwrap_or_else(|e| panic!("qail::test: creating {name} from template {tpl}: {e}"));
    }
    let db = TestDb {
        url: with_dbname(server, &name),
        name,
        pool_size: env_number("QAIL_TEST_POOL_SIZE").unwrap_or(2).max(1),
    };
    if !args.fixtures.is_empty() {
        let mut conn = Connection::from_test_db(&db).await;
        for fixture in args.fixtures {
            let path = Path::new(args.manifest_dir)
                .join("fixtures")
                .join(format!("{fixture}.sql"));
            let sql = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "qail::test: reading fixture `{fixture}` ({}): {e}",
                    path.display()
                )
            });
            conn.batch_execute(&sql)
                .await
                .unwrap_or_else(|e| panic!("qail::test: applying fixture {}: {e}", path.display()));
        }
        conn.close().await;
    }
    trace(format_args!(
        "{} {} in {:?}",
        if claimed { "took" } else { "cloned" },
        db.name,
        started.elapsed()
    ));
    db
}

/// A name part no other test of any process takes: the process id, a counter and the time.
pub(crate) fn unique() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!(
        "{:x}_{:x}{:x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        nanos & 0xfff
    )
}

/// `name` as a quoted SQL identifier.
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

pub(crate) fn env_number(var: &str) -> Option<usize> {
    std::env::var(var).ok()?.trim().parse().ok()
}

/// Prints a line about what the runtime did when `QAIL_TEST_TRACE` is set.
pub(crate) fn trace(line: std::fmt::Arguments<'_>) {
    if std::env::var_os("QAIL_TEST_TRACE").is_some() {
        eprintln!("qail::test: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_test_database() {
        assert_eq!(
            with_dbname("postgres://postgres@127.0.0.1:5432/postgres", "t1"),
            "postgres://postgres@127.0.0.1:5432/t1"
        );
        assert_eq!(
            with_dbname("postgres://u@h?sslmode=disable", "t1"),
            "postgres://u@h/t1?sslmode=disable"
        );
        assert_eq!(
            with_dbname("host=h user=u", "t1"),
            "host=h user=u dbname=t1"
        );
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(ident("a\"b"), "\"a\"\"b\"");
    }
}
