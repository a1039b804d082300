//! Keywords as names: every keyword the server lists in `pg_get_keywords()` becomes a column of
//! one table (quoted in its DDL), then is written bare in each position a name can take —
//! the select list with and without a qualifier and an alias, WHERE, GROUP BY, ORDER BY, a
//! function argument, INSERT's column list, UPDATE's SET, RETURNING, a CTE's name, a table
//! alias and a table's name (each keyword also names a table). Each statement goes through the server's Parse + Describe and through the analyzer:
//! where the server accepts it, the parameters, column names, types and nullability must be
//! the server's; where the server rejects it, the analyzer must reject it too. A keyword read
//! as something else (`SELECT interval FROM t` as an interval literal) is a failure either way.

use std::collections::HashMap;

use qail_analyzer::analyze;
use qail_pg::Connection;

use crate::differ::{drop_database, oid_of, plain_name, scratch_database};

/// The statements, `{k}` standing for the keyword written bare.
const POSITIONS: &[&str] = &[
    "SELECT {k} FROM kw",
    "SELECT kw.{k} FROM kw",
    "SELECT {k} AS x FROM kw",
    "SELECT id AS {k} FROM kw",
    "SELECT id {k} FROM kw",
    "SELECT id FROM kw WHERE {k} IS NULL",
    "SELECT id FROM kw WHERE {k} = $1",
    "SELECT {k}, count(*) AS n FROM kw GROUP BY {k} ORDER BY {k}",
    "SELECT id FROM kw ORDER BY {k} DESC",
    "SELECT count({k}) AS n FROM kw",
    "INSERT INTO kw (id, {k}) VALUES ($1, $2)",
    "UPDATE kw SET {k} = $1 WHERE id = $2",
    "DELETE FROM kw WHERE id = $1 RETURNING {k}",
    "INSERT INTO kw (id) VALUES ($1) RETURNING kw.{k}",
    "WITH {k} AS (SELECT id FROM kw) SELECT id FROM {k}",
    "SELECT {k}.id FROM kw AS {k}",
    "SELECT {k}.id FROM kw {k}",
    "SELECT s.{k} FROM (SELECT {k} FROM kw) AS s",
    "SELECT id FROM {k}",
    "SELECT {k}.id FROM {k} WHERE {k}.id = $1",
    "UPDATE {k} SET id = $1 RETURNING {k}.id",
];

/// Statements the server accepts that the analyzer refuses (a syntax error, never another
/// reading): a keyword that is also an infix operator as a bare alias, `cube` and `rollup`
/// bare in GROUP BY, `recursive` as a CTE's name and `replace` as UPDATE's table. The test fails when one of them starts
/// to be accepted (drop it here) or another statement is refused.
const KNOWN_REFUSALS: &[&str] = &[
    "SELECT id and FROM kw",
    "SELECT id between FROM kw",
    "SELECT id collate FROM kw",
    "SELECT id ilike FROM kw",
    "SELECT id in FROM kw",
    "SELECT id is FROM kw",
    "SELECT id isnull FROM kw",
    "SELECT id like FROM kw",
    "SELECT id match FROM kw",
    "SELECT id operator FROM kw",
    "SELECT id or FROM kw",
    "SELECT id similar FROM kw",
    "SELECT cube, count(*) AS n FROM kw GROUP BY cube ORDER BY cube",
    "SELECT rollup, count(*) AS n FROM kw GROUP BY rollup ORDER BY rollup",
    "WITH recursive AS (SELECT id FROM kw) SELECT id FROM recursive",
    "UPDATE replace SET id = $1 RETURNING replace.id",
];

/// The column types the keywords' columns take in turn, so a keyword read as a literal or a
/// type (`interval`, `date`) shows as a wrong type.
const TYPES: &[&str] = &["text", "int4", "bool", "numeric", "date", "jsonb"];

#[tokio::test]
async fn keywords_as_names_are_read_as_the_server_reads_them() {
    let db = format!("qail_keywords_{}", std::process::id());
    let url = scratch_database(&db).await;
    let mut conn = Connection::connect(&url)
        .await
        .expect("connect to the scratch database");
    let keywords: Vec<(String, String)> = conn
        .query(
            "SELECT word, catcode::text FROM pg_get_keywords() ORDER BY word",
            &[],
        )
        .await
        .expect("pg_get_keywords answers")
        .iter()
        .map(|r| (r.get::<String>(0), r.get::<String>(1)))
        .collect();
    assert!(keywords.len() > 400, "{} keywords", keywords.len());
    // Column 1 is `id`; keyword i is column i + 2, NOT NULL on every other one.
    let mut ddl = String::from("CREATE TABLE kw (id int4 PRIMARY KEY");
    let mut not_null = vec![true];
    for (i, (word, _)) in keywords.iter().enumerate() {
        let strict = i % 2 == 1;
        ddl += &format!(
            ", \"{word}\" {}{}",
            TYPES[i % TYPES.len()],
            if strict { " NOT NULL" } else { "" }
        );
        not_null.push(strict);
    }
    ddl.push(')');
    // And a table named by each keyword.
    for (word, _) in &keywords {
        ddl += &format!("; CREATE TABLE \"{word}\" (id int4 PRIMARY KEY)");
    }
    conn.batch_execute(&ddl).await.expect("the keyword tables");
    let table_oid: u32 = conn
        .query("SELECT 'kw'::regclass::oid", &[])
        .await
        .expect("the table's oid")[0]
        .get(0);
    let snapshot = qail_schema::introspect::pull(&mut conn, &[])
        .await
        .expect("the scratch schema is pulled");
    let users = HashMap::new();

    let mut cases = 0;
    let (mut agreed, mut both_rejected, mut known) = (0, 0, 0);
    let mut failures = Vec::new();
    for (word, category) in &keywords {
        for position in POSITIONS {
            let sql = position.replace("{k}", word);
            cases += 1;
            let ours = analyze(&sql, &snapshot);
            let server = match conn.prepare(&sql).await {
                Ok(s) => s,
                Err(e) => {
                    if ours.is_ok() {
                        failures.push(format!(
                            "[{category}] {sql}\n  accepted, but the server says: {e}"
                        ));
                    } else {
                        both_rejected += 1;
                    }
                    continue;
                }
            };
            let ours = match ours {
                Ok(a) => {
                    if KNOWN_REFUSALS.contains(&sql.as_str()) {
                        failures.push(format!(
                            "{sql}\n  now accepted: drop it from KNOWN_REFUSALS"
                        ));
                    }
                    a
                }
                Err(_) if KNOWN_REFUSALS.contains(&sql.as_str()) => {
                    known += 1;
                    continue;
                }
                Err(d) => {
                    failures.push(format!(
                        "[{category}] {sql}\n  refused: {}",
                        d.iter()
                            .map(|d| d.message.as_str())
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                    continue;
                }
            };
            let want_params = server.params().to_vec();
            let got_params: Vec<u32> = ours.params.iter().map(|p| oid_of(&p.ty, &users)).collect();
            // Nullability is known for columns the server traces to the table.
            let want_cols: Vec<(String, u32, Option<bool>)> = server
                .columns()
                .iter()
                .map(|c| {
                    let nullable = match (c.table_oid(), c.column_id()) {
                        (Some(t), Some(n)) if t == table_oid => usize::try_from(n - 1)
                            .ok()
                            .and_then(|i| not_null.get(i))
                            .map(|strict| !strict),
                        // Note: the keyword-named tables' one column, `id`, is their key.
                        (Some(_), Some(1)) => Some(false),
                        _ => None,
                    };
                    (plain_name(c.name()), c.type_oid(), nullable)
                })
                .collect();
            let got_cols: Vec<(String, u32, Option<bool>)> = ours
                .columns
                .iter()
                .zip(&want_cols)
                .map(|(c, w)| {
                    (
                        c.name.clone(),
                        oid_of(&c.ty, &users),
                        w.2.map(|_| c.nullable),
                    )
                })
                .collect();
            if want_params != got_params
                || want_cols.len() != ours.columns.len()
                || want_cols != got_cols
            {
                failures.push(format!(
                    "[{category}] {sql}\n  server params {want_params:?} cols {want_cols:?}\n  \
                     ours   params {got_params:?} cols {got_cols:?}"
                ));
                continue;
            }
            agreed += 1;
        }
    }
    conn.close().await;
    drop_database(&db).await;
    println!(
        "{cases} statements over {} keywords: {agreed} agreed with the server, \
         {both_rejected} rejected by both, {known} known refusals, {} failures",
        keywords.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {cases} keyword statements differ from the server:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `quote_ident` (used where a report or a completion writes a name) quotes exactly what the
/// server's `quote_ident()` quotes: every keyword, and names that are not plain lower case.
#[tokio::test]
async fn names_are_quoted_as_the_server_quotes_them() {
    let mut conn = Connection::connect(&crate::differ::base_url())
        .await
        .expect("connect to the server");
    let mut words: Vec<String> = conn
        .query("SELECT word FROM pg_get_keywords()", &[])
        .await
        .expect("pg_get_keywords answers")
        .iter()
        .map(|r| r.get::<String>(0))
        .collect();
    words.extend(
        [
            "abc_1", "_x", "1abc", "a\"b", "Mixed", "name", "é", "a b", "x$",
        ]
        .map(String::from),
    );
    for word in &words {
        let server: String = conn
            .query("SELECT quote_ident($1)", &[word])
            .await
            .expect("quote_ident answers")[0]
            .get(0);
        assert_eq!(qail_analyzer::quote_ident(word), server, "for {word:?}");
    }
}
