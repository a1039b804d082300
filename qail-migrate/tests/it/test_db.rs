//! `#[qail::test]`'s run time (`test_db::run`): a passed test's database is recycled (or
//! dropped) after the test returned, by the process's dropper, and a recycled one is what a
//! fresh clone is; the first test of a process sweeps the passed databases that processes
//! which exited left behind; a failed test's database is kept, and so is any database not
//! marked passed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use qail_migrate::test_db::{self, Args};
use qail_pg::Connection;

use super::{admin, url};

fn block_on<T>(f: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(f)
}

async fn exists(conn: &mut Connection, db: &str) -> bool {
    conn.query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&db])
        .await
        .expect("pg_database is read")
        .is_some()
}

async fn comment(conn: &mut Connection, db: &str) -> Option<String> {
    conn.query_one(
        "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
        &[&db],
    )
    .await
    .expect("the comment is read")
    .get(0)
}

/// Runs one `#[qail::test]`-like test whose body returns `outcome`; the name of its database.
fn run_test(dir: &'static str, name: &'static str, outcome: Result<(), String>) -> String {
    let seen = Arc::new(Mutex::new(String::new()));
    let into = Arc::clone(&seen);
    let ran = catch_unwind(AssertUnwindSafe(|| {
        test_db::run(
            Args {
                manifest_dir: dir,
                fixtures: &[],
                name,
            },
            move |db| async move {
                *into.lock().unwrap() = db.name().to_owned();
                let mut conn = Connection::connect(db.url()).await.expect("connects");
                conn.batch_execute("INSERT INTO t VALUES (1)")
                    .await
                    .expect("the template's table is there");
                outcome
            },
        );
    }));
    assert_eq!(ran.is_ok(), name.starts_with("passes"), "{name}");
    let db = seen.lock().unwrap().clone();
    assert!(db.starts_with("qail_t_"), "{db}");
    db
}

/// The steps run in order in one test: a process sweeps once, at its first `#[qail::test]`,
/// so the sweep is seen only by the first step.
#[test]
fn test_databases() {
    passed_databases_are_gone_after_the_test_and_failed_ones_kept();
    a_passed_database_is_recycled_and_the_next_test_sees_a_fresh_one();
    a_database_whose_schema_or_seed_changed_is_dropped_not_recycled();
    concurrent_tests_never_share_a_database();
}

fn passed_databases_are_gone_after_the_test_and_failed_ones_kept() {
    let pid = std::process::id();
    let krate = Crate::new("left", "CREATE TABLE t (id int);\n");
    let dir = krate.dir;

    // What a process that exited before its dropper was done leaves: a passed test's
    // database, marked, and a failed test's, not marked.
    let left_passed = format!("qail_t_left_passed_{pid}");
    let left_failed = format!("qail_t_left_failed_{pid}");
    block_on(async {
        let mut admin = admin().await;
        for db in [&left_passed, &left_failed] {
            admin
                .batch_execute(&format!("CREATE DATABASE {db}"))
                .await
                .expect("created");
        }
        admin
            .batch_execute(&format!(
                "COMMENT ON DATABASE {left_passed} IS '{}'",
                test_db::PASSED
            ))
            .await
            .expect("marked");
        admin.close().await;
    });

    let passed = run_test(dir, "passes", Ok(()));
    let failed = run_test(dir, "fails", Err("the test says no".to_owned()));
    test_db::wait_for_drops();

    block_on(async {
        let mut admin = admin().await;
        let left = [
            (&left_passed, exists(&mut admin, &left_passed).await),
            (&left_failed, exists(&mut admin, &left_failed).await),
            (&passed, exists(&mut admin, &passed).await),
            (&failed, exists(&mut admin, &failed).await),
        ];
        let failed_comment = comment(&mut admin, &failed).await;
        for db in [&left_failed, &failed] {
            admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
                .await
                .expect("dropped");
        }
        krate.clean(&mut admin).await;
        admin.close().await;
        assert_eq!(
            left,
            [
                (&left_passed, false),
                (&left_failed, true),
                (&passed, false),
                (&failed, true)
            ],
            "which databases are left on {}",
            url()
        );
        assert_eq!(
            failed_comment, None,
            "a failed test's database is not marked"
        );
    });
}

/// A crate directory with `schema.sql` for a test of its own; its template's databases are
/// named `qail_{tpl,free}_<key>_…`.
struct Crate {
    dir: &'static str,
    key: String,
}

impl Crate {
    fn new(test: &str, schema: &str) -> Crate {
        use sha2::{Digest, Sha256};
        let dir = std::env::temp_dir().join(format!("qail_test_db_{test}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the crate directory");
        std::fs::write(dir.join("schema.sql"), schema).expect("schema.sql");
        let dir: &'static str = Box::leak(dir.to_string_lossy().into_owned().into_boxed_str());
        let key = Sha256::digest(dir.as_bytes())[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Crate { dir, key }
    }

    /// The names of the template's free databases.
    async fn free(&self, admin: &mut Connection) -> Vec<String> {
        names(admin, &format!("qail_free_{}_", self.key)).await
    }

    /// The template's name (built by a first test).
    async fn template(&self, admin: &mut Connection) -> String {
        let mut tpl = names(admin, &format!("qail_tpl_{}_", self.key)).await;
        assert_eq!(tpl.len(), 1, "one template: {tpl:?}");
        tpl.remove(0)
    }

    /// Drops the template and its free databases, and removes the directory.
    async fn clean(self, admin: &mut Connection) {
        for db in names(admin, &format!("qail_free_{}_", self.key)).await {
            drop_db(admin, &db).await;
        }
        for db in names(admin, &format!("qail_tpl_{}_", self.key)).await {
            admin
                .batch_execute(&format!("ALTER DATABASE {db} WITH IS_TEMPLATE false"))
                .await
                .expect("template unmarked");
            drop_db(admin, &db).await;
        }
        let _ = std::fs::remove_dir_all(self.dir);
    }
}

async fn names(admin: &mut Connection, prefix: &str) -> Vec<String> {
    admin
        .query(
            "SELECT datname::text FROM pg_database WHERE starts_with(datname::text, $1) \
             ORDER BY 1",
            &[&prefix],
        )
        .await
        .expect("pg_database is read")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

async fn drop_db(admin: &mut Connection, db: &str) {
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .await
        .expect("dropped");
}

async fn oid_of(admin: &mut Connection, db: &str) -> Option<i64> {
    admin
        .query_opt(
            "SELECT oid::bigint FROM pg_database WHERE datname = $1",
            &[&db],
        )
        .await
        .expect("pg_database is read")
        .map(|r| r.get(0))
}

/// The oid of the database `conn` is on: the same oid after a test means the same database,
/// recycled; a new one, a new clone.
async fn database_oid(conn: &mut Connection) -> i64 {
    conn.query_one(
        "SELECT oid::bigint FROM pg_database WHERE datname = current_database()",
        &[],
    )
    .await
    .expect("the oid")
    .get(0)
}

/// Runs one passing test whose body is `sql` (statements on its database) and returns its
/// database's name and oid, after the dropper is done with it. With `seen`, the test first
/// records there what it found on arrival ([`STATE`]).
fn run_sql(
    krate: &Crate,
    name: &'static str,
    sql: impl Into<String>,
    seen: Option<&Arc<Mutex<Vec<String>>>>,
) -> (String, i64) {
    let sql = sql.into();
    let seen = seen.map(Arc::clone);
    let db = Arc::new(Mutex::new((String::new(), 0)));
    let into = Arc::clone(&db);
    test_db::run(
        Args {
            manifest_dir: krate.dir,
            fixtures: &[],
            name,
        },
        move |db| async move {
            let mut conn = Connection::connect(db.url()).await.expect("connects");
            if let Some(seen) = seen {
                let row = conn.query_one(STATE, &[]).await.expect("the state");
                seen.lock().unwrap().push(row.get::<String>(0));
            }
            *into.lock().unwrap() = (db.name().to_owned(), database_oid(&mut conn).await);
            conn.batch_execute(&sql)
                .await
                .expect("the test's statements");
            conn.close().await;
        },
    );
    test_db::wait_for_drops();
    db.lock().unwrap().clone()
}

/// What a test sees of its database: rows, sequences and the catalogs' size.
const STATE: &str = "SELECT concat_ws(' ', (SELECT count(*) FROM t), \
    (SELECT string_agg(k, ',' ORDER BY k) FROM seeded), \
    (SELECT last_value || ':' || is_called FROM t_id_seq), \
    (SELECT last_value || ':' || is_called FROM s), \
    (SELECT last_value || ':' || is_called FROM seeded_n_seq), \
    (SELECT count(*) FROM audited), (SELECT last_value || ':' || is_called FROM audited_id_seq), \
    (SELECT count(*) FROM pg_class), (SELECT count(*) FROM pg_attribute))";

const SCHEMA: &str = "CREATE TABLE t (id bigserial PRIMARY KEY, name text NOT NULL);
CREATE TABLE child (id bigserial PRIMARY KEY, t bigint REFERENCES t (id));
CREATE SEQUENCE s;
CREATE TABLE seeded (n serial, k text PRIMARY KEY);
INSERT INTO seeded (k) VALUES ('a'), ('b');
CREATE TABLE audited (id serial, a int);
CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
CREATE TRIGGER audited BEFORE INSERT ON audited FOR EACH ROW EXECUTE FUNCTION audit();
";

fn a_passed_database_is_recycled_and_the_next_test_sees_a_fresh_one() {
    let krate = Crate::new("recycled", SCHEMA);
    let state = Arc::new(Mutex::new(Vec::new()));
    // Each test records what it saw on arrival, then writes rows and moves sequences.
    let writes = "INSERT INTO t (name) SELECT 'x' FROM generate_series(1, 5);
         INSERT INTO child (t) SELECT id FROM t;
         SELECT nextval('s'), nextval('s');
         SELECT setval('seeded_n_seq', 40);
         CREATE TEMP TABLE scratch (a int);
         DELETE FROM t WHERE id = 5 AND false;";
    // Note: a table with a trigger is truncated, the others deleted from.
    let dbs = [
        run_sql(&krate, "passes_first", writes, Some(&state)),
        run_sql(
            &krate,
            "passes_second",
            format!("{writes} INSERT INTO audited (a) VALUES (1), (2);"),
            Some(&state),
        ),
        run_sql(&krate, "passes_third", writes, Some(&state)),
    ];
    block_on(async {
        let mut admin = admin().await;
        let free = krate.free(&mut admin).await;
        let free_oids: Vec<Option<i64>> = {
            let mut v = Vec::new();
            for f in &free {
                v.push(oid_of(&mut admin, f).await);
            }
            v
        };
        let left: Vec<bool> = {
            let mut v = Vec::new();
            for (db, _) in &dbs {
                v.push(exists(&mut admin, db).await);
            }
            v
        };
        krate.clean(&mut admin).await;
        admin.close().await;
        let state = state.lock().unwrap().clone();
        assert_eq!(state.len(), 3);
        assert!(
            state.iter().all(|s| *s == state[0]),
            "every test sees what a fresh clone holds: {state:?}"
        );
        assert!(
            state[0].starts_with("0 a,b 1:false 1:false 2:true 0 1:false "),
            "{}",
            state[0]
        );
        assert_eq!(
            dbs[1].1, dbs[0].1,
            "the second test gets the first one's database"
        );
        assert_eq!(dbs[2].1, dbs[0].1, "and so does the third");
        assert_eq!(
            left,
            [false, false, false],
            "no passed database keeps its name"
        );
        assert_eq!(
            free_oids,
            [Some(dbs[0].1)],
            "the recycled database is free again"
        );
    });
}

fn a_database_whose_schema_or_seed_changed_is_dropped_not_recycled() {
    let krate = Crate::new("changed", SCHEMA);
    let changes = [
        ("passes_creating_a_table", "CREATE TABLE other (a int)"),
        ("passes_dropping_a_table", "DROP TABLE child"),
        (
            "passes_altering_a_column",
            "ALTER TABLE t ALTER COLUMN name DROP NOT NULL",
        ),
        (
            "passes_changing_a_seed_row",
            "UPDATE seeded SET k = 'c' WHERE k = 'b'",
        ),
        (
            "passes_adding_a_seed_row",
            "INSERT INTO seeded (k) VALUES ('z')",
        ),
        ("passes_granting", "GRANT SELECT ON t TO PUBLIC"),
        ("passes_commenting", "COMMENT ON TABLE t IS 'changed'"),
        (
            "passes_setting",
            "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET work_mem = ''8MB''', current_database()); END $$",
        ),
    ];
    let mut seen = Vec::new();
    for (name, sql) in changes {
        let (db, oid) = run_sql(&krate, name, sql, None);
        let (free, exists_now) = block_on(async {
            let mut admin = admin().await;
            let free = krate.free(&mut admin).await;
            let exists_now = oid_of(&mut admin, &db).await.is_some();
            admin.close().await;
            (free, exists_now)
        });
        seen.push((name, oid, free, exists_now));
    }
    // The control: inserting rows only is recycled.
    let (_, control_oid) = run_sql(
        &krate,
        "passes_inserting",
        "INSERT INTO t (name) VALUES ('x')",
        None,
    );
    block_on(async {
        let mut admin = admin().await;
        let free = krate.free(&mut admin).await;
        let free_oid = match free.first() {
            Some(f) => oid_of(&mut admin, f).await,
            None => None,
        };
        krate.clean(&mut admin).await;
        admin.close().await;
        for (name, _, free, exists_now) in &seen {
            assert!(free.is_empty(), "{name}: recycled, not dropped: {free:?}");
            assert!(!exists_now, "{name}: its database was kept");
        }
        let oids: std::collections::HashSet<i64> = seen.iter().map(|s| s.1).collect();
        assert_eq!(oids.len(), seen.len(), "each test got a fresh clone");
        assert_eq!(free_oid, Some(control_oid), "the control was recycled");
    });
}

fn concurrent_tests_never_share_a_database() {
    let krate = Crate::new("concurrent", SCHEMA);
    // The template, then three free databases made from it.
    run_sql(&krate, "passes_building", "SELECT 1", None);
    let made = block_on(async {
        let mut admin = admin().await;
        for db in krate.free(&mut admin).await {
            drop_db(&mut admin, &db).await;
        }
        let tpl = krate.template(&mut admin).await;
        let mut made = Vec::new();
        for i in 0..3 {
            let free = format!("qail_free_{}_made{i}", &tpl["qail_tpl_".len()..]);
            admin
                .batch_execute(&format!("CREATE DATABASE {free} TEMPLATE {tpl}"))
                .await
                .expect("a free database");
            made.push(oid_of(&mut admin, &free).await.expect("made"));
        }
        admin.close().await;
        made
    });
    let spans = Arc::new(Mutex::new(Vec::new()));
    let started = std::time::Instant::now();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let spans = Arc::clone(&spans);
            let dir = krate.dir;
            std::thread::spawn(move || {
                test_db::run(
                    Args {
                        manifest_dir: dir,
                        fixtures: &[],
                        name: "passes_concurrently",
                    },
                    move |db| async move {
                        let begin = started.elapsed();
                        let mut conn = Connection::connect(db.url()).await.expect("connects");
                        let oid: i64 = conn
                            .query_one(
                                "SELECT oid::bigint FROM pg_database \
                                 WHERE datname = current_database()",
                                &[],
                            )
                            .await
                            .expect("the oid")
                            .get(0);
                        let n: i64 = conn
                            .query_one("SELECT count(*) FROM t", &[])
                            .await
                            .expect("t")
                            .get(0);
                        conn.batch_execute("INSERT INTO t (name) VALUES ('mine')")
                            .await
                            .expect("inserted");
                        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                        conn.close().await;
                        spans
                            .lock()
                            .unwrap()
                            .push((oid, n, begin, started.elapsed()));
                    },
                );
            })
        })
        .collect();
    for t in threads {
        t.join().expect("the test passed");
    }
    test_db::wait_for_drops();
    block_on(async {
        let mut admin = admin().await;
        krate.clean(&mut admin).await;
        admin.close().await;
    });
    let spans = spans.lock().unwrap().clone();
    assert_eq!(spans.len(), 8);
    for (i, a) in spans.iter().enumerate() {
        assert_eq!(a.1, 0, "each test starts on empty tables: {spans:?}");
        for b in &spans[i + 1..] {
            let overlap = a.2 < b.3 && b.2 < a.3;
            assert!(
                !(overlap && a.0 == b.0),
                "two tests ran on one database at once: {spans:?}"
            );
        }
    }
    assert!(
        spans.iter().any(|s| made.contains(&s.0)),
        "no test claimed a free database: {spans:?}, free {made:?}"
    );
}
