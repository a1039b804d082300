//! Failover against a real synchronous streaming pair (`scripts/pg-failover`, ports in
//! `scripts/auth-env`): workers write through a pool over both hosts with
//! `target_session_attrs=read-write`, each write under an id of its own and written down in a
//! ledger; the primary is crashed (`pg_ctl stop -m immediate`) and the standby promoted. The
//! pool must reach the new primary within a bound, every failed write must say whether it may
//! have run, and the new primary must hold every acknowledged write exactly once and nothing
//! that was never sent.

use std::collections::HashMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use qail_pg::{Connection, Error, Pool};

use crate::hosts::{hosts, var};

/// How long the pool may take, once the standby is promoted, to acknowledge a write on it.
const RECOVERY_BOUND: Duration = Duration::from_secs(10);
/// The writers.
const WORKERS: i64 = 4;
/// Time between a write that failed and the writer's next one.
const BACKOFF: Duration = Duration::from_millis(10);

fn primary_port() -> u16 {
    var("QAIL_FAILOVER_PRIMARY_PORT")
        .parse()
        .expect("a port number")
}

fn standby_port() -> u16 {
    var("QAIL_FAILOVER_STANDBY_PORT")
        .parse()
        .expect("a port number")
}

/// Runs `scripts/pg-failover` with `args`, off the runtime's threads (it waits for servers).
async fn pg_failover(args: &'static [&'static str]) {
    tokio::task::spawn_blocking(move || {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg-failover");
        let out = Command::new(script)
            .args(args)
            .output()
            .expect("scripts/pg-failover runs (as root, or with sudo)");
        assert!(
            out.status.success(),
            "scripts/pg-failover {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    })
    .await
    .expect("the script's task ran");
}

/// What became of one write, as its writer saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Committed, acknowledged by the server on this port, at this time.
    Acknowledged { port: u16, at: Instant },
    /// Never sent: no connection to a read-write server could be had.
    NotSent,
    /// Sent, and the connection failed without saying how it ended
    /// ([`Error::is_outcome_unknown`]).
    Unknown,
    /// Sent, and the connection failed, reporting that the write had not been sent
    /// (closed, not outcome unknown).
    Refused,
}

#[derive(Default)]
struct Ledger {
    writes: HashMap<i64, Outcome>,
    /// Every error, by what the writer did when it failed.
    acquire_errors: Vec<Error>,
    write_errors: Vec<Error>,
}

impl Ledger {
    fn first_ack_on(&self, port: u16) -> Option<Instant> {
        self.writes
            .values()
            .filter_map(|outcome| match outcome {
                Outcome::Acknowledged { port: p, at } if *p == port => Some(*at),
                _ => None,
            })
            .min()
    }

    fn count(&self, wanted: impl Fn(&Outcome) -> bool) -> usize {
        self.writes.values().filter(|o| wanted(o)).count()
    }
}

type Shared = Arc<Mutex<Ledger>>;

fn lock(ledger: &Shared) -> std::sync::MutexGuard<'_, Ledger> {
    ledger.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes ids `worker * 1_000_000 + n` until told to stop; each id once, never retried.
async fn writer(pool: Pool, worker: i64, ledger: Shared, stop: Arc<AtomicBool>) {
    let mut n = 0;
    while !stop.load(Ordering::Acquire) {
        n += 1;
        let id = worker * 1_000_000 + n;
        let outcome = match pool.acquire().await {
            Err(e) => {
                lock(&ledger).acquire_errors.push(e);
                Outcome::NotSent
            }
            Ok(mut conn) => {
                let written = conn
                    .query_one(
                        "INSERT INTO qail_failover (id, worker) VALUES ($1, $2) \
                         RETURNING inet_server_port()",
                        &[&id, &worker],
                    )
                    .await;
                match written {
                    Ok(row) => Outcome::Acknowledged {
                        port: u16::try_from(row.get::<i32>(0)).expect("a port"),
                        at: Instant::now(),
                    },
                    Err(e) => {
                        let outcome = if e.is_outcome_unknown() {
                            Outcome::Unknown
                        } else {
                            Outcome::Refused
                        };
                        lock(&ledger).write_errors.push(e);
                        outcome
                    }
                }
            }
        };
        let failed = !matches!(outcome, Outcome::Acknowledged { .. });
        lock(&ledger).writes.insert(id, outcome);
        if failed {
            tokio::time::sleep(BACKOFF).await;
        }
    }
}

/// Waits (bounded by `limit`) until `done` holds for the ledger; returns whether it did.
async fn until(ledger: &Shared, limit: Duration, done: impl Fn(&Ledger) -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done(&lock(ledger)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_survives_a_failover_to_a_synchronous_standby_without_losing_a_write() {
    // A fresh pair: the last run left the primary crashed and the standby promoted.
    pg_failover(&[]).await;
    let (primary, standby) = (primary_port(), standby_port());
    let mut setup = Connection::connect(&hosts(&[primary], "")).await.unwrap();
    setup
        .batch_execute(
            "DROP TABLE IF EXISTS qail_failover;
             -- No key: a write applied twice shows as two rows.
             CREATE TABLE qail_failover (id int8 NOT NULL, worker int8 NOT NULL)",
        )
        .await
        .unwrap();
    drop(setup);

    let pool = Pool::builder()
        .max_size(usize::try_from(WORKERS).expect("a few workers"))
        .acquire_timeout(Some(Duration::from_secs(5)))
        .connect(&hosts(
            &[primary, standby],
            "target_session_attrs=read-write connect_timeout=2",
        ))
        .await
        .unwrap();
    let ledger = Shared::default();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (1..=WORKERS)
        .map(|worker| {
            tokio::spawn(writer(
                pool.clone(),
                worker,
                Arc::clone(&ledger),
                Arc::clone(&stop),
            ))
        })
        .collect();

    assert!(
        until(&ledger, Duration::from_secs(10), |l| {
            l.count(|o| matches!(o, Outcome::Acknowledged { .. })) >= 200
        })
        .await,
        "the writers did not get 200 writes acknowledged by the primary"
    );
    let crashed = Instant::now();
    pg_failover(&["crash"]).await;
    let down = Instant::now();
    // The time a failover manager takes to decide; meanwhile writes fail.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut promote = Connection::connect(&hosts(&[standby], "")).await.unwrap();
    let promoting = Instant::now();
    let promoted: bool = promote
        .query_one("SELECT pg_promote()", &[])
        .await
        .unwrap()
        .get(0);
    assert!(promoted, "the standby was promoted");
    let promoted = Instant::now();

    let recovered = until(&ledger, RECOVERY_BOUND, |l| {
        l.first_ack_on(standby).is_some()
    })
    .await;
    let first_on_new = lock(&ledger).first_ack_on(standby);
    assert!(
        recovered,
        "no write was acknowledged by the promoted standby within {RECOVERY_BOUND:?}"
    );
    let first_on_new = first_on_new.expect("checked just above");
    // A little more traffic on the new primary, then stop.
    let acked_then = lock(&ledger).count(|o| matches!(o, Outcome::Acknowledged { .. }));
    until(&ledger, Duration::from_secs(5), |l| {
        l.count(|o| matches!(o, Outcome::Acknowledged { .. })) >= acked_then + 100
    })
    .await;
    stop.store(true, Ordering::Release);
    for writer in writers {
        writer.await.unwrap();
    }

    let stats = pool.stats();
    pool.close().await;

    // The ledger against the new primary.
    let mut rows = HashMap::<i64, i64>::new();
    for row in promote
        .query("SELECT id, count(*) FROM qail_failover GROUP BY id", &[])
        .await
        .unwrap()
    {
        rows.insert(row.get(0), row.get(1));
    }
    let summary = verify(&lock(&ledger), &rows);
    let recovery = first_on_new.saturating_duration_since(promoting);
    eprintln!(
        "failover: the crash took {:?}, pg_promote() {:?}; the first write acknowledged by the \
         promoted standby came {recovery:?} after pg_promote() was called, {:?} after the \
         crash began; {summary}; pool {:?}",
        down - crashed,
        promoted - promoting,
        first_on_new - crashed,
        stats
    );
    assert!(
        recovery < RECOVERY_BOUND,
        "the pool took longer than {RECOVERY_BOUND:?} to reach the new primary"
    );

    fenced_primary_is_left(&mut promote, primary, standby).await;
}

/// Checks the ledger against the rows on the new primary (id, copies): every acknowledged
/// write there once, nothing reported as not run there, nothing twice or unknown, every write
/// error typed. Returns a summary of the outcomes and errors.
fn verify(ledger: &Ledger, rows: &HashMap<i64, i64>) -> String {
    let mut lost = Vec::new();
    let mut unknown_applied = 0;
    for (id, outcome) in &ledger.writes {
        let applied = rows.get(id).copied().unwrap_or(0);
        match outcome {
            Outcome::Acknowledged { .. } if applied != 1 => lost.push((*id, applied)),
            Outcome::NotSent | Outcome::Refused if applied != 0 => {
                panic!("write {id} was reported as not run ({outcome:?}) but is on the server")
            }
            Outcome::Unknown => unknown_applied += usize::from(applied == 1),
            _ => {}
        }
    }
    assert_eq!(
        lost,
        Vec::<(i64, i64)>::new(),
        "acknowledged writes missing (or doubled) on the new primary: (id, copies)"
    );
    let doubled: Vec<_> = rows.iter().filter(|(_, n)| **n > 1).collect();
    assert!(doubled.is_empty(), "writes applied twice: {doubled:?}");
    let strangers: Vec<_> = rows
        .keys()
        .filter(|id| !ledger.writes.contains_key(id))
        .collect();
    assert!(strangers.is_empty(), "rows no writer sent: {strangers:?}");

    // Every failed write is typed: the connection is closed, and unless the driver knows the
    // write was not sent, it says the outcome is unknown.
    for e in &ledger.write_errors {
        assert!(e.is_closed(), "a write failed with an untyped error: {e}");
    }
    let acked = ledger.count(|o| matches!(o, Outcome::Acknowledged { .. }));
    let unknown = ledger.count(|o| *o == Outcome::Unknown);
    let refused = ledger.count(|o| *o == Outcome::Refused);
    let not_sent = ledger.count(|o| *o == Outcome::NotSent);
    let mut kinds: Vec<String> = ledger
        .write_errors
        .iter()
        .chain(&ledger.acquire_errors)
        .map(|e| {
            let text = e.to_string();
            let text = text.split(';').next().unwrap_or(&text);
            format!("{} ({})", text, e.code().unwrap_or("no SQLSTATE"))
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    format!(
        "{acked} writes acknowledged, {unknown} outcome unknown ({unknown_applied} of them \
         applied), {refused} failed unsent, {not_sent} without a connection; errors: {kinds:#?}"
    )
}

/// The new primary is fenced (`default_transaction_read_only` on, as a failover manager may
/// fence a primary it is about to demote) while the pool holds a connection to it: once the
/// server reports the change, the pool closes that connection instead of reusing it, and
/// acquires fail with a connection error rather than handing out a session whose writes
/// fail with 25006; unfenced, acquires reach it again.
async fn fenced_primary_is_left(admin: &mut Connection, primary: u16, standby: u16) {
    let pool = Pool::builder()
        .max_size(1)
        .acquire_timeout(Some(Duration::from_secs(5)))
        .connect(&hosts(
            &[primary, standby],
            "target_session_attrs=read-write connect_timeout=2",
        ))
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    admin
        .batch_execute("ALTER SYSTEM SET default_transaction_read_only = on")
        .await
        .unwrap();
    admin
        .batch_execute("SELECT pg_reload_conf()")
        .await
        .unwrap();
    // The server reports the change after a statement that follows the reload.
    for _ in 0..1000 {
        conn.batch_execute("SELECT 1").await.unwrap();
        if conn.parameter_status("default_transaction_read_only") == Some("on") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        conn.parameter_status("default_transaction_read_only"),
        Some("on"),
        "the server did not report default_transaction_read_only within 10 s"
    );
    drop(conn);
    let stats = pool.stats();
    assert_eq!(
        (stats.size, stats.destroyed),
        (0, 1),
        "the read-only connection was closed: {stats:?}"
    );
    let e = pool.acquire().await.unwrap_err();
    assert_eq!(e.code(), None, "{e}");
    assert!(e.to_string().contains("accepts writes"), "{e}");

    admin
        .batch_execute("ALTER SYSTEM RESET default_transaction_read_only")
        .await
        .unwrap();
    admin
        .batch_execute("SELECT pg_reload_conf()")
        .await
        .unwrap();
    // Note: the postmaster rereads its configuration after pg_reload_conf() returns, so a
    // session started at once may still see the old value.
    let mut acquired = pool.acquire().await;
    for _ in 0..1000 {
        if acquired.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        acquired = pool.acquire().await;
    }
    let mut conn = acquired.expect("the unfenced primary accepts writes again within 10 s");
    assert_eq!(
        conn.parameter_status("default_transaction_read_only"),
        Some("off")
    );
    conn.execute("INSERT INTO qail_failover VALUES (0, 0)", &[])
        .await
        .unwrap();
    drop(conn);
    pool.close().await;
}
