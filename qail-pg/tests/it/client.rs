//! The shared client against a real server: many tasks on one connection with random
//! cancellations (every answer checked by the key it carries), a connection killed under
//! load, what needs a connection to itself refused, a client pool recovering.

use std::sync::OnceLock;
use std::time::Duration;

use futures_util::FutureExt;
use qail_pg::{Client, ClientPool, Connection, Template};
use tokio::time::timeout;

use super::compiled::{Pair, col, query, template};

/// One row: the key and its name.
fn one() -> &'static Template {
    static T: OnceLock<&'static Template> = OnceLock::new();
    T.get_or_init(|| {
        template(
            "SELECT $1::int8 AS id, 'n' || $1::int8 AS name",
            &[20],
            &[col("id", 20, "int8"), col("name", 25, "text")],
        )
    })
}

/// Ten rows: the keys from $1 on, and their names.
fn ten() -> &'static Template {
    static T: OnceLock<&'static Template> = OnceLock::new();
    T.get_or_init(|| {
        template(
            "SELECT g AS id, 'n' || g AS name FROM generate_series($1::int8, $1::int8 + 9) AS g",
            &[20],
            &[col("id", 20, "int8"), col("name", 25, "text")],
        )
    })
}

/// Whether `pair` is the row of key `key`.
fn is_row_of(pair: &Pair, key: i64) -> bool {
    pair.id == key && pair.name == format!("n{key}")
}

/// A small random number generator (xorshift64), one per task.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// What one task saw.
#[derive(Default, Debug)]
struct Tally {
    right: u64,
    wrong: u64,
    cancelled: u64,
    errors: Vec<String>,
}

impl Tally {
    fn check(&mut self, ok: Result<bool, qail_pg::Error>) {
        match ok {
            Ok(true) => self.right += 1,
            Ok(false) => self.wrong += 1,
            Err(e) => self.errors.push(e.to_string()),
        }
    }
}

/// One mixed query of key `key`, checked by the keys its rows carry: compiled (one row, ten
/// rows, a three-query pipeline) or run-time SQL (rows, a count).
async fn mixed(mut client: &Client, kind: u64, key: i64) -> Result<bool, qail_pg::Error> {
    Ok(match kind {
        0 => {
            let pair = query::<Pair>(one(), &[&key]).fetch_one(&mut client).await?;
            is_row_of(&pair, key)
        }
        1 => {
            let pairs = query::<Pair>(ten(), &[&key]).fetch_all(&mut client).await?;
            pairs.len() == 10
                && (0..10i64)
                    .zip(&pairs)
                    .all(|(i, pair)| is_row_of(pair, key + i))
        }
        2 => {
            let rows = client
                .query("SELECT $1::int8 AS id, 'n' || $1::int8 AS name", &[&key])
                .await?;
            rows.len() == 1
                && rows[0].get::<i64>(0) == key
                && rows[0].get::<String>(1) == format!("n{key}")
        }
        3 => {
            let keys = [key, key + 1, key + 2];
            let queries: Vec<_> = keys.iter().map(|k| query::<Pair>(one(), &[k])).collect();
            let results = client.pipeline(queries).await?;
            results.len() == 3
                && results.into_iter().zip(keys).all(|(rows, k)| {
                    rows.is_ok_and(|rows| rows.len() == 1 && is_row_of(&rows[0], k))
                })
        }
        _ => client.execute("SELECT $1::int8 + 1", &[&key]).await? == 1,
    })
}

/// Queries per task of [`many_tasks_share_one_connection_and_every_answer_is_their_own`].
///
/// Note: the acceptance shape is 64 tasks × 10,000 queries; that is the count here, and it
/// runs in a few tens of seconds in a debug build on two cores. `QAIL_CLIENT_QUERIES`
/// lowers it for a quick run.
fn queries_per_task() -> u64 {
    std::env::var("QAIL_CLIENT_QUERIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000)
}

/// 64 tasks × 10,000 mixed queries on one shared connection, about one in eight cancelled
/// by a time-out of up to 2 ms and one in sixteen dropped after its first poll: every answer
/// that arrives is the caller's own (checked by the keys in its rows), no query fails, and
/// each compiled query was prepared once (a second Parse of its name would fail with 42P05).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tasks_share_one_connection_and_every_answer_is_their_own() {
    let client = Client::new(super::connect().await).unwrap();
    let per_task = queries_per_task();
    let tasks: Vec<_> = (0..64u64)
        .map(|task| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut tally = Tally::default();
                let mut random = Random(0x9E37_79B9_7F4A_7C15 ^ ((task + 1) * 0x1234_5678));
                for i in 0..per_task {
                    let key = i64::try_from((task << 32) | (i * 16)).unwrap();
                    let r = random.next();
                    let fut = mixed(&client, r % 5, key);
                    match (r >> 8) % 16 {
                        0 | 1 => {
                            let limit = Duration::from_micros((r >> 16) % 2000);
                            match timeout(limit, fut).await {
                                Ok(ok) => tally.check(ok),
                                Err(_) => tally.cancelled += 1,
                            }
                        }
                        2 => match fut.now_or_never() {
                            Some(ok) => tally.check(ok),
                            None => tally.cancelled += 1,
                        },
                        _ => tally.check(fut.await),
                    }
                }
                tally
            })
        })
        .collect();
    let mut total = Tally::default();
    for task in tasks {
        let tally = timeout(Duration::from_secs(600), task)
            .await
            .expect("no task hangs")
            .unwrap();
        total.right += tally.right;
        total.wrong += tally.wrong;
        total.cancelled += tally.cancelled;
        total.errors.extend(tally.errors);
    }
    eprintln!(
        "{} answers checked, {} cancelled, {} wrong",
        total.right, total.cancelled, total.wrong
    );
    assert_eq!(total.wrong, 0, "{total:?}");
    assert!(
        total.errors.is_empty(),
        "{:?}",
        &total.errors[..5.min(total.errors.len())]
    );
    assert_eq!(total.right + total.cancelled, 64 * per_task);
    assert!(total.cancelled > 0 && total.right > 0, "{total:?}");
    for t in [one(), ten()] {
        let n: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_prepared_statements WHERE name = $1",
                &[&t.name],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 1, "{} is prepared once on the connection", t.name);
    }
    // The connection is still in step: a last query gets its own answer.
    assert!(mixed(&client, 0, 7).await.unwrap());
}

/// A future dropped while its query runs: the next query gets its own answer, not the
/// dropped one's.
#[tokio::test]
async fn a_dropped_query_never_answers_the_next() {
    let client = Client::new(super::connect().await).unwrap();
    for i in 0..20i64 {
        let slow = client.query("SELECT pg_sleep(0.02), $1::int8", &[&-1i64]);
        assert!(timeout(Duration::from_millis(2), slow).await.is_err());
        let row = client.query_one("SELECT $1::int8", &[&i]).await.unwrap();
        assert_eq!(row.get::<i64>(0), i);
    }
}

/// Run-time SQL is prepared per parameter types: the same text with an `int4` and with a
/// `text` parameter gives each its own answer.
#[tokio::test]
async fn the_same_sql_with_other_parameter_types() {
    let client = Client::new(super::connect().await).unwrap();
    let int = client.query_one("SELECT $1", &[&41i32]).await.unwrap();
    assert_eq!(int.get::<i32>(0), 41);
    let text = client.query_one("SELECT $1", &[&"41"]).await.unwrap();
    assert_eq!(text.get::<String>(0), "41");
    let none: Option<i64> = None;
    let null = client
        .query_one("SELECT $1::int8 IS NULL", &[&none])
        .await
        .unwrap();
    assert!(null.get::<bool>(0));
    let e = client
        .query("SELECT no_such_column", &[])
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("42703"));
    assert_eq!(
        client
            .query_one("SELECT 1::int4", &[])
            .await
            .unwrap()
            .get::<i32>(0),
        1
    );
}

/// A transaction, COPY or LISTEN on a shared client is refused before anything is sent,
/// with an error that says to take a connection from a pool; the client still works.
#[tokio::test]
async fn a_transaction_on_a_shared_client_is_refused() {
    let client = Client::new(super::connect().await).unwrap();
    for sql in [
        "BEGIN",
        "start transaction isolation level serializable",
        "COMMIT",
        "SAVEPOINT a",
        "COPY pg_class TO STDOUT",
        "LISTEN jobs",
    ] {
        let e = client.execute(sql, &[]).await.unwrap_err();
        assert!(!e.is_closed(), "{sql}: {e}");
        assert!(e.to_string().contains("pool.acquire()"), "{sql}: {e}");
    }
    let begin = template("BEGIN", &[], &[]);
    let e = qail_pg::Query::<qail_pg::NoRows>::new(begin, qail_pg::template::Params::new([]))
        .execute(&mut client.clone())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("pool.acquire()"), "{e}");
    let xact = async || -> i64 {
        let row = client
            .query_one("SELECT txid_current()", &[])
            .await
            .unwrap();
        row.get(0)
    };
    assert_ne!(
        xact().await,
        xact().await,
        "each query runs in its own transaction, not in a block"
    );
}

/// Terminates backend `pid` from another connection.
async fn terminate(pid: i32) {
    let mut monitor: Connection = super::connect().await;
    monitor
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap();
}

/// The backend of a loaded client is terminated: each of 32 tasks looping on it gets an
/// error within seconds (closed, or outcome unknown for a query in flight), none hangs and
/// no answer is wrong; the pool then hands out a new connection in its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_killed_under_load_fails_every_waiter_and_the_pool_recovers() {
    let pool = ClientPool::connect_with(super::config(), 2, Some(Duration::from_secs(5)))
        .await
        .unwrap();
    let victim = pool.client().await.unwrap();
    let pid = victim.process_id();
    let tasks: Vec<_> = (0..32i64)
        .map(|task| {
            let client = victim.clone();
            tokio::spawn(async move {
                let mut answers = 0u64;
                for i in 0.. {
                    let key = task * 1_000_000 + i;
                    let sql = "SELECT $1::int8, pg_sleep(0.001)";
                    match client.query_one(sql, &[&key]).await {
                        Ok(row) => {
                            assert_eq!(row.get::<i64>(0), key, "a wrong answer");
                            answers += 1;
                        }
                        Err(e) => return (answers, e),
                    }
                }
                unreachable!()
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    terminate(pid).await;
    let mut unknown = 0;
    for task in tasks {
        let (answers, e) = timeout(Duration::from_secs(10), task)
            .await
            .expect("every waiter gets an error within 10 s")
            .unwrap();
        assert!(answers > 0, "the task ran queries before the kill");
        assert!(e.is_closed(), "{e}");
        unknown += u32::from(e.is_outcome_unknown());
    }
    assert!(victim.is_closed());
    assert!(
        unknown > 0,
        "queries in flight at the kill are outcome unknown"
    );
    let mut pids = Vec::new();
    for _ in 0..4 {
        let client = timeout(Duration::from_secs(10), pool.client())
            .await
            .unwrap()
            .unwrap();
        let row = client.query_one("SELECT 1::int4", &[]).await.unwrap();
        assert_eq!(row.get::<i32>(0), 1);
        pids.push(client.process_id());
    }
    assert!(
        !pids.contains(&pid),
        "the broken client was replaced: {pids:?}"
    );
}

/// An idle client notices that the server ended its session, without running a query.
#[tokio::test]
async fn an_idle_client_notices_its_connection_ending() {
    let client = Client::new(super::connect().await).unwrap();
    terminate(client.process_id()).await;
    timeout(Duration::from_secs(10), async {
        while !client.is_closed() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the client is closed within 10 s");
    let e = client.query("SELECT 1", &[]).await.unwrap_err();
    assert!(e.is_closed() && !e.is_outcome_unknown(), "{e}");
}

/// Whether `haystack` holds `needle`.
fn holds(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Queries are written while the reply to an earlier one is awaited: with one query of the
/// client blocked on the server (an advisory lock another session holds), 64 other tasks'
/// queries reach the server (seen by a proxy in front of it) before that query has
/// answered; once the lock is released, the blocked query and every query behind it get
/// their own answers. Then a slow query (`pg_sleep`) is in flight while waves of queries
/// overlap behind it, and every answer is still its caller's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_are_written_while_earlier_replies_are_awaited() {
    use super::proxy::{Fault, Proxy};
    use std::sync::{Arc, Mutex};

    const LOCK: i64 = 0x5157_4149_4C50_4950;
    const FIRST_KEY: i64 = 0x7170_0000_0000;
    let proxy = Proxy::start(Proxy::test_server().await).await;
    // Note: a matcher that never accepts relays everything; it records the keys bound.
    let seen: Arc<Mutex<Vec<i64>>> = Arc::default();
    let record = Arc::clone(&seen);
    proxy.set(Fault::CutAfter(Arc::new(move |tag, body| {
        if tag == b'B' {
            for key in FIRST_KEY..FIRST_KEY + 64 {
                if holds(body, &key.to_be_bytes()) {
                    record
                        .lock()
                        .expect("no panic holding the record")
                        .push(key);
                }
            }
        }
        false
    })));
    let client = Client::connect(&proxy.url()).await.unwrap();
    // Prepared before: the queries behind the blocked one need no round trip of their own.
    let lock_sql = "SELECT pg_advisory_xact_lock($1)::text AS locked";
    client.query(lock_sql, &[&(LOCK + 1)]).await.unwrap();
    query::<Pair>(one(), &[&0i64])
        .fetch_one(&mut &client)
        .await
        .unwrap();

    let mut holder = super::connect().await;
    holder.execute("BEGIN", &[]).await.unwrap();
    holder
        .execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])
        .await
        .unwrap();
    let blocked = tokio::spawn({
        let client = client.clone();
        async move { client.query_one(lock_sql, &[&LOCK]).await }
    });
    let pid = client.process_id();
    timeout(Duration::from_secs(30), async {
        loop {
            let waiting = holder
                .query(
                    "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
                    &[&pid],
                )
                .await
                .unwrap();
            if !waiting.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the client's query waits for the lock");

    let behind: Vec<_> = (FIRST_KEY..FIRST_KEY + 64)
        .map(|key| {
            let client = client.clone();
            tokio::spawn(async move {
                let pair = query::<Pair>(one(), &[&key])
                    .fetch_one(&mut &client)
                    .await?;
                Ok::<bool, qail_pg::Error>(is_row_of(&pair, key))
            })
        })
        .collect();
    let written = timeout(Duration::from_secs(30), async {
        loop {
            if seen.lock().expect("no panic holding the record").len() == 64 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        !blocked.is_finished(),
        "the blocked query is still waiting for the lock"
    );
    let bound = seen.lock().expect("no panic holding the record").len();
    holder.execute("COMMIT", &[]).await.unwrap();
    assert!(
        written.is_ok(),
        "the 64 queries behind a blocked one were not written while it waited ({bound} were)"
    );
    let locked = blocked.await.unwrap().unwrap();
    assert_eq!(locked.get::<String>(0), "");
    for task in behind {
        assert!(
            task.await.unwrap().unwrap(),
            "an answer is its caller's own"
        );
    }

    // A slow query in flight while waves of queries overlap behind it.
    let slow = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .query_one("SELECT pg_sleep(0.3)::text, $1::int8", &[&-7i64])
                .await
        }
    });
    let mut waves = Vec::new();
    for wave in 0..10u64 {
        for task in 0..64u64 {
            let client = client.clone();
            let key = i64::try_from(wave * 1000 + task * 10).expect("a small key");
            waves.push(tokio::spawn(async move {
                mixed(&client, (wave + task) % 5, key).await
            }));
        }
        tokio::task::yield_now().await;
    }
    let slow = slow.await.unwrap().unwrap();
    assert_eq!(slow.get::<i64>(1), -7);
    for task in waves {
        assert!(
            task.await.unwrap().unwrap(),
            "an answer is its caller's own"
        );
    }
}
