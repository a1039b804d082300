//! COPY FROM STDIN and COPY TO STDOUT, text and binary, a million rows, failed sources.

use futures_util::StreamExt;
use qail_pg::Connection;

async fn table(conn: &mut Connection, schema: &str) {
    conn.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};
         CREATE TABLE {schema}.t (id int8, name text)"
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
async fn a_million_rows_in_and_out() {
    let mut conn = super::connect().await;
    let s = "qail_it_copy_million";
    table(&mut conn, s).await;
    let mut copy = conn
        .copy_in(&format!("COPY {s}.t FROM STDIN"))
        .await
        .unwrap();
    let mut chunk = String::new();
    for i in 0..1_000_000 {
        chunk.push_str(&format!("{i}\tname {i}\n"));
        if chunk.len() > 32 * 1024 {
            copy.send(chunk.as_bytes()).await.unwrap();
            chunk.clear();
        }
    }
    copy.send(chunk.as_bytes()).await.unwrap();
    assert_eq!(copy.finish().await.unwrap(), 1_000_000);
    assert_eq!(count(&mut conn, s).await, 1_000_000);
    let mut lines = 0usize;
    let mut bytes = 0usize;
    {
        let sql = format!("COPY {s}.t TO STDOUT");
        let mut out = std::pin::pin!(conn.copy_out(&sql));
        while let Some(chunk) = out.next().await {
            let chunk = chunk.unwrap();
            lines += chunk.iter().filter(|&&b| b == b'\n').count();
            bytes += chunk.len();
        }
    }
    assert_eq!(lines, 1_000_000);
    assert!(bytes > 10_000_000);
}

#[tokio::test]
async fn binary_copy_round_trips() {
    let mut conn = super::connect().await;
    let s = "qail_it_copy_binary";
    table(&mut conn, s).await;
    let mut data = b"PGCOPY\n\xff\r\n\0".to_vec();
    data.extend_from_slice(&[0; 8]);
    for i in 0..1000i64 {
        let name = format!("b{i}");
        data.extend_from_slice(&2i16.to_be_bytes());
        data.extend_from_slice(&8i32.to_be_bytes());
        data.extend_from_slice(&i.to_be_bytes());
        data.extend_from_slice(&i32::try_from(name.len()).unwrap().to_be_bytes());
        data.extend_from_slice(name.as_bytes());
    }
    data.extend_from_slice(&(-1i16).to_be_bytes());
    let source = futures_util::stream::iter(
        data.chunks(777)
            .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
            .collect::<Vec<_>>(),
    );
    let n = conn
        .copy_in_stream(&format!("COPY {s}.t FROM STDIN (FORMAT binary)"), source)
        .await
        .unwrap();
    assert_eq!(n, 1000);
    let mut out = Vec::new();
    {
        let sql = format!("COPY (SELECT * FROM {s}.t ORDER BY id) TO STDOUT (FORMAT binary)");
        let mut chunks = std::pin::pin!(conn.copy_out(&sql));
        while let Some(chunk) = chunks.next().await {
            out.extend_from_slice(&chunk.unwrap());
        }
    }
    assert_eq!(out, data);
}

#[tokio::test]
async fn a_source_failing_midway_writes_no_rows() {
    let mut conn = super::connect().await;
    let s = "qail_it_copy_fail";
    table(&mut conn, s).await;
    let chunks = (0..100)
        .map(|i| {
            if i == 50 {
                Err(std::io::Error::other("the disk is gone"))
            } else {
                Ok(format!("{i}\tx\n").into_bytes())
            }
        })
        .collect::<Vec<_>>();
    let err = conn
        .copy_in_stream(
            &format!("COPY {s}.t FROM STDIN"),
            futures_util::stream::iter(chunks),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no row was written"), "{err}");
    assert!(!err.is_closed());
    assert_eq!(count(&mut conn, s).await, 0);
    // Dropped without finish: aborted too.
    {
        let mut copy = conn
            .copy_in(&format!("COPY {s}.t FROM STDIN"))
            .await
            .unwrap();
        copy.send(b"1\ta\n").await.unwrap();
    }
    assert_eq!(count(&mut conn, s).await, 0);
    let copy = conn
        .copy_in(&format!("COPY {s}.t FROM STDIN"))
        .await
        .unwrap();
    copy.fail("changed my mind").await.unwrap();
    assert_eq!(count(&mut conn, s).await, 0);
}

#[tokio::test]
async fn bad_rows_and_wrong_statements_are_errors() {
    let mut conn = super::connect().await;
    let s = "qail_it_copy_bad";
    table(&mut conn, s).await;
    let mut copy = conn
        .copy_in(&format!("COPY {s}.t FROM STDIN"))
        .await
        .unwrap();
    copy.send(b"1\tok\nnot-a-number\tx\n").await.unwrap();
    let err = copy.finish().await.unwrap_err();
    assert_eq!(err.code(), Some("22P02"));
    assert_eq!(count(&mut conn, s).await, 0);
    let err = conn.copy_in("SELECT 1").await.unwrap_err();
    assert!(err.to_string().contains("COPY"), "{err}");
    let err = conn.copy_in("COPY nowhere FROM STDIN").await.unwrap_err();
    assert_eq!(err.code(), Some("42P01"));
    {
        let mut out = std::pin::pin!(conn.copy_out("SELECT 1"));
        assert!(out.next().await.unwrap().is_err());
    }
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}
