//! Pipelined throughput: millions of `qail!` point queries on one connection, sent in
//! pipelines of a few thousand (one round trip each), every row decoded into the generated
//! struct and checked.
//!
//! The query is `SELECT id, name FROM vessels WHERE id = $1` (`vessels` has an `int8` key in
//! the fixture schema). The example creates the fixture's `operators` and `vessels` in its own
//! schema, `qail_fifty_million` (dropped and recreated on every run), seeds 1,000 vessels,
//! then asks for them in turn.
//!
//! Each pipeline is one atomic batch (`pipeline_atomic`): every query is a Bind + Execute, and
//! one Sync ends the batch, so the server answers the whole batch in one implicit transaction
//! and flushes its socket only when its buffer fills — the way libpq's pipeline mode is used.
//! (`pipeline` sends one Sync per query instead, so an error affects only that query.) Expect
//! tens of thousands to a few hundred thousand queries per second depending on the machine. The
//! default, 10,000,000 queries, therefore runs for one to several minutes: it is long by
//! design. `--queries 50000000` is the run the name refers to; `--queries 100000` is a quick
//! look. Progress goes to stderr.
//!
//! Run: `cargo run --release --example fifty_million -- [QUERIES | --queries N] [--batch N]`

#[allow(
    dead_code,
    reason = "each example uses a part of the shared support code"
)]
#[path = "support/mod.rs"]
mod support;

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use qail::{Connection, qail};
use support::{Args, Result, human, per_second, print_table, thousands};

const SCHEMA: &str = "qail_fifty_million";
const USAGE: &str =
    "usage: cargo run --release --example fifty_million -- [QUERIES | --queries N] [--batch N]
  --queries N  queries to run (default 10,000,000; 50,000,000 for the full run)
  --batch N    queries per pipeline, one round trip each (default 2,000)";

/// Vessels seeded; the queries cycle through their ids.
const VESSELS: u64 = 1_000;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args = Args::parse(&["--queries", "--batch"], USAGE);
    let total = args.number("--queries", true, 10_000_000, USAGE);
    let batch = args
        .number("--batch", false, 2_000, USAGE)
        .clamp(1, 100_000);

    let mut conn = support::connect_in(SCHEMA).await?;
    support::recreate_schema(&mut conn, SCHEMA, &["vessel_kind", "operators", "vessels"]).await?;
    conn.batch_execute(&format!(
        "INSERT INTO operators (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'Blue Star');
         INSERT INTO vessels (operator_id, name, kind, capacity)
         SELECT '00000000-0000-0000-0000-000000000001', 'Vessel ' || g, 'ferry', 300
         FROM generate_series(1, {VESSELS}) AS g;
         ANALYZE vessels"
    ))
    .await?;
    println!(
        "seeded schema {SCHEMA}: {} vessels; running {} queries in pipelines of {}",
        thousands(VESSELS),
        thousands(total),
        thousands(batch)
    );

    let started = Instant::now();
    let mut progress = Progress::new(total, started);
    let mut done = 0u64;
    let mut name_bytes = 0usize;
    let mut ids: Vec<i64> = Vec::new();
    while done < total {
        let n = batch.min(total - done);
        ids.clear();
        for k in done..done + n {
            ids.push(i64::try_from(k % VESSELS + 1)?);
        }
        name_bytes += run_pipeline(&mut conn, &ids).await?;
        done += n;
        progress.update(done);
    }
    progress.finish();
    let elapsed = started.elapsed();
    std::hint::black_box(name_bytes);
    print_summary(total, batch, elapsed);
    Ok(())
}

/// Runs one pipeline of point queries and checks every answer; returns the bytes of the names
/// read (so the decoding cannot be optimized away).
async fn run_pipeline(conn: &mut Connection, ids: &[i64]) -> Result<usize> {
    let results = conn
        .pipeline_atomic(
            ids.iter()
                .map(|&id| qail!("SELECT id, name FROM vessels WHERE id = $1", id)),
        )
        .await?;
    let mut name_bytes = 0;
    for (rows, id) in results.into_iter().zip(ids) {
        match rows.as_slice() {
            [row] if row.id == *id => name_bytes += row.name.len(),
            _ => {
                return Err(
                    format!("vessel {id}: expected its row, got {} rows", rows.len()).into(),
                );
            }
        }
    }
    Ok(name_bytes)
}

/// A one-line progress bar on stderr when it is a terminal, else a line every 10%.
struct Progress {
    total: u64,
    started: Instant,
    last: Instant,
    tty: bool,
    next_tenth: u64,
}

impl Progress {
    fn new(total: u64, started: Instant) -> Progress {
        Progress {
            total,
            started,
            last: started,
            tty: std::io::stderr().is_terminal(),
            next_tenth: 1,
        }
    }

    fn update(&mut self, done: u64) {
        let now = Instant::now();
        if self.tty {
            if now.duration_since(self.last) >= Duration::from_millis(100) || done == self.total {
                self.last = now;
                eprint!("\r{}", self.line(done, now));
                let _ = std::io::stderr().flush();
            }
        } else if done * 10 >= self.next_tenth * self.total {
            while self.next_tenth * self.total <= done * 10 {
                self.next_tenth += 1;
            }
            eprintln!("{}", self.line(done, now));
        }
    }

    fn line(&self, done: u64, now: Instant) -> String {
        const WIDTH: u64 = 30;
        let filled = usize::try_from(done * WIDTH / self.total.max(1)).unwrap_or(0);
        let empty = usize::try_from(WIDTH).unwrap_or(0).saturating_sub(filled);
        let elapsed = now.duration_since(self.started);
        let rate = done as f64 / elapsed.as_secs_f64().max(1e-9);
        let eta = (self.total - done) as f64 / rate.max(1.0);
        format!(
            "[{}{}] {:5.1}%  {} / {}  {} q/s  ETA {:.0} s ",
            "█".repeat(filled),
            "░".repeat(empty),
            100.0 * done as f64 / self.total.max(1) as f64,
            thousands(done),
            thousands(self.total),
            per_second(usize::try_from(done).unwrap_or(usize::MAX), elapsed),
            eta,
        )
    }

    fn finish(&self) {
        if self.tty {
            eprintln!();
        }
    }
}

fn print_summary(total: u64, batch: u64, elapsed: Duration) {
    let pipelines = total.div_ceil(batch);
    let per_query = Duration::from_secs_f64(elapsed.as_secs_f64() / total.max(1) as f64);
    println!();
    print_table(
        &[
            "queries",
            "per pipeline",
            "pipelines",
            "elapsed",
            "per query",
            "queries/s",
        ],
        &[vec![
            thousands(total),
            thousands(batch),
            thousands(pipelines),
            human(elapsed),
            human(per_query),
            per_second(usize::try_from(total).unwrap_or(usize::MAX), elapsed),
        ]],
    );
}
