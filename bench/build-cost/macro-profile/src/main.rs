//! Times the work `qail!` does for the 100 queries of `qail100` outside the compiler: loading the
//! schema snapshot (once per compiler process), parsing each query with sqlparser, and the whole
//! analysis (`qail_analyzer::analyze`, which parses again and resolves types and nullability).
//!
//! Run in the dev profile, as proc macros are built by default (opt-level 0):
//! `cargo run -p macro-profile` from bench/build-cost; `-- N` repeats the query loop N times.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use qail_schema::Snapshot;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let rounds: u32 = std::env::args().nth(1).map_or(Ok(5), |n| n.parse())?;
    let source = std::fs::read_to_string(here.join("../qail100/src/lib.rs"))?;
    let queries = queries(&source);
    let snapshot_path = here.join("../../../qail.schema.json");

    let started = Instant::now();
    let snapshot = Snapshot::load(&snapshot_path)?;
    let load = started.elapsed();

    let mut parse = Duration::ZERO;
    let mut check = Duration::ZERO;
    let mut per_query = vec![Duration::ZERO; queries.len()];
    for _ in 0..rounds {
        for (i, sql) in queries.iter().enumerate() {
            let started = Instant::now();
            Parser::parse_sql(&PostgreSqlDialect {}, sql)?;
            parse += started.elapsed();
            let started = Instant::now();
            if let Err(diagnostics) = qail_analyzer::analyze(sql, &snapshot) {
                return Err(format!("query {} is rejected: {diagnostics:?}", i + 1).into());
            }
            let took = started.elapsed();
            check += took;
            per_query[i] += took;
        }
    }
    let n = u32::try_from(queries.len())?;
    println!("{} queries, {rounds} rounds", queries.len());
    println!("snapshot load (once per rustc): {:>8.2} ms", ms(load));
    println!(
        "sqlparser parse, 100 queries:   {:>8.2} ms",
        ms(parse / rounds)
    );
    println!(
        "qail_analyzer::analyze, 100 queries: {:>7.2} ms (parse included)",
        ms(check / rounds)
    );
    println!(
        "check per query, mean:          {:>8.3} ms",
        ms(check / rounds / n)
    );
    let mut slowest: Vec<(usize, Duration)> = per_query.into_iter().enumerate().collect();
    slowest.sort_by_key(|(_, d)| std::cmp::Reverse(*d));
    for (i, d) in slowest.iter().take(5) {
        println!(
            "  q{:03} {:>6.3} ms  {}",
            i + 1,
            ms(*d / rounds),
            queries[*i]
        );
    }
    Ok(())
}

/// The SQL of every `r#"…"#` literal in the generated crate.
fn queries(source: &str) -> Vec<&str> {
    source
        .split("r#\"")
        .skip(1)
        .filter_map(|rest| rest.split_once("\"#").map(|(sql, _)| sql))
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
