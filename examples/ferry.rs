//! The ferry query: three LEFT JOINs checked at compile time by `qail!`, run in the four
//! ways a query can go to the server, and timed.
//!
//! The example creates the fixture's ferry tables in its own schema (`qail_ferry`, dropped
//! and recreated on every run), seeds 1,000 harbors, 100 operators and 10,000 connections
//! (80% enabled, 10% without an operator) and indexes the connections by name, prints a few
//! rows, then times each tier:
//!
//! - **prepared**: `fetch_all` — the first call on a connection sends Parse + Describe, every
//!   later call only Bind + Execute + Sync; rows are decoded into the generated struct.
//! - **borrowed**: `for_each` — the same statement, but each row is read in place from the
//!   connection's buffer (`&str` instead of `String`): nothing is allocated per row.
//! - **uncached**: `fetch_all` on a connection whose statement cache size is 0: an unnamed
//!   statement, Parse + Describe every call.
//! - **pooler**: `fetch_all` on a connection opened with `pooler=transaction` (what a
//!   pgbouncer in transaction mode needs): Parse + Describe + Bind + Execute + Sync of the
//!   unnamed statement in one write, the description checked before the rows are decoded.
//!
//! With `--pgbouncer URL` (a pgbouncer in front of the same server, such as the one
//! `scripts/pgbouncer` starts: `postgres://postgres@127.0.0.1:6434/qail_ferry`), the uncached
//! and pooler tiers are timed through it as well. pgbouncer drops the `options` startup
//! parameter that sets the example's `search_path`, so the URL's database must be a pgbouncer
//! alias whose server sessions start in schema `qail_ferry` (`connect_query`; the `qail_ferry`
//! alias of `scripts/pgbouncer`). The prepared tiers cannot go through pgbouncer in
//! transaction mode: their named statements outlive the client on pgbouncer's server sessions,
//! so the next client that prepares the same query there fails with 42P05 (a second run of
//! the example would), or finds the statement missing (26000) on another session.
//!
//! Run: `cargo run --release --example ferry -- [ITERATIONS] [--pgbouncer URL]` (default
//! 2,000 per tier).

#[allow(
    dead_code,
    reason = "each example uses a part of the shared support code"
)]
#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use qail::uuid::Uuid;
use qail::{Connection, qail};
use support::{Args, Result, human, per_second, percentile, print_table, thousands};

const SCHEMA: &str = "qail_ferry";
const USAGE: &str =
    "usage: cargo run --release --example ferry -- [ITERATIONS | --iterations N] [--pgbouncer URL]
  runs the ferry query N times per tier (default 2,000) against DATABASE_URL, and with
  --pgbouncer through that pgbouncer too (e.g. postgres://postgres@127.0.0.1:6434/qail_ferry,
  the alias scripts/pgbouncer defines)";

/// The ferry query, written once. `qail!` checks it against `qail.schema.json` at compile
/// time: the columns of the LEFT-joined tables come out as `Option`, those of
/// `odyssey_connections` (NOT NULL, and not on the nullable side of a join) as plain values.
macro_rules! enabled_connections {
    ($enabled:expr) => {
        qail!(
            "SELECT c.id, c.name,
                    origin.name AS origin, origin.country AS origin_country,
                    destination.name AS destination, destination.country AS destination_country,
                    op.name AS operator, op.active AS operator_active
             FROM odyssey_connections c
             LEFT JOIN harbors origin ON origin.id = c.origin_harbor_id
             LEFT JOIN harbors destination ON destination.id = c.destination_harbor_id
             LEFT JOIN operators op ON op.id = c.operator_id
             WHERE c.is_enabled = $1
             ORDER BY c.name
             LIMIT 50",
            $enabled
        )
    };
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args = Args::parse(&["--iterations", "--pgbouncer"], USAGE);
    let iterations = args.number("--iterations", true, 2_000, USAGE).max(1);
    let pgbouncer = args.string("--pgbouncer", USAGE);

    let mut conn = support::connect_in(SCHEMA).await?;
    println!(
        "connected to PostgreSQL {}",
        conn.parameter_status("server_version").unwrap_or("?")
    );
    let tables = ["harbors", "operators", "odyssey_connections"];
    support::recreate_schema(&mut conn, SCHEMA, &tables).await?;
    let started = Instant::now();
    let size = support::seed::Ferry {
        harbors: 1_000,
        operators: 100,
        connections: 10_000,
    };
    support::seed::ferry(&mut conn, &size).await?;
    println!(
        "seeded schema {SCHEMA}: 1,000 harbors, 100 operators, 10,000 connections in {}\n",
        human(started.elapsed())
    );

    show_rows(&mut conn).await?;
    show_nested(&mut conn).await?;

    let direct = support::config_in(SCHEMA)?;
    let mut lanes = vec![
        Lane::open("prepared  (fetch_all)", Tier::Prepared, &direct).await?,
        Lane::open("borrowed  (for_each)", Tier::Borrowed, &direct).await?,
        Lane::open("uncached  (cache size 0)", Tier::Uncached, &direct).await?,
        Lane::open("pooler    (pooler=transaction)", Tier::Pooler, &direct).await?,
    ];
    if let Some(url) = &pgbouncer {
        let bouncer = qail::Config::parse(url)
            .map_err(|e| format!("--pgbouncer {url} is not a valid connection string ({e})"))?;
        for (label, tier) in [
            ("pgbouncer uncached", Tier::Uncached),
            ("pgbouncer pooler=transaction", Tier::Pooler),
        ] {
            let lane = Lane::open(label, tier, &bouncer).await.map_err(|e| {
                format!(
                    "through pgbouncer at {url}: {e}; start it with scripts/pgbouncer, and \
                     name a database whose server sessions use schema {SCHEMA}"
                )
            })?;
            lanes.push(lane);
        }
    }
    measure(&mut lanes, iterations).await?;
    print_timings(&lanes, iterations);
    Ok(())
}

/// Prints a few harbors with their departing connections, loaded in one query: each
/// harbor's `connections` is a `Vec` of a struct qail! generates from the derived table's
/// rows (fields named by its aliases), its `operator` an `Option` because the operator is
/// LEFT JOINed.
async fn show_nested(conn: &mut Connection) -> Result<()> {
    let harbors = qail!(
        "SELECT h.name, h.country,
                ARRAY(SELECT x FROM (
                          SELECT c.name, d.name AS destination, op.name AS operator
                          FROM odyssey_connections c
                          JOIN harbors d ON d.id = c.destination_harbor_id
                          LEFT JOIN operators op ON op.id = c.operator_id
                          WHERE c.origin_harbor_id = h.id AND c.is_enabled
                          ORDER BY c.name LIMIT 3) x) AS connections
         FROM harbors h ORDER BY h.name LIMIT 3"
    )
    .fetch_all(conn)
    .await?;
    println!(
        "harbors with their connections in one query (connections: Vec<{{ name: String, \
         destination: String, operator: Option<String> }}>):"
    );
    for h in &harbors {
        println!(
            "  {} ({}): {} connections shown",
            h.name,
            h.country,
            h.connections.len()
        );
        for c in &h.connections {
            let operator = c.operator.as_deref().unwrap_or("no operator");
            println!("    {} → {} ({operator})", c.name, c.destination);
        }
    }
    println!();
    Ok(())
}

/// Prints some rows of the query, among them one without an operator.
async fn show_rows(conn: &mut Connection) -> Result<()> {
    let rows = enabled_connections!(true).fetch_all(conn).await?;
    println!(
        "{} rows; the row type qail! generated for the 3×LEFT JOIN has Option exactly on the \
         joined tables' columns:",
        rows.len()
    );
    println!(
        "  id: Uuid, name: String, origin: Option<String>, origin_country: Option<String>,\n  \
         destination: Option<String>, destination_country: Option<String>,\n  \
         operator: Option<String>, operator_active: Option<bool>\n"
    );
    let missing = rows.iter().position(|r| r.operator.is_none());
    let mut shown: Vec<usize> = (0..rows.len().min(8)).collect();
    if let Some(i) = missing.filter(|i| *i >= 8) {
        shown.push(i);
    }
    let none = || "NULL".to_owned();
    let table: Vec<Vec<String>> = shown
        .iter()
        .map(|&i| {
            let r = &rows[i];
            vec![
                r.id.simple().to_string()[24..].to_owned(),
                r.name.clone(),
                r.origin.clone().unwrap_or_else(none),
                r.destination.clone().unwrap_or_else(none),
                r.operator.clone().unwrap_or_else(none),
                r.operator_active.map_or_else(none, |a| a.to_string()),
            ]
        })
        .collect();
    print_table(
        &[
            "id (last 8 hex)",
            "name",
            "origin",
            "destination",
            "operator",
            "active",
        ],
        &table,
    );
    if let Some(i) = missing {
        println!(
            "\nthe row without an operator, as Rust sees it:\n{:#?}\n",
            rows[i]
        );
    }
    Ok(())
}

/// How a lane runs the query: what its connection is set up for and how rows are read.
#[derive(Clone, Copy)]
enum Tier {
    /// The statement cache on, rows into the generated struct.
    Prepared,
    /// The statement cache on, rows read in place.
    Borrowed,
    /// The statement cache off.
    Uncached,
    /// `pooler=transaction`.
    Pooler,
}

impl Tier {
    /// What goes to the server per call, once the connection is warm.
    fn sent(self) -> &'static str {
        match self {
            Tier::Prepared => "Bind+Execute+Sync, 50 rows → Vec<Record>",
            Tier::Borrowed => "Bind+Execute+Sync, rows read in place",
            Tier::Uncached | Tier::Pooler => "Parse+Describe+Bind+Execute+Sync",
        }
    }
}

/// One timed line of the table: a tier on a connection of its own, and its samples.
struct Lane {
    label: &'static str,
    tier: Tier,
    conn: Connection,
    samples: Vec<Duration>,
}

impl Lane {
    /// Connects for `tier` with `config`, in the example's schema.
    async fn open(label: &'static str, tier: Tier, config: &qail::Config) -> Result<Lane> {
        let mut config = support::in_schema(config.clone(), SCHEMA);
        if let Tier::Pooler = tier {
            config = config.pooler(qail::Pooler::Transaction);
        }
        let mut conn = Connection::connect_with(&config).await?;
        if let Tier::Uncached = tier {
            conn.set_statement_cache_size(0);
        }
        Ok(Lane {
            label,
            tier,
            conn,
            samples: Vec::new(),
        })
    }

    /// Runs the query once; returns the number of rows.
    async fn run_once(&mut self) -> Result<usize> {
        let conn = &mut self.conn;
        match self.tier {
            Tier::Prepared | Tier::Uncached | Tier::Pooler => {
                Ok(enabled_connections!(true).fetch_all(conn).await?.len())
            }
            Tier::Borrowed => {
                // Each column is read in place, in order: `&str` points into the read buffer.
                let mut without_operator = 0usize;
                let mut name_bytes = 0usize;
                let n = enabled_connections!(true)
                    .for_each(conn, |row, columns| {
                        let _id: Uuid = row.get_next(columns)?;
                        let name: &str = row.get_next(columns)?;
                        let _origin: Option<&str> = row.get_next(columns)?;
                        let _origin_country: Option<&str> = row.get_next(columns)?;
                        let _destination: Option<&str> = row.get_next(columns)?;
                        let _destination_country: Option<&str> = row.get_next(columns)?;
                        let operator: Option<&str> = row.get_next(columns)?;
                        let _active: Option<bool> = row.get_next(columns)?;
                        name_bytes += name.len();
                        without_operator += usize::from(operator.is_none());
                        Ok(())
                    })
                    .await?;
                std::hint::black_box((name_bytes, without_operator));
                Ok(usize::try_from(n)?)
            }
        }
    }
}

/// Times `iterations` calls per lane, interleaved (each round runs the lanes in a rotating
/// order) so a busy machine slows all of them alike; leaves each lane's samples sorted.
async fn measure(lanes: &mut [Lane], iterations: u64) -> Result<()> {
    let warm_up = 100;
    for round in 0..warm_up {
        for lane in lanes.iter_mut() {
            let n = lane.run_once().await?;
            if round == 0 && n != 50 {
                return Err(
                    format!("{}: the query returned {n} rows, 50 expected", lane.label).into(),
                );
            }
        }
    }
    let count = lanes.len();
    for round in 0..iterations {
        let shift = usize::try_from(round)? % count;
        for k in 0..count {
            let lane = &mut lanes[(k + shift) % count];
            let started = Instant::now();
            lane.run_once().await?;
            lane.samples.push(started.elapsed());
        }
    }
    for lane in lanes {
        lane.samples.sort_unstable();
    }
    Ok(())
}

fn print_timings(lanes: &[Lane], iterations: u64) {
    let rows: Vec<Vec<String>> = lanes
        .iter()
        .map(|lane| {
            let total: Duration = lane.samples.iter().sum();
            vec![
                lane.label.to_owned(),
                lane.tier.sent().to_owned(),
                human(percentile(&lane.samples, 50)),
                human(percentile(&lane.samples, 99)),
                per_second(lane.samples.len(), total),
            ]
        })
        .collect();
    println!(
        "{} iterations per tier (after 100 warm-up rounds), one connection each:\n",
        thousands(iterations)
    );
    print_table(
        &["tier", "sent per call", "median", "p99", "queries/s"],
        &rows,
    );
}
