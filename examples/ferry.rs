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
//! Run: `cargo run --release --example ferry -- [ITERATIONS]` (default 2,000 per tier).

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
const USAGE: &str = "usage: cargo run --release --example ferry -- [ITERATIONS | --iterations N]
  runs the ferry query N times per tier (default 2,000) against DATABASE_URL";

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
    let args = Args::parse(&["--iterations"], USAGE);
    let iterations = args.number("--iterations", true, 2_000, USAGE).max(1);

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

    let mut uncached = support::connect_in(SCHEMA).await?;
    uncached.set_statement_cache_size(0);
    let config = support::config_in(SCHEMA)?.pooler(qail::Pooler::Transaction);
    let pooled = Connection::connect_with(&config).await?;
    let mut others = [uncached, pooled];
    let samples = measure(&mut conn, &mut others, iterations).await?;
    print_timings(&samples, iterations);
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

#[derive(Clone, Copy)]
enum Tier {
    Prepared,
    Borrowed,
    Uncached,
    Pooler,
}

const TIERS: [Tier; 4] = [Tier::Prepared, Tier::Borrowed, Tier::Uncached, Tier::Pooler];

/// Runs the query once in `tier`; returns the number of rows. `others` are the uncached and
/// the `pooler=transaction` connections.
async fn run_once(
    tier: Tier,
    conn: &mut Connection,
    others: &mut [Connection; 2],
) -> Result<usize> {
    match tier {
        Tier::Prepared => Ok(enabled_connections!(true).fetch_all(conn).await?.len()),
        Tier::Uncached => Ok(enabled_connections!(true)
            .fetch_all(&mut others[0])
            .await?
            .len()),
        Tier::Pooler => Ok(enabled_connections!(true)
            .fetch_all(&mut others[1])
            .await?
            .len()),
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

/// Times `iterations` calls per tier, interleaved (each round runs the tiers in a rotating
/// order) so a busy machine slows all of them alike. Returns the sorted samples per tier.
async fn measure(
    conn: &mut Connection,
    others: &mut [Connection; 2],
    iterations: u64,
) -> Result<[Vec<Duration>; 4]> {
    let warm_up = 100;
    for round in 0..warm_up {
        for tier in TIERS {
            let n = run_once(tier, conn, others).await?;
            if round == 0 && n != 50 {
                return Err(format!("the query returned {n} rows, 50 expected").into());
            }
        }
    }
    let mut samples: [Vec<Duration>; 4] = Default::default();
    for round in 0..iterations {
        let shift = usize::try_from(round % 4)?;
        for k in 0..4 {
            let t = (k + shift) % 4;
            let started = Instant::now();
            run_once(TIERS[t], conn, others).await?;
            samples[t].push(started.elapsed());
        }
    }
    for s in &mut samples {
        s.sort_unstable();
    }
    Ok(samples)
}

fn print_timings(samples: &[Vec<Duration>; 4], iterations: u64) {
    let what = [
        (
            "prepared  (fetch_all)",
            "Bind+Execute+Sync, 50 rows → Vec<Record>",
        ),
        (
            "borrowed  (for_each)",
            "Bind+Execute+Sync, rows read in place",
        ),
        (
            "uncached  (cache size 0)",
            "Parse+Describe+Bind+Execute+Sync",
        ),
        (
            "pooler    (pooler=transaction)",
            "Parse+Describe+Bind+Execute+Sync",
        ),
    ];
    let rows: Vec<Vec<String>> = samples
        .iter()
        .zip(what)
        .map(|(s, (tier, sent))| {
            let total: Duration = s.iter().sum();
            vec![
                tier.to_owned(),
                sent.to_owned(),
                human(percentile(s, 50)),
                human(percentile(s, 99)),
                per_second(s.len(), total),
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
