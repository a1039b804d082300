//! Connections and scratch databases.

use qail_pg::Connection;

pub(crate) fn url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// The server URL with another database name.
pub(crate) fn url_for(db: &str) -> String {
    let base = url();
    let (main, query) = match base.split_once('?') {
        Some((m, q)) => (m.to_owned(), format!("?{q}")),
        None => (base.clone(), String::new()),
    };
    let (prefix, _) = main
        .rsplit_once('/')
        .expect("DATABASE_URL is a URL with a database");
    if prefix.ends_with('/') {
        // postgres://host (no database part): append one.
        format!("{main}/{db}{query}")
    } else {
        format!("{prefix}/{db}{query}")
    }
}

pub(crate) async fn connect(url: &str) -> Connection {
    Connection::connect(url)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"))
}

/// Creates (or re-creates) database `name` and connects to it.
pub(crate) async fn scratch_db(name: &str) -> Connection {
    let mut admin = connect(&url()).await;
    // Note: each in its own simple query; several would run in one implicit transaction.
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .expect("drop old scratch database");
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create scratch database");
    connect(&url_for(name)).await
}

pub(crate) async fn drop_db(name: &str) {
    let mut admin = connect(&url()).await;
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .expect("drop scratch database");
}
