//! Command-line parsing.

use std::path::PathBuf;

use crate::drivers::Driver;
use crate::measure::Result;
use crate::workload::{Sizes, Workload};

/// Printed by `--help`.
pub(crate) const USAGE: &str = "\
usage: qail-bench [WORKLOAD ...] [options]

Workloads (default: all): point pipeline_atomic pipeline pipeline_in_place join wide params16
                           pool10 insert copy search bulk_unnest bulk_copy nested nested_join
                           nested_n1 pool4 tasks1000 tasks1000_shared

Every driver runs every workload in a fresh process of its own, once per round: the
driver's own binary next to this one (qail-bench-DRIVER; qail-bench-qail-pg-302 for
qail-pg-3.0.2), or the C program for libpq. `--child DRIVER WORKLOAD --url URL --sizes SIZES`
runs one measured run by hand, here or in the driver's binary.

Options:
  --rounds N             rounds, interleaved across drivers (default 5, at least 1)
  --drivers a,b,...      qail, qail-sql, tokio-postgres, sqlx, qail-pg-3.0.2, libpq, and the
                         variants of qail that differ in one part: qail-json-serde,
                         qail-json-simd (wide), qail-deadpool, qail-deadpool-clean,
                         qail-bb8, qail-reset-tx (pool10, pool4)
                         (default: all; each runs the workloads it has)
  --full                 full sizes: 1,000,000 pipelined queries, 10x the quick run elsewhere
  --scale F              multiply every size by F (after --full)
  --pipeline-queries N   queries in the pipeline workload
  --no-warmup            skip the unrecorded 10% warm-up pass
  --out FILE             also write the markdown report to FILE
  --url URL              benchmark database (default: DATABASE_URL's server, database
                         qail_bench, sslmode=disable unless DATABASE_URL sets it)
";

/// What the command line asks for.
#[derive(Debug)]
pub(crate) enum Command {
    /// Run the benchmark.
    Bench(Options),
    /// Internal: one driver's run of one workload, in a child process.
    Child {
        driver: Driver,
        workload: Workload,
        url: String,
        sizes: Sizes,
    },
    /// Print usage.
    Help,
}

/// Options of a benchmark run.
#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) workloads: Vec<Workload>,
    pub(crate) drivers: Vec<Driver>,
    pub(crate) rounds: usize,
    pub(crate) sizes: Sizes,
    pub(crate) warmup: bool,
    pub(crate) out: Option<PathBuf>,
    pub(crate) url: String,
}

impl Options {
    /// One line naming the sizes of this run.
    pub(crate) fn sizes_line(&self) -> String {
        let s = &self.sizes;
        format!(
            "Sizes per run: point {}, pipeline, pipeline_atomic and pipeline_in_place {} \
             (batches of {}), join {}, wide {} × 1,000 rows, params16 {}, pool10 {} (10 tasks, \
             batches of 100), insert/copy {} × 100 rows, search {}, bulk_unnest/bulk_copy {} rows, \
             nested* {} loads of 50 harbors, pool4 {} (10 tasks, a pool of 4), tasks1000 and \
             tasks1000_shared {} (1,000 tasks, 10 connections).",
            s.point,
            s.pipeline,
            s.pipeline_batch,
            s.join,
            s.wide,
            s.params16,
            s.pool,
            s.insert_batches,
            s.search,
            s.bulk_rows,
            s.nested,
            s.pool,
            s.pool
        )
    }
}

/// The benchmark database on `DATABASE_URL`'s server (default 127.0.0.1:5432, user postgres),
/// with `sslmode=disable` unless the URL sets a mode: every driver then speaks plain TCP
/// (with `prefer`, libpq and qail would encrypt and the peers built without TLS would not).
pub(crate) fn default_url(database_url: Option<&str>) -> String {
    let url = database_url.unwrap_or("postgres://postgres@127.0.0.1:5432");
    let (base, query) = match url.split_once('?') {
        Some((b, q)) if q.contains("sslmode=") => (b, format!("?{q}")),
        Some((b, q)) => (b, format!("?{q}&sslmode=disable")),
        None => (url, "?sslmode=disable".to_owned()),
    };
    let server = match base.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('/') {
            Some((authority, _db)) => format!("{scheme}://{authority}"),
            None => base.to_owned(),
        },
        None => base.to_owned(),
    };
    format!("{server}/qail_bench{query}")
}

fn value<'a>(it: &mut impl Iterator<Item = &'a String>, flag: &str) -> Result<&'a String> {
    it.next()
        .ok_or_else(|| format!("{flag} needs a value; see --help").into())
}

fn number<T: std::str::FromStr>(s: &str, flag: &str) -> Result<T> {
    s.parse()
        .map_err(|_| format!("{flag} takes a number, not `{s}`; see --help").into())
}

/// Parses the arguments (without the program name).
pub(crate) fn parse(args: &[String]) -> Result<Command> {
    let env_url = std::env::var("DATABASE_URL").ok();
    let mut opts = Options {
        workloads: Vec::new(),
        drivers: Driver::ALL.to_vec(),
        rounds: 5,
        sizes: Sizes::quick(),
        warmup: true,
        out: None,
        url: default_url(env_url.as_deref()),
    };
    let (mut full, mut scale, mut pipeline) = (false, 1.0f64, None::<usize>);
    let mut child = None;
    let mut child_sizes = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--rounds" => opts.rounds = number(value(&mut it, arg)?, arg)?,
            "--drivers" => {
                opts.drivers = value(&mut it, arg)?
                    .split(',')
                    .map(str::parse)
                    .collect::<std::result::Result<_, _>>()?;
            }
            "--full" => full = true,
            "--scale" => scale = number(value(&mut it, arg)?, arg)?,
            "--pipeline-queries" => pipeline = Some(number(value(&mut it, arg)?, arg)?),
            "--no-warmup" => opts.warmup = false,
            "--out" => opts.out = Some(PathBuf::from(value(&mut it, arg)?)),
            "--url" => opts.url = value(&mut it, arg)?.clone(),
            "--child" => {
                let driver = value(&mut it, arg)?.parse::<Driver>()?;
                let workload = value(&mut it, arg)?.parse::<Workload>()?;
                child = Some((driver, workload));
            }
            "--sizes" => child_sizes = Some(Sizes::from_arg(value(&mut it, arg)?)?),
            flag if flag.starts_with('-') => {
                return Err(format!("unknown option `{flag}`; see --help").into());
            }
            w => opts.workloads.push(w.parse()?),
        }
    }
    if let Some((driver, workload)) = child {
        return Ok(Command::Child {
            driver,
            workload,
            url: opts.url,
            sizes: child_sizes.ok_or("--child needs --sizes")?,
        });
    }
    if opts.rounds == 0 {
        return Err("--rounds must be at least 1".into());
    }
    if opts.workloads.is_empty() {
        opts.workloads = Workload::ALL.to_vec();
    }
    opts.workloads.sort();
    opts.workloads.dedup();
    opts.drivers.sort();
    opts.drivers.dedup();
    let base = if full { Sizes::full() } else { Sizes::quick() };
    opts.sizes = base.scaled(scale);
    if let Some(n) = pipeline {
        opts.sizes.pipeline = n.max(opts.sizes.pipeline_batch);
    }
    Ok(Command::Bench(opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn default_url_keeps_the_server_and_options() {
        assert_eq!(
            default_url(None),
            "postgres://postgres@127.0.0.1:5432/qail_bench?sslmode=disable"
        );
        assert_eq!(
            default_url(Some("postgres://u:p@db:6432/app?sslmode=require")),
            "postgres://u:p@db:6432/qail_bench?sslmode=require"
        );
        assert_eq!(
            default_url(Some("postgres://u@db/app?application_name=b")),
            "postgres://u@db/qail_bench?application_name=b&sslmode=disable"
        );
    }

    #[test]
    fn parses_workloads_drivers_and_sizes() {
        let Ok(Command::Bench(o)) =
            parse(&args("join point --rounds 7 --drivers sqlx,qail --full"))
        else {
            panic!("expected a bench command");
        };
        assert_eq!(o.workloads, vec![Workload::Point, Workload::Join]);
        assert_eq!(o.drivers, vec![Driver::Qail, Driver::Sqlx]);
        assert_eq!(o.rounds, 7);
        assert_eq!(o.sizes.pipeline, 1_000_000);
    }

    #[test]
    fn parses_a_child_run() {
        let sizes = Sizes::quick().to_arg();
        let line = format!("--child qail wide --url postgres://h/qail_bench --sizes {sizes}");
        let Ok(Command::Child {
            driver,
            workload,
            url,
            sizes: s,
        }) = parse(&args(&line))
        else {
            panic!("expected a child command");
        };
        assert_eq!((driver, workload), (Driver::Qail, Workload::Wide));
        assert_eq!(url, "postgres://h/qail_bench");
        assert_eq!(s.to_arg(), sizes);
        assert!(parse(&args("--child qail wide")).is_err());
    }

    #[test]
    fn rejects_mistakes_with_a_hint() {
        for bad in [
            "--rounds",
            "--rounds x",
            "--rounds 0",
            "nope",
            "--drivers pgx",
            "--frob",
        ] {
            let err = parse(&args(bad)).expect_err(bad).to_string();
            assert!(
                err.contains("see --help")
                    || err.contains("choose from")
                    || err.contains("at least"),
                "{err}"
            );
        }
    }
}
