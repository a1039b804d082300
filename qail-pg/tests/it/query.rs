//! Simple and extended queries, errors, the statement cache, cancel safety.

use std::time::Duration;

use qail_pg::{Connection, TransactionStatus};

/// A schema of its own per test, dropped first so reruns start clean.
async fn schema(conn: &mut Connection, name: &str) {
    conn.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
    ))
    .await
    .unwrap();
}

#[tokio::test]
async fn batch_execute_runs_several_statements() {
    let mut conn = super::connect().await;
    schema(&mut conn, "qail_it_batch").await;
    conn.batch_execute(
        "CREATE TABLE qail_it_batch.t (id int4 PRIMARY KEY, name text);
         INSERT INTO qail_it_batch.t VALUES (1, 'a'), (2, 'b');
         SELECT * FROM qail_it_batch.t;",
    )
    .await
    .unwrap();
    let n: i64 = conn
        .query_one("SELECT count(*) FROM qail_it_batch.t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
}

#[tokio::test]
async fn query_with_binary_params_and_results() {
    let mut conn = super::connect().await;
    let rows = conn.query("SELECT $1::int4 + 1", &[&41i32]).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<i32>(0), 42);
    let row = conn
        .query_one(
            "SELECT $1::text AS greeting, $2::int8 AS big, NULL::int4 AS nothing",
            &[&"hello", &7i64],
        )
        .await
        .unwrap();
    assert_eq!(row.len(), 3);
    assert_eq!(row.get_by_name::<String>("greeting"), "hello");
    assert_eq!(row.get::<&str>(0), "hello");
    assert_eq!(row.get::<i64>(1), 7);
    assert_eq!(row.get::<Option<i32>>(2), None);
    assert!(row.try_get::<i32>(2).is_err());
    assert_eq!(row.columns()[1].name(), "big");
    assert_eq!(row.columns()[1].type_oid(), 20);
}

#[tokio::test]
async fn null_parameters_round_trip() {
    let mut conn = super::connect().await;
    let none: Option<i32> = None;
    let row = conn
        .query_one("SELECT $1::int4 IS NULL, $1::int4", &[&none])
        .await
        .unwrap();
    assert!(row.get::<bool>(0));
    assert_eq!(row.get::<Option<i32>>(1), None);
}

#[tokio::test]
async fn type_mismatch_names_column_oid_and_rust_type() {
    let mut conn = super::connect().await;
    let row = conn.query_one("SELECT 1::int4 AS n", &[]).await.unwrap();
    let msg = row.try_get::<String>(0).unwrap_err().to_string();
    assert!(
        msg.contains("\"n\"") && msg.contains("23") && msg.contains("String"),
        "{msg}"
    );
}

#[tokio::test]
async fn query_one_and_opt_count_rows() {
    let mut conn = super::connect().await;
    let none = conn.query_opt("SELECT 1 WHERE false", &[]).await.unwrap();
    assert!(none.is_none());
    let err = conn
        .query_one("SELECT 1 WHERE false", &[])
        .await
        .unwrap_err();
    assert!(err.is_row_count(), "{err}");
    let err = conn
        .query_opt("SELECT * FROM generate_series(1, 2)", &[])
        .await
        .unwrap_err();
    assert!(err.is_row_count(), "{err}");
    assert!(conn.query_opt("SELECT 1", &[]).await.unwrap().is_some());
}

#[tokio::test]
async fn execute_returns_rows_affected() {
    let mut conn = super::connect().await;
    schema(&mut conn, "qail_it_exec").await;
    conn.batch_execute("CREATE TABLE qail_it_exec.t (id int4)")
        .await
        .unwrap();
    let n = conn
        .execute(
            "INSERT INTO qail_it_exec.t SELECT generate_series(1, $1::int4)",
            &[&5i32],
        )
        .await
        .unwrap();
    assert_eq!(n, 5);
    let n = conn
        .execute("DELETE FROM qail_it_exec.t WHERE id > $1", &[&3i32])
        .await
        .unwrap();
    assert_eq!(n, 2);
}

#[tokio::test]
async fn syntax_error_keeps_sqlstate_and_position_and_connection() {
    let mut conn = super::connect().await;
    let err = conn.query("SELECT 1 FROMM x", &[]).await.unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(db.code(), "42601");
    assert_eq!(db.position, Some(16), "the caret is at \"x\"");
    assert!(!err.is_closed());
    let err = conn.batch_execute("SELEC 1").await.unwrap_err();
    assert_eq!(err.code(), Some("42601"));
    assert_eq!(
        conn.query_one("SELECT 2::int4", &[])
            .await
            .unwrap()
            .get::<i32>(0),
        2
    );
}

#[tokio::test]
async fn unique_violation_keeps_constraint_name() {
    let mut conn = super::connect().await;
    schema(&mut conn, "qail_it_unique").await;
    conn.batch_execute("CREATE TABLE qail_it_unique.t (id int4 CONSTRAINT t_id_key UNIQUE)")
        .await
        .unwrap();
    let insert = "INSERT INTO qail_it_unique.t VALUES ($1)";
    conn.execute(insert, &[&1i32]).await.unwrap();
    let err = conn.execute(insert, &[&1i32]).await.unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(db.code, "23505");
    assert_eq!(db.constraint.as_deref(), Some("t_id_key"));
    assert_eq!(db.table.as_deref(), Some("t"));
    assert_eq!(db.schema.as_deref(), Some("qail_it_unique"));
    assert!(db.detail.is_some());
    assert_eq!(conn.execute(insert, &[&2i32]).await.unwrap(), 1);
}

#[tokio::test]
async fn transaction_status_follows_ready_for_query() {
    let mut conn = super::connect().await;
    conn.batch_execute("BEGIN").await.unwrap();
    assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
    assert!(conn.query("SELECT 1/0", &[]).await.is_err());
    assert_eq!(conn.transaction_status(), TransactionStatus::Failed);
    conn.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
}

#[tokio::test]
async fn parameter_count_mismatch_is_a_usage_error() {
    let mut conn = super::connect().await;
    let err = conn
        .query("SELECT $1::int4, $2::int4", &[&1i32])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("2 parameters but 1"), "{err}");
    assert!(!err.is_closed());
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn wrong_parameter_type_is_refused_before_sending() {
    let mut conn = super::connect().await;
    let err = conn.query("SELECT $1::int4", &[&"text"]).await.unwrap_err();
    assert!(!err.is_closed(), "{err}");
    assert!(err.to_string().contains("$1"), "{err}");
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn prepare_describes_params_and_columns() {
    let mut conn = super::connect().await;
    let stmt = conn
        .prepare("SELECT $1::int8 AS id, $2::text AS name, now() AS at")
        .await
        .unwrap();
    assert_eq!(stmt.params(), [20, 25]);
    let columns: Vec<(&str, u32)> = stmt
        .columns()
        .iter()
        .map(|c| (c.name(), c.type_oid()))
        .collect();
    assert_eq!(columns, [("id", 20), ("name", 25), ("at", 1184)]);
    let stmt = conn.prepare("SET search_path = public").await.unwrap();
    assert!(stmt.columns().is_empty());
    let err = conn.prepare("SELECT nope FROM nowhere").await.unwrap_err();
    assert_eq!(err.code(), Some("42P01"));
}

#[tokio::test]
async fn many_statements_evict_from_the_cache() {
    let mut conn = super::connect().await;
    conn.set_statement_cache_size(4);
    for round in 0..2 {
        for i in 0..20i32 {
            let sql = format!("SELECT {i}::int4 + $1::int4");
            let v: i32 = conn.query_one(&sql, &[&round]).await.unwrap().get(0);
            assert_eq!(v, i + round);
        }
    }
    // Closed statements are gone from the server: only the cache's 4 remain.
    let n: i64 = conn
        .query_one(
            "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'qail_s%'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(n <= 5, "{n} statements left on the server");
    conn.set_statement_cache_size(0);
    let v: i32 = conn
        .query_one("SELECT $1::int4", &[&9i32])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 9);
}

#[tokio::test]
async fn discarded_statements_are_prepared_again() {
    let mut conn = super::connect().await;
    let sql = "SELECT $1::int4 * 2";
    assert_eq!(
        conn.query_one(sql, &[&2i32]).await.unwrap().get::<i32>(0),
        4
    );
    conn.batch_execute("DEALLOCATE ALL").await.unwrap();
    assert_eq!(
        conn.query_one(sql, &[&3i32]).await.unwrap().get::<i32>(0),
        6
    );
}

#[tokio::test]
async fn notices_reach_the_handler() {
    let mut conn = super::connect().await;
    let (tx, rx) = std::sync::mpsc::channel();
    conn.set_notice_handler(move |notice| {
        let _ = tx.send(notice.message.clone());
    });
    conn.batch_execute("DO $$ BEGIN RAISE NOTICE 'hello from plpgsql'; END $$")
        .await
        .unwrap();
    assert_eq!(rx.try_recv().unwrap(), "hello from plpgsql");
}

#[tokio::test]
async fn a_dropped_query_future_does_not_desynchronize() {
    let mut conn = super::connect().await;
    {
        let slow = conn.query("SELECT pg_sleep(0.2), 1::int4", &[]);
        let _ = tokio::time::timeout(Duration::ZERO, slow).await;
    }
    let v: i32 = conn.query_one("SELECT 7::int4", &[]).await.unwrap().get(0);
    assert_eq!(v, 7);
    // Dropped after the server started answering: rows of the first query must not leak
    // into the second.
    {
        let rows = conn.query("SELECT generate_series(1, 50000)::int4", &[]);
        let _ = tokio::time::timeout(Duration::from_millis(1), rows).await;
    }
    let rows = conn.query("SELECT 'x'::text", &[]).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<&str>(0), "x");
    assert!(!conn.is_closed());
}

/// A fixed xorshift sequence: the same values on every run.
fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

#[tokio::test]
async fn bound_values_never_change_the_query() {
    let mut conn = super::connect().await;
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    // Characters that break quoting, escaping or comments when spliced into SQL text.
    let hostile = [
        "'",
        "''",
        "\\",
        "\\'",
        "\"",
        ";",
        "--",
        "/*",
        "*/",
        "$$",
        "$1",
        "?",
        "%",
        "\n",
        "é",
        "\u{2028}",
        "😀",
        "E'",
        "); DROP TABLE x; --",
    ];
    for _ in 0..300 {
        let len = next() % 12;
        let text: String = (0..len)
            .map(|_| match next() % 3 {
                0 => {
                    let i = usize::try_from(next()).unwrap() % hostile.len();
                    hostile[i].to_owned()
                }
                1 => char::from_u32(u32::try_from(next() % 0x3000).unwrap() + 1)
                    .filter(|c| *c != '\0')
                    .unwrap_or('x')
                    .to_string(),
                _ => char::from(u8::try_from(next() % 95 + 32).unwrap()).to_string(),
            })
            .collect();
        let bytes: Vec<u8> = (0..next() % 40)
            .map(|_| u8::try_from(next() % 256).unwrap())
            .collect();
        let row = conn
            .query_one("SELECT $1::text, $2::bytea", &[&text, &bytes])
            .await
            .unwrap();
        assert_eq!(row.get::<&str>(0), text);
        assert_eq!(row.get::<&[u8]>(1), bytes.as_slice());
        // The structure stays `1 - $1`: a value is never read as SQL.
        let row = conn
            .query_one("SELECT 1 - $1::int4, $2::text", &[&-5i32, &text])
            .await
            .unwrap();
        assert_eq!((row.get::<i32>(0), row.get::<&str>(1)), (6, text.as_str()));
    }
}

#[tokio::test]
async fn a_nul_in_text_is_refused_by_the_server_and_bytes_keep_it() {
    let mut conn = super::connect().await;
    let err = conn
        .query_one("SELECT $1::text", &[&"a\0b"])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("22021"), "{err}");
    let row = conn
        .query_one("SELECT $1::bytea", &[&&b"a\0b"[..]])
        .await
        .unwrap();
    assert_eq!(row.get::<&[u8]>(0), b"a\0b");
}

#[tokio::test]
async fn set_time_zone_is_tracked_and_set_client_encoding_is_refused() {
    let mut conn = super::connect().await;
    conn.batch_execute("SET TimeZone = 'Asia/Kathmandu'")
        .await
        .unwrap();
    assert_eq!(conn.parameter_status("TimeZone"), Some("Asia/Kathmandu"));
    conn.execute("SET TimeZone = 'UTC'", &[]).await.unwrap();
    assert_eq!(conn.parameter_status("TimeZone"), Some("UTC"));
    // A session that speaks LATIN1 would hand back text qail-pg reads as UTF-8: the
    // connection is closed instead, so nothing is ever mis-decoded.
    let err = conn
        .batch_execute("SET client_encoding = 'LATIN1'")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("LATIN1"), "{err}");
    assert!(err.is_closed() && conn.is_closed(), "{err}");
    assert!(conn.query("SELECT 'é'", &[]).await.unwrap_err().is_closed());
}
