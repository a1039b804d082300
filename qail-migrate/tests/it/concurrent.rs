//! Several runners at once — eight processes, directly and through pgbouncer in transaction
//! mode — apply each migration exactly once; a runner whose backend is terminated while it
//! runs a migration releases its lock (the next runner proceeds) or, outside a transaction,
//! leaves a claim the next runner reports dirty.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use qail_migrate::{ErrorKind, Migrator, Resolution};
use qail_pg::Connection;

use super::{TestDb, history, ints};

const RUNNERS: usize = 8;
/// What the runner (the `qail-migrate` binary) prints before the versions it applied.
const APPLIED: &str = "applied: ";

/// Writes ten migrations that log each application of theirs in table `log`: transactional
/// ones, a reversible one, and a non-transactional one (`CREATE INDEX CONCURRENTLY`), with
/// sleeps that keep runners overlapping.
fn write_mixed(db: &TestDb) {
    db.write(
        "01_log.sql",
        "CREATE TABLE log (v int NOT NULL, pid int NOT NULL DEFAULT pg_backend_pid());\n\
         INSERT INTO log (v) VALUES (1);\nSELECT pg_sleep(0.2);\n",
    );
    db.write(
        "02_a.sql",
        "CREATE TABLE a (id int);\nINSERT INTO log (v) VALUES (2);\nSELECT pg_sleep(0.1);\n",
    );
    db.write(
        "03_index.sql",
        "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY log_v ON log (v);\n\
         INSERT INTO log (v) VALUES (3);\nSELECT pg_sleep(0.3);\n",
    );
    db.write(
        "04_b.up.sql",
        "CREATE TABLE b (id int);\nINSERT INTO log (v) VALUES (4);\n",
    );
    db.write("04_b.down.sql", "DROP TABLE b;\n");
    for v in 5..=10 {
        db.write(
            &format!("{v:02}_t{v}.sql"),
            &format!("CREATE TABLE t{v} ();\nINSERT INTO log (v) VALUES ({v});\n"),
        );
    }
}

/// Starts a runner process (the `qail-migrate` binary) on `url` and `db`'s directory.
fn spawn_runner(db: &TestDb, url: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_qail-migrate"))
        .arg(url)
        .arg(db.dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("a runner process starts")
}

/// Starts [`RUNNERS`] runner processes on `url` at once and returns the versions each applied.
async fn run_processes(db: &TestDb, url: &str) -> Vec<Vec<i64>> {
    let children: Vec<_> = (0..RUNNERS).map(|_| spawn_runner(db, url)).collect();
    let outputs = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output().expect("the runner process ends"))
            .collect::<Vec<_>>()
    })
    .await
    .expect("the runners are awaited");
    outputs
        .iter()
        .map(|out| {
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "a runner failed:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let line = stdout
                .lines()
                .find_map(|l| l.find(APPLIED).map(|at| &l[at + APPLIED.len()..]))
                .unwrap_or_else(|| panic!("the runner printed what it applied:\n{stdout}"));
            line.split(',')
                .filter(|v| !v.trim().is_empty())
                .map(|v| v.trim().parse().expect("a version"))
                .collect()
        })
        .collect()
}

async fn exactly_once(db: &TestDb, url: &str) {
    write_mixed(db);
    // Samples how many sessions wait for the runners' lock at once, while they run.
    let stop = Arc::new(AtomicBool::new(false));
    let mut sampler = db.connect().await;
    let stop_sampling = Arc::clone(&stop);
    let sampled = tokio::spawn(async move {
        let mut most = 0;
        while !stop_sampling.load(Ordering::Acquire) {
            let waiting = ints(&mut sampler, LOCK_WAITERS).await;
            most = most.max(waiting.first().copied().unwrap_or(0));
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        most
    });
    let started = Instant::now();
    let applied = run_processes(db, url).await;
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Release);
    let most_waiting = sampled.await.expect("the sampler ends");
    assert!(
        most_waiting >= 2,
        "the runners overlapped: at most {most_waiting} waited"
    );
    let mut by_version: BTreeMap<i64, usize> = BTreeMap::new();
    for v in applied.iter().flatten() {
        *by_version.entry(*v).or_default() += 1;
    }
    let expected: BTreeMap<i64, usize> = (1..=10).map(|v| (v, 1)).collect();
    assert_eq!(
        by_version, expected,
        "each migration applied by exactly one runner: {applied:?}"
    );
    let mut conn = db.connect().await;
    // The log holds one row per migration: no migration's SQL ran twice.
    assert_eq!(
        ints(&mut conn, "SELECT v::int8 FROM log ORDER BY v").await,
        (1..=10).collect::<Vec<i64>>()
    );
    let states = history(&mut conn).await;
    assert_eq!(states.len(), 10);
    assert!(states.iter().all(|(_, s)| s == "applied"), "{states:?}");
    let runners = applied.iter().filter(|a| !a.is_empty()).count();
    eprintln!(
        "{RUNNERS} runner processes: done in {elapsed:?}; {runners} of them applied something; \
         up to {most_waiting} waited for the lock at once"
    );
    drop(conn);
}

#[tokio::test]
async fn eight_processes_apply_each_migration_once() {
    let db = TestDb::new("eight").await;
    exactly_once(&db, &db.url()).await;
    db.drop().await;
}

#[tokio::test]
async fn eight_processes_through_pgbouncer_apply_each_migration_once() {
    let db = TestDb::new("eight_pgb").await;
    exactly_once(&db, &db.pgbouncer_url()).await;
    db.drop().await;
}

/// Waits until a backend of the test database (other than `observer`'s) runs a statement
/// containing `needle`, and returns its pid.
async fn backend_running(observer: &mut Connection, needle: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rows = observer
            .query(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() \
                 AND pid <> pg_backend_pid() AND state = 'active' \
                 AND position($1 in query) > 0 AND position('pg_stat_activity' in query) = 0",
                &[&needle],
            )
            .await
            .expect("pg_stat_activity can be read");
        if let Some(row) = rows.first() {
            return row.get(0);
        }
        assert!(
            Instant::now() < deadline,
            "no backend ran `{needle}` within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How many sessions wait for an advisory lock in the test database.
const LOCK_WAITERS: &str = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' \
    AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

/// Waits until `n` sessions wait for an advisory lock in the test database.
async fn lock_waiters(observer: &mut Connection, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let waiting = ints(observer, LOCK_WAITERS).await;
        if waiting == [n] {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no runner waited for the lock within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The SQL of a migration that sleeps until table `go_on` exists (at most a minute).
const SLEEP_UNTIL_GO_ON: &str =
    "SELECT pg_sleep(CASE WHEN to_regclass('go_on') IS NULL THEN 60 ELSE 0 END)";

async fn killed_in_a_transaction(db: &TestDb, url: &str) {
    db.write(
        "1_log.sql",
        "CREATE TABLE log (v int);\nINSERT INTO log VALUES (1);",
    );
    db.write(
        "2_slow.sql",
        &format!("INSERT INTO log VALUES (2);\n{SLEEP_UNTIL_GO_ON};\n"),
    );
    db.write("3_after.sql", "INSERT INTO log VALUES (3);");
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let mut observer = db.connect().await;

    let mut first = Connection::connect(url)
        .await
        .expect("the first runner connects");
    let m = migrator.clone();
    let first = tokio::spawn(async move { m.run_on(&mut first, None).await });
    let pid = backend_running(&mut observer, "pg_sleep(CASE").await;

    let mut second = Connection::connect(url)
        .await
        .expect("the second runner connects");
    let m = migrator.clone();
    let second = tokio::spawn(async move { m.run_on(&mut second, None).await });
    // The second runner waits for the first one's transaction-level lock.
    lock_waiters(&mut observer, 1).await;

    observer
        .batch_execute("CREATE TABLE go_on ()")
        .await
        .expect("created");
    let terminated = observer
        .query_one("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .expect("the first runner's backend is terminated");
    assert!(terminated.get::<bool>(0));

    let e = first.await.expect("the first runner ends").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Migration, "{e}");
    assert!(e.to_string().contains("`2_slow.sql`"), "{e}");
    // Its lock went with its transaction: the second runner applies the rest.
    let steps = tokio::time::timeout(Duration::from_secs(30), second)
        .await
        .expect("the second runner proceeds")
        .expect("the second runner ends")
        .expect("the second runner applies the rest");
    assert_eq!(steps.iter().map(|s| s.version).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(
        ints(&mut observer, "SELECT v::int8 FROM log ORDER BY v").await,
        [1, 2, 3]
    );
    // No advisory lock is left in the database: none held, none waited for.
    let held = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' \
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    assert_eq!(ints(&mut observer, held).await, [0]);
    drop(observer);
}

#[tokio::test]
async fn a_runner_killed_in_a_transaction_releases_its_lock() {
    let db = TestDb::new("killed_tx").await;
    killed_in_a_transaction(&db, &db.url()).await;
    db.drop().await;
}

#[tokio::test]
async fn a_runner_killed_in_a_transaction_through_pgbouncer_releases_its_lock() {
    let db = TestDb::new("killed_tx_pgb").await;
    killed_in_a_transaction(&db, &db.pgbouncer_url()).await;
    db.drop().await;
}

async fn killed_outside_a_transaction(db: &TestDb, url: &str) {
    db.write("1_log.sql", "CREATE TABLE log (v int);");
    db.write(
        "2_slow.sql",
        &format!("-- qail:no-transaction\nINSERT INTO log VALUES (2);\n{SLEEP_UNTIL_GO_ON};\n"),
    );
    db.write("3_after.sql", "INSERT INTO log VALUES (3);");
    let grace = Duration::from_secs(1);
    let migrator = Migrator::from_dir(db.dir())
        .expect("a valid directory")
        .claim_grace(grace);
    let mut observer = db.connect().await;

    let mut first = Connection::connect(url)
        .await
        .expect("the first runner connects");
    let m = migrator.clone();
    let first = tokio::spawn(async move { m.run_on(&mut first, None).await });
    let pid = backend_running(&mut observer, "pg_sleep(CASE").await;

    let mut second = Connection::connect(url)
        .await
        .expect("the second runner connects");
    let m = migrator.clone();
    let second = tokio::spawn(async move { m.run_on(&mut second, None).await });
    // While the first runner's statement runs, the second waits — past its claim grace.
    tokio::time::sleep(grace * 3).await;
    assert!(
        !second.is_finished(),
        "the second runner waits for a live claimant"
    );

    let terminated = observer
        .query_one("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .expect("the first runner's backend is terminated");
    assert!(terminated.get::<bool>(0));
    let e = first.await.expect("the first runner ends").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Dirty, "{e}");

    // The second runner finds the claim dead (or marked dirty) and reports it, never
    // running the migration again.
    let e = tokio::time::timeout(Duration::from_secs(30), second)
        .await
        .expect("the second runner ends within its grace")
        .expect("the second runner ends")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Dirty, "{e}");
    assert!(e.to_string().contains("migration 2 (slow) is dirty"), "{e}");
    assert!(e.to_string().contains("fix the database by hand"), "{e}");
    assert_eq!(
        history(&mut observer).await,
        [(1, "applied".into()), (2, "dirty".into())]
    );
    assert_eq!(ints(&mut observer, "SELECT v::int8 FROM log").await, [2]);

    // Undone by hand and resolved as pending, it runs again.
    observer
        .batch_execute("DELETE FROM log; CREATE TABLE go_on ()")
        .await
        .expect("undone by hand");
    migrator
        .resolve(&mut observer, 2, Resolution::Pending)
        .await
        .expect("resolved");
    let steps = migrator.run_on(&mut observer, None).await.expect("run");
    assert_eq!(steps.iter().map(|s| s.version).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(
        ints(&mut observer, "SELECT v::int8 FROM log ORDER BY v").await,
        [2, 3]
    );
    drop(observer);
}

#[tokio::test]
async fn a_runner_killed_outside_a_transaction_leaves_it_dirty() {
    let db = TestDb::new("killed_notx").await;
    killed_outside_a_transaction(&db, &db.url()).await;
    db.drop().await;
}

#[tokio::test]
async fn a_runner_killed_outside_a_transaction_through_pgbouncer_leaves_it_dirty() {
    let db = TestDb::new("killed_notx_pgb").await;
    killed_outside_a_transaction(&db, &db.pgbouncer_url()).await;
    db.drop().await;
}

/// A runner process killed (SIGKILL) while its migration runs: its backend finishes the
/// statement, finds its client gone and rolls the transaction back, releasing the lock; the
/// next runner then applies the migration — once.
#[tokio::test]
async fn a_runner_process_killed_in_a_transaction_is_replaced() {
    let db = TestDb::new("sigkill_tx").await;
    db.write(
        "1_log.sql",
        "CREATE TABLE log (v int);\nINSERT INTO log VALUES (1);",
    );
    db.write(
        "2_slow.sql",
        "INSERT INTO log VALUES (2);\nSELECT pg_sleep(CASE WHEN to_regclass('go_on') IS NULL \
         THEN 2 ELSE 0 END);\n",
    );
    db.write("3_after.sql", "INSERT INTO log VALUES (3);");
    let mut observer = db.connect().await;
    let mut child = spawn_runner(&db, &db.url());
    backend_running(&mut observer, "pg_sleep(CASE").await;
    child.kill().expect("the runner process is killed");
    child.wait().expect("the runner process ends");
    observer
        .batch_execute("CREATE TABLE go_on ()")
        .await
        .expect("created");

    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let mut conn = db.connect().await;
    let started = Instant::now();
    let steps = migrator
        .run_on(&mut conn, None)
        .await
        .expect("the next runner applies the rest");
    assert_eq!(steps.iter().map(|s| s.version).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(
        ints(&mut observer, "SELECT v::int8 FROM log ORDER BY v").await,
        [1, 2, 3]
    );
    eprintln!(
        "a killed runner's lock was released after {:?}",
        started.elapsed()
    );
    drop((conn, observer));
    db.drop().await;
}

/// A runner process killed while it runs a non-transactional migration: the claim stays, with
/// no runner; the next runner waits out the claim grace, then reports the migration dirty.
#[tokio::test]
async fn a_runner_process_killed_outside_a_transaction_is_reported_dirty() {
    let db = TestDb::new("sigkill_notx").await;
    db.write("1_log.sql", "CREATE TABLE log (v int);");
    db.write(
        "2_slow.sql",
        "-- qail:no-transaction\nINSERT INTO log VALUES (2);\nSELECT pg_sleep(1);\n\
         INSERT INTO log VALUES (20);\n",
    );
    let mut observer = db.connect().await;
    let mut child = spawn_runner(&db, &db.url());
    backend_running(&mut observer, "pg_sleep(1)").await;
    child.kill().expect("the runner process is killed");
    child.wait().expect("the runner process ends");

    let migrator = Migrator::from_dir(db.dir())
        .expect("a valid directory")
        .claim_grace(Duration::from_secs(1));
    let mut conn = db.connect().await;
    let e = migrator.run_on(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Dirty, "{e}");
    assert!(e.to_string().contains("no sign of life"), "{e}");
    // The statement the killed runner had sent ran to its end; the next one never ran.
    assert_eq!(
        ints(&mut observer, "SELECT v::int8 FROM log ORDER BY v").await,
        [2]
    );
    assert_eq!(
        history(&mut observer).await,
        [(1, "applied".into()), (2, "dirty".into())]
    );
    drop((conn, observer));
    db.drop().await;
}
