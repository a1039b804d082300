//! `qail!` queries run on `&Pool`, as on a connection: each call takes a pooled connection
//! and gives it back.

use futures_util::StreamExt;
use qail::{Pool, QailRow, qail};

use crate::{FERRY_DDL, connect_in, url};

#[derive(QailRow, Debug, PartialEq)]
struct Harbor {
    name: String,
    code: Option<String>,
}

#[tokio::test]
async fn queries_run_on_a_pool() {
    // The schema is made on a connection of its own; the pool's connections start in it.
    let setup = connect_in("on_pool", FERRY_DDL).await;
    let schema = format!("qail_macros_on_pool_{}", std::process::id());
    let config = qail::Config::parse(&url())
        .unwrap()
        .options(format!("-c search_path={schema}"));
    let pool = Pool::builder()
        .max_size(1)
        .acquire_timeout(Some(std::time::Duration::from_secs(5)))
        .connect_with(config)
        .await
        .unwrap();
    drop(setup);

    for (i, name) in ["Piraeus", "Naxos"].into_iter().enumerate() {
        let id = qail::uuid::Uuid::from_u128(i as u128 + 1);
        let n: u64 = qail!(
            "INSERT INTO harbors (id, name, country) VALUES ($1, $2, 'GR')",
            id,
            name
        )
        .execute(&mut &pool)
        .await
        .unwrap();
        assert_eq!(n, 1);
    }
    let rows = qail!("SELECT name FROM harbors ORDER BY name")
        .fetch_all(&mut &pool)
        .await
        .unwrap();
    assert_eq!(
        rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["Naxos", "Piraeus"]
    );
    let one = qail!(Harbor => "SELECT name, code FROM harbors WHERE name = 'Naxos'")
        .fetch_one(&mut &pool)
        .await
        .unwrap();
    assert_eq!(
        one,
        Harbor {
            name: "Naxos".into(),
            code: None
        }
    );
    let missing = qail!("SELECT name FROM harbors WHERE name = 'Ithaca'")
        .fetch_optional(&mut &pool)
        .await
        .unwrap();
    assert!(missing.is_none());
    let names: Vec<String> = qail!("SELECT name FROM harbors ORDER BY name DESC")
        .fetch(&pool)
        .map(|row| row.unwrap().name)
        .collect()
        .await;
    assert_eq!(names, ["Piraeus", "Naxos"]);
    let stats = pool.stats();
    assert_eq!((stats.created, stats.in_use), (1, 0), "{stats:?}");
}

/// How many advisory locks backend `pid` holds, and the last statement it ran.
async fn backend(monitor: &mut qail::Connection, pid: i32) -> (i64, String) {
    let row = monitor
        .query_one(
            "SELECT (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1),
                    query
               FROM pg_stat_activity WHERE pid = $1 AND state = 'idle'",
            &[&pid],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// The analyzer marks a compiled call of a session advisory lock function as changing the
/// session, so the pool resets the connection and the lock is released; a connection that
/// ran only plain compiled SELECTs goes back with nothing sent (its backend's last statement
/// stays the SELECT).
#[tokio::test]
async fn a_compiled_session_lock_is_released_and_a_plain_select_costs_no_reset() {
    let pool = Pool::builder().max_size(1).connect(&url()).await.unwrap();
    let mut monitor = qail::Connection::connect(&url()).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let pid = conn.process_id();
    let locked = qail!("SELECT pg_try_advisory_lock(4716) AS locked")
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    assert!(locked.locked);
    assert_eq!(backend(&mut monitor, pid).await.0, 1);
    drop(conn);

    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid, "the same connection is reused");
    let held = qail!(
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
    )
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    assert_eq!(held.n, 0, "the session lock was released by the reset");
    drop(conn);
    // Note: a reset sent now would reach this idle backend within milliseconds.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let (locks, last) = backend(&mut monitor, pid).await;
    assert_eq!(locks, 0);
    assert!(
        last.starts_with("SELECT count(*) AS n FROM pg_locks"),
        "{last}"
    );
}
