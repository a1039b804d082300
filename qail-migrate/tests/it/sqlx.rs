//! A database sqlx migrated switches to qail: its `_sqlx_migrations` rows are recorded once
//! in qail's history (each file checked against sqlx's checksum), and `run` applies only what
//! sqlx had not.

use qail_migrate::{ErrorKind, Migrator, State};

use super::{TestDb, history};

/// sqlx's history table, as sqlx (0.7, 0.8) creates it.
const SQLX_TABLE: &str = "CREATE TABLE _sqlx_migrations (
    version BIGINT PRIMARY KEY,
    description TEXT NOT NULL,
    installed_on TIMESTAMPTZ NOT NULL DEFAULT now(),
    success BOOLEAN NOT NULL,
    checksum BYTEA NOT NULL,
    execution_time BIGINT NOT NULL
)";

#[tokio::test]
async fn a_database_sqlx_migrated_switches_without_rerunning() {
    let db = TestDb::new("sqlx").await;
    let first = "CREATE TABLE harbors (id bigint PRIMARY KEY);\r\n";
    let second = "ALTER TABLE harbors ADD COLUMN name text;\n";
    db.write("20240101000000_harbors.sql", first);
    db.write("20240102000000_name.up.sql", second);
    db.write(
        "20240102000000_name.down.sql",
        "ALTER TABLE harbors DROP COLUMN name;\n",
    );
    db.write(
        "20240103000000_country.sql",
        "ALTER TABLE harbors ADD COLUMN country text;\n",
    );
    let mut conn = db.connect().await;
    // What sqlx did: the first two applied and recorded with SHA-384 of each file's text.
    conn.batch_execute(&format!("{SQLX_TABLE}; {first} {second}"))
        .await
        .expect("sqlx's state");
    for (version, description, sql) in [
        (20240101000000_i64, "harbors", first),
        (20240102000000, "name", second),
    ] {
        conn.execute(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES ($1, $2, true, sha384(convert_to($3, 'UTF8')), 1500000)",
            &[&version, &description, &sql],
        )
        .await
        .expect("sqlx's row");
    }

    // An edited file is refused, naming it; nothing is recorded.
    db.write(
        "20240101000000_harbors.sql",
        "CREATE TABLE harbors (id int PRIMARY KEY);\n",
    );
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let e = migrator.import_sqlx(&mut conn).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Edited);
    assert!(
        e.to_string().contains("`20240101000000_harbors.sql`"),
        "{e}"
    );
    assert!(history(&mut conn).await.is_empty());

    db.write("20240101000000_harbors.sql", first);
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let imported = migrator.import_sqlx(&mut conn).await.expect("imported");
    assert_eq!(imported, [20240101000000, 20240102000000]);
    assert!(
        migrator
            .import_sqlx(&mut conn)
            .await
            .expect("imported")
            .is_empty()
    );
    let status = migrator.status(&mut conn).await.expect("status");
    let states: Vec<State> = status.migrations.iter().map(|m| m.state).collect();
    assert_eq!(states, [State::Applied, State::Applied, State::Pending]);
    assert_eq!(
        status.migrations[0].duration,
        Some(std::time::Duration::from_millis(1))
    );

    let steps = migrator.run_on(&mut conn, None).await.expect("run");
    assert_eq!(
        steps.iter().map(|s| s.version).collect::<Vec<_>>(),
        [20240103000000]
    );
    drop(conn);
    db.drop().await;
}

#[tokio::test]
async fn without_sqlx_history_import_says_so() {
    let db = TestDb::new("sqlx_none").await;
    db.write("1_a.sql", "CREATE TABLE a ();");
    let mut conn = db.connect().await;
    let migrator = Migrator::from_dir(db.dir()).expect("a valid directory");
    let e = migrator.import_sqlx(&mut conn).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage);
    assert!(e.to_string().contains("_sqlx_migrations"), "{e}");
    drop(conn);
    db.drop().await;
}
