//! Compiled queries run on `&Pool`: each call takes a connection, runs, and gives it back.

use futures_util::StreamExt;
use qail_pg::{NoRows, Pool};

use super::{app_name, config, eventually};
use crate::compiled::{Pair, col, query, template};

const PAIRS: &str = "SELECT g::int8 AS id, 'n' || g AS name FROM generate_series(1, $1::int4) g";

/// A pool of one connection: a call that kept its connection would make the next one wait
/// until the acquire time-out.
async fn pool_of_one(test: &str) -> Pool {
    Pool::builder()
        .max_size(1)
        .acquire_timeout(Some(std::time::Duration::from_secs(5)))
        .connect_with(config(&app_name(test)))
        .await
        .unwrap()
}

#[tokio::test]
async fn fetch_methods_and_execute_run_on_a_pool_and_give_the_connection_back() {
    let pool = pool_of_one("queries_fetch").await;
    let t = template(
        PAIRS,
        &[23],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );

    let rows = query::<Pair>(t, &[&3i32])
        .fetch_all(&mut &pool)
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[2],
        Pair {
            id: 3,
            name: "n3".into()
        }
    );
    assert_eq!(pool.stats().in_use, 0, "{:?}", pool.stats());

    let one = query::<Pair>(t, &[&1i32])
        .fetch_one(&mut &pool)
        .await
        .unwrap();
    assert_eq!(one.name, "n1");
    let none = query::<Pair>(t, &[&0i32])
        .fetch_optional(&mut &pool)
        .await
        .unwrap();
    assert_eq!(none, None);
    let err = query::<Pair>(t, &[&2i32])
        .fetch_one(&mut &pool)
        .await
        .unwrap_err();
    assert!(err.is_row_count(), "{err}");
    assert_eq!(pool.stats().in_use, 0, "after an error: {:?}", pool.stats());

    let n = query::<NoRows>(t, &[&4i32])
        .execute(&mut &pool)
        .await
        .unwrap();
    assert_eq!(n, 4, "a SELECT's command tag counts its rows");
    let stats = pool.stats();
    assert_eq!(
        (stats.created, stats.in_use),
        (1, 0),
        "one connection, reused: {stats:?}"
    );

    // The same query methods still take a connection held across calls.
    let mut conn = pool.acquire().await.unwrap();
    let rows = query::<Pair>(t, &[&2i32])
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    drop(conn);

    // Run-time SQL on the pool.
    let rows = pool.query("SELECT $1::int4 + 1", &[&41i32]).await.unwrap();
    assert_eq!(rows[0].get::<i32>(0), 42);
    assert_eq!(pool.execute("SELECT 1", &[]).await.unwrap(), 1);
    assert_eq!(pool.stats().in_use, 0);
}

#[tokio::test]
async fn a_stream_on_a_pool_holds_its_connection_until_dropped() {
    let pool = pool_of_one("queries_stream").await;
    let t = template(
        PAIRS,
        &[23],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );

    let names: Vec<String> = query::<Pair>(t, &[&3i32])
        .fetch(&pool)
        .map(|row| row.unwrap().name)
        .collect()
        .await;
    assert_eq!(names, ["n1", "n2", "n3"]);
    assert_eq!(pool.stats().in_use, 0, "a finished stream gives it back");

    // Dropped after the first of many rows: the connection's replies are drained and it is
    // given back, ready for the next call.
    {
        let mut stream = std::pin::pin!(query::<Pair>(t, &[&100_000i32]).fetch(&pool));
        let first = stream.next().await.unwrap().unwrap();
        assert_eq!(first.id, 1);
        assert_eq!(pool.stats().in_use, 1, "{:?}", pool.stats());
    }
    eventually("the stream's connection is returned", || async {
        pool.stats().in_use == 0
    })
    .await;
    let rows = query::<Pair>(t, &[&2i32])
        .fetch_all(&mut &pool)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
}
