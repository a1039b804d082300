//! Integration tests of qail-migrate against a real PostgreSQL server (`DATABASE_URL`, else
//! the local default) and pgbouncer in transaction mode in front of it
//! (`QAIL_PGBOUNCER_URL`, else 127.0.0.1:6434; `scripts/pgbouncer`).
//!
//! Each test creates a database of its own (dropped at its end; kept when it fails) and a
//! migrations directory of its own under the system's temporary directory.

mod concurrent;
mod no_transaction;
mod run;
mod sqlx;
mod test_db;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use qail_pg::{Connection, Pooler};

/// The server the tests use: `DATABASE_URL`, else the local default.
fn url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// pgbouncer in transaction mode in front of the same server: `QAIL_PGBOUNCER_URL`, else the
/// port `scripts/pgbouncer` listens on.
fn pgbouncer_url() -> String {
    std::env::var("QAIL_PGBOUNCER_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:6434/postgres".to_owned())
}

/// A database of a test's own, and a migrations directory.
struct TestDb {
    name: String,
    dir: PathBuf,
}

impl TestDb {
    /// Creates database `qail_migrate_<test>_<pid>_<n>` and an empty migrations directory.
    async fn new(test: &str) -> TestDb {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "qail_migrate_{test}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = admin().await;
        // Note: one statement per message; DROP/CREATE DATABASE refuse an implicit
        // transaction block.
        for sql in [
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ] {
            admin
                .batch_execute(&sql)
                .await
                .expect("the test database can be created");
        }
        let dir = std::env::temp_dir().join(&name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the migrations directory can be created");
        TestDb { name, dir }
    }

    /// The direct connection string of the database.
    fn url(&self) -> String {
        config_string(&url(), &self.name, Pooler::None)
    }

    /// The database through pgbouncer in transaction mode, with `pooler=transaction`.
    fn pgbouncer_url(&self) -> String {
        config_string(&pgbouncer_url(), &self.name, Pooler::Transaction)
    }

    async fn connect(&self) -> Connection {
        Connection::connect(&self.url())
            .await
            .expect("the test database accepts connections")
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes migration file `file` with `sql`.
    fn write(&self, file: &str, sql: &str) {
        std::fs::write(self.dir.join(file), sql).expect("the migration file can be written");
    }

    fn remove(&self, file: &str) {
        std::fs::remove_file(self.dir.join(file)).expect("the migration file can be removed");
    }

    /// Drops the database and the directory.
    async fn drop(self) {
        let mut admin = admin().await;
        admin
            .batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .await
            .expect("the test database can be dropped");
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `base` (a URL) with database `dbname`, and `pooler=transaction` when `pooler` says so.
fn config_string(base: &str, dbname: &str, pooler: Pooler) -> String {
    // Note: a URL (not a Config) so that a child process can take it from its environment.
    let (rest, query) = match base.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (base, None),
    };
    let prefix = rest.rsplit_once('/').map_or(rest, |(p, _)| p);
    let mut url = format!("{prefix}/{dbname}");
    let mut params: Vec<String> = query
        .map(|q| q.split('&').map(str::to_owned).collect())
        .unwrap_or_default();
    if pooler == Pooler::Transaction {
        params.push("pooler=transaction".to_owned());
    }
    if !params.is_empty() {
        url.push('?');
        url.push_str(&params.join("&"));
    }
    url
}

async fn admin() -> Connection {
    Connection::connect(&url())
        .await
        .expect("the test server accepts connections at DATABASE_URL")
}

/// The integers `sql` returns in its first column.
async fn ints(conn: &mut Connection, sql: &str) -> Vec<i64> {
    conn.query(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .iter()
        .map(|r| r.get::<i64>(0))
        .collect()
}

/// The history's (version, state) pairs.
async fn history(conn: &mut Connection) -> Vec<(i64, String)> {
    conn.query(
        "SELECT version, state FROM _qail_migrations ORDER BY version",
        &[],
    )
    .await
    .expect("the history table can be read")
    .iter()
    .map(|r| (r.get::<i64>(0), r.get::<String>(1)))
    .collect()
}
