//! The harness: runs every driver's child process for every workload and round, rounds
//! interleaved (every driver runs a workload before any runs it again), and renders the
//! medians as one markdown table.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Instant;

use crate::cli;
use crate::drivers::{self, Ctx, Driver};
use crate::measure::{Result, Sample};
use crate::report::Results;
use crate::workload::Workload;

/// The harness's `main`: the benchmark, `--help`, or a child run by hand (`--child`), which
/// it hands to the driver's own binary.
pub(crate) fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match cli::parse(&args) {
        Ok(cli::Command::Child { driver, .. }) => exec_child(driver, &args),
        Ok(cli::Command::Help) => {
            println!("{}", cli::USAGE);
            Ok(())
        }
        Ok(cli::Command::Bench(opts)) => match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime.block_on(bench(opts)),
            Err(e) => Err(format!("cannot start the tokio runtime: {e}").into()),
        },
        Err(e) => Err(e),
    };
    if let Err(e) = outcome {
        eprintln!("qail-bench: {e}");
        std::process::exit(1);
    }
}

/// `qail-bench --child DRIVER …`: replaces this process with the driver's binary, given the
/// same arguments, so a child run by hand measures what the harness's children measure.
fn exec_child(driver: Driver, args: &[String]) -> Result<()> {
    let program = driver.program()?;
    let err = Command::new(&program).args(args).exec();
    Err(format!(
        "cannot start {}: {err}; build every binary with `cargo build --release --bins` in bench/",
        program.display()
    )
    .into())
}

/// Runs one workload with one driver in a fresh process: the driver's own binary in its
/// child mode, or the C program.
fn run_one(driver: Driver, w: Workload, ctx: &Ctx) -> Result<Option<Sample>> {
    if !driver.has(w) {
        return Ok(None);
    }
    if driver == Driver::Libpq {
        return drivers::libpq::run(w, ctx);
    }
    let mut cmd = Command::new(driver.program()?);
    cmd.args(["--child", driver.name(), w.name(), "--url", &ctx.url])
        .args(["--sizes", &ctx.sizes.to_arg()]);
    crate::child::run(cmd)
}

async fn bench(opts: cli::Options) -> Result<()> {
    let ctx = Ctx {
        url: opts.url.clone(),
        sizes: opts.sizes.clone(),
    };
    let server = server_version(&ctx.url).await?;
    let load = load_average();
    if opts.warmup {
        warm_up(&opts, &ctx);
    }
    let started = Instant::now();
    let results = rounds(&opts, &ctx);
    let elapsed = started.elapsed().as_secs_f64();
    let out = render(&opts, &results, &server, &load, elapsed);
    println!("{out}");
    if let Some(path) = &opts.out {
        std::fs::write(path, &out)
            .map_err(|e| format!("cannot write {}: {e}; check the path", path.display()))?;
    }
    Ok(())
}

/// One unrecorded pass at 10% size: connections, caches and the server's buffers warm up.
fn warm_up(opts: &cli::Options, ctx: &Ctx) {
    let warm = Ctx {
        url: ctx.url.clone(),
        sizes: ctx.sizes.scaled(0.1),
    };
    eprintln!("warm-up (10% size, not recorded)");
    for &w in &opts.workloads {
        for &d in &opts.drivers {
            if let Err(e) = run_one(d, w, &warm) {
                eprintln!("warm-up {w:<9} {d:<15} error: {e}");
            }
        }
    }
}

/// The measured rounds, interleaved: every driver runs a workload before any runs it again.
fn rounds(opts: &cli::Options, ctx: &Ctx) -> Results {
    let mut results = Results::default();
    for round in 1..=opts.rounds {
        for &w in &opts.workloads {
            for &d in &opts.drivers {
                let at = format!("round {round}/{} {w:<9} {d:<15}", opts.rounds);
                match run_one(d, w, ctx) {
                    Ok(Some(s)) => {
                        eprintln!("{at} {}", brief(&s));
                        results.push(w, d, s);
                    }
                    Ok(None) => results.mark_missing(
                        w,
                        d,
                        "not run: no API for it, or not in this comparison".into(),
                    ),
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
fn render(opts: &cli::Options, results: &Results, server: &str, load: &str, secs: f64) -> String {
    let mut out = format!(
        "Rounds: {} (interleaved, each driver and workload a fresh process), medians. \
         Server: {server}. Machine: {}. Load average at start: {load}. Run took {secs:.0} s.\n\n",
        opts.rounds,
        machine(),
    );
    out.push_str(&opts.sizes_line());
    out.push_str(
        "\n\nRatios: qail's advantage over the peer (> 1 means qail is faster or uses less).\n\n",
    );
    out.push_str(&results.table(&opts.workloads, &opts.drivers));
    let notes: Vec<String> = opts
        .workloads
        .iter()
        .flat_map(|&w| results.row_count_mismatches(w))
        .chain(results.payload_notes(&opts.workloads))
        .chain(results.missing_notes())
        .collect();
    if !notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    out
}

/// The 1, 5 and 15 minute load averages, from /proc/loadavg.
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    if fields.len() == 3 {
        fields.join(" / ")
    } else {
        "unknown".to_owned()
    }
}

fn brief(s: &Sample) -> String {
    let secs = s.wall.as_secs_f64().max(1e-9);
    let mib = |k: Option<u64>| k.map_or("?".to_owned(), |k| format!("{:.1}", k as f64 / 1024.0));
    format!(
        "{:>10.0} q/s {:>10.0} rows/s  user {:.3} s  sys {:.3} s  faults {:>7}  \
         peak {} MiB (at end: file {}, anon {})",
        s.counts.queries as f64 / secs,
        s.counts.rows as f64 / secs,
        s.user().as_secs_f64(),
        s.sys.as_secs_f64(),
        s.minflt,
        mib(s.max_rss_kib),
        mib(s.rss_file_kib),
        mib(s.rss_anon_kib),
    )
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
