//! The template database: built once per content of the crate's migrations (or
//! `schema.sql`), by one process while the others wait, under a private name renamed when
//! complete — so a template that exists is complete, whoever looks.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use qail_pg::{Connection, Pool};
use sha2::{Digest, Sha256};

use super::pristine::{self, Pristine};
use super::{config, ident, recycle, trace, with_dbname};
use crate::Migrator;

/// The advisory-lock key space of template builds (first key of the two-key form).
const BUILD_KEY: i32 = 0x7161_0062;

/// Templates this process knows exist: the catalog is asked once per template and process.
static KNOWN: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// What the template is built from.
enum Source {
    Migrations(PathBuf),
    Schema(PathBuf),
}

impl Source {
    fn find(dir: &Path) -> Source {
        let migrations = dir.join("migrations");
        if migrations.is_dir() {
            return Source::Migrations(migrations);
        }
        let schema = dir.join("schema.sql");
        if schema.is_file() {
            return Source::Schema(schema);
        }
        panic!(
            "qail::test: {} has neither a migrations/ directory nor a schema.sql file; add \
             one of them to build the test databases from",
            dir.display()
        )
    }

    /// A hash of every file's name and content.
    fn hash(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(b"qail-test-template v1\0");
        // Note: a template whose record an older format holds is not recyclable; another
        // format gives another template.
        hash.update(pristine::HEADER.as_bytes());
        hash.update([0]);
        let files = match self {
            Source::Migrations(dir) => crate::files(dir)
                .unwrap_or_else(|e| panic!("qail::test: reading {}: {e}", dir.display())),
            Source::Schema(file) => vec![file.clone()],
        };
        for file in files {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let content = std::fs::read(&file)
                .unwrap_or_else(|e| panic!("qail::test: reading {}: {e}", file.display()));
            hash.update(name.as_bytes());
            hash.update([0]);
            hash.update(
                u64::try_from(content.len())
                    .unwrap_or(u64::MAX)
                    .to_be_bytes(),
            );
            hash.update(&content);
        }
        hex(&hash.finalize()[..8])
    }

    async fn apply(&self, url: &str) {
        match self {
            Source::Migrations(dir) => {
                let migrator = Migrator::from_dir(dir)
                    .unwrap_or_else(|e| panic!("qail::test: reading {}: {e}", dir.display()));
                let pool = Pool::builder()
                    .max_size(1)
                    .connect_with(config(url, None))
                    .await
                    .unwrap_or_else(|e| panic!("qail::test: connecting to {url}: {e}"));
                let result = migrator.run(&pool).await;
                pool.close().await;
                if let Err(e) = result {
                    panic!("qail::test: migrating the template database: {e}");
                }
            }
            Source::Schema(file) => {
                let sql = std::fs::read_to_string(file)
                    .unwrap_or_else(|e| panic!("qail::test: reading {}: {e}", file.display()));
                let mut conn = Connection::connect_with(&config(url, None))
                    .await
                    .unwrap_or_else(|e| panic!("qail::test: connecting to {url}: {e}"));
                let result = conn.batch_execute(&sql).await;
                conn.close().await;
                if let Err(e) = result {
                    panic!("qail::test: applying {}: {e}", file.display());
                }
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The crate's part of the names: a hash of its directory, so that two crates (or two
/// checkouts) sharing a server keep their own templates.
fn crate_key(dir: &Path) -> String {
    hex(&Sha256::digest(dir.to_string_lossy().as_bytes())[..4])
}

/// Makes sure the template for the crate at `dir` exists, building it if not; returns its
/// name. `admin` is a connection to the maintenance database.
pub(crate) async fn ensure(admin: &mut Connection, server: &str, dir: &Path) -> String {
    let source = Source::find(dir);
    let krate = crate_key(dir);
    let name = format!("qail_tpl_{krate}_{}", source.hash());
    {
        let known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        if known.as_ref().is_some_and(|k| k.contains(&name)) {
            return name;
        }
    }
    if !exists(admin, &name).await {
        build(admin, server, &source, &krate, &name).await;
    }
    KNOWN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(name.clone());
    name
}

async fn exists(admin: &mut Connection, name: &str) -> bool {
    admin
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
        .await
        .unwrap_or_else(|e| panic!("qail::test: looking for template {name}: {e}"))
        .is_some()
}

/// Builds template `name` under the crate's build lock, unless another process built it
/// while this one waited; drops the crate's older templates and unfinished builds.
async fn build(admin: &mut Connection, server: &str, source: &Source, krate: &str, name: &str) {
    let key = i32::from_str_radix(krate.get(..7).unwrap_or("0"), 16).unwrap_or(0);
    admin
        .execute("SELECT pg_advisory_lock($1, $2)", &[&BUILD_KEY, &key])
        .await
        .unwrap_or_else(|e| fail(name, &e));
    if !exists(admin, name).await {
        let started = Instant::now();
        // Unfinished builds of a builder that died: nobody else builds while the lock is held.
        drop_like(admin, &format!("qail_tmp_{krate}_%"), None).await;
        let private = format!("qail_tmp_{krate}_{:x}", std::process::id());
        admin
            .batch_execute(&format!("CREATE DATABASE {}", ident(&private)))
            .await
            .unwrap_or_else(|e| fail(name, &e));
        source.apply(&with_dbname(server, &private)).await;
        let pristine = observe(server, &private).await;
        admin
            .batch_execute(&format!(
                "COMMENT ON DATABASE {0} IS {2}; ALTER DATABASE {0} RENAME TO {1}; \
                 ALTER DATABASE {1} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false",
                ident(&private),
                ident(name),
                literal(&pristine.encode())
            ))
            .await
            .unwrap_or_else(|e| fail(name, &e));
        let took = started.elapsed();
        trace(format_args!("built template {name} in {took:?}"));
        log_build(name, took);
        drop_like(admin, &format!("qail_tpl_{krate}_%"), Some(name)).await;
        drop_like(
            admin,
            &format!("qail_free_{krate}_%"),
            Some(&recycle::free_prefix(name)),
        )
        .await;
    }
    admin
        .execute("SELECT pg_advisory_unlock($1, $2)", &[&BUILD_KEY, &key])
        .await
        .unwrap_or_else(|e| fail(name, &e));
}

/// Appends a line to the file `QAIL_TEST_BUILD_LOG` names, if set: one per build, so that a
/// run can count them.
fn log_build(name: &str, took: std::time::Duration) {
    let Some(path) = std::env::var_os("QAIL_TEST_BUILD_LOG") else {
        return;
    };
    let line = format!("{name} {} {}\n", took.as_millis(), std::process::id());
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("qail::test: writing QAIL_TEST_BUILD_LOG: {e}");
    }
}

/// What a fresh clone of the template built in database `db` looks like (see `pristine`).
async fn observe(server: &str, db: &str) -> Pristine {
    let url = with_dbname(server, db);
    let mut conn = Connection::connect_with(&config(&url, None))
        .await
        .unwrap_or_else(|e| panic!("qail::test: connecting to {url}: {e}"));
    let pristine = Pristine::observe(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("qail::test: recording the template's state: {e}"));
    conn.close().await;
    pristine
}

/// `text` as a SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Drops the databases whose name is `LIKE pattern`, but those whose name starts with
/// `keep`; a database still in use
/// (a test of an older build cloning it) is left for a later build to drop.
async fn drop_like(admin: &mut Connection, pattern: &str, keep: Option<&str>) {
    let rows = admin
        .query(
            "SELECT datname::text FROM pg_database WHERE datname LIKE $1",
            &[&pattern],
        )
        .await
        .unwrap_or_default();
    for row in rows {
        let db: String = row.get(0);
        if keep.is_some_and(|k| db.starts_with(k)) {
            continue;
        }
        // Note: two queries, as DROP DATABASE cannot run in the implicit transaction of a
        // multi-statement query.
        let unmark = format!("ALTER DATABASE {} WITH IS_TEMPLATE false", ident(&db));
        let drop = format!("DROP DATABASE IF EXISTS {}", ident(&db));
        let dropped = match admin.batch_execute(&unmark).await {
            Ok(()) => admin.batch_execute(&drop).await,
            Err(e) => Err(e),
        };
        if let Err(e) = dropped {
            trace(format_args!("left {db}: {e}"));
        }
    }
}

fn fail(name: &str, e: &qail_pg::Error) -> ! {
    panic!("qail::test: building template {name}: {e}")
}
