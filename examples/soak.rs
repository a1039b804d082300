//! A soak run: a mixed workload on a pool, through the fault-injecting proxy of the
//! integration tests, with a fault every 5 seconds; then a report of what the caller saw and
//! whether anything was lost, doubled or leaked.
//!
//! Workers run compiled queries whose answer they know (sentinels), transactions that write
//! one ledger row each, atomic pipelines of sentinels, COPY and NOTIFY; a listener counts the
//! notifications. Every write is recorded as acknowledged, not run, or outcome unknown, and
//! the ledger is reconciled at the end: an acknowledged row must be there, a row reported not
//! run must not. The faults: resets in either direction, a black hole, a cut right after a
//! Sync, a throttled link.
//!
//! Run: `cargo run --release --example soak -- [SECONDS]` (default 600).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use qail::{Error, Pool, qail};

#[path = "../qail-pg/tests/it/proxy.rs"]
#[allow(
    dead_code,
    reason = "the tests use more of the proxy than the soak run does"
)]
mod proxy;

use proxy::{Direction, Fault, Proxy};

const WORKERS: usize = 8;
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// What the caller was told about one ledger write.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Told {
    Acknowledged,
    NotRun,
    Unknown,
}

struct Tally {
    operations: AtomicU64,
    errors: AtomicU64,
    sentinel_mismatches: AtomicU64,
    notifications_sent: AtomicU64,
    /// Sentinel latencies, in quarter-octave buckets of microseconds: fixed memory.
    latencies: [AtomicU64; BUCKETS],
    /// Per worker, what it was told of its n-th write (id `worker * 10⁹ + n + 1`): one byte
    /// a write, reserved up front, so the bookkeeping barely moves the RSS.
    ledger: Vec<Mutex<Vec<Told>>>,
}

const BUCKETS: usize = 128;

impl Tally {
    fn new() -> Tally {
        Tally {
            operations: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            sentinel_mismatches: AtomicU64::new(0),
            notifications_sent: AtomicU64::new(0),
            latencies: std::array::from_fn(|_| AtomicU64::new(0)),
            ledger: (0..WORKERS)
                .map(|_| Mutex::new(Vec::with_capacity(1 << 21)))
                .collect(),
        }
    }

    fn record_latency(&self, us: u64) {
        // Quarter octaves: 4 × log2, from the top bits.
        let bits = 64 - u64::leading_zeros(us.max(1));
        let fraction = if bits >= 3 {
            (us >> (bits - 3)) & 0b11
        } else {
            0
        };
        let bucket = usize::try_from(u64::from(bits) * 4 + fraction)
            .unwrap_or(BUCKETS)
            .min(BUCKETS - 1);
        self.latencies[bucket].fetch_add(1, Ordering::Relaxed);
    }

    /// The upper bound of the bucket holding the `permille`-th latency.
    fn latency(&self, permille: u64) -> u64 {
        let counts: Vec<u64> = self
            .latencies
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        let total: u64 = counts.iter().sum();
        let target = total * permille / 1000;
        let mut seen = 0;
        for (bucket, count) in counts.iter().enumerate() {
            seen += count;
            if seen > target {
                let bits = u32::try_from(bucket / 4).unwrap_or(63);
                let fraction = (bucket % 4) as u64;
                return if bits >= 3 {
                    ((4 + fraction + 1) << (bits - 3)).saturating_sub(1)
                } else {
                    1 << bits
                };
            }
        }
        0
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let proxy = Arc::new(Proxy::start(Proxy::test_server().await).await);
    let url = format!("{}&application_name=qail-soak", proxy.url());

    let mut admin = qail::Connection::connect(
        &std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned()),
    )
    .await?;
    admin
        .batch_execute(
            "DROP TABLE IF EXISTS qail_soak_ledger, qail_soak_copy;
             CREATE TABLE qail_soak_ledger (id int8 PRIMARY KEY, worker int4 NOT NULL);
             CREATE TABLE qail_soak_copy (worker int4, n int4);",
        )
        .await?;

    let pool = Pool::builder()
        .max_size(WORKERS)
        .acquire_timeout(Some(Duration::from_secs(5)))
        .connect(&url)
        .await?;
    let tally = Arc::new(Tally::new());
    let deadline = Instant::now() + Duration::from_secs(seconds);

    let start_resources = Resources::sample(&mut admin).await;
    println!("soak: {seconds} s, {WORKERS} workers, a fault every 5 s");
    println!("start: {start_resources}");

    let listener = tokio::spawn(listen(url.clone(), deadline));
    let mut workers = Vec::new();
    for worker in 0..WORKERS {
        workers.push(tokio::spawn(work(
            worker,
            pool.clone(),
            Arc::clone(&tally),
            deadline,
        )));
    }
    let faults = tokio::spawn(inject(Arc::clone(&proxy), deadline));

    let mut samples = vec![start_resources];
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(30).min(deadline - Instant::now())).await;
        let sample = Resources::sample(&mut admin).await;
        println!(
            "{:>5} s: {} operations, {sample}",
            seconds - deadline.saturating_duration_since(Instant::now()).as_secs(),
            tally.operations.load(Ordering::Relaxed),
        );
        samples.push(sample);
    }
    for w in workers {
        let _ = w.await;
    }
    let injected = faults.await.unwrap_or(0);
    proxy.set(Fault::Pass);
    let received = listener.await.unwrap_or(0);
    drop(pool);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let end = Resources::sample(&mut admin).await;
    samples.push(end);

    // Reconcile the ledger.
    let rows: Vec<i64> = admin
        .query("SELECT id FROM qail_soak_ledger", &[])
        .await?
        .iter()
        .map(|r| r.get::<i64>(0))
        .collect();
    let written: std::collections::HashSet<i64> = rows.iter().copied().collect();
    let mut told_of: HashMap<i64, Told> = HashMap::new();
    for (worker, writes) in tally.ledger.iter().enumerate() {
        let writes = writes.lock().expect("no worker panicked");
        for (n, told) in writes.iter().enumerate() {
            told_of.insert(write_id(worker, n), *told);
        }
    }
    let mut differences = 0;
    let (mut acked, mut not_run, mut unknown, mut unknown_written) = (0, 0, 0, 0);
    for (id, told) in &told_of {
        match told {
            Told::Acknowledged => {
                acked += 1;
                if !written.contains(id) {
                    differences += 1;
                    println!("LOST: write {id} was acknowledged and is not in the ledger");
                }
            }
            Told::NotRun => {
                not_run += 1;
                if written.contains(id) {
                    differences += 1;
                    println!("GHOST: write {id} was reported not run and is in the ledger");
                }
            }
            Told::Unknown => {
                unknown += 1;
                unknown_written += usize::from(written.contains(id));
            }
        }
    }
    differences += written
        .iter()
        .filter(|id| !told_of.contains_key(id))
        .count();
    let p = |permille| tally.latency(permille);
    println!();
    println!(
        "operations            {}",
        tally.operations.load(Ordering::Relaxed)
    );
    println!(
        "operations failed     {}",
        tally.errors.load(Ordering::Relaxed)
    );
    println!("faults injected       {injected}");
    println!("sentinel p50 / p99    {} µs / {} µs", p(500), p(990));
    println!(
        "sentinel mismatches   {}",
        tally.sentinel_mismatches.load(Ordering::Relaxed)
    );
    println!(
        "ledger writes         {acked} acknowledged, {not_run} not run, {unknown} outcome unknown ({unknown_written} of them committed)"
    );
    println!("ledger differences    {differences}");
    println!(
        "notifications         {received} received of {} sent (a fault may drop the listener's session)",
        tally.notifications_sent.load(Ordering::Relaxed)
    );
    println!("resources             start {} / end {}", samples[0], end);
    let first = &samples[1.min(samples.len() - 1)];
    println!(
        "growth after warm-up  RSS {:+} KiB, fds {:+}, tasks {:+}",
        signed(end.rss_kib) - signed(first.rss_kib),
        signed(end.fds as u64) - signed(first.fds as u64),
        signed(end.tasks as u64) - signed(first.tasks as u64)
    );
    let failed = tally.sentinel_mismatches.load(Ordering::Relaxed) > 0 || differences > 0;
    if failed {
        std::process::exit(1);
    }
    Ok(())
}

async fn work(worker: usize, pool: Pool, tally: Arc<Tally>, deadline: Instant) {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ (worker as u64 + 1);
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut writes = 0usize;
    while Instant::now() < deadline {
        let choice = next() % 10;
        let started = Instant::now();
        let result = match choice {
            0..=3 => sentinel(&pool, signed(next() >> 1), &tally).await,
            4..=5 => {
                writes += 1;
                ledger_write(&pool, worker, writes - 1, &tally).await
            }
            6..=7 => pipeline(&pool, next(), &tally).await,
            8 => copy(&pool, worker).await,
            _ => notify(&pool, &tally).await,
        };
        tally.operations.fetch_add(1, Ordering::Relaxed);
        if choice <= 3 && result.is_ok() {
            let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            tally.record_latency(us);
        }
        if result.is_err() {
            tally.errors.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn sentinel(pool: &Pool, value: i64, tally: &Tally) -> Result<(), Error> {
    let mut conn = pool.acquire().await?;
    conn.set_query_timeout(Some(QUERY_TIMEOUT));
    let row = qail!("SELECT $1::int8 AS v, $1::int8::text AS t", value)
        .fetch_one(&mut *conn)
        .await?;
    if row.v != value || row.t != value.to_string() {
        tally.sentinel_mismatches.fetch_add(1, Ordering::Relaxed);
        println!(
            "SENTINEL MISMATCH: sent {value}, got {:?} / {:?}",
            row.v, row.t
        );
    }
    Ok(())
}

/// The ledger row of a worker's `n`-th write.
fn write_id(worker: usize, n: usize) -> i64 {
    signed(worker as u64) * 1_000_000_000 + signed(n as u64) + 1
}

async fn ledger_write(pool: &Pool, worker: usize, n: usize, tally: &Tally) -> Result<(), Error> {
    let id = write_id(worker, n);
    let result = async {
        let mut conn = pool.acquire().await?;
        conn.set_query_timeout(Some(QUERY_TIMEOUT));
        let mut tx = conn.begin().await?;
        tx.execute(
            "INSERT INTO qail_soak_ledger (id, worker) VALUES ($1, $2)",
            &[&id, &i32::try_from(worker).unwrap_or(i32::MAX)],
        )
        .await?;
        tx.commit().await
    }
    .await;
    let told = match &result {
        Ok(()) => Told::Acknowledged,
        Err(e) if e.is_outcome_unknown() => Told::Unknown,
        Err(_) => Told::NotRun,
    };
    tally.ledger[worker]
        .lock()
        .expect("no worker panicked")
        .push(told);
    result
}

async fn pipeline(pool: &Pool, seed: u64, tally: &Tally) -> Result<(), Error> {
    let mut conn = pool.acquire().await?;
    conn.set_query_timeout(Some(QUERY_TIMEOUT));
    let values: Vec<i64> = (0..20).map(|i| signed(seed >> 2) + i).collect();
    let queries: Vec<_> = values
        .iter()
        .map(|v| qail!("SELECT $1::int8 AS v", *v))
        .collect();
    let rows = conn.pipeline_atomic(queries).await?;
    for (value, rows) in values.iter().zip(&rows) {
        if rows.len() != 1 || rows[0].v != *value {
            tally.sentinel_mismatches.fetch_add(1, Ordering::Relaxed);
            println!("PIPELINE MISMATCH: sent {value}");
        }
    }
    Ok(())
}

async fn copy(pool: &Pool, worker: usize) -> Result<(), Error> {
    let mut conn = pool.acquire().await?;
    conn.set_query_timeout(Some(QUERY_TIMEOUT));
    let mut copy = conn.copy_in("COPY qail_soak_copy FROM STDIN").await?;
    for n in 0..10 {
        copy.send(format!("{worker}\t{n}\n").as_bytes()).await?;
    }
    copy.finish().await.map(drop)
}

async fn notify(pool: &Pool, tally: &Tally) -> Result<(), Error> {
    let mut conn = pool.acquire().await?;
    conn.set_query_timeout(Some(QUERY_TIMEOUT));
    conn.execute("SELECT pg_notify('qail_soak', 'ping')", &[])
        .await?;
    tally.notifications_sent.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Counts notifications until the deadline, reconnecting when a fault ends its session.
async fn listen(url: String, deadline: Instant) -> u64 {
    let mut received = 0;
    while Instant::now() < deadline {
        let Ok(mut conn) = qail::Connection::connect(&url).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        if conn.batch_execute("LISTEN qail_soak").await.is_err() {
            continue;
        }
        let mut listener = conn.listener();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left.min(Duration::from_secs(10)), listener.recv()).await {
                Ok(Ok(_)) => received += 1,
                Ok(Err(_)) => break,
                Err(_) if Instant::now() >= deadline => return received,
                // Note: ten silent seconds: the session may be black-holed; start another.
                Err(_) => break,
            }
        }
    }
    received
}

/// Injects a fault every 5 s until the deadline; returns how many.
async fn inject(proxy: Arc<Proxy>, deadline: Instant) -> u64 {
    let mut injected = 0;
    let mut n = 0u64;
    loop {
        tokio::time::sleep(Duration::from_secs(5)).await;
        if Instant::now() >= deadline {
            return injected;
        }
        n += 1;
        let (fault, lasts) = match n % 5 {
            0 => (
                Fault::ResetAfter {
                    direction: Direction::ToClient,
                    bytes: 3000,
                },
                Duration::from_secs(1),
            ),
            1 => (Fault::BlackHole, Duration::from_millis(1500)),
            2 => (Fault::cut_after_executed_sync(), Duration::from_secs(1)),
            3 => (
                Fault::ResetAfter {
                    direction: Direction::ToServer,
                    bytes: 500,
                },
                Duration::from_secs(1),
            ),
            _ => (
                Fault::Throttle {
                    bytes_per_sec: 20_000,
                },
                Duration::from_secs(1),
            ),
        };
        proxy.set(fault);
        injected += 1;
        tokio::time::sleep(lasts).await;
        proxy.set(Fault::Pass);
    }
}

/// The process's resident memory, open descriptors and live tasks, and the server's sessions
/// of this run.
#[derive(Clone, Copy)]
struct Resources {
    rss_kib: u64,
    fds: usize,
    tasks: usize,
    backends: i64,
}

impl Resources {
    async fn sample(admin: &mut qail::Connection) -> Resources {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let rss_kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap_or(0);
        let fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count());
        let tasks = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        let backends = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'qail-soak'",
                &[],
            )
            .await
            .map_or(-1, |r| r.get::<i64>(0));
        Resources {
            rss_kib,
            fds,
            tasks,
            backends,
        }
    }
}

impl std::fmt::Display for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RSS {} KiB, {} fds, {} tasks, {} server sessions",
            self.rss_kib, self.fds, self.tasks, self.backends
        )
    }
}

/// `n` as an i64 (all the counts and seeds here fit).
fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
