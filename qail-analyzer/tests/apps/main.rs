//! Real-application suites: each directory holds an application schema of realistic size
//! (`schema.sql`: 15+ tables, enums, domains, composite types, views, SQL functions, partial
//! indexes) and the queries such an application runs (`queries.sql`: reporting, pagination,
//! upserts, analytics, data-modifying CTEs). The schema is applied to a scratch database and
//! pulled with `qail_schema::introspect::pull`; every query must then check offline with the
//! parameter types, column names and column types the server's Describe reports.

#[path = "../it/differ.rs"]
mod differ;

use qail_pg::Connection;
use qail_schema::Snapshot;
use qail_schema::snapshot::{RelationKind, UserTypeKind};

use differ::{compare, drop_database, scratch_database, user_type_oids};

/// The statements of a queries file: blocks separated by blank lines, a trailing `;` removed,
/// blocks holding only `--` comments skipped.
fn statements(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut block: Vec<&str> = Vec::new();
    for (i, line) in text.lines().chain(std::iter::once("")).enumerate() {
        if line.trim().is_empty() {
            let sql = block.join("\n");
            let sql = sql.trim().trim_end_matches(';').trim_end();
            if sql.lines().any(|l| !l.trim_start().starts_with("--")) {
                out.push((start + 1, sql.to_string()));
            }
            block.clear();
            continue;
        }
        if block.is_empty() {
            start = i;
        }
        block.push(line);
    }
    out
}

/// What the schema must contain for the suite to count as a real application.
fn assert_realistic(name: &str, s: &Snapshot) {
    let tables = s
        .relations
        .iter()
        .filter(|r| r.kind == RelationKind::Table)
        .count();
    let views = s.relations.len() - tables;
    let count = |f: fn(&UserTypeKind) -> bool| s.types.iter().filter(|t| f(&t.kind)).count();
    let enums = count(|k| matches!(k, UserTypeKind::Enum { .. }));
    let domains = count(|k| matches!(k, UserTypeKind::Domain { .. }));
    let table_fns = s.functions.iter().filter(|f| f.returns_set).count();
    let strict_fns = s.functions.iter().filter(|f| f.strict).count();
    assert!(
        tables >= 15
            && views >= 2
            && enums >= 3
            && domains >= 2
            && table_fns >= 1
            && strict_fns >= 1,
        "{name}: {tables} tables, {views} views, {enums} enums, {domains} domains, \
         {table_fns} set-returning and {strict_fns} strict functions"
    );
}

async fn run(name: &str, schema: &str, queries: &str, schemas: &[&str]) {
    let db = format!("qail_app_{name}_{}", std::process::id());
    let url = scratch_database(&db).await;
    let mut conn = Connection::connect(&url)
        .await
        .expect("connect to the scratch database");
    conn.batch_execute(schema)
        .await
        .unwrap_or_else(|e| panic!("{name}/schema.sql applies: {e}"));
    let wanted: Vec<String> = schemas.iter().map(|s| s.to_string()).collect();
    let snapshot = qail_schema::introspect::pull(&mut conn, &wanted)
        .await
        .unwrap_or_else(|e| panic!("pull {name}: {e}"));
    assert_realistic(name, &snapshot);
    let users = user_type_oids(&mut conn, &snapshot).await;
    let cases = statements(queries);
    let mut failures = Vec::new();
    for (line, sql) in &cases {
        if let Err(e) = compare(&mut conn, &snapshot, &users, sql).await {
            failures.push(format!("{name}/queries.sql line {line}: {sql}\n  {e}"));
        }
    }
    conn.close().await;
    drop_database(&db).await;
    assert!(
        cases.len() >= 50,
        "{name} has {} queries; the suite wants 50 or more",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{}/{} {name} queries agree with the server; mismatches:\n{}",
        cases.len() - failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[tokio::test]
async fn cowork_queries_match_the_server() {
    run(
        "cowork",
        include_str!("cowork/schema.sql"),
        include_str!("cowork/queries.sql"),
        &["public", "billing"],
    )
    .await;
}

#[tokio::test]
async fn larder_queries_match_the_server() {
    run(
        "larder",
        include_str!("larder/schema.sql"),
        include_str!("larder/queries.sql"),
        &["public"],
    )
    .await;
}

#[test]
fn queries_split_on_blank_lines() {
    let text = "-- heading only\n\nSELECT 1;\n\n-- a note\nSELECT 2\nFROM t;\n";
    let got = statements(text);
    assert_eq!(
        got,
        vec![
            (3, "SELECT 1".to_string()),
            (5, "-- a note\nSELECT 2\nFROM t".to_string())
        ]
    );
}
