//! Transactions: commit, rollback, rollback on drop, savepoints, options.

use qail_pg::{Connection, IsolationLevel, NoRows, TransactionStatus};

use super::compiled::{Int8, col, query, template};

async fn table(conn: &mut Connection, schema: &str) {
    conn.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};
         CREATE TABLE {schema}.t (id int8)"
    ))
    .await
    .unwrap();
}

async fn count(conn: &mut Connection, schema: &str) -> i64 {
    conn.query_one(&format!("SELECT count(*) FROM {schema}.t"), &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn commit_keeps_rollback_and_drop_discard() {
    let mut conn = super::connect().await;
    let s = "qail_it_tx_basic";
    table(&mut conn, s).await;
    let insert = format!("INSERT INTO {s}.t VALUES ($1)");
    let mut tx = conn.begin().await.unwrap();
    assert_eq!(tx.transaction_status(), TransactionStatus::InTransaction);
    tx.execute(&insert, &[&1i64]).await.unwrap();
    tx.commit().await.unwrap();
    let tx = conn.begin().await.unwrap();
    tx.rollback().await.unwrap();
    {
        let mut tx = conn.begin().await.unwrap();
        tx.execute(&insert, &[&2i64]).await.unwrap();
    }
    assert_eq!(count(&mut conn, s).await, 1);
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
}

#[tokio::test]
async fn savepoints_nest() {
    let mut conn = super::connect().await;
    let s = "qail_it_tx_nest";
    table(&mut conn, s).await;
    let insert = format!("INSERT INTO {s}.t VALUES ($1)");
    let mut tx = conn.begin().await.unwrap();
    tx.execute(&insert, &[&1i64]).await.unwrap();
    {
        let mut inner = tx.begin().await.unwrap();
        inner.execute(&insert, &[&2i64]).await.unwrap();
        inner.rollback().await.unwrap();
    }
    {
        let mut inner = tx.begin().await.unwrap();
        inner.execute(&insert, &[&3i64]).await.unwrap();
        let mut innermost = inner.begin().await.unwrap();
        innermost.execute(&insert, &[&4i64]).await.unwrap();
        // dropped: rolled back to its savepoint
    }
    {
        let mut inner = tx.begin().await.unwrap();
        inner.execute(&insert, &[&5i64]).await.unwrap();
        assert!(inner.execute("SELECT 1/0", &[]).await.is_err());
        // the savepoint is rolled back on drop, so the outer transaction can go on
    }
    {
        let mut inner = tx.begin().await.unwrap();
        inner.execute(&insert, &[&6i64]).await.unwrap();
        inner.commit().await.unwrap();
    }
    tx.commit().await.unwrap();
    let ids: Vec<i64> = conn
        .query(&format!("SELECT id FROM {s}.t ORDER BY id"), &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(ids, [1, 6]);
}

#[tokio::test]
async fn commit_after_a_failed_statement_is_an_error() {
    let mut conn = super::connect().await;
    let mut tx = conn.begin().await.unwrap();
    assert!(tx.execute("SELECT 1/0", &[]).await.is_err());
    assert_eq!(tx.transaction_status(), TransactionStatus::Failed);
    let err = tx.commit().await.unwrap_err();
    assert!(err.to_string().contains("rolled back"), "{err}");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    let err = conn.begin().await.map(drop);
    assert!(err.is_ok());
}

#[tokio::test]
async fn options_reach_the_server() {
    let mut conn = super::connect().await;
    let mut tx = conn
        .build_transaction()
        .isolation_level(IsolationLevel::Serializable)
        .read_only(true)
        .deferrable(true)
        .begin()
        .await
        .unwrap();
    let level: String = tx
        .query_one("SELECT current_setting('transaction_isolation')", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(level, "serializable");
    let err = tx
        .batch_execute("CREATE TEMP TABLE qail_it_ro (x int)")
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("25006"));
    drop(tx);
    let err = conn.begin().await.unwrap();
    drop(err);
    let mut tx = conn.begin().await.unwrap();
    let err = tx.connection().begin().await.unwrap_err();
    assert!(err.to_string().contains("savepoint"), "{err}");
}

#[tokio::test]
async fn compiled_queries_run_on_a_transaction() {
    let mut conn = super::connect().await;
    let s = "qail_it_tx_compiled";
    table(&mut conn, s).await;
    let insert = template("INSERT INTO qail_it_tx_compiled.t VALUES ($1)", &[20], &[]);
    let select = template(
        "SELECT count(*) AS n FROM qail_it_tx_compiled.t",
        &[],
        &[col("n", 20, "int8")],
    );
    let mut tx = conn.begin().await.unwrap();
    query::<NoRows>(insert, &[&7i64])
        .execute(&mut tx)
        .await
        .unwrap();
    let n = query::<Int8>(select, &[]).fetch_one(&mut tx).await.unwrap();
    assert_eq!(n, Int8(1));
    drop(tx);
    let n = query::<Int8>(select, &[])
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(n, Int8(0));
}
