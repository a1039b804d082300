//! qail-bench: qail-pg and its peers measured side by side in one process run.
//!
//! ```text
//! cargo run --release -- [WORKLOAD ...] [--rounds N] [--drivers a,b] [--full] [--scale F]
//! ```
//!
//! Rounds are interleaved (every driver runs a workload before any runs it again) and the
//! table reports medians. See bench/README.md.

mod child;
mod cli;
mod drivers;
mod measure;
mod report;
mod workload;

use std::process::Command;
use std::time::Instant;

use drivers::{Ctx, Driver};
use measure::{Meter, Result, Sample};
use report::Results;
use workload::Workload;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("qail-bench: cannot start the tokio runtime: {e}");
            std::process::exit(1);
        }
    };
    let outcome = match cli::parse(&args) {
        Ok(cli::Command::MemoryChild { driver, url }) => {
            runtime.block_on(memory_child(driver, &url))
        }
        Ok(cli::Command::MemoryBaseline) => memory_baseline(),
        Ok(cli::Command::Help) => {
            println!("{}", cli::USAGE);
            Ok(())
        }
        Ok(cli::Command::Bench(opts)) => runtime.block_on(bench(opts)),
        Err(e) => Err(e),
    };
    if let Err(e) = outcome {
        eprintln!("qail-bench: {e}");
        std::process::exit(1);
    }
}

/// The memory workload inside a fresh process: run the body, print the report line.
async fn memory_child(driver: Driver, url: &str) -> Result<()> {
    let m = Meter::start()?;
    driver.memory_body(url).await?;
    let mut sample = m.finish(measure::Counts {
        queries: u64::try_from(drivers::MEMORY_SELECTS + drivers::MEMORY_INSERTS)?,
        rows: u64::try_from(drivers::MEMORY_SELECTS)?,
    })?;
    sample.max_rss_kib = Some(measure::max_rss_kib()?);
    println!("{}", child::format_report(&sample));
    Ok(())
}

/// The harness process itself, with a runtime and no connection: the memory baseline.
fn memory_baseline() -> Result<()> {
    let sample = Sample {
        max_rss_kib: Some(measure::max_rss_kib()?),
        ..Sample::default()
    };
    println!("{}", child::format_report(&sample));
    Ok(())
}

/// Peak RSS of the harness binary doing nothing, in MiB.
fn baseline_mib() -> Result<f64> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg("--memory-baseline");
    let kib = child::run(cmd)?.max_rss_kib.unwrap_or(0);
    Ok(kib as f64 / 1024.0)
}

/// Runs one workload with one driver: in-process, or as a child for `memory`.
async fn run_one(driver: Driver, w: Workload, ctx: &Ctx) -> Result<Option<Sample>> {
    if w != Workload::Memory || driver == Driver::Libpq {
        return driver.run(w, ctx).await;
    }
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["--memory-child", driver.name(), "--url", &ctx.url]);
    child::run(cmd).map(Some)
}

async fn bench(opts: cli::Options) -> Result<()> {
    let ctx = Ctx {
        url: opts.url.clone(),
        sizes: opts.sizes.clone(),
    };
    let server = server_version(&ctx.url).await?;
    if opts.warmup {
        warm_up(&opts, &ctx).await;
    }
    let started = Instant::now();
    let results = rounds(&opts, &ctx).await;
    let elapsed = started.elapsed().as_secs_f64();
    let out = render(&opts, &results, &server, elapsed)?;
    println!("{out}");
    if let Some(path) = &opts.out {
        std::fs::write(path, &out)
            .map_err(|e| format!("cannot write {}: {e}; check the path", path.display()))?;
    }
    Ok(())
}

/// One unrecorded pass at 10% size: connections, caches and the server's buffers warm up.
async fn warm_up(opts: &cli::Options, ctx: &Ctx) {
    let warm = Ctx {
        url: ctx.url.clone(),
        sizes: ctx.sizes.scaled(0.1),
    };
    eprintln!("warm-up (10% size, not recorded)");
    for &w in opts.workloads.iter().filter(|w| **w != Workload::Memory) {
        for &d in &opts.drivers {
            if let Err(e) = run_one(d, w, &warm).await {
                eprintln!("warm-up {w:<9} {d:<15} error: {e}");
            }
        }
    }
}

/// The measured rounds, interleaved: every driver runs a workload before any runs it again.
async fn rounds(opts: &cli::Options, ctx: &Ctx) -> Results {
    let mut results = Results::default();
    for round in 1..=opts.rounds {
        for &w in &opts.workloads {
            for &d in &opts.drivers {
                let at = format!("round {round}/{} {w:<9} {d:<15}", opts.rounds);
                match run_one(d, w, ctx).await {
                    Ok(Some(s)) => {
                        eprintln!("{at} {}", brief(&s));
                        results.push(w, d, s);
                    }
                    Ok(None) => results.mark_missing(w, d, "TODO: no API in qail-pg yet".into()),
                    Err(e) => {
                        eprintln!("{at} error: {e}");
                        results.mark_missing(w, d, format!("error: {e}"));
                    }
                }
            }
        }
    }
    results
}

/// The markdown report: header, table, notes.
fn render(opts: &cli::Options, results: &Results, server: &str, secs: f64) -> Result<String> {
    let mut out = format!(
        "Rounds: {} (interleaved), medians. Server: {server}. Machine: {}. Run took {secs:.0} s.\n\n",
        opts.rounds,
        machine(),
    );
    out.push_str(&opts.sizes_line());
    out.push_str(
        "\n\nRatios: qail's advantage over the peer (> 1 means qail is faster or uses less).\n\n",
    );
    out.push_str(&results.table(&opts.workloads, &opts.drivers));
    let mut notes: Vec<String> = opts
        .workloads
        .iter()
        .flat_map(|&w| results.row_count_mismatches(w))
        .chain(results.missing_notes())
        .collect();
    if opts.workloads.contains(&Workload::Memory) {
        notes.push(format!(
            "memory: the Rust drivers run in the harness binary (all drivers linked); that \
             binary starting a runtime and doing nothing peaks at {:.1} MiB",
            baseline_mib()?
        ));
    }
    if !notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    Ok(out)
}

fn brief(s: &Sample) -> String {
    let secs = s.wall.as_secs_f64().max(1e-9);
    match s.max_rss_kib {
        Some(kib) => format!("peak RSS {:.1} MiB", kib as f64 / 1024.0),
        None => format!(
            "{:>10.0} q/s {:>10.0} rows/s  cpu {:.3} s",
            s.counts.queries as f64 / secs,
            s.counts.rows as f64 / secs,
            s.cpu.as_secs_f64()
        ),
    }
}

/// The server's version string, asked through tokio-postgres (any driver would do).
async fn server_version(url: &str) -> Result<String> {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .map_err(|e| {
            format!("cannot connect to {url}: {e}; run bench/setup.sh and check DATABASE_URL")
        })?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let row = client.query_one("SHOW server_version", &[]).await?;
    Ok(format!("PostgreSQL {}", row.try_get::<_, String>(0)?))
}

/// CPU model and core count, from /proc/cpuinfo.
fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cores} cores")
}
