//! `qail!` and the derives end to end against a real PostgreSQL (`DATABASE_URL`). The
//! queries are checked at compile time against the workspace's `qail.schema.json`; each test
//! creates the tables it needs in its own schema and points `search_path` at it.

mod drift;
mod dynamic;
mod facade;
mod ferry;
mod migrate;
mod nested;
mod nested_json;
mod pool;
mod registry;
mod roundtrip;

use qail::Connection;

/// The server the tests use: `DATABASE_URL`, else the local default.
fn url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// A connection whose search_path is a fresh schema `qail_macros_<name>_<pid>` holding `ddl`.
async fn connect_in(name: &str, ddl: &str) -> Connection {
    let mut conn = Connection::connect(&url())
        .await
        .expect("the test server accepts connections at DATABASE_URL");
    let schema = format!("qail_macros_{name}_{}", std::process::id());
    conn.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; SET search_path = {schema}; {ddl}"
    ))
    .await
    .expect("the test schema can be created");
    conn
}

/// The ferry tables of the snapshot, as the fixture's DDL defines them.
const FERRY_DDL: &str = "
    CREATE TABLE harbors (
        id uuid PRIMARY KEY, name text NOT NULL, country text NOT NULL, code varchar(8) UNIQUE,
        latitude float8, longitude float8, timezone text, created_at timestamptz NOT NULL DEFAULT now());
    CREATE TABLE operators (
        id uuid PRIMARY KEY, name text NOT NULL, website text, rating numeric(3, 2), founded date,
        active bool NOT NULL DEFAULT true);
    CREATE TABLE odyssey_connections (
        id uuid PRIMARY KEY, name text NOT NULL,
        origin_harbor_id uuid NOT NULL REFERENCES harbors (id),
        destination_harbor_id uuid NOT NULL REFERENCES harbors (id),
        operator_id uuid REFERENCES operators (id), is_enabled bool NOT NULL,
        duration_minutes int4, distance_km numeric(8, 2), tags text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz);
";
