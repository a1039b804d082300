//! The `main` of every executable of the package: the harness (`qail-bench`), and one binary
//! per driver (`qail-bench-DRIVER`, named by `Driver::binary`) that runs that driver's child
//! runs. Each driver's function reaches that driver's module only, so the linker keeps only
//! its code (and the measurement shared by all) in its binary: a child's resident file pages
//! are its own driver's, not those of an executable holding every peer.

use ::qail::PoolReset;

use crate::drivers::{Ctx, Driver, pools, qail, qail_json, qail_sql, qail302, sqlx_pg, tokio_pg};
use crate::measure::{Resident, Result, Sample};
use crate::workload::Workload;
use crate::{child, cli, harness};

/// `qail-bench`: the benchmark (see bench/README.md and `--help`). Its children are the
/// drivers' binaries, found next to it, and the libpq C program.
pub fn harness() {
    harness::main();
}

/// `qail-bench-qail`: the `qail` driver, compiled queries.
pub fn qail() {
    child_main(Driver::Qail, async |w, ctx| {
        if w.pool_size().is_some() {
            return pools::own(PoolReset::Session, w, ctx).await.map(Some);
        }
        if matches!(w, Workload::Tasks1000 | Workload::Tasks1000Shared) {
            return pools::many_tasks(w, ctx).await.map(Some);
        }
        qail::run(w, ctx).await.map(Some)
    });
}

/// `qail-bench-qail-sql`: the `qail-sql` driver, qail-pg with run-time SQL.
pub fn qail_sql() {
    child_main(Driver::QailSql, async |w, ctx| {
        qail_sql::run(w, ctx).await.map(Some)
    });
}

/// `qail-bench-tokio-postgres`: the `tokio-postgres` driver.
pub fn tokio_postgres() {
    child_main(Driver::TokioPostgres, async |w, ctx| {
        tokio_pg::run(w, ctx).await.map(Some)
    });
}

/// `qail-bench-sqlx`: the `sqlx` driver.
pub fn sqlx() {
    child_main(Driver::Sqlx, async |w, ctx| {
        sqlx_pg::run(w, ctx).await.map(Some)
    });
}

/// `qail-bench-qail-pg-302`: the `qail-pg-3.0.2` driver.
pub fn qail_pg_302() {
    child_main(Driver::Qail302, qail302::run);
}

/// `qail-bench-qail-json-serde`: `qail`'s `wide` with the jsonb column read by serde_json.
pub fn qail_json_serde() {
    child_main(Driver::QailJsonSerde, async |_, ctx| {
        qail_json::serde(ctx).await.map(Some)
    });
}

/// `qail-bench-qail-json-simd`: `qail`'s `wide` with the jsonb column read by simd-json.
pub fn qail_json_simd() {
    child_main(Driver::QailJsonSimd, async |_, ctx| {
        qail_json::simd(ctx).await.map(Some)
    });
}

/// `qail-bench-qail-deadpool`: `qail`'s pool workloads on deadpool.
pub fn qail_deadpool() {
    child_main(Driver::QailDeadpool, async |w, ctx| {
        pools::deadpool(false, w, ctx).await.map(Some)
    });
}

/// `qail-bench-qail-deadpool-clean`: `qail-deadpool` resetting the session per acquire.
pub fn qail_deadpool_clean() {
    child_main(Driver::QailDeadpoolClean, async |w, ctx| {
        pools::deadpool(true, w, ctx).await.map(Some)
    });
}

/// `qail-bench-qail-bb8`: `qail`'s pool workloads on bb8.
pub fn qail_bb8() {
    child_main(Driver::QailBb8, async |w, ctx| {
        pools::bb8(w, ctx).await.map(Some)
    });
}

/// `qail-bench-qail-reset-tx`: `qail`'s pool workloads on qail-pg's pool resetting only the
/// transaction.
pub fn qail_reset_tx() {
    child_main(Driver::QailResetTx, async |w, ctx| {
        pools::own(PoolReset::Transaction, w, ctx).await.map(Some)
    });
}

/// A driver binary's `main`: parses `--child DRIVER WORKLOAD --url URL --sizes SIZES` (the
/// line the harness passes, usable by hand), runs the workload with `run` on a
/// current-thread runtime and prints the report line; exits with 1 on an error.
fn child_main<F>(driver: Driver, run: F)
where
    F: AsyncFnOnce(Workload, &Ctx) -> Result<Option<Sample>>,
{
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = child_run(driver, &args, run) {
        eprintln!("{}: {e}", driver.binary().unwrap_or("qail-bench"));
        std::process::exit(1);
    }
}

fn child_run<F>(driver: Driver, args: &[String], run: F) -> Result<()>
where
    F: AsyncFnOnce(Workload, &Ctx) -> Result<Option<Sample>>,
{
    let (workload, ctx) = match cli::parse(args)? {
        cli::Command::Child {
            driver: asked,
            workload,
            url,
            sizes,
        } if asked == driver => (workload, Ctx { url, sizes }),
        cli::Command::Child { driver: asked, .. } => {
            return Err(format!(
                "this binary runs the {driver} driver only; {asked} runs in {}",
                asked.binary().unwrap_or("the libpq C program")
            )
            .into());
        }
        cli::Command::Help | cli::Command::Bench(_) => {
            println!("{}", child_usage(driver));
            return Ok(());
        }
    };
    if !driver.has(workload) {
        println!("{}no implementation", child::MISSING);
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    match runtime.block_on(run(workload, &ctx))? {
        Some(mut sample) => {
            Resident::now()?.record(&mut sample);
            println!("{}", child::format_report(&sample));
        }
        None => println!("{}no implementation", child::MISSING),
    }
    Ok(())
}

/// What a driver's binary prints for `--help` or a command line without `--child`.
fn child_usage(driver: Driver) -> String {
    format!(
        "usage: {} --child {driver} WORKLOAD --url URL --sizes SIZES\n\n\
         Runs one workload with the {driver} driver, measured, and prints one report line.\n\
         The harness (qail-bench) starts it once per workload and round; run the benchmark \
         with bench/run.",
        driver.binary().unwrap_or("qail-bench")
    )
}
