//! Runs qail-catalog's queries; shared by the generator and the test that compares the
//! committed table with the server.

use qail_catalog::render::{
    CASTS_QUERY, FUNCTIONS_QUERY, OPERATORS_QUERY, RELATIONS_QUERY, Rows, TYPES_QUERY,
    VERSION_QUERY,
};
use qail_pg::Connection;

/// The rows of every catalog query, each column as text.
pub(crate) async fn rows(conn: &mut Connection) -> Rows {
    Rows {
        version: run(conn, VERSION_QUERY).await,
        types: run(conn, TYPES_QUERY).await,
        casts: run(conn, CASTS_QUERY).await,
        functions: run(conn, FUNCTIONS_QUERY).await,
        operators: run(conn, OPERATORS_QUERY).await,
        relations: run(conn, RELATIONS_QUERY).await,
    }
}

async fn run(conn: &mut Connection, sql: &str) -> Vec<Vec<String>> {
    let rows = conn
        .query(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("catalog query failed: {e}\n{sql}"));
    rows.iter()
        .map(|r| (0..r.len()).map(|i| r.get::<String>(i)).collect())
        .collect()
}
