//! Differential test: every corpus query goes through the server's Parse + Describe in a
//! scratch database holding the fixture schema; the analyzer's parameter types, column names
//! and column types must equal the server's.

use crate::differ::{compare, drop_database, user_type_oids};
use crate::fixture_database;
use crate::support::{corpus, snapshot};

#[tokio::test]
async fn corpus_types_match_the_server() {
    let db = format!("qail_analyzer_{}", std::process::id());
    let mut conn = fixture_database(&db).await;
    let users = user_type_oids(&mut conn, snapshot()).await;
    let cases = corpus();
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = compare(&mut conn, snapshot(), &users, &case.sql).await {
            failures.push(format!("line {}: {}\n  {e}", case.line, case.sql));
        }
    }
    conn.close().await;
    drop_database(&db).await;
    assert!(
        failures.is_empty(),
        "{}/{} corpus queries agree with the server; mismatches:\n{}",
        cases.len() - failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
