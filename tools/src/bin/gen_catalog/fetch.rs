//! Runs qail-catalog's queries; shared by the generator and the test that compares the
//! committed table with the servers.

use qail_catalog::render::{
    CASTS_QUERY, FUNCTIONS_QUERY, OPERATORS_QUERY, RELATIONS_QUERY, Rows, TYPES_QUERY,
    VERSION_QUERY,
};
use qail_pg::Connection;

/// The servers to read: `DATABASE_URL` (default the system server on 127.0.0.1:5432) and the
/// `MAJOR=URL` lines (or whitespace-separated items) of `QAIL_PG_URLS`, as
/// `scripts/pg-versions urls` prints them.
pub(crate) fn urls() -> Vec<String> {
    let mut urls = vec![
        std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned()),
    ];
    let more = std::env::var("QAIL_PG_URLS").unwrap_or_default();
    for item in more.split_whitespace() {
        let url = item.split_once('=').map_or(item, |(major, url)| {
            if major.chars().all(|c| c.is_ascii_digit()) {
                url
            } else {
                item
            }
        });
        if !urls.iter().any(|u| u == url) {
            urls.push(url.to_owned());
        }
    }
    urls
}

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
