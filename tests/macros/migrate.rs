//! `qail::migrate!` embeds every migration file of a directory (and nothing else), the same
//! migrations a run-time read of the directory finds; the embedded migrator applies them at
//! start-up through a pool, in a database of the test's own.

use qail::migrate::{Migrator, State};
use qail::{Config, Connection, Pool};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/macros/migrations");

#[test]
fn the_macro_sees_every_migration_file() {
    let embedded = qail::migrate!("tests/macros/migrations");
    let read = Migrator::from_dir(DIR).expect("a valid directory");
    assert_eq!(embedded.migrations(), read.migrations());
    let files: Vec<&str> = embedded
        .migrations()
        .iter()
        .map(|m| m.up().file())
        .collect();
    assert_eq!(
        files,
        [
            "20240101000000_harbors.sql",
            "20240102000000_country.up.sql",
            "20240103000000_name_index.sql"
        ]
    );
    let down = embedded.migrations()[1].down().map(|d| d.file());
    assert_eq!(down, Some("20240102000000_country.down.sql"));
    assert!(embedded.migrations()[2].up().no_transaction());
}

#[tokio::test]
async fn an_embedded_migrator_runs_at_start_up() {
    let name = format!("qail_macros_migrate_{}", std::process::id());
    let mut admin = Connection::connect(&super::url())
        .await
        .expect("the test server accepts connections at DATABASE_URL");
    for sql in [
        format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        format!("CREATE DATABASE {name}"),
    ] {
        admin
            .batch_execute(&sql)
            .await
            .expect("the test database is created");
    }
    let config = Config::parse(&super::url())
        .expect("DATABASE_URL is a valid connection string")
        .dbname(name.as_str());
    let pool = Pool::connect_with(config).await.expect("the pool connects");

    let migrator = qail::migrate!("tests/macros/migrations");
    let steps = migrator.run(&pool).await.expect("the migrations apply");
    assert_eq!(steps.len(), 3);
    assert!(
        migrator
            .run(&pool)
            .await
            .expect("nothing is pending")
            .is_empty()
    );
    let mut conn = pool.acquire().await.expect("a connection");
    let status = migrator.status(&mut conn).await.expect("status");
    assert!(status.migrations.iter().all(|m| m.state == State::Applied));
    drop(conn);
    pool.close().await;
    admin
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await
        .expect("the test database is dropped");
}
