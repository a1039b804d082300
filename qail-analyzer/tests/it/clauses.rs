//! Forms applications write that sqlparser reads differently from PostgreSQL: implicit row
//! constructors, locking clauses (several, before or after LIMIT; refused where the server
//! allows none: set operations, VALUES, DISTINCT, GROUP BY), TABLESAMPLE with its parameters,
//! parameters in window frames, FETCH FIRST, INSERT … SELECT without FROM before ON CONFLICT,
//! jsonb keys as SET subscripts, `regclass` literals (which name a relation, index or
//! composite type of the pulled snapshot), statements rules rewrite (RETURNING, WITH, a
//! DELETE turned into an UPDATE, which the server describes as returning nothing), and MERGE's
//! WHEN clauses (unreachable ones, system columns, several rows of VALUES). Each is
//! compared with the server's Parse + Describe over the fixture schema (with
//! `tsm_system_rows` installed); the forms the server refuses are refused too.

use qail_analyzer::{Shape, analyze};

use crate::differ::{compare, drop_database, user_type_oids};
use crate::fixture_database;

const AGREED: &[&str] = &[
    "SELECT (id, name, latitude) AS \"x: String\" FROM harbors",
    "SELECT (id, name) FROM harbors WHERE (id, name) = ($1, $2)",
    "SELECT (SELECT (1, 'a')) AS r",
    "SELECT id FROM harbors FOR NO KEY UPDATE SKIP LOCKED",
    "SELECT id FROM harbors FOR UPDATE SKIP LOCKED LIMIT $1",
    "SELECT id FROM harbors ORDER BY id FOR KEY SHARE NOWAIT FOR UPDATE OF harbors OFFSET $1",
    "SELECT h.id FROM harbors h FOR NO KEY UPDATE OF h SKIP LOCKED LIMIT $1 OFFSET $2",
    "SELECT id FROM harbors LIMIT $1 FOR SHARE OF harbors",
    "SELECT id FROM harbors TABLESAMPLE SYSTEM ($1)",
    "SELECT h.id FROM harbors AS h TABLESAMPLE BERNOULLI ($1) REPEATABLE ($2) WHERE h.name = $3",
    "SELECT id FROM harbors TABLESAMPLE system_rows ($1)",
    "SELECT id FROM harbors TABLESAMPLE SYSTEM (10 + $1) REPEATABLE (0.5)",
    "SELECT sum(latitude) OVER (ORDER BY id ROWS BETWEEN $1 PRECEDING AND $2 FOLLOWING) AS s \
     FROM harbors",
    "SELECT sum(latitude) OVER (ORDER BY latitude RANGE BETWEEN $1 PRECEDING AND CURRENT ROW) \
     AS s FROM harbors",
    "SELECT count(*) OVER (ORDER BY created_at RANGE $1 PRECEDING) AS n FROM harbors",
    "SELECT count(*) OVER w AS n FROM harbors WINDOW w AS (ORDER BY id GROUPS $1 PRECEDING)",
    "SELECT id FROM harbors ORDER BY id FETCH FIRST $1 ROWS ONLY",
    "SELECT id FROM harbors ORDER BY id OFFSET $1 ROWS FETCH NEXT $2 ROWS WITH TIES",
    "INSERT INTO harbors (id, name, country) SELECT $1, $2, unnest($3::text[]) \
     ON CONFLICT (id) DO NOTHING",
    "INSERT INTO harbors (id, name, country) SELECT $1, $2, $3 ON CONFLICT DO NOTHING",
    "INSERT INTO harbors (id, name, country) VALUES ($1, $2, $3) \
     ON CONFLICT (id) WHERE country = $4 AND latitude > $5 DO NOTHING",
    "INSERT INTO harbors (id, name, country) VALUES ($1, $2, $3) \
     ON CONFLICT (id) WHERE (country <> 'x') DO UPDATE SET name = $4 RETURNING name",
    "UPDATE vessels SET specs['engine'] = $1 WHERE id = $2",
    "UPDATE vessels SET specs['a'][0]['b'] = '1', name = $1 RETURNING specs",
    "SELECT 'harbors'::regclass AS t, 'harbor_contacts_with_email'::regclass AS i, \
     'public.harbors_code_key'::regclass AS u, 'vessels_id_seq'::regclass AS s, \
     'enabled_connections'::regclass AS v, 'postal_address'::regclass AS c, \
     '\"harbors\"'::regclass AS q, 'pg_class'::regclass AS p, '1259'::regclass AS o",
    "SELECT pg_relation_size('harbors') AS n",
    "SELECT h.id FROM harbors h, (SELECT DISTINCT country FROM harbors) d \
     WHERE d.country = h.country FOR UPDATE OF h",
    "DELETE FROM archive WHERE id = $1 RETURNING *",
    "WITH gone AS (DELETE FROM spare WHERE id = $1 RETURNING *) SELECT amount FROM gone",
    "DELETE FROM spare WHERE id = $1 RETURNING *",
    "MERGE INTO harbors h USING (SELECT $1::uuid AS id) s ON h.id = s.id \
     WHEN MATCHED AND h.tableoid > 0 AND h.name = 'x' THEN DELETE WHEN MATCHED THEN UPDATE SET name = 'y' \
     WHEN NOT MATCHED THEN INSERT (id, name, country) VALUES (s.id, 'a', 'b')",
    "WITH t AS (DELETE FROM ledger RETURNING id) INSERT INTO ledger_view SELECT id, 0 FROM t",
    "UPDATE ledger SET amount = $1 WHERE id = $2 RETURNING amount",
    "INSERT INTO ledger_view VALUES ($1, $2)",
    "WITH t AS (DELETE FROM ledger_log RETURNING id) SELECT id FROM t",
];

/// Tables with rules, which rewrite the statements on them.
const RULES: &str = "
CREATE TABLE ledger (id int PRIMARY KEY, amount int);
CREATE TABLE ledger_log (id int, amount int);
CREATE TABLE archive (id int, amount int);
CREATE RULE archive_delete AS ON DELETE TO archive
    DO INSTEAD UPDATE ledger SET amount = 0 WHERE id = old.id RETURNING *;
CREATE RULE ledger_log_insert AS ON INSERT TO ledger_log DO INSTEAD NOTHING;
CREATE RULE ledger_update AS ON UPDATE TO ledger
    DO ALSO INSERT INTO archive VALUES (new.id, new.amount);
CREATE TABLE notified (id int);
CREATE RULE notified_insert AS ON INSERT TO notified DO INSTEAD NOTIFY ledger;
CREATE TABLE spare (id int, amount int);
CREATE RULE spare_delete AS ON DELETE TO spare
    DO INSTEAD INSERT INTO spare VALUES (0, 0) RETURNING *;
CREATE VIEW ledger_view AS SELECT id, amount FROM ledger;
CREATE RULE ledger_view_insert AS ON INSERT TO ledger_view
    DO INSTEAD INSERT INTO ledger VALUES (new.id, new.amount);
";

/// Statements the server refuses; each must be refused here too.
const REFUSED: &[&str] = &[
    "SELECT id FROM harbors ORDER BY id OFFSET $1 FOR UPDATE LIMIT $2",
    "SELECT id FROM harbors TABLESAMPLE FOO (1)",
    "SELECT id FROM harbors TABLESAMPLE SYSTEM (1, 2)",
    "SELECT id FROM harbors TABLESAMPLE SYSTEM_TIME (1)",
    "SELECT (id, nme) FROM harbors",
    "UPDATE odyssey_connections SET tags['x'] = 'a'",
    "SELECT 'harbours'::regclass AS r",
    "SELECT id FROM harbors UNION SELECT id FROM harbors FOR UPDATE",
    "SELECT id FROM harbors EXCEPT ALL SELECT id FROM harbors FOR NO KEY UPDATE",
    "SELECT DISTINCT country FROM harbors FOR SHARE",
    "SELECT country FROM harbors GROUP BY country FOR KEY SHARE",
    "VALUES (1) FOR UPDATE",
    "SELECT 'public.\"Harbors\"'::regclass AS r",
    "SELECT pg_relation_size('harbors_pkey_index') AS n",
    "WITH t AS (INSERT INTO ledger_log VALUES (1, 2)) SELECT 1 AS one",
    "MERGE INTO harbors h USING (SELECT $1::uuid AS id) s ON h.id = s.id \
     WHEN NOT MATCHED THEN INSERT (id, name, country) VALUES (s.id, 'a', 'b'), (s.id, 'c', 'd')",
    "MERGE INTO harbors h USING (SELECT $1::uuid AS id) s ON h.id = s.id \
     WHEN MATCHED THEN DELETE WHEN MATCHED THEN UPDATE SET name = 'x'",
    "MERGE INTO harbors h USING (SELECT $1::uuid AS id) s ON h.id = s.id \
     WHEN MATCHED AND h.xmin = h.xmax THEN DELETE",
    "WITH t AS (INSERT INTO notified VALUES (1)) SELECT 1 AS one",
    "SELECT * FROM (WITH t AS (DELETE FROM ledger RETURNING id) SELECT id FROM t) AS s",
    "INSERT INTO ledger WITH t AS (DELETE FROM ledger RETURNING *) SELECT * FROM t",
    "(WITH t AS (DELETE FROM ledger RETURNING id) SELECT id FROM t) UNION SELECT 1",
    "WITH t AS (UPDATE ledger SET amount = 1 RETURNING id) SELECT * FROM t",
    "INSERT INTO ledger_view VALUES (1, 2) RETURNING *",
    "INSERT INTO harbors (id, name, country) VALUES ($1, $2, $3) \
     ON CONFLICT (id) WHERE contry = $4 DO NOTHING",
];

#[tokio::test]
async fn clauses_applications_write_are_typed_like_the_server() {
    let db = format!("qail_clauses_{}", std::process::id());
    let mut conn = fixture_database(&db).await;
    conn.batch_execute("CREATE EXTENSION tsm_system_rows")
        .await
        .expect("tsm_system_rows installs (PostgreSQL's contrib)");
    conn.batch_execute(RULES).await.expect("the rules apply");
    let snap = qail_schema::introspect::pull(&mut conn, &[])
        .await
        .expect("pull");
    let users = user_type_oids(&mut conn, &snap).await;
    let mut failures = Vec::new();
    for sql in AGREED {
        if let Err(e) = compare(&mut conn, &snap, &users, sql).await {
            failures.push(format!("{sql}\n  {e}"));
        }
    }
    for sql in REFUSED {
        let server = conn.prepare(sql).await;
        let ours = analyze(sql, &snap);
        if server.is_ok() || ours.is_ok() {
            failures.push(format!(
                "{sql}\n  refused by the server: {}, by the analyzer: {}",
                server.is_err(),
                ours.is_err()
            ));
        }
    }
    conn.close().await;
    drop_database(&db).await;
    assert!(
        failures.is_empty(),
        "{} statements differ from the server:\n{}",
        failures.len(),
        failures.join("\n")
    );

    // The implicit row is a record with its fields' types and nullability, like ROW(…), and
    // its `: Type` override is kept.
    let implicit = analyze(AGREED[0], &snap).expect("analyzed");
    let explicit = analyze(
        "SELECT ROW(id, name, latitude) AS \"x: String\" FROM harbors",
        &snap,
    )
    .expect("analyzed");
    let columns = |a: &qail_analyzer::Analysis| {
        a.columns
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.ty.clone(),
                    c.nullable,
                    c.rust_type.clone(),
                    c.shape.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(columns(&implicit), columns(&explicit));
    let Some(Shape::Record(fields)) = &implicit.columns[0].shape else {
        panic!("a record shape: {:?}", implicit.columns[0].shape);
    };
    let got: Vec<(&str, &str, bool)> = fields
        .iter()
        .map(|f| (f.name.as_str(), f.ty.name.as_str(), f.nullable))
        .collect();
    assert_eq!(
        got,
        [
            ("id", "uuid", false),
            ("name", "text", false),
            ("latitude", "float8", true)
        ]
    );
    assert_eq!(implicit.columns[0].rust_type.as_deref(), Some("String"));
    // The method of an extension not in the snapshot is refused with the way to get it.
    let without = qail_schema::Snapshot::default();
    let errors = analyze(
        "SELECT 1 AS one FROM pg_class TABLESAMPLE SYSTEM_ROWS (3)",
        &without,
    )
    .expect_err("no tsm_system_rows in an empty snapshot");
    assert!(
        errors[0]
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("CREATE EXTENSION tsm_system_rows")),
        "{errors:?}"
    );
}

/// A diagnostic about a row constructor covers the whole constructor, parentheses included.
#[test]
fn a_row_constructor_error_covers_the_row() {
    let sql = "SELECT (id, name)::int4 AS n FROM harbors";
    let errors = analyze(sql, crate::support::snapshot()).expect_err("no cast from record");
    let shown = &sql[errors[0].range.clone()];
    assert_eq!(shown, "(id, name)::int4", "{errors:?}");
}
