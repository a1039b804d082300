//! The built-in system catalogs and information_schema views against the server: every one's
//! `SELECT *` is described exactly like the server does (names and type OIDs, domains such as
//! `sql_identifier` as the base type the server reports), and the columns said NOT NULL hold
//! no NULL in the server's catalogs.

use std::collections::HashMap;

use qail_pg::Connection;
use qail_schema::Snapshot;
use qail_schema::builtin::system_relations;

use crate::differ::{base_url, compare};

#[tokio::test]
async fn system_relations_are_described_like_the_server() {
    let mut conn = Connection::connect(&base_url())
        .await
        .expect("connect to DATABASE_URL");
    // Note: the built-in relations as this server's version has them.
    let snap = Snapshot {
        server_version: conn.parameter_status("server_version").map(str::to_owned),
        ..Snapshot::new()
    };
    let target = snap.target().expect("a server version");
    let relations = system_relations(target);
    assert!(
        relations.len() > 150,
        "{} built-in relations",
        relations.len()
    );
    let (mut failures, mut not_null) = (Vec::new(), 0);
    for r in relations {
        let sql = format!("SELECT * FROM \"{}\".\"{}\"", r.schema, r.name);
        if let Err(e) = compare(&mut conn, &snap, &HashMap::new(), &sql).await {
            failures.push(format!("{sql}\n  {e}"));
        }
        for c in r.columns.iter().filter(|c| c.not_null) {
            let sql = format!(
                "SELECT count(*) FROM \"{}\".\"{}\" WHERE \"{}\" IS NULL",
                r.schema, r.name, c.name
            );
            let rows = conn.query(&sql, &[]).await.expect("the catalog answers");
            not_null += 1;
            if rows[0].get::<i64>(0) != 0 {
                failures.push(format!("{sql}: NULL in a column said NOT NULL"));
            }
        }
    }
    conn.close().await;
    assert!(not_null > 500, "only {not_null} NOT NULL columns checked");
    assert!(
        failures.is_empty(),
        "{} of {} built-in relations differ from the server:\n{}",
        failures.len(),
        relations.len(),
        failures.join("\n")
    );
}
