//! The analyzer's integration tests: the query corpus (expected types and nullability),
//! diagnostics as the user sees them, and the differential tests against the server
//! (`DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`): queries, the
//! built-in catalog, extensions and pulled snapshots typed like the server's Describe.

mod catalog;
mod clauses;
mod corpus;
mod coverage;
mod diagnostics;
mod differ;
mod extensions;
mod keywords;
mod nested;
mod nullability;
mod pull;
mod server;
mod session;
mod support;
mod system;
#[path = "../../../qail-schema/tests/it/util.rs"]
mod util;
mod versions;

/// A connection to a fresh database `db` holding the fixture schema (`fixtures/app.sql`).
pub(crate) async fn fixture_database(db: &str) -> qail_pg::Connection {
    let url = differ::scratch_database(db).await;
    let mut conn = qail_pg::Connection::connect(&url)
        .await
        .expect("connect to the scratch database");
    conn.batch_execute(include_str!("../fixtures/app.sql"))
        .await
        .expect("the fixture schema applies");
    conn
}
