//! Five ways to load connections together with their two harbors, all with `qail!`:
//!
//! - **JOIN**: one query joining the harbors in — one round trip.
//! - **batched**: the connections, then every harbor they name in one `= ANY($1)` query with a
//!   `Vec<Uuid>` parameter, as a DataLoader does — two round trips whatever the row count.
//! - **N+1**: the connections, then each harbor on its own, as a lazily loading ORM does —
//!   1 + 2N round trips.
//! - **nested**: one query returning each origin harbor with the array of its connections
//!   (`array_agg(x)` of a derived table's rows), decoded into generated nested structs —
//!   one round trip, each harbor's name sent once.
//! - **nested JSON**: the same query built as JSON on the server (`json_agg(x)`), decoded with
//!   serde into generated structs — one round trip, text instead of binary.
//!
//! The five payloads are checked to be equal before anything is timed; then the strategies
//! run in a random order each round. `--delay-ms N` sleeps N ms before each round trip, to
//! show what a database that is not on the same machine does to N+1.
//!
//! The example works in its own schema, `qail_patterns`, dropped and recreated on every run.
//!
//! Run: `cargo run --release --example patterns -- [--rows N] [--runs N] [--delay-ms N]`

#[allow(
    dead_code,
    reason = "each example uses a part of the shared support code"
)]
#[path = "support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

use qail::uuid::Uuid;
use qail::{Connection, qail};
use support::{Args, Result, Rng, human, percentile, print_table};

const SCHEMA: &str = "qail_patterns";
const USAGE: &str =
    "usage: cargo run --release --example patterns -- [--rows N] [--runs N] [--delay-ms N]
  --rows N      connections to load per run (default 100)
  --runs N      timed runs per strategy (default 30)
  --delay-ms N  simulated network latency added to every round trip (default 0)";

/// A connection with its harbors' names: what each strategy must produce.
#[derive(Debug, Clone, PartialEq)]
struct Loaded {
    id: Uuid,
    name: String,
    origin: String,
    destination: String,
}

/// A connection as stored, with the ids of its harbors.
struct Line {
    id: Uuid,
    name: String,
    origin_harbor_id: Uuid,
    destination_harbor_id: Uuid,
}

/// The connection, with a simulated network latency and a count of the round trips made.
struct Db {
    conn: Connection,
    delay: Duration,
    trips: u64,
}

impl Db {
    /// Called before every query: one round trip.
    async fn trip(&mut self) {
        self.trips += 1;
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Strategy {
    Join,
    Batched,
    NPlusOne,
    Nested,
    NestedJson,
}

const STRATEGIES: [Strategy; 5] = [
    Strategy::Join,
    Strategy::Batched,
    Strategy::NPlusOne,
    Strategy::Nested,
    Strategy::NestedJson,
];

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args = Args::parse(&["--rows", "--runs", "--delay-ms"], USAGE);
    let rows = i64::try_from(args.number("--rows", false, 100, USAGE))?;
    let runs = args.number("--runs", false, 30, USAGE).max(1);
    let delay = Duration::from_millis(args.number("--delay-ms", false, 0, USAGE));

    let mut conn = support::connect_in(SCHEMA).await?;
    let tables = ["harbors", "operators", "odyssey_connections"];
    support::recreate_schema(&mut conn, SCHEMA, &tables).await?;
    let size = support::seed::Ferry {
        harbors: 1_000,
        operators: 100,
        connections: 10_000,
    };
    support::seed::ferry(&mut conn, &size).await?;
    println!("seeded schema {SCHEMA}: 1,000 harbors, 100 operators, 10,000 connections");
    let mut db = Db {
        conn,
        delay,
        trips: 0,
    };

    // Same answer five ways, or nothing is worth timing.
    let reference = load(Strategy::Join, &mut db, rows).await?;
    for strategy in &STRATEGIES[1..] {
        let strategy = *strategy;
        let payload = load(strategy, &mut db, rows).await?;
        assert_eq!(
            payload, reference,
            "{strategy:?} loaded something else than the JOIN"
        );
    }
    if let Some(first) = reference.first() {
        println!(
            "the five strategies load the same {} connections, e.g.\n  {first:?}\n",
            reference.len()
        );
    }

    let (samples, trips) = measure(&mut db, rows, runs).await?;
    print_results(&samples, &trips, runs, delay);
    Ok(())
}

/// The lines of the nested strategies' harbors, one `Loaded` each, in the JOIN's order (the
/// binary and the JSON form generate different structs with the same fields).
macro_rules! flatten_lines {
    ($harbors:expr) => {{
        let mut loaded: Vec<Loaded> = $harbors
            .into_iter()
            .flat_map(|h| {
                let origin = h.origin;
                h.lines.into_iter().map(move |l| Loaded {
                    id: l.id,
                    name: l.name,
                    origin: origin.clone(),
                    destination: l.destination,
                })
            })
            .collect();
        loaded.sort_by(|a, b| (&a.name, a.id).cmp(&(&b.name, b.id)));
        loaded
    }};
}
/// Loads `rows` enabled connections with their harbors' names, the way `strategy` does.
async fn load(strategy: Strategy, db: &mut Db, rows: i64) -> Result<Vec<Loaded>> {
    match strategy {
        Strategy::Join => {
            db.trip().await;
            let loaded: Vec<Loaded> = qail!(
                Loaded => "SELECT c.id, c.name, o.name AS origin, d.name AS destination
                           FROM odyssey_connections c
                           JOIN harbors o ON o.id = c.origin_harbor_id
                           JOIN harbors d ON d.id = c.destination_harbor_id
                           WHERE c.is_enabled
                           ORDER BY c.name, c.id
                           LIMIT $1",
                rows
            )
            .fetch_all(&mut db.conn)
            .await?;
            Ok(loaded)
        }
        Strategy::Batched => {
            let lines = lines(db, rows).await?;
            let mut ids: Vec<Uuid> = lines
                .iter()
                .flat_map(|l| [l.origin_harbor_id, l.destination_harbor_id])
                .collect();
            ids.sort_unstable();
            ids.dedup();
            db.trip().await;
            let names: HashMap<Uuid, String> =
                qail!("SELECT id, name FROM harbors WHERE id = ANY($1)", ids)
                    .fetch_all(&mut db.conn)
                    .await?
                    .into_iter()
                    .map(|h| (h.id, h.name))
                    .collect();
            let name = |id: &Uuid| {
                names
                    .get(id)
                    .cloned()
                    .ok_or_else(|| format!("harbor {id} is missing"))
            };
            lines
                .into_iter()
                .map(|l| {
                    Ok(Loaded {
                        origin: name(&l.origin_harbor_id)?,
                        destination: name(&l.destination_harbor_id)?,
                        id: l.id,
                        name: l.name,
                    })
                })
                .collect()
        }
        Strategy::NPlusOne => {
            let lines = lines(db, rows).await?;
            let mut loaded = Vec::with_capacity(lines.len());
            for l in lines {
                loaded.push(Loaded {
                    origin: harbor_name(db, l.origin_harbor_id).await?,
                    destination: harbor_name(db, l.destination_harbor_id).await?,
                    id: l.id,
                    name: l.name,
                });
            }
            Ok(loaded)
        }
        Strategy::Nested => {
            db.trip().await;
            let harbors = qail!(
                "SELECT o.name AS origin, array_agg(x ORDER BY x.name, x.id) AS lines
                 FROM (SELECT c.id, c.name, c.origin_harbor_id, d.name AS destination
                       FROM odyssey_connections c
                       JOIN harbors d ON d.id = c.destination_harbor_id
                       WHERE c.is_enabled
                       ORDER BY c.name, c.id
                       LIMIT $1) x
                 JOIN harbors o ON o.id = x.origin_harbor_id
                 GROUP BY o.id",
                rows
            )
            .fetch_all(&mut db.conn)
            .await?;
            Ok(flatten_lines!(harbors))
        }
        Strategy::NestedJson => {
            db.trip().await;
            let harbors = qail!(
                "SELECT o.name AS origin, json_agg(x ORDER BY x.name, x.id) AS lines
                 FROM (SELECT c.id, c.name, c.origin_harbor_id, d.name AS destination
                       FROM odyssey_connections c
                       JOIN harbors d ON d.id = c.destination_harbor_id
                       WHERE c.is_enabled
                       ORDER BY c.name, c.id
                       LIMIT $1) x
                 JOIN harbors o ON o.id = x.origin_harbor_id
                 GROUP BY o.id",
                rows
            )
            .fetch_all(&mut db.conn)
            .await?;
            Ok(flatten_lines!(harbors))
        }
    }
}

/// The enabled connections, without their harbors.
async fn lines(db: &mut Db, rows: i64) -> Result<Vec<Line>> {
    db.trip().await;
    let lines: Vec<Line> = qail!(
        Line => "SELECT id, name, origin_harbor_id, destination_harbor_id
                 FROM odyssey_connections
                 WHERE is_enabled
                 ORDER BY name, id
                 LIMIT $1",
        rows
    )
    .fetch_all(&mut db.conn)
    .await?;
    Ok(lines)
}

/// One harbor's name: a round trip of its own.
async fn harbor_name(db: &mut Db, id: Uuid) -> Result<String> {
    db.trip().await;
    let harbor = qail!("SELECT name FROM harbors WHERE id = {id}")
        .fetch_one(&mut db.conn)
        .await?;
    Ok(harbor.name)
}

/// Times `runs` loads per strategy, in a random order each run. Returns the sorted samples
/// and the round trips of one load, per strategy.
async fn measure(db: &mut Db, rows: i64, runs: u64) -> Result<([Vec<Duration>; 5], [u64; 5])> {
    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() % u128::from(u64::MAX));
    let mut rng = Rng::new(u64::try_from(seed)?);
    let mut samples: [Vec<Duration>; 5] = Default::default();
    let mut trips = [0u64; 5];
    let mut order = [0usize, 1, 2, 3, 4];
    for _ in 0..runs {
        rng.shuffle(&mut order);
        for &i in &order {
            let before = db.trips;
            let started = Instant::now();
            let loaded = load(STRATEGIES[i], db, rows).await?;
            samples[i].push(started.elapsed());
            trips[i] = db.trips - before;
            std::hint::black_box(loaded);
        }
    }
    for s in &mut samples {
        s.sort_unstable();
    }
    Ok((samples, trips))
}

fn print_results(samples: &[Vec<Duration>; 5], trips: &[u64; 5], runs: u64, delay: Duration) {
    let join = percentile(&samples[0], 50).as_secs_f64();
    let names = [
        "JOIN",
        "batched (= ANY($1))",
        "N+1",
        "nested (array_agg)",
        "nested JSON (json_agg)",
    ];
    let table: Vec<Vec<String>> = (0..5)
        .map(|i| {
            let median = percentile(&samples[i], 50);
            vec![
                names[i].to_owned(),
                trips[i].to_string(),
                human(median),
                human(percentile(&samples[i], 99)),
                format!("{:.1}×", median.as_secs_f64() / join),
            ]
        })
        .collect();
    let latency = if delay.is_zero() {
        "no simulated latency (try --delay-ms 1)".to_owned()
    } else {
        format!(
            "{} simulated latency per round trip (at least: the timer rounds each sleep up to \
             its next tick)",
            human(delay)
        )
    };
    println!("{runs} runs per strategy in random order, {latency}:\n");
    print_table(
        &["strategy", "round trips", "median", "p99", "vs JOIN"],
        &table,
    );
}
