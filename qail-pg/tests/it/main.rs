//! Integration tests of qail-pg against a real PostgreSQL server (`DATABASE_URL`).

mod auth;
mod cancel;
mod cancel_safety;
mod client;
mod compiled;
mod connect;
mod copy;
mod failover;
mod faults;
mod hostile;
mod hosts;
mod last_words;
mod notify;
mod pgbouncer;
mod pipeline;
mod pipeline_atomic;
mod pool;
mod protocol;
mod proxy;
mod query;
#[cfg(feature = "tracing")]
mod trace;
mod transaction;
mod types;
mod verify;

use qail_pg::{Config, Connection};

/// The server the tests use: `DATABASE_URL`, else the local default.
fn url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

fn config() -> Config {
    Config::parse(&url()).expect("DATABASE_URL is a valid connection string")
}

async fn connect() -> Connection {
    Connection::connect_with(&config())
        .await
        .expect("the test server accepts connections at DATABASE_URL")
}

/// The major version of the server `conn` talks to (`server_version_num` / 10000), for what
/// differs between versions.
async fn server_major(conn: &mut Connection) -> i32 {
    let row = conn
        .query_one("SELECT current_setting('server_version_num')::int4", &[])
        .await
        .expect("server_version_num is readable");
    row.get::<i32>(0) / 10_000
}
