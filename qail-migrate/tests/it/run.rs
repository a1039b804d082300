//! One runner: fresh, pending, applied, edited, repaired, missing, reverted; a failing
//! migration; a target version; a hundred migrations.

use std::time::Instant;

use qail_migrate::{ErrorKind, Migrator, State};

use super::{TestDb, history, ints};

fn states(status: &qail_migrate::Status) -> Vec<(i64, State)> {
    status
        .migrations
        .iter()
        .map(|m| (m.version, m.state))
        .collect()
}

#[tokio::test]
async fn fresh_pending_applied_and_status() {
    let db = TestDb::new("fresh").await;
    db.write(
        "0001_create_log.sql",
        "CREATE TABLE log (v int);\nINSERT INTO log VALUES (1);\n",
    );
    db.write("0002_second.up.sql", "INSERT INTO log VALUES (2);");
    db.write("0002_second.down.sql", "DELETE FROM log WHERE v = 2;");
    db.write("README.md", "not a migration");
    let mut conn = db.connect().await;

    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let status = migrator.status(&mut conn).await.expect("status");
    assert_eq!(states(&status), [(1, State::Pending), (2, State::Pending)]);
    assert!(!status.is_up_to_date());

    let steps = migrator.run_on(&mut conn, None).await.expect("run");
    assert_eq!(steps.iter().map(|s| s.version).collect::<Vec<_>>(), [1, 2]);
    // The .down.sql was not applied: 2 is still in the log.
    assert_eq!(
        ints(&mut conn, "SELECT v::int8 FROM log ORDER BY v").await,
        [1, 2]
    );
    let status = migrator.status(&mut conn).await.expect("status");
    assert_eq!(states(&status), [(1, State::Applied), (2, State::Applied)]);
    assert!(status.is_up_to_date());
    assert!(
        status.to_string().contains("0002_second.up.sql"),
        "{status}"
    );

    // Nothing pending: a second run applies nothing.
    assert!(
        migrator
            .run_on(&mut conn, None)
            .await
            .expect("run")
            .is_empty()
    );

    // A new file is pending, then applied.
    db.write("0003_third.sql", "INSERT INTO log VALUES (3);");
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let status = migrator.status(&mut conn).await.expect("status");
    assert_eq!(status.with_state(State::Pending).count(), 1);
    let steps = migrator.run_on(&mut conn, None).await.expect("run");
    assert_eq!(steps.len(), 1);
    let row = conn
        .query_one(
            "SELECT name, checksum, duration_ms IS NOT NULL, applied_at <= now() \
             FROM _qail_migrations WHERE version = 3",
            &[],
        )
        .await
        .expect("the history row");
    assert_eq!(row.get::<String>(0), "third");
    assert_eq!(row.get::<String>(1), migrator.migrations()[2].checksum());
    assert!(row.get::<bool>(2) && row.get::<bool>(3));
    drop(conn);
    db.drop().await;
}

#[tokio::test]
async fn edited_file_is_an_error_naming_it_until_repaired() {
    let db = TestDb::new("edited").await;
    db.write("1_init.sql", "CREATE TABLE t (id int);\n");
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    migrator.run_on(&mut conn, None).await.expect("run");

    // Line endings and trailing whitespace do not count as edits.
    db.write("1_init.sql", "CREATE TABLE t (id int);   \r\n\r\n");
    db.write("2_next.sql", "ALTER TABLE t ADD COLUMN name text;\n");
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    assert_eq!(
        migrator.run_on(&mut conn, None).await.expect("run").len(),
        1
    );

    // Any other edit does, and names the file.
    db.write("1_init.sql", "CREATE TABLE t (id bigint);\n");
    db.write("3_more.sql", "ALTER TABLE t ADD COLUMN more text;\n");
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let e = migrator.run_on(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Edited);
    assert!(e.to_string().contains("`1_init.sql`"), "{e}");
    assert!(e.to_string().contains("repair"), "{e}");
    let status = migrator.status(&mut conn).await.expect("status");
    assert_eq!(
        states(&status),
        [(1, State::Edited), (2, State::Applied), (3, State::Pending)]
    );
    // Nothing after the error ran.
    assert_eq!(history(&mut conn).await.len(), 2);

    // repair records the new checksum on purpose; then the run goes on.
    assert_eq!(migrator.repair(&mut conn).await.expect("repair"), [1]);
    assert_eq!(
        migrator.run_on(&mut conn, None).await.expect("run").len(),
        1
    );
    assert!(
        migrator
            .status(&mut conn)
            .await
            .expect("status")
            .is_up_to_date()
    );
    drop(conn);
    db.drop().await;
}

#[tokio::test]
async fn missing_file_is_reported() {
    let db = TestDb::new("missing").await;
    db.write("1_a.sql", "CREATE TABLE a ();");
    db.write("2_b.sql", "CREATE TABLE b ();");
    let mut conn = db.connect().await;
    Migrator::from_dir(db.dir())
        .expect("a valid directory")
        .run_on(&mut conn, None)
        .await
        .expect("run");
    db.remove("2_b.sql");
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let status = migrator.status(&mut conn).await.expect("status");
    assert_eq!(
        states(&status),
        [(1, State::Applied), (2, State::MissingFile)]
    );
    let e = migrator.run_on(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFile);
    assert!(e.to_string().contains("migration 2 (b)"), "{e}");
    let migrator = migrator.ignore_missing(true);
    assert!(
        migrator
            .run_on(&mut conn, None)
            .await
            .expect("run")
            .is_empty()
    );
    drop(conn);
    db.drop().await;
}

#[tokio::test]
async fn failing_migration_rolls_back_with_its_history_row() {
    let db = TestDb::new("failing").await;
    db.write("1_a.sql", "CREATE TABLE a (id int);");
    db.write(
        "2_b.sql",
        "CREATE TABLE b (id int);\nINSERT INTO nowhere VALUES (1);",
    );
    db.write("3_c.sql", "CREATE TABLE c (id int);");
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let e = migrator.run_on(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Migration);
    assert!(e.to_string().contains("`2_b.sql`"), "{e}");
    assert!(e.to_string().contains("nothing of it was applied"), "{e}");
    assert_eq!(e.db_error().and_then(|e| e.code()), Some("42P01"));
    assert_eq!(history(&mut conn).await, [(1, "applied".to_owned())]);
    let tables = ints(
        &mut conn,
        "SELECT count(*) FROM pg_tables WHERE tablename IN ('b', 'c')",
    )
    .await;
    assert_eq!(tables, [0]);

    // Fixed, the run goes on from there.
    db.write("2_b.sql", "CREATE TABLE b (id int);");
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    assert_eq!(
        migrator.run_on(&mut conn, None).await.expect("run").len(),
        2
    );
    drop(conn);
    db.drop().await;
}

#[tokio::test]
async fn target_and_revert() {
    let db = TestDb::new("revert").await;
    for v in 1..=3 {
        db.write(
            &format!("{v}_t{v}.up.sql"),
            &format!("CREATE TABLE t{v} ();"),
        );
        db.write(&format!("{v}_t{v}.down.sql"), &format!("DROP TABLE t{v};"));
    }
    db.write("4_plain.sql", "CREATE TABLE t4 ();");
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let tables = "SELECT count(*) FROM pg_tables WHERE tablename LIKE 't_'";

    assert_eq!(
        migrator
            .run_on(&mut conn, Some(2))
            .await
            .expect("run")
            .len(),
        2
    );
    assert_eq!(ints(&mut conn, tables).await, [2]);
    let e = migrator.run_on(&mut conn, Some(7)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage);

    // The latest one.
    let steps = migrator.revert(&mut conn, None).await.expect("revert");
    assert_eq!(steps.iter().map(|s| s.version).collect::<Vec<_>>(), [2]);
    assert_eq!(ints(&mut conn, tables).await, [1]);
    let status = migrator.status(&mut conn).await.expect("status");
    assert_eq!(
        states(&status),
        [
            (1, State::Applied),
            (2, State::Pending),
            (3, State::Pending),
            (4, State::Pending)
        ]
    );

    // A migration without a .down.sql cannot be reverted, and nothing is.
    migrator.run_on(&mut conn, None).await.expect("run");
    let e = migrator.revert(&mut conn, Some(0)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Irreversible);
    assert!(e.to_string().contains("`4_plain.sql`"), "{e}");
    assert_eq!(ints(&mut conn, tables).await, [4]);

    // Down to a target: those above it, newest first.
    db.remove("4_plain.sql");
    conn.batch_execute("DELETE FROM _qail_migrations WHERE version = 4; DROP TABLE t4")
        .await
        .expect("cleaned up");
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let steps = migrator.revert(&mut conn, Some(1)).await.expect("revert");
    assert_eq!(steps.iter().map(|s| s.version).collect::<Vec<_>>(), [3, 2]);
    assert_eq!(history(&mut conn).await, [(1, "applied".to_owned())]);
    let steps = migrator.revert(&mut conn, Some(0)).await.expect("revert");
    assert_eq!(steps.len(), 1);
    assert_eq!(ints(&mut conn, tables).await, [0]);
    drop(conn);
    db.drop().await;
}

/// pg_dump's output starts with `set_config('search_path', '', false)`: the history table
/// stays where the run found it (the schema current when it started).
#[tokio::test]
async fn a_migration_emptying_search_path_keeps_the_history_in_place() {
    let db = TestDb::new("search_path").await;
    db.write(
        "1_dump.sql",
        "SELECT pg_catalog.set_config('search_path', '', false);\n\
         CREATE TABLE public.a (id int);\n",
    );
    db.write("2_next.sql", "CREATE TABLE public.b (id int);\n");
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    assert_eq!(
        migrator.run_on(&mut conn, None).await.expect("run").len(),
        2
    );
    // The session's search_path is empty now: with no schema to find the history in, a run
    // says what to do.
    let e = migrator.run_on(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage);
    assert!(e.to_string().contains("search_path"), "{e}");
    drop(conn);
    let mut conn = db.connect().await;
    assert!(
        migrator
            .run_on(&mut conn, None)
            .await
            .expect("run")
            .is_empty()
    );
    assert_eq!(
        history(&mut conn).await,
        [(1, "applied".into()), (2, "applied".into())]
    );
    drop(conn);
    db.drop().await;
}

/// The time to apply 100 small migrations (each a table, an index and a row) on a fresh
/// database, and to find nothing pending afterwards; printed with `--nocapture`.
async fn a_hundred_migrations_on(test: &str, through_pgbouncer: bool) {
    let db = TestDb::new(test).await;
    for v in 1..=100 {
        db.write(
            &format!("{v:04}_table_{v}.sql"),
            &format!(
                "CREATE TABLE t{v} (id int PRIMARY KEY, name text NOT NULL);\n\
                 CREATE INDEX t{v}_name ON t{v} (name);\n\
                 INSERT INTO t{v} VALUES ({v}, 'row {v}');\n"
            ),
        );
    }
    let url = if through_pgbouncer {
        db.pgbouncer_url()
    } else {
        db.url()
    };
    let mut conn = qail_pg::Connection::connect(&url)
        .await
        .expect("the test database accepts connections");
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let started = Instant::now();
    let steps = migrator.run_on(&mut conn, None).await.expect("run");
    let apply = started.elapsed();
    assert_eq!(steps.len(), 100);
    let started = Instant::now();
    let again = migrator.run_on(&mut conn, None).await.expect("run");
    let check = started.elapsed();
    assert!(again.is_empty());
    eprintln!("{test}: 100 migrations applied in {apply:?}; nothing pending found in {check:?}");
    let tables = "SELECT count(*) FROM pg_tables WHERE tablename LIKE 't%'";
    assert_eq!(ints(&mut conn, tables).await, [100]);
    drop(conn);
    db.drop().await;
}

#[tokio::test]
async fn a_hundred_migrations() {
    a_hundred_migrations_on("hundred", false).await;
}

#[tokio::test]
async fn a_hundred_migrations_through_pgbouncer() {
    a_hundred_migrations_on("hundred_pgb", true).await;
}
