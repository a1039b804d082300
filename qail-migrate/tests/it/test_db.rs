//! `#[qail::test]`'s run time (`test_db::run`): a passed test's database is dropped after
//! the test returned, by the process's dropper; the first test of a process sweeps the passed
//! databases that processes which exited left behind; a failed test's database is kept, and
//! so is any database not marked passed.

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

async fn templates(conn: &mut Connection) -> Vec<String> {
    conn.query(
        "SELECT datname::text FROM pg_database WHERE datname LIKE 'qail\\_tpl\\_%'",
        &[],
    )
    .await
    .expect("pg_database is read")
    .iter()
    .map(|r| r.get(0))
    .collect()
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

#[test]
fn passed_databases_are_dropped_after_the_test_and_failed_ones_kept() {
    let pid = std::process::id();
    let dir = std::env::temp_dir().join(format!("qail_migrate_test_db_{pid}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the crate directory");
    std::fs::write(dir.join("schema.sql"), "CREATE TABLE t (id int);\n").expect("schema.sql");
    let dir: &'static str = Box::leak(dir.to_string_lossy().into_owned().into_boxed_str());

    // What a process that exited before its dropper was done leaves: a passed test's
    // database, marked, and a failed test's, not marked.
    let left_passed = format!("qail_t_left_passed_{pid}");
    let left_failed = format!("qail_t_left_failed_{pid}");
    let before = block_on(async {
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
        let before = templates(&mut admin).await;
        admin.close().await;
        before
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
        for tpl in templates(&mut admin).await {
            if !before.contains(&tpl) {
                for sql in [
                    format!("ALTER DATABASE {tpl} WITH IS_TEMPLATE false"),
                    format!("DROP DATABASE IF EXISTS {tpl}"),
                ] {
                    admin.batch_execute(&sql).await.expect("template dropped");
                }
            }
        }
        admin.close().await;
        let _ = std::fs::remove_dir_all(dir);
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
