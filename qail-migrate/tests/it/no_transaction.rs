//! Files marked `-- qail:no-transaction` (or sqlx's `-- no-transaction`): they run outside a
//! transaction, and a failure leaves a dirty migration that blocks runs until resolved.

use qail_migrate::{ErrorKind, Migrator, Resolution, State};

use super::{TestDb, history, ints};

#[tokio::test]
async fn create_index_concurrently_runs_outside_a_transaction() {
    let db = TestDb::new("concurrently").await;
    db.write("1_table.sql", "CREATE TABLE t (a int, b int);");
    db.write(
        "2_index.sql",
        "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY t_a ON t (a);\n\
         CREATE INDEX CONCURRENTLY t_b ON t (b);\n",
    );
    db.write(
        "3_sqlx_marker.sql",
        "-- no-transaction\nCREATE INDEX CONCURRENTLY t_ab ON t (a, b);",
    );
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    assert!(migrator.migrations()[1].up().no_transaction());
    let steps = migrator.run_on(&mut conn, None).await.expect("run");
    assert_eq!(steps.len(), 3);
    assert_eq!(
        ints(
            &mut conn,
            "SELECT count(*) FROM pg_indexes WHERE tablename = 't'"
        )
        .await,
        [3]
    );
    assert_eq!(
        history(&mut conn).await,
        [
            (1, "applied".into()),
            (2, "applied".into()),
            (3, "applied".into())
        ]
    );
    let row = conn
        .query_one(
            "SELECT no_transaction, claim IS NULL, duration_ms IS NOT NULL \
             FROM _qail_migrations WHERE version = 2",
            &[],
        )
        .await
        .expect("the history row");
    assert!(row.get::<bool>(0) && row.get::<bool>(1) && row.get::<bool>(2));
    drop(conn);
    db.drop().await;
}

#[tokio::test]
async fn concurrently_in_a_transaction_says_to_mark_the_file() {
    let db = TestDb::new("unmarked").await;
    db.write("1_table.sql", "CREATE TABLE t (a int);");
    db.write("2_index.sql", "CREATE INDEX CONCURRENTLY t_a ON t (a);");
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let e = migrator.run_on(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Migration);
    assert!(e.to_string().contains("`-- qail:no-transaction`"), "{e}");
    assert_eq!(history(&mut conn).await, [(1, "applied".into())]);
    drop(conn);
    db.drop().await;
}

#[tokio::test]
async fn a_failure_leaves_it_dirty_until_resolved() {
    let db = TestDb::new("dirty").await;
    db.write("1_table.sql", "CREATE TABLE t (a int);");
    db.write(
        "2_half.sql",
        "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY t_a ON t (a);\n\
         CREATE INDEX CONCURRENTLY t_missing ON t (missing);\n",
    );
    db.write("3_after.sql", "CREATE TABLE after ();");
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let e = migrator.run_on(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Dirty);
    let message = e.to_string();
    assert!(message.contains("`2_half.sql`"), "{message}");
    assert!(message.contains("statement 2 of 2"), "{message}");
    assert!(message.contains("fix the database by hand"), "{message}");
    assert!(message.contains("resolve"), "{message}");
    assert_eq!(e.db_error().and_then(|e| e.code()), Some("42703"));
    // The first statement stays applied: the database holds part of the migration.
    assert_eq!(
        ints(
            &mut conn,
            "SELECT count(*) FROM pg_indexes WHERE indexname = 't_a'"
        )
        .await,
        [1]
    );
    let status = migrator.status(&mut conn).await.expect("status");
    assert_eq!(status.migrations[1].state, State::Dirty);
    assert!(!status.is_up_to_date());
    let recorded = status.migrations[1].error.clone().unwrap_or_default();
    assert!(recorded.contains("statement 2 of 2"), "{recorded}");

    // Dirty blocks every further run, with the same advice.
    let e = migrator.run_on(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Dirty);
    assert!(e.to_string().contains("migration 2 (half) is dirty"), "{e}");
    assert!(e.to_string().contains("resolve"), "{e}");
    let e = migrator.revert(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Dirty);

    // Fixed by hand (the index created as the file meant), then resolved as applied.
    conn.batch_execute("ALTER TABLE t ADD COLUMN missing int")
        .await
        .expect("fixed by hand");
    let e = migrator
        .resolve(&mut conn, 3, Resolution::Applied)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage);
    conn.batch_execute("CREATE INDEX t_missing ON t (missing)")
        .await
        .expect("fixed by hand");
    migrator
        .resolve(&mut conn, 2, Resolution::Applied)
        .await
        .expect("resolved");
    let steps = migrator.run_on(&mut conn, None).await.expect("run");
    assert_eq!(steps.iter().map(|s| s.version).collect::<Vec<_>>(), [3]);
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
async fn resolved_as_pending_runs_again() {
    let db = TestDb::new("pending").await;
    db.write("1_table.sql", "CREATE TABLE t (a int);");
    db.write(
        "2_index.sql",
        "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY t_b ON t (b);\n",
    );
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let e = migrator.run_on(&mut conn, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Dirty);
    // Undone by hand (CONCURRENTLY can leave an invalid index behind; here it left none),
    // the column it needs added, then resolved as pending: the next run applies it.
    conn.batch_execute("DROP INDEX IF EXISTS t_b; ALTER TABLE t ADD COLUMN b int")
        .await
        .expect("fixed by hand");
    migrator
        .resolve(&mut conn, 2, Resolution::Pending)
        .await
        .expect("resolved");
    assert_eq!(
        migrator.run_on(&mut conn, None).await.expect("run").len(),
        1
    );
    assert_eq!(
        history(&mut conn).await,
        [(1, "applied".into()), (2, "applied".into())]
    );
    drop(conn);
    db.drop().await;
}

#[tokio::test]
async fn a_reversible_pair_outside_a_transaction() {
    let db = TestDb::new("notx_down").await;
    db.write("1_table.sql", "CREATE TABLE t (a int);");
    db.write(
        "2_index.up.sql",
        "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY t_a ON t (a);",
    );
    db.write(
        "2_index.down.sql",
        "-- qail:no-transaction\nDROP INDEX CONCURRENTLY t_a;",
    );
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    migrator.run_on(&mut conn, None).await.expect("run");
    let steps = migrator.revert(&mut conn, None).await.expect("revert");
    assert_eq!(steps.len(), 1);
    assert_eq!(history(&mut conn).await, [(1, "applied".into())]);
    assert_eq!(
        ints(
            &mut conn,
            "SELECT count(*) FROM pg_indexes WHERE tablename = 't'"
        )
        .await,
        [0]
    );
    drop(conn);
    db.drop().await;
}
