//! PostgreSQL 13 to 18: what the newer versions added, checked on every server the tests reach
//! (`DATABASE_URL` and the `MAJOR=URL` lines of `QAIL_PG_URLS`). With a snapshot of a server's
//! version, a feature that version has is typed exactly like the server's Describe; one it
//! lacks is refused by the server and by the analyzer, whose message names the version that
//! added it.

use std::collections::HashMap;

use qail_analyzer::analyze;
use qail_pg::Connection;
use qail_schema::Snapshot;

use crate::catalog::fetch::urls;
use crate::differ::compare;

/// A feature, a query using it, and the first major version that has it.
struct Feature {
    name: &'static str,
    sql: &'static str,
    since: u8,
}

const FEATURES: &[Feature] = &[
    Feature {
        name: "any_value",
        sql: "SELECT any_value(x) AS v FROM (VALUES (1), (2)) AS t(x)",
        since: 16,
    },
    Feature {
        name: "array_shuffle",
        sql: "SELECT array_shuffle(ARRAY[1, 2, 3]) AS v",
        since: 16,
    },
    Feature {
        name: "random_normal",
        sql: "SELECT random_normal() AS a, random_normal(10, 2) AS b",
        since: 16,
    },
    Feature {
        name: "random(min, max)",
        sql: "SELECT random(1, 10) AS a, random(1::int8, $1) AS b, random(0.5, 2.5) AS c",
        since: 17,
    },
    Feature {
        name: "to_bin",
        sql: "SELECT to_bin(10) AS a, to_bin($1::int8) AS b",
        since: 17,
    },
    Feature {
        name: "uuidv7",
        sql: "SELECT uuidv7() AS a, uuidv7('-1 hour'::interval) AS b",
        since: 18,
    },
    Feature {
        name: "casefold",
        sql: "SELECT casefold($1) AS v",
        since: 18,
    },
    Feature {
        name: "array_sort",
        sql: "SELECT array_sort(ARRAY[3, 1, 2]) AS a, array_sort(ARRAY['b', 'a'], true) AS b",
        since: 18,
    },
    Feature {
        name: "crc32",
        sql: "SELECT crc32('abc'::bytea) AS a, crc32c($1::bytea) AS b",
        since: 18,
    },
    Feature {
        name: "JSON_OBJECT",
        sql: "SELECT JSON_OBJECT('id': 1, 'name' VALUE $1) AS a, JSON_OBJECT() AS b, \
              JSON_OBJECT('k': NULL ABSENT ON NULL) AS c",
        since: 16,
    },
    Feature {
        name: "JSON_ARRAY",
        sql: "SELECT JSON_ARRAY(1, 'two', $1) AS a, JSON_ARRAY() AS b",
        since: 16,
    },
    Feature {
        name: "JSON_OBJECTAGG",
        sql: "SELECT JSON_OBJECTAGG(k: v) AS a FROM (VALUES ('a', 1), ('b', 2)) AS t(k, v)",
        since: 16,
    },
    Feature {
        name: "JSON_ARRAYAGG",
        sql: "SELECT k, JSON_ARRAYAGG(v ORDER BY v) AS a FROM (VALUES ('a', 1), ('a', 2)) AS t(k, v) GROUP BY k",
        since: 16,
    },
    Feature {
        name: "IS JSON",
        sql: "SELECT $1 IS JSON OBJECT AS a, '{}'::jsonb IS NOT JSON ARRAY AS b, \
              'x'::bytea IS JSON WITH UNIQUE KEYS AS c, ('1') IS JSON SCALAR AS d, \
              note IS JSON VALUE WITHOUT UNIQUE AS e FROM accounts WHERE note IS NOT JSON",
        since: 16,
    },
    Feature {
        name: "JSON_TABLE",
        sql: "SELECT t.*, a.id AS account FROM accounts a, JSON_TABLE(a.note, '$[*]' COLUMNS (\
              n FOR ORDINALITY, k int PATH '$.k', v text PATH '$.v' NULL ON ERROR, \
              e bool EXISTS PATH '$.e', NESTED PATH '$.xs[*]' COLUMNS (x numeric PATH '$'))) AS t",
        since: 17,
    },
    Feature {
        name: "JSON_TABLE … AS name PASSING … ON ERROR",
        sql: "SELECT t.*, a.id FROM accounts a, JSON_TABLE(a.note::jsonb, '$[*] ? (@.k > $min)' AS p \
              PASSING $1 AS min, a.balance AS b COLUMNS (k int PATH '$.k') ERROR ON ERROR) AS t",
        since: 17,
    },
    Feature {
        name: "JSON_TABLE column clauses",
        sql: "SELECT * FROM JSON_TABLE('[]'::jsonb, '$[*]' COLUMNS (\
              a int PATH '$.a' DEFAULT -1 ON ERROR, \
              b jsonb FORMAT JSON PATH '$.b' WITH CONDITIONAL WRAPPER, \
              c text PATH '$.c' OMIT QUOTES ON SCALAR STRING NULL ON EMPTY, \
              d int, e bool EXISTS, f int EXISTS PATH '$.f' TRUE ON ERROR, \
              g jsonb PATH '$.g' EMPTY ARRAY ON EMPTY, h timestamp with time zone PATH '$.h' DEFAULT now() ON EMPTY, \
              NESTED '$.xs[*]' AS n COLUMNS (x numeric(10, 2) PATH '$' ERROR ON ERROR))) AS t",
        since: 17,
    },
    Feature {
        name: "JSON_TABLE over a parameter",
        sql: "SELECT * FROM JSON_TABLE($1, '$[*]' COLUMNS (id int PATH '$.id')) AS t(ident)",
        since: 17,
    },
    Feature {
        name: "JSON_VALUE",
        sql: "SELECT JSON_VALUE('{\"a\": 1}'::jsonb, '$.a') AS a, JSON_VALUE($1, '$.b') AS b",
        since: 17,
    },
    Feature {
        name: "JSON_QUERY",
        sql: "SELECT JSON_QUERY('{\"a\": [1]}'::jsonb, '$.a') AS a, JSON_QUERY('{}'::json, '$') AS b",
        since: 17,
    },
    Feature {
        name: "JSON_EXISTS",
        sql: "SELECT JSON_EXISTS('{\"a\": 1}'::jsonb, '$.a') AS a",
        since: 17,
    },
    Feature {
        name: "JSON_SCALAR",
        sql: "SELECT JSON_SCALAR(1) AS a, JSON_SCALAR('x'::text) AS b",
        since: 17,
    },
    Feature {
        name: "JSON_OBJECT(… FORMAT JSON …)",
        sql: "SELECT JSON_OBJECT('a': NULL::json FORMAT JSON, 'b': '\"x\"'::bytea FORMAT JSON \
              ENCODING UTF8 RETURNING bytea FORMAT JSON ENCODING UTF8) AS a, \
              JSON_ARRAY('1'::text FORMAT JSON) AS b, \
              JSON_OBJECT('a': 1, 'b': 2 WITH UNIQUE KEYS) AS c",
        since: 16,
    },
    Feature {
        name: "JSON_TABLE path names, ordinality per path, own columns before nested ones, \
               EMPTY ARRAY ON ERROR",
        sql: "SELECT * FROM JSON_TABLE('[{\"a\": 1, \"b\": [2]}]'::jsonb, '$[*]' AS p \
              COLUMNS (i FOR ORDINALITY, NESTED PATH '$.b[*]' AS q \
              COLUMNS (j FOR ORDINALITY, b int PATH '$'), a int PATH '$.a') EMPTY ARRAY ON ERROR) \
              AS t(x, y)",
        since: 17,
    },
    Feature {
        name: "JSON(… WITH UNIQUE KEYS)",
        sql: "SELECT JSON('{\"a\": 1}' WITH UNIQUE KEYS) AS a, JSON($1 FORMAT JSON WITHOUT UNIQUE) AS b, \
              JSON($2::bytea FORMAT JSON ENCODING UTF8 WITH UNIQUE) AS c, json($3::name WITH UNIQUE) AS d",
        since: 17,
    },
    Feature {
        name: "JSON_SERIALIZE",
        sql: "SELECT JSON_SERIALIZE('{\"a\": 1}'::json) AS a",
        since: 17,
    },
    Feature {
        name: "JSON_VALUE … PASSING, RETURNING, ON EMPTY, ON ERROR",
        sql: "SELECT JSON_VALUE(a.note::jsonb, '$.k ? (@ > $min)' PASSING $1 AS min, a.balance AS b \
              RETURNING numeric DEFAULT 0 ON EMPTY ERROR ON ERROR) AS a, \
              JSON_VALUE($2, '$.d' RETURNING date NULL ON ERROR) AS b, \
              JSON_VALUE('1'::jsonb, '$' RETURNING int[] DEFAULT '{1}' ON ERROR) AS c FROM accounts a",
        since: 17,
    },
    Feature {
        name: "JSON_QUERY … wrapper, quotes, RETURNING … FORMAT JSON",
        sql: "SELECT JSON_QUERY($1, '$.a[*]' WITH CONDITIONAL ARRAY WRAPPER EMPTY OBJECT ON ERROR) AS a, \
              JSON_QUERY('[\"x\"]'::jsonb, '$[0]' RETURNING text FORMAT JSON OMIT QUOTES ON SCALAR STRING) AS b, \
              JSON_QUERY('{}'::jsonb, '$' RETURNING json WITHOUT WRAPPER KEEP QUOTES NULL ON EMPTY EMPTY ARRAY ON ERROR) AS c, \
              JSON_QUERY('{}'::jsonb, '$.x' RETURNING bytea FORMAT JSON ENCODING UTF8 WITH UNCONDITIONAL WRAPPER) AS d",
        since: 17,
    },
    Feature {
        name: "JSON_EXISTS … PASSING, ON ERROR",
        sql: "SELECT JSON_EXISTS(note::jsonb, '$.k ? (@ == $v)' PASSING $1::int AS v UNKNOWN ON ERROR) AS a, \
              JSON_EXISTS($2, '$' FALSE ON ERROR) AS b FROM accounts",
        since: 17,
    },
    Feature {
        name: "JSON constructors … RETURNING",
        sql: "SELECT JSON_OBJECT('a': 1 RETURNING jsonb) AS a, \
              JSON_ARRAY(1, $1 FORMAT JSON ABSENT ON NULL RETURNING text FORMAT JSON) AS b, \
              JSON_OBJECT('k': '{}' FORMAT JSON WITH UNIQUE KEYS RETURNING bytea) AS c, \
              JSON_OBJECT(RETURNING varchar) AS d",
        since: 16,
    },
    Feature {
        name: "JSON_ARRAY(query)",
        sql: "SELECT JSON_ARRAY(SELECT note FROM accounts ORDER BY id) AS a, \
              JSON_ARRAY(SELECT x FROM (VALUES (1), (2)) AS v(x) RETURNING jsonb) AS b, JSON_ARRAY((SELECT $1::int)) AS c, \
              JSON_ARRAY(WITH x AS (SELECT 1 AS v) SELECT v FROM x) AS d",
        since: 16,
    },
    Feature {
        name: "JSON aggregates … RETURNING",
        sql: "SELECT JSON_OBJECTAGG(k: v WITHOUT UNIQUE RETURNING jsonb) AS a, \
              JSON_ARRAYAGG(v ORDER BY v NULL ON NULL RETURNING jsonb) AS b \
              FROM (VALUES ('a', 1), ('b', 2)) AS t(k, v)",
        since: 16,
    },
    Feature {
        name: "JSON_SERIALIZE … RETURNING",
        sql: "SELECT JSON_SERIALIZE('{}'::json RETURNING bytea) AS a, \
              JSON_SERIALIZE($1 FORMAT JSON RETURNING varchar) AS b",
        since: 17,
    },
    Feature {
        name: "RETURNING WITH (OLD AS …, NEW AS …)",
        sql: "UPDATE accounts SET balance = balance + $1 WHERE id = $2 \
              RETURNING WITH (OLD AS o, NEW AS n) o.balance AS before, n.balance AS after, n.*",
        since: 18,
    },
    Feature {
        name: "RETURNING WITH (…) in INSERT and DELETE",
        sql: "WITH i AS (INSERT INTO accounts VALUES (1, 2, 'x') RETURNING WITH (OLD AS was) was.*, new.id), \
              d AS (DELETE FROM accounts WHERE id = 7 RETURNING WITH (NEW AS after) old.note, after.*) \
              SELECT * FROM i, d",
        since: 18,
    },
    Feature {
        name: "MERGE … RETURNING WITH (…)",
        sql: "MERGE INTO accounts a USING (VALUES (1, 5.0)) AS s(id, amount) ON a.id = s.id \
              WHEN MATCHED THEN UPDATE SET balance = s.amount WHEN NOT MATCHED THEN DO NOTHING \
              RETURNING WITH (OLD AS o, NEW AS n) o.balance AS before, n.balance AS after",
        since: 18,
    },
    Feature {
        name: "MERGE … THEN DO NOTHING",
        sql: "MERGE INTO accounts a USING (VALUES (1, 5.0)) AS s(id, amount) ON a.id = s.id \
              WHEN MATCHED AND a.balance > $1 THEN DO NOTHING \
              WHEN MATCHED THEN UPDATE SET balance = s.amount \
              WHEN NOT MATCHED AND s.amount < $2 THEN DO NOTHING",
        since: 15,
    },
    Feature {
        name: "MERGE … WHEN NOT MATCHED BY SOURCE THEN DO NOTHING",
        sql: "MERGE INTO accounts a USING (SELECT 1 AS id) AS s ON a.id = s.id \
              WHEN NOT MATCHED BY SOURCE AND a.note = $1 THEN DO NOTHING \
              WHEN NOT MATCHED BY TARGET THEN DO NOTHING",
        since: 17,
    },
    Feature {
        name: "RETURNING old and new (UPDATE)",
        sql: "UPDATE accounts SET balance = balance + $1 WHERE id = $2 \
              RETURNING old.balance AS before, new.balance AS after, balance",
        since: 18,
    },
    Feature {
        name: "RETURNING old and new (INSERT, DELETE)",
        sql: "WITH i AS (INSERT INTO accounts VALUES (1, 2, 'x') RETURNING old.*, new.id), \
              d AS (DELETE FROM accounts WHERE id = 7 RETURNING old.note, new.*) \
              SELECT * FROM i, d",
        since: 18,
    },
    Feature {
        name: "MERGE",
        sql: "MERGE INTO accounts a USING (VALUES (1, 5.0)) AS s(id, amount) ON a.id = s.id \
              WHEN MATCHED AND s.amount > $1 THEN UPDATE SET balance = a.balance + s.amount \
              WHEN MATCHED THEN DELETE \
              WHEN NOT MATCHED THEN INSERT (id, balance, note) VALUES (s.id, s.amount, $2)",
        since: 15,
    },
    Feature {
        name: "MERGE … RETURNING merge_action()",
        sql: "MERGE INTO accounts a USING (VALUES (1, 5.0)) AS s(id, amount) ON a.id = s.id \
              WHEN MATCHED THEN UPDATE SET balance = s.amount \
              WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.amount) \
              RETURNING merge_action() AS action, a.*, s.amount",
        since: 17,
    },
    Feature {
        name: "MERGE … WHEN NOT MATCHED BY SOURCE",
        sql: "MERGE INTO accounts a USING (SELECT 1 AS id) AS s ON a.id = s.id \
              WHEN NOT MATCHED BY SOURCE AND a.balance < 0 THEN DELETE",
        since: 17,
    },
    Feature {
        name: "MERGE … RETURNING old and new",
        sql: "MERGE INTO accounts a USING (VALUES (1, 5.0)) AS s(id, amount) ON a.id = s.id \
              WHEN MATCHED THEN UPDATE SET balance = s.amount \
              RETURNING old.balance AS before, new.balance AS after",
        since: 18,
    },
    Feature {
        name: "casts between bytea and the integers",
        sql: "SELECT '\\x01020304'::bytea::int4 AS a, 1::int8::bytea AS b, $1::bytea::int2 AS c",
        since: 18,
    },
    Feature {
        name: "operators point <<| point and pg_lsn + numeric",
        sql: "SELECT point '(1,1)' <<| point '(0,0)' AS a, '0/10'::pg_lsn + 16 AS b, \
              $1::numeric + '0/10'::pg_lsn AS c",
        since: 14,
    },
    Feature {
        name: "underscores in numbers",
        sql: "SELECT 1_000_000 AS a, 1_000_000_000_000 AS b, 1_000.000_5 AS c",
        since: 16,
    },
    Feature {
        name: "hexadecimal integers",
        sql: "SELECT 0x1F AS a, 0xFFFFFFFFFF AS b, 0xFFFF_FFFF_FFFF_FFFF_FF AS c",
        since: 16,
    },
    Feature {
        name: "octal integers",
        sql: "SELECT 0o17 AS v",
        since: 16,
    },
    Feature {
        name: "binary integers",
        sql: "SELECT 0b101 AS v",
        since: 16,
    },
];

/// The table the DML features use, in a schema of its own on each server.
const SCHEMA: &str =
    "CREATE TABLE accounts (id int PRIMARY KEY, balance numeric NOT NULL, note text)";

/// A schema with [`SCHEMA`] on the server `conn` talks to, the session's search_path set to
/// it, and the snapshot pulled from it: its version is the target.
async fn snapshot_of(conn: &mut Connection, schema: &str) -> (Snapshot, u8) {
    conn.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; \
         SET search_path = {schema}; {SCHEMA}"
    ))
    .await
    .expect("the test schema is created");
    let snap = qail_schema::introspect::pull(conn, &[schema.to_owned()])
        .await
        .expect("the test schema is pulled");
    let major = snap
        .target()
        .expect("a version")
        .first()
        .expect("one major");
    (snap, major)
}

#[tokio::test]
async fn new_features_are_typed_where_they_exist_and_refused_with_the_version_elsewhere() {
    let mut failures = Vec::new();
    let mut majors = Vec::new();
    for url in urls() {
        let mut conn = Connection::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
        let schema = format!("qail_versions_{}", std::process::id());
        let (snap, major) = snapshot_of(&mut conn, &schema).await;
        majors.push(major);
        for f in FEATURES {
            let label = format!("PostgreSQL {major}, {}: {}", f.name, f.sql);
            if major >= f.since {
                if let Err(e) = compare(&mut conn, &snap, &HashMap::new(), f.sql).await {
                    failures.push(format!("{label}\n  {e}"));
                }
                continue;
            }
            if conn.prepare(f.sql).await.is_ok() {
                failures.push(format!(
                    "{label}\n  the server accepts it before {}",
                    f.since
                ));
            }
            // Note: the message names the first version with everything the query needs
            // (MERGE … RETURNING on 14 names 15, where MERGE begins).
            let names_version = |message: &str| {
                let targets = format!("; this crate targets PostgreSQL {major}");
                message
                    .split_once("exists from PostgreSQL ")
                    .and_then(|(_, rest)| rest.split_once(&targets))
                    .and_then(|(v, _)| v.parse::<u8>().ok())
                    .is_some_and(|v| v > major && v <= f.since)
            };
            match analyze(f.sql, &snap) {
                Ok(_) => failures.push(format!("{label}\n  the analyzer accepts it")),
                Err(d) if !d.iter().any(|d| names_version(&d.message)) => failures.push(format!(
                    "{label}\n  the analyzer refuses it without naming the version: {}",
                    d[0]
                )),
                Err(_) => {}
            }
        }
        conn.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
            .await
            .expect("the test schema is dropped");
        conn.close().await;
    }
    eprintln!("checked on PostgreSQL {majors:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_declared_range_refuses_what_its_oldest_version_lacks() {
    let snap = |range: &str| Snapshot {
        server_version: Some("18.1".to_owned()),
        postgres: Some(range.to_owned()),
        ..Snapshot::new()
    };
    let message = |sql: &str, range: &str| {
        analyze(sql, &snap(range))
            .map(|_| "accepted".to_owned())
            .unwrap_or_else(|d| d[0].message.clone())
    };
    assert_eq!(
        message("SELECT uuidv7() AS v", "16..=18"),
        "uuidv7() exists from PostgreSQL 18; this crate targets 16 to 18"
    );
    assert_eq!(message("SELECT uuidv7() AS v", "18"), "accepted");
    assert_eq!(
        message("SELECT random(1, 10) AS v", "15..=18"),
        "function random(integer, integer) exists from PostgreSQL 17; this crate targets 15 to 18"
    );
    assert_eq!(message("SELECT random() AS v", "13..=18"), "accepted");
    assert_eq!(
        message("SELECT 1_000 AS v", "15.."),
        "an underscore in a numeric literal exists from PostgreSQL 16; this crate targets 15 to 18"
    );
    assert_eq!(message("SELECT 0x10 AS v", "16.."), "accepted");
    assert!(message("SELECT 1 AS v", "12..=18").contains("PostgreSQL 12 is not supported"));
    // A function PostgreSQL 17 removed.
    assert_eq!(
        message(
            "SELECT pg_stat_get_bgwriter_timed_checkpoints() AS v",
            "16..=17"
        ),
        "pg_stat_get_bgwriter_timed_checkpoints() exists up to PostgreSQL 16; this crate targets 16 to 17"
    );
    // old is NULL for an inserted row, new for a deleted one; both are the row otherwise.
    let ddl = qail_schema::ddl::from_sql(&[("a.sql".to_owned(), SCHEMA.to_owned())]).0;
    let accounts = Snapshot {
        postgres: Some("18".to_owned()),
        ..ddl
    };
    let nullable = |sql: &str| -> Vec<bool> {
        analyze(sql, &accounts)
            .unwrap_or_else(|d| panic!("{sql}: {}", d[0]))
            .columns
            .iter()
            .map(|c| c.nullable)
            .collect()
    };
    assert_eq!(
        nullable("UPDATE accounts SET balance = 0 RETURNING old.balance, new.balance, new.note"),
        [false, false, true]
    );
    assert_eq!(
        nullable("INSERT INTO accounts VALUES (1, 2) RETURNING old.balance, new.balance"),
        [true, false]
    );
    assert_eq!(
        nullable("DELETE FROM accounts RETURNING old.balance, new.balance"),
        [false, true]
    );
    let accounts16 = Snapshot {
        postgres: Some("16..".to_owned()),
        ..accounts.clone()
    };
    let typed = |sql: &str| -> Result<Vec<(String, bool)>, String> {
        analyze(sql, &accounts16)
            .map(|a| {
                a.columns
                    .iter()
                    .map(|c| (c.ty.name.clone(), c.nullable))
                    .collect()
            })
            .map_err(|d| d[0].message.clone())
    };
    assert_eq!(
        typed("SELECT note IS JSON AS a, id::text IS NOT JSON OBJECT AS b FROM accounts"),
        Ok(vec![("bool".to_owned(), true), ("bool".to_owned(), false)])
    );
    assert_eq!(
        typed("SELECT id IS JSON AS a FROM accounts"),
        Err("cannot use type integer in IS JSON predicate".to_owned())
    );
    let accounts17 = Snapshot {
        postgres: Some("17..".to_owned()),
        ..accounts.clone()
    };
    let table = analyze(
        "SELECT * FROM JSON_TABLE('[]'::jsonb, '$[*]' COLUMNS (n FOR ORDINALITY, k int PATH '$.k', \
         NESTED PATH '$.xs[*]' COLUMNS (m FOR ORDINALITY))) AS t",
        &accounts17,
    )
    .unwrap_or_else(|d| panic!("{}", d[0]));
    let nulls: Vec<bool> = table.columns.iter().map(|c| c.nullable).collect();
    assert_eq!(nulls, [false, true, true]);
    let merged = analyze(
        "MERGE INTO accounts a USING (VALUES (1)) AS s(id) ON a.id = s.id \
         WHEN NOT MATCHED BY SOURCE THEN DELETE \
         WHEN MATCHED THEN UPDATE SET note = 'x' RETURNING merge_action(), a.balance, s.id",
        &accounts17,
    )
    .unwrap_or_else(|d| panic!("{}", d[0]));
    let nulls: Vec<bool> = merged.columns.iter().map(|c| c.nullable).collect();
    assert_eq!(nulls, [false, false, true]);
    assert_eq!(
        analyze("SELECT merge_action() AS a", &accounts17).map_err(|d| d[0].message.clone()),
        Err("merge_action() can only be used in the RETURNING list of a MERGE command".to_owned())
    );
    assert_eq!(
        message("SELECT num_timed FROM pg_stat_checkpointer", "16..=18"),
        "relation \"pg_stat_checkpointer\" exists from PostgreSQL 17; this crate targets 16 to 18"
    );
    assert_eq!(
        message("SELECT num_timed FROM pg_stat_checkpointer", "17.."),
        "accepted"
    );
    assert_eq!(
        message("SELECT '{}'::int4multirange AS v", "13..=18"),
        "type int4multirange exists from PostgreSQL 14; this crate targets 13 to 18"
    );
    assert_eq!(message("SELECT 'a'::\"char\" AS v", "13..=18"), "accepted");
    // A system view's columns are those of every targeted version.
    assert!(message("SELECT checkpoints_timed FROM pg_stat_bgwriter", "15..=16") == "accepted");
    assert!(message("SELECT checkpoints_timed FROM pg_stat_bgwriter", "16..=17") != "accepted");
}

/// A query's parameter types, and its columns' types and nullability; or the first error.
type Typing = Result<(Vec<String>, Vec<(String, bool)>), String>;

/// The clauses of PostgreSQL 16 to 18 that the parser lacks, as the server types and refuses
/// them (the types are those its Describe reports; the refusals its errors).
#[test]
fn sql_json_clauses_returning_names_and_do_nothing_read_like_the_server() {
    let ddl = qail_schema::ddl::from_sql(&[("a.sql".to_owned(), SCHEMA.to_owned())]).0;
    let on = |range: &str| Snapshot {
        postgres: Some(range.to_owned()),
        ..ddl.clone()
    };
    let (v17, v18) = (on("17.."), on("18"));
    let typed = |sql: &str, snap: &Snapshot| -> Typing {
        analyze(sql, snap)
            .map(|a| {
                (
                    a.params.iter().map(|p| p.ty.name.clone()).collect(),
                    a.columns
                        .iter()
                        .map(|c| (c.ty.name.clone(), c.nullable))
                        .collect(),
                )
            })
            .map_err(|d| d[0].message.clone())
    };
    let cols = |names: &[(&str, bool)]| -> Vec<(String, bool)> {
        names.iter().map(|(n, b)| ((*n).to_owned(), *b)).collect()
    };
    // RETURNING follows the type; PASSING values and DEFAULT are typed in the call's scope.
    let (params, columns) = typed(
        "SELECT JSON_VALUE($1, '$.a' PASSING $2 AS x, balance AS y RETURNING int DEFAULT 5 ON EMPTY) AS a, \
         JSON_QUERY($3, '$' RETURNING text FORMAT JSON WITH WRAPPER) AS b, \
         JSON_EXISTS($4::jsonb, '$' TRUE ON ERROR) AS c, JSON_QUERY('1', '$') AS d FROM accounts",
        &v17,
    )
    .expect("typed");
    assert_eq!(params, ["text", "text", "text", "jsonb"]);
    assert_eq!(
        columns,
        cols(&[
            ("int4", true),
            ("text", true),
            ("bool", true),
            ("jsonb", true)
        ])
    );
    assert_eq!(
        typed("SELECT JSON_VALUE('1'::jsonb, '$' RETURNING int DEFAULT now() ON EMPTY) AS a", &v17)
            .map(|_| ()),
        Err(
            "the DEFAULT of JSON_VALUE() is of type integer but expression is of type timestamp with time zone"
                .to_owned()
        )
    );
    for (sql, refusal) in [
        (
            "SELECT JSON_EXISTS('1'::jsonb, '$' NULL ON ERROR) AS a",
            "JSON_EXISTS(): invalid ON ERROR behavior NULL: JSON_EXISTS() allows ERROR, TRUE, FALSE, UNKNOWN",
        ),
        (
            "SELECT JSON_EXISTS('1'::jsonb, '$' RETURNING int) AS a",
            "JSON_EXISTS(): JSON_EXISTS() has no RETURNING clause",
        ),
        (
            "SELECT JSON_VALUE('1'::jsonb, '$' WITH WRAPPER) AS a",
            "JSON_VALUE(): JSON_VALUE() has no wrapper clause",
        ),
        (
            "SELECT JSON_QUERY('1'::jsonb, '$' WITH WRAPPER OMIT QUOTES) AS a",
            "JSON_QUERY(): SQL/JSON QUOTES behavior must not be specified when WITH WRAPPER is used",
        ),
        (
            "SELECT JSON_VALUE('1'::jsonb, '$' ERROR ON ERROR NULL ON EMPTY) AS a",
            "JSON_VALUE(): unexpected NULL here",
        ),
        (
            "SELECT JSON_SERIALIZE('1'::json RETURNING int) AS a",
            "cannot use type integer in RETURNING clause of JSON_SERIALIZE()",
        ),
        (
            "SELECT JSON_OBJECT(RETURNING uuid) AS a",
            "cannot cast type json to uuid",
        ),
        (
            "SELECT JSON_SCALAR(1 RETURNING jsonb) AS a",
            "JSON_SCALAR() has no RETURNING clause",
        ),
        (
            "SELECT JSON('{}'::jsonb WITH UNIQUE KEYS) AS a",
            "cannot use non-string types with WITH UNIQUE KEYS clause",
        ),
        (
            "SELECT JSON('{}'::text FORMAT JSON ENCODING UTF8) AS a",
            "JSON ENCODING clause is only allowed for bytea input type",
        ),
        (
            "SELECT JSON(1 FORMAT JSON) AS a",
            "cannot cast type integer to json",
        ),
        (
            "SELECT JSON_QUERY('1'::jsonb, '$' RETURNING int DEFAULT (SELECT 1)::oid::int ON ERROR) AS a",
            "can only specify a constant, non-aggregate function, or operator expression for DEFAULT",
        ),
        (
            "SELECT JSON_VALUE('1'::jsonb, '$' RETURNING int DEFAULT generate_series(1, 2) ON ERROR) AS a",
            "DEFAULT expression must not return a set",
        ),
        (
            "SELECT JSON_VALUE('1'::jsonb, '$' RETURNING int DEFAULT abs(balance) + 1 ON ERROR) AS a FROM accounts",
            "DEFAULT expression must not contain column references",
        ),
        (
            "SELECT * FROM JSON_TABLE('1'::jsonb, '$' COLUMNS (a int PATH '$' DEFAULT sum(1) OVER () ON EMPTY)) AS t",
            "can only specify a constant, non-aggregate function, or operator expression for DEFAULT",
        ),
        (
            "SELECT JSON_VALUE('1'::jsonb, '$' RETURNING int FORMAT JSON) AS a",
            "JSON_VALUE(): cannot specify FORMAT JSON in RETURNING clause of JSON_VALUE()",
        ),
        (
            "SELECT * FROM JSON_TABLE('[]'::jsonb, '$' COLUMNS (a int PATH '$') NULL ON ERROR) AS t",
            "invalid ON ERROR behavior",
        ),
        (
            "SELECT * FROM JSON_TABLE('1'::jsonb, '$.a' AS a COLUMNS (a int PATH '$')) AS t",
            "duplicate JSON_TABLE column or path name: a",
        ),
        (
            "SELECT * FROM JSON_TABLE('[]'::jsonb, '$' COLUMNS (b int, NESTED PATH '$' AS b \
             COLUMNS (c int))) AS t",
            "duplicate JSON_TABLE column or path name: b",
        ),
        (
            "SELECT * FROM JSON_TABLE('[]'::jsonb, '$' COLUMNS (b int, b int PATH '$.c')) AS t",
            "duplicate JSON_TABLE column or path name: b",
        ),
        (
            "SELECT * FROM JSON_TABLE('1'::jsonb, '$' COLUMNS (i FOR ORDINALITY, j FOR ORDINALITY)) AS t",
            "only one FOR ORDINALITY column is allowed",
        ),
        (
            "SELECT * FROM JSON_TABLE(NULL::jsonb, '$' COLUMNS (v1 timestamp)) AS f (v1, v2)",
            "JSON_TABLE function has 1 columns available but 2 columns specified",
        ),
        (
            "SELECT JSON_OBJECT(RETURNING text FORMAT JSON ENCODING UTF8) AS a",
            "cannot set JSON encoding for non-bytea output types",
        ),
        (
            "SELECT JSON_ARRAY(RETURNING bytea FORMAT JSON ENCODING UTF16) AS a",
            "unsupported JSON encoding",
        ),
        (
            "SELECT JSON_OBJECT(RETURNING bytea FORMAT JSON ENCODING foo) AS a",
            "unrecognized JSON encoding: foo",
        ),
        (
            "SELECT JSON_OBJECT('foo': NULL::int FORMAT JSON) AS a",
            "cannot use non-string types with explicit FORMAT JSON clause",
        ),
        (
            "SELECT JSON_ARRAY(1, NULL::text FORMAT JSON ENCODING UTF8) AS a",
            "JSON ENCODING clause is only allowed for bytea input type",
        ),
    ] {
        assert_eq!(
            typed(sql, &v17).map(|_| ()),
            Err(refusal.to_owned()),
            "{sql}"
        );
    }
    // A DEFAULT of constants and function calls is one (a subquery inside a call too).
    assert!(
        typed(
            "SELECT JSON_VALUE('1'::jsonb, '$' RETURNING int DEFAULT abs((SELECT -1)) + 2 ON ERROR) AS a",
            &v17
        )
        .is_ok()
    );
    // JSON_ARRAY(query) is NULL for no rows; JSON_ARRAY((scalar subquery)) never is.
    let (_, columns) = typed(
        "SELECT JSON_ARRAY(SELECT id FROM accounts) AS a, JSON_ARRAY((SELECT 1)) AS b",
        &v17,
    )
    .expect("typed");
    assert_eq!(columns, cols(&[("json", true), ("json", false)]));
    assert_eq!(
        typed("SELECT JSON_ARRAY(SELECT 1, 2) AS a", &v17).map(|_| ()),
        Err("subquery must return only one column".to_owned())
    );
    // JSON_TABLE: PASSING values and DEFAULTs are typed; a column without PATH is one.
    let (params, columns) = typed(
        "SELECT * FROM JSON_TABLE($1, '$' PASSING $2 AS x, $3::int AS y \
         COLUMNS (n text, m int PATH '$.m' DEFAULT 1.5 ON EMPTY)) AS t",
        &v17,
    )
    .expect("typed");
    assert_eq!(params, ["text", "text", "int4"]);
    assert_eq!(columns, cols(&[("text", true), ("int4", true)]));
    assert_eq!(
        typed(
            "SELECT * FROM JSON_TABLE('{}'::jsonb, '$' COLUMNS (m int PATH '$.m' DEFAULT now() ON EMPTY)) AS t",
            &v17
        )
        .map(|_| ()),
        Err(
            "the DEFAULT of JSON_TABLE column \"m\" is of type integer but expression is of type timestamp with time zone"
                .to_owned()
        )
    );
    // Renamed old and new: NULL like old and new, and the old names are gone.
    let nulls =
        |sql: &str| typed(sql, &v18).map(|(_, c)| c.into_iter().map(|c| c.1).collect::<Vec<_>>());
    assert_eq!(
        nulls(
            "INSERT INTO accounts VALUES (1, 2) RETURNING WITH (OLD AS o, NEW AS n) o.balance, n.balance"
        ),
        Ok(vec![true, false])
    );
    assert_eq!(
        nulls("DELETE FROM accounts RETURNING WITH (NEW AS n) old.balance, n.balance"),
        Ok(vec![false, true])
    );
    // A new name may be neither the other's nor a table's of the statement (the server's
    // "table name … specified more than once").
    for (sql, name) in [
        (
            "INSERT INTO accounts VALUES (1, 2) RETURNING WITH (NEW AS accounts) *",
            "accounts",
        ),
        (
            "DELETE FROM accounts RETURNING WITH (OLD AS x, NEW AS x) *",
            "x",
        ),
    ] {
        assert_eq!(
            nulls(sql),
            Err(format!("table name \"{name}\" specified more than once")),
            "{sql}"
        );
    }
    assert_eq!(
        nulls("UPDATE accounts SET balance = 1 RETURNING WITH (OLD AS o) o.balance, old.balance"),
        Err("missing FROM-clause entry for table \"old\"".to_owned())
    );
    // DO NOTHING clauses' conditions are typed over what their kind of clause sees.
    let (params, _) = typed(
        "MERGE INTO accounts a USING (SELECT 1 AS id) AS s ON a.id = s.id \
         WHEN MATCHED AND a.balance > $1 THEN DO NOTHING \
         WHEN NOT MATCHED BY SOURCE AND a.note = $2 THEN DO NOTHING \
         WHEN NOT MATCHED AND s.id > $3 THEN DO NOTHING",
        &v17,
    )
    .expect("typed");
    assert_eq!(params, ["numeric", "text", "int4"]);
    assert!(
        typed(
            "MERGE INTO accounts a USING (SELECT 1 AS id) AS s ON a.id = s.id \
             WHEN NOT MATCHED AND a.note = 'x' THEN DO NOTHING",
            &v17
        )
        .is_err_and(|e| e.contains("\"a\"")),
        "the target is not seen by WHEN NOT MATCHED"
    );
    // A target range with a version that lacks a form names the version that has it.
    for (sql, range, message) in [
        (
            "SELECT JSON_VALUE('1'::jsonb, '$' RETURNING int) AS a",
            "16..",
            "JSON_VALUE() exists from PostgreSQL 17; this crate targets 16 to 18",
        ),
        (
            "SELECT JSON_OBJECT('a': 1 RETURNING jsonb) AS a",
            "15..",
            "JSON_OBJECT() exists from PostgreSQL 16; this crate targets 15 to 18",
        ),
        (
            "UPDATE accounts SET balance = 1 RETURNING WITH (OLD AS o) o.balance",
            "17..",
            "RETURNING WITH (OLD AS …, NEW AS …) exists from PostgreSQL 18; this crate targets 17 to 18",
        ),
        (
            "MERGE INTO accounts a USING (SELECT 1 AS id) AS s ON a.id = s.id \
             WHEN NOT MATCHED BY SOURCE THEN DO NOTHING",
            "15..",
            "WHEN NOT MATCHED BY SOURCE exists from PostgreSQL 17; this crate targets 15 to 18",
        ),
        (
            "MERGE INTO accounts a USING (SELECT 1 AS id) AS s ON a.id = s.id \
             WHEN MATCHED THEN DO NOTHING",
            "14..",
            "MERGE exists from PostgreSQL 15; this crate targets 14 to 18",
        ),
    ] {
        assert_eq!(
            typed(sql, &on(range)).map(|_| ()),
            Err(message.to_owned()),
            "{sql}"
        );
    }
    assert!(
        typed(
            "MERGE INTO accounts a USING (SELECT 1 AS id) AS s ON a.id = s.id \
             WHEN MATCHED THEN DO NOTHING",
            &on("15..")
        )
        .is_ok()
    );
}

/// Built-in operators and casts exist in the versions pg_operator and pg_cast have them, as
/// functions do: one a targeted version lacks is refused with the version named.
#[test]
fn operators_and_casts_follow_the_targeted_versions() {
    let on = |range: &str| Snapshot {
        postgres: Some(range.to_owned()),
        ..Snapshot::new()
    };
    let message = |sql: &str, range: &str| {
        analyze(sql, &on(range))
            .map(|a| {
                a.columns
                    .iter()
                    .map(|c| c.ty.name.clone())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_else(|d| d[0].message.clone())
    };
    let bytea = "SELECT '\\x0102'::bytea::int2 AS v";
    assert_eq!(
        message(bytea, "16.."),
        "the cast from bytea to smallint exists from PostgreSQL 18; this crate targets 16 to 18"
    );
    assert_eq!(message(bytea, "18"), "int2");
    assert_eq!(
        message("SELECT 7::bytea AS v", "17..=18"),
        "the cast from integer to bytea exists from PostgreSQL 18; this crate targets 17 to 18"
    );
    let below = "SELECT point '(1,1)' <<| point '(0,0)' AS v";
    assert_eq!(
        message(below, "13.."),
        "operator point <<| point exists from PostgreSQL 14; this crate targets 13 to 18"
    );
    assert_eq!(message(below, "14.."), "bool");
    // PostgreSQL 14 removed `@` (contained in) for geometric types in favour of `<@`.
    let within = "SELECT point '(1,1)' @ box '((0,0),(2,2))' AS v";
    assert_eq!(message(within, "13"), "bool");
    assert_eq!(
        message(within, "13..=14"),
        "operator point @ box exists up to PostgreSQL 13; this crate targets 13 to 14"
    );
    assert_eq!(
        message("SELECT 1 + 2 AS v, 'a' || 'b' AS w", "13.."),
        "int4,text"
    );
}

/// A generated column (STORED from PostgreSQL 12, VIRTUAL from 18, the default there) takes
/// no value but DEFAULT: every server the tests reach refuses a value for it in INSERT,
/// UPDATE and MERGE, and so does the analyzer, with the server's message; DEFAULT is typed
/// like the server's Describe. A `GENERATED ALWAYS AS IDENTITY` column too, except in an
/// INSERT that says `OVERRIDING SYSTEM VALUE` (or `OVERRIDING USER VALUE`, which ignores the
/// value): the analyzer's refusal says to add the clause.
#[tokio::test]
async fn generated_and_identity_columns_take_only_default_like_the_server() {
    let refused = [
        (
            "INSERT INTO gauges (id, twice) VALUES (1, 2)",
            "cannot insert a non-DEFAULT value into column \"twice\"",
        ),
        (
            "INSERT INTO gauges VALUES ($1, $2)",
            "cannot insert a non-DEFAULT value into column \"twice\"",
        ),
        (
            "INSERT INTO gauges (id, twice) SELECT 1, 2",
            "cannot insert a non-DEFAULT value into column \"twice\"",
        ),
        (
            "UPDATE gauges SET twice = $1 WHERE id = 1",
            "column \"twice\" can only be updated to DEFAULT",
        ),
        (
            "INSERT INTO gauges VALUES (1) ON CONFLICT (id) DO UPDATE SET twice = 3",
            "column \"twice\" can only be updated to DEFAULT",
        ),
        (
            "MERGE INTO gauges g USING (SELECT 1 AS id) s ON g.id = s.id \
             WHEN NOT MATCHED THEN INSERT (id, twice) VALUES (s.id, 2)",
            "cannot insert a non-DEFAULT value into column \"twice\"",
        ),
        (
            "INSERT INTO gauges (id, twice) OVERRIDING SYSTEM VALUE VALUES (1, 2)",
            "cannot insert a non-DEFAULT value into column \"twice\"",
        ),
        (
            "INSERT INTO gauges (id, serial) VALUES ($1, $2)",
            "cannot insert a non-DEFAULT value into column \"serial\"",
        ),
        (
            "INSERT INTO gauges (id, serial) VALUES (1, DEFAULT), (2, 5)",
            "cannot insert a non-DEFAULT value into column \"serial\"",
        ),
        (
            "INSERT INTO gauges (id, serial) SELECT 1, 2",
            "cannot insert a non-DEFAULT value into column \"serial\"",
        ),
        (
            "UPDATE gauges SET serial = 2",
            "column \"serial\" can only be updated to DEFAULT",
        ),
        (
            "MERGE INTO gauges g USING (SELECT 1 AS id) s ON g.id = s.id \
             WHEN NOT MATCHED THEN INSERT (id, serial) VALUES (s.id, 2)",
            "cannot insert a non-DEFAULT value into column \"serial\"",
        ),
    ];
    let accepted = [
        "INSERT INTO gauges (id, twice) VALUES ($1, DEFAULT) RETURNING twice",
        "INSERT INTO gauges VALUES ($1) RETURNING *",
        "UPDATE gauges SET twice = DEFAULT, id = $1 RETURNING twice",
        "INSERT INTO gauges (id, serial) VALUES ($1, DEFAULT) RETURNING serial",
        "INSERT INTO gauges (id, serial) OVERRIDING SYSTEM VALUE VALUES ($1, $2) RETURNING serial",
        "INSERT INTO gauges (serial, id) OVERRIDING USER VALUE SELECT $1, $2 RETURNING *",
        "UPDATE gauges SET serial = DEFAULT RETURNING serial",
        "MERGE INTO gauges g USING (SELECT 1 AS id) s ON g.id = s.id \
         WHEN NOT MATCHED THEN INSERT (id, serial) OVERRIDING SYSTEM VALUE VALUES (s.id, $1)",
    ];
    let mut failures = Vec::new();
    for url in urls() {
        let mut conn = Connection::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
        let schema = format!("qail_generated_{}", std::process::id());
        let (_, major) = snapshot_of(&mut conn, &schema).await;
        let kind = if major >= 18 { "" } else { " STORED" };
        conn.batch_execute(&format!(
            "CREATE TABLE gauges (id int PRIMARY KEY, twice int GENERATED ALWAYS AS (id * 2){kind}, \
             serial int GENERATED ALWAYS AS IDENTITY)"
        ))
        .await
        .expect("the table is created");
        let snap = qail_schema::introspect::pull(&mut conn, std::slice::from_ref(&schema))
            .await
            .expect("the schema is pulled");
        for (sql, message) in refused {
            if major < 15 && sql.starts_with("MERGE") {
                continue;
            }
            // Note: PostgreSQL 13 words the INSERT refusal without "a non-DEFAULT value".
            let says = if major < 14 {
                message.replace("a non-DEFAULT value into", "into")
            } else {
                message.to_owned()
            };
            let server = conn.prepare(sql).await.err().map(|e| e.to_string());
            if !server.as_deref().is_some_and(|e| e.contains(&says)) {
                failures.push(format!(
                    "PostgreSQL {major}: {sql}: the server says {server:?}"
                ));
            }
            match analyze(sql, &snap) {
                Err(d)
                    if d[0].message == message
                        && (!message.starts_with("cannot insert")
                            || !message.contains("serial")
                            || d[0]
                                .hint
                                .as_deref()
                                .is_some_and(|h| h.contains("add OVERRIDING SYSTEM VALUE"))) => {}
                other => failures.push(format!(
                    "PostgreSQL {major}: {sql}: the analyzer gives {:?}",
                    other.map(|_| ()).map_err(|d| d[0].message.clone())
                )),
            }
        }
        for sql in accepted {
            if major < 15 && sql.starts_with("MERGE") {
                continue;
            }
            if let Err(e) = compare(&mut conn, &snap, &HashMap::new(), sql).await {
                failures.push(format!("PostgreSQL {major}: {sql}\n  {e}"));
            }
        }
        conn.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
            .await
            .expect("the test schema is dropped");
        conn.close().await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every prefix of every query above, as an editor sends it while the query is typed, is an
/// answer (a type or an error), never a panic in the clauses read outside the parser.
#[test]
fn every_prefix_of_the_new_forms_is_an_answer() {
    let ddl = qail_schema::ddl::from_sql(&[("a.sql".to_owned(), SCHEMA.to_owned())]).0;
    let snap = Snapshot {
        postgres: Some("18".to_owned()),
        ..ddl
    };
    for f in FEATURES {
        for (end, _) in f.sql.char_indices() {
            let prefix = &f.sql[..end];
            let answered = std::panic::catch_unwind(|| analyze(prefix, &snap).is_ok());
            assert!(answered.is_ok(), "{}: a panic on {prefix:?}", f.name);
        }
    }
}
