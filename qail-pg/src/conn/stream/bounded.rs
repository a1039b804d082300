//! The buffers stay bounded against a real server (`DATABASE_URL`): a large result read by
//! a slow consumer, and a large value sent and received, after which the buffers shrink.

use std::time::Duration;

use futures_util::StreamExt;

use super::MAX_IDLE_CAPACITY;
use crate::template::{Params, Query, RawRow, Template};
use crate::types::{Oid, oid};
use crate::{Connection, Error, FromRow};

async fn connect() -> Connection {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    Connection::connect(&url).await.unwrap()
}

struct Int8(i64);

impl FromRow for Int8 {
    fn from_row(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error> {
        Ok(Int8(row.get_next(columns)?))
    }
}

#[tokio::test]
async fn a_million_rows_to_a_slow_consumer_keep_the_read_buffer_small() {
    let mut conn = connect().await;
    let template = Template::leak(
        "SELECT g::int8 AS g FROM generate_series(1, 1000000) g",
        &[],
        &[("g", oid::INT8, "int8")],
    )
    .unwrap();
    let mut rows = Box::pin(Query::<Int8>::new(template, Params::new([])).fetch(&mut conn));
    let mut expected = 1;
    while let Some(row) = rows.next().await {
        assert_eq!(row.unwrap().0, expected);
        if expected % 20_000 == 0 {
            // Note: the server fills the socket while the consumer sleeps; what it sends
            // must wait in the kernel's buffers, not pile up in ours.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        expected += 1;
    }
    drop(rows);
    assert_eq!(expected, 1_000_001);
    let (read, write, peak) = conn.stream.capacities();
    assert!(
        peak <= 4 * super::READ_SIZE,
        "the read buffer grew to {peak}"
    );
    assert!(read <= peak && write <= MAX_IDLE_CAPACITY, "{read} {write}");
}

#[tokio::test]
async fn a_hundred_megabyte_value_round_trips_and_the_buffers_shrink_after() {
    let mut conn = connect().await;
    let pattern: Vec<u8> = (0..=250).collect();
    let mut big = Vec::with_capacity(100_000_000);
    while big.len() < 100_000_000 {
        big.extend_from_slice(&pattern);
    }
    big.truncate(100_000_000);
    let row = conn.query_one("SELECT $1::bytea", &[&big]).await.unwrap();
    assert!(row.get::<&[u8]>(0) == big.as_slice());
    drop(row);
    let (_, _, peak) = conn.stream.capacities();
    assert!(
        peak >= 100_000_000,
        "the value came through the read buffer"
    );
    assert!(peak <= 300_000_000, "the read buffer grew to {peak}");
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
    let (read, write, _) = conn.stream.capacities();
    assert!(
        read <= MAX_IDLE_CAPACITY,
        "the read buffer kept {read} bytes"
    );
    assert!(
        write <= MAX_IDLE_CAPACITY,
        "the write buffer kept {write} bytes"
    );
}
