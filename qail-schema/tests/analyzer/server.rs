//! Differential test: every corpus query goes through the server's Parse + Describe in a
//! scratch database holding the fixture schema; the analyzer's parameter types, column names
//! and column types must equal the server's.

use std::collections::HashMap;

use qail_pg::Connection;
use qail_schema::check::{check, type_oid};
use qail_schema::snapshot::TypeRef;

use crate::support::{corpus, snapshot, type_str};

fn base_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// The same URL pointing at another database.
fn with_database(url: &str, db: &str) -> String {
    let (main, query) = url
        .split_once('?')
        .map_or((url, None), |(m, q)| (m, Some(q)));
    let scheme_end = main.find("://").map_or(0, |i| i + 3);
    let base = match main[scheme_end..].find('/') {
        Some(slash) => &main[..scheme_end + slash],
        None => main,
    };
    match query {
        Some(q) => format!("{base}/{db}?{q}"),
        None => format!("{base}/{db}"),
    }
}

/// The name without the analyzer's alias suffixes (`!`, `?`, `: Type`).
fn plain_name(name: &str) -> String {
    if name == "?column?" {
        return name.to_string();
    }
    let head = match name.find(':').filter(|&i| !name[i..].starts_with("::")) {
        Some(i) => &name[..i],
        None => name,
    };
    head.trim_end().trim_end_matches(['!', '?']).to_string()
}

/// OIDs of the fixture's user types (they differ per database), scalar and array.
pub(crate) async fn user_type_oids(
    conn: &mut Connection,
    snapshot: &qail_schema::Snapshot,
) -> HashMap<String, u32> {
    let mut map = HashMap::new();
    for t in &snapshot.types {
        let name = format!("\"{}\".\"{}\"", t.schema, t.name);
        let rows = conn
            .query(
                "SELECT oid, typarray FROM pg_type WHERE oid = to_regtype($1)",
                &[&name],
            )
            .await
            .expect("the catalog answers");
        let row = rows.first().expect("the snapshot's types exist on the server");
        let scalar = TypeRef {
            schema: t.schema.clone(),
            name: t.name.clone(),
            oid: None,
            array_dims: 0,
        };
        let array = TypeRef {
            array_dims: 1,
            ..scalar.clone()
        };
        map.insert(type_str(&scalar), row.get::<u32>(0));
        map.insert(type_str(&array), row.get::<u32>(1));
    }
    map
}

pub(crate) fn oid_of(t: &TypeRef, users: &HashMap<String, u32>) -> u32 {
    type_oid(t)
        .or_else(|| users.get(&type_str(t)).copied())
        .unwrap_or(0)
}

async fn compare_all(url: &str) -> (usize, Vec<String>) {
    let mut conn = Connection::connect(url)
        .await
        .expect("connect to the scratch database");
    conn.batch_execute(include_str!("../fixtures/app.sql"))
        .await
        .expect("the fixture schema applies");
    let users = user_type_oids(&mut conn, snapshot()).await;
    let cases = corpus();
    let mut failures = Vec::new();
    for case in &cases {
        let server = match conn.prepare(&case.sql).await {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!(
                    "line {}: the server rejects the query: {e}\n{}",
                    case.line, case.sql
                ));
                continue;
            }
        };
        let Ok(ours) = check(&case.sql, snapshot()) else {
            failures.push(format!(
                "line {}: the analyzer rejects the query\n{}",
                case.line, case.sql
            ));
            continue;
        };
        let want_params = server.params().to_vec();
        let got_params: Vec<u32> = ours.params.iter().map(|p| oid_of(&p.ty, &users)).collect();
        let want_cols: Vec<(String, u32)> = server
            .columns()
            .iter()
            .map(|c| (plain_name(c.name()), c.type_oid()))
            .collect();
        let got_cols: Vec<(String, u32)> = ours
            .columns
            .iter()
            .map(|c| (c.name.clone(), oid_of(&c.ty, &users)))
            .collect();
        if want_params != got_params || want_cols != got_cols {
            failures.push(format!(
                "line {}: {}\n  server params {want_params:?} cols {want_cols:?}\n  ours   params {got_params:?} cols {got_cols:?}",
                case.line, case.sql
            ));
        }
    }
    conn.close().await;
    (cases.len(), failures)
}

#[tokio::test]
async fn corpus_types_match_the_server() {
    let url = base_url();
    let db = format!("qail_analyzer_{}", std::process::id());
    let mut admin = Connection::connect(&url)
        .await
        .expect("connect to DATABASE_URL");
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db}"))
        .await
        .expect("drop the scratch database");
    admin
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await
        .expect("create the scratch database");
    let (total, failures) = compare_all(&with_database(&url, &db)).await;
    admin
        .batch_execute(&format!("DROP DATABASE {db}"))
        .await
        .expect("drop the scratch database");
    admin.close().await;
    assert!(
        failures.is_empty(),
        "{}/{total} corpus queries agree with the server; mismatches:\n{}",
        total - failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn database_urls_are_rewritten() {
    assert_eq!(
        with_database("postgres://u@h:5432/postgres", "x"),
        "postgres://u@h:5432/x"
    );
    assert_eq!(
        with_database("postgres://u@h/db?sslmode=disable", "x"),
        "postgres://u@h/x?sslmode=disable"
    );
    assert_eq!(with_database("postgres://u@h", "x"), "postgres://u@h/x");
    assert_eq!(plain_name("name!"), "name");
    assert_eq!(plain_name("origin: String"), "origin");
}
