//! Poll-N-then-drop: every future is polled N times and dropped, for N = 0, 1, 2, … until
//! it completes; afterwards the connection answers a sentinel query, no transaction is left
//! open, and the server holds no statement beyond the cache.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};
use std::time::Duration;

use qail_pg::{Connection, NoRows, TransactionStatus};

use super::compiled::{Int8, Pair, col, prepared, query, template};

const CACHE: usize = 4;

/// Polls `fut` up to `n` times (letting the runtime drive I/O in between) and drops it;
/// whether it completed.
async fn poll_n_then_drop<F: Future>(fut: F, n: usize) -> bool {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..n {
        if fut.as_mut().poll(&mut cx).is_ready() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    false
}

/// The checks after every drop.
async fn check(conn: &mut Connection, observer: &mut Connection, n: usize) {
    let v: i64 = conn
        .query_one("SELECT $1::int8", &[&i64::try_from(n).unwrap()])
        .await
        .unwrap_or_else(|e| panic!("sentinel after {n} polls: {e}"))
        .get(0);
    assert_eq!(v, i64::try_from(n).unwrap());
    assert_eq!(
        conn.transaction_status(),
        TransactionStatus::Idle,
        "after {n} polls"
    );
    let state: Option<String> = observer
        .query_one(
            "SELECT state FROM pg_stat_activity WHERE pid = $1",
            &[&conn.process_id()],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(state.as_deref(), Some("idle"), "after {n} polls");
    let statements = prepared(conn).await;
    assert!(
        statements <= i64::try_from(CACHE).unwrap(),
        "{statements} statements on the server after {n} polls"
    );
}

async fn setup() -> (Connection, Connection) {
    let mut conn = super::connect().await;
    conn.set_statement_cache_size(CACHE);
    (conn, super::connect().await)
}

/// Runs `make` under poll-N-then-drop for every N until it completes.
macro_rules! every_n {
    ($conn:ident, $observer:ident, $before:block, $make:expr) => {{
        let mut n = 0;
        loop {
            $before
            let done = poll_n_then_drop($make, n).await;
            check(&mut $conn, &mut $observer, n).await;
            if done {
                break;
            }
            n += 1;
            assert!(n < 10_000, "the future never completed");
        }
        n
    }};
}

fn pairs() -> &'static qail_pg::Template {
    template(
        "SELECT g::int8 AS id, 'r' || g AS name FROM generate_series(1, $1::int4) g",
        &[23],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    )
}

#[tokio::test]
async fn template_fetch() {
    let (mut conn, mut observer) = setup().await;
    let t = pairs();
    let rows = 3000i32;
    // The cache is emptied first so every round exercises the first-use path too.
    let n = every_n!(
        conn,
        observer,
        {
            conn.set_statement_cache_size(0);
            conn.set_statement_cache_size(CACHE);
        },
        query::<Pair>(t, &[&rows]).fetch_all(&mut conn)
    );
    assert!(n > 1);
    every_n!(
        conn,
        observer,
        {},
        query::<Pair>(t, &[&rows]).fetch_all(&mut conn)
    );
    let all = query::<Pair>(t, &[&rows])
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(all.len(), 3000);
}

#[tokio::test]
async fn run_time_query() {
    let (mut conn, mut observer) = setup().await;
    every_n!(
        conn,
        observer,
        {},
        conn.query(
            "SELECT g, repeat('z', 100) FROM generate_series(1, 2000) g",
            &[]
        )
    );
}

#[tokio::test]
async fn pipeline() {
    let (mut conn, mut observer) = setup().await;
    // Note: a shape unlike the sentinel's (`SELECT $1::int8`), so that replies of a dropped
    // pipeline read by the sentinel as its own would fail it.
    let t = template(
        "SELECT $1::int8 AS id, 'n' || $1::int8 AS name",
        &[20],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    let ids: Vec<i64> = (0..2000).collect();
    every_n!(
        conn,
        observer,
        {
            conn.set_statement_cache_size(0);
            conn.set_statement_cache_size(CACHE);
        },
        conn.pipeline(ids.iter().map(|id| query::<Pair>(t, &[id])))
    );
}

#[tokio::test]
async fn begin_and_commit() {
    let (mut conn, mut observer) = setup().await;
    conn.batch_execute(
        "DROP SCHEMA IF EXISTS qail_it_safety CASCADE; CREATE SCHEMA qail_it_safety;
         CREATE TABLE qail_it_safety.t (id int8)",
    )
    .await
    .unwrap();
    every_n!(conn, observer, {}, conn.begin());
    every_n!(conn, observer, {}, async {
        let mut tx = conn.begin().await.unwrap();
        tx.execute("INSERT INTO qail_it_safety.t VALUES (1)", &[])
            .await
            .unwrap();
        tx.commit().await.unwrap();
    });
    let mut n = 0;
    loop {
        let mut tx = conn.begin().await.unwrap();
        tx.execute("INSERT INTO qail_it_safety.t VALUES (2)", &[])
            .await
            .unwrap();
        let done = poll_n_then_drop(tx.commit(), n).await;
        check(&mut conn, &mut observer, n).await;
        if done {
            break;
        }
        n += 1;
    }
    every_n!(conn, observer, {}, async {
        let mut tx = conn.begin().await.unwrap();
        let mut inner = tx.begin().await.unwrap();
        inner.execute("SELECT 1", &[]).await.unwrap();
        inner.commit().await.unwrap();
        tx.rollback().await.unwrap();
    });
}

#[tokio::test]
async fn copy_in_and_out() {
    let (mut conn, mut observer) = setup().await;
    conn.batch_execute(
        "DROP SCHEMA IF EXISTS qail_it_safety_copy CASCADE; CREATE SCHEMA qail_it_safety_copy;
         CREATE TABLE qail_it_safety_copy.t (id int8)",
    )
    .await
    .unwrap();
    let data: String = (0..20_000).map(|i| format!("{i}\n")).collect();
    every_n!(conn, observer, {}, async {
        let mut copy = conn
            .copy_in("COPY qail_it_safety_copy.t FROM STDIN")
            .await
            .unwrap();
        copy.send(data.as_bytes()).await.unwrap();
        copy.finish().await.unwrap();
    });
    every_n!(conn, observer, {}, async {
        use futures_util::StreamExt;
        let mut out = pin!(conn.copy_out("COPY qail_it_safety_copy.t TO STDOUT"));
        while let Some(chunk) = out.next().await {
            chunk.unwrap();
        }
    });
    // Every dropped COPY was aborted; only completed ones wrote rows.
    let n: i64 = conn
        .query_one("SELECT count(*) FROM qail_it_safety_copy.t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n % 20_000, 0);
    assert!(n >= 20_000);
}

/// `pool.acquire()` and a query on a pooled connection under poll-N-then-drop: no slot is
/// leaked (the one-connection pool always hands out its connection again), the pool never
/// opens a second backend, and the connection it hands out is clean and in sync.
#[tokio::test]
async fn pool_acquire_and_pooled_query() {
    let app = format!("qail_it_cancel_pool_{}", std::process::id());
    let config = super::config().application_name(&app);
    let pool = qail_pg::Pool::builder()
        .max_size(1)
        .acquire_timeout(Some(Duration::from_secs(10)))
        .connect_with(config)
        .await
        .unwrap();
    let mut observer = super::connect().await;
    let mut n = 0;
    loop {
        let done = poll_n_then_drop(pool.acquire(), n).await;
        let mut conn = pool.acquire().await.unwrap_or_else(|e| {
            panic!("acquire after dropping one polled {n} times: {e}");
        });
        check(&mut conn, &mut observer, n).await;
        drop(conn);
        if done {
            break;
        }
        n += 1;
        assert!(n < 10_000, "acquire never completed");
    }
    let mut n = 0;
    loop {
        let mut conn = pool.acquire().await.unwrap();
        let done = poll_n_then_drop(
            conn.query(
                "SELECT g, repeat('p', 100) FROM generate_series(1, 2000) g",
                &[],
            ),
            n,
        )
        .await;
        drop(conn);
        let mut conn = pool.acquire().await.unwrap();
        check(&mut conn, &mut observer, n).await;
        drop(conn);
        if done {
            break;
        }
        n += 1;
        assert!(n < 10_000, "the pooled query never completed");
    }
    let backends: i64 = observer
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
            &[&app],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(backends, 1, "a pool of one opened {backends} backends");
    assert_eq!(pool.stats().in_use, 0);
    pool.close().await;
}

#[tokio::test]
async fn atomic_pipeline() {
    let (mut conn, mut observer) = setup().await;
    conn.batch_execute(
        "DROP SCHEMA IF EXISTS qail_it_safety_atomic CASCADE; CREATE SCHEMA qail_it_safety_atomic;
         CREATE TABLE qail_it_safety_atomic.t (v int8)",
    )
    .await
    .unwrap();
    let t = template(
        "INSERT INTO qail_it_safety_atomic.t VALUES ($1::int8)",
        &[20],
        &[],
    );
    let values: Vec<i64> = (0..2000).collect();
    let mut n = 0;
    loop {
        let batch = conn
            .pipeline_builder()
            .atomic()
            .queries(values.iter().map(|v| query::<NoRows>(t, &[v])))
            .count();
        let done = poll_n_then_drop(batch, n).await;
        check(&mut conn, &mut observer, n).await;
        let rows: i64 = conn
            .query_one("SELECT count(*) FROM qail_it_safety_atomic.t", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(
            rows % 2000,
            0,
            "a part of the batch took effect after {n} polls"
        );
        if done {
            break;
        }
        n += 1;
        assert!(n < 10_000, "the future never completed");
    }
    // Dropped inside a transaction that is dropped too: nothing of either takes effect.
    let before: i64 = conn
        .query_one("SELECT count(*) FROM qail_it_safety_atomic.t", &[])
        .await
        .unwrap()
        .get(0);
    for n in [1, 2, 3, 5, 8] {
        let mut tx = conn.begin().await.unwrap();
        let batch = tx
            .pipeline_builder()
            .atomic()
            .queries(values.iter().map(|v| query::<NoRows>(t, &[v])))
            .count();
        poll_n_then_drop(batch, n).await;
        drop(tx);
        check(&mut conn, &mut observer, n).await;
    }
    let after: i64 = conn
        .query_one("SELECT count(*) FROM qail_it_safety_atomic.t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(before, after);
}

#[tokio::test]
async fn a_pipeline_dropped_while_its_new_template_is_described() {
    let (mut conn, mut observer) = setup().await;
    let t = template(
        "SELECT $1::int8 AS id, 'n' || $1::int8 AS name",
        &[20],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    let ids: Vec<i64> = (0..10).collect();
    let sentinel = template("SELECT $1::int8 + 1 AS v", &[20], &[col("v", 20, "int8")]);
    for mode in ["per query", "atomic"] {
        conn.set_statement_cache_size(0);
        conn.set_statement_cache_size(CACHE);
        // Cached before the drop: afterwards it sends only Bind + Execute + Sync.
        let one = 1i64;
        let v = query::<Int8>(sentinel, &[&one])
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(v, Int8(2));
        let queries = ids.iter().map(|id| query::<Pair>(t, &[id]));
        // One poll sends the template's Parse + Describe; the queries wait for its
        // description, which is never read here.
        let done = match mode {
            "atomic" => poll_n_then_drop(conn.pipeline_atomic(queries), 1).await,
            _ => poll_n_then_drop(conn.pipeline(queries), 1).await,
        };
        assert!(!done, "{mode}: the pipeline needs a reply to go on");
        let v = query::<Int8>(sentinel, &[&one])
            .fetch_one(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(v, Int8(2), "{mode}");
        // A statement of another shape reads its own replies, not the dropped ones.
        let rows = conn
            .query("SELECT 'x'::text AS a, 2::int4 AS b, 3::int2 AS c", &[])
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get::<String>(0), "x", "{mode}");
        assert_eq!(rows[0].get::<i32>(1), 2, "{mode}");
        assert_eq!(rows[0].get::<i16>(2), 3, "{mode}");
        let v = query::<Int8>(sentinel, &[&one])
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(v, Int8(2), "{mode}");
        check(&mut conn, &mut observer, 1).await;
        // The template still runs.
        let rows = conn
            .pipeline_atomic(ids.iter().map(|id| query::<Pair>(t, &[id])))
            .await
            .unwrap();
        assert_eq!(rows.len(), 10, "{mode}");
    }
}
