//! How long the analyzer takes on a realistic 40-line report query (target: under 1 ms,
//! since every `qail!` invocation pays it at compile time). "parse only" is sqlparser alone.
//!
//! Before the criterion runs, every query of the analyzer corpus is timed on its own (the
//! median of 30 runs each) and the median and the maximum over the corpus are printed, with
//! the slowest query: no corpus query may take more than 2 ms.
#![allow(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use qail_analyzer::analyze;
use qail_schema::Snapshot;

const REPORT: &str = "
WITH recent AS (
    SELECT b.sailing_id,
           count(*) AS bookings,
           sum(b.seats) AS seats,
           sum(b.total) AS revenue
    FROM bookings b
    WHERE b.booked_at > now() - $1::interval
      AND b.status <> 'cancelled'
    GROUP BY b.sailing_id
)
SELECT c.id,
       c.name,
       o.name AS origin,
       o.country AS origin_country,
       d.name AS destination,
       op.name AS operator,
       op.rating,
       v.name AS vessel,
       v.kind,
       s.departs_at,
       s.arrives_at - s.departs_at AS duration,
       s.seats_left,
       COALESCE(r.bookings, 0) AS bookings,
       COALESCE(r.seats, 0) AS seats_sold,
       COALESCE(r.revenue, 0) AS revenue,
       CASE WHEN s.seats_left = 0 THEN 'full'
            WHEN s.seats_left < 10 THEN 'few'
            ELSE 'open' END AS availability,
       lower(o.code) AS origin_code
FROM odyssey_connections c
JOIN harbors o ON o.id = c.origin_harbor_id
JOIN harbors d ON d.id = c.destination_harbor_id
LEFT JOIN operators op ON op.id = c.operator_id
JOIN sailings s ON s.connection_id = c.id
LEFT JOIN vessels v ON v.id = s.vessel_id
LEFT JOIN recent r ON r.sailing_id = s.id
WHERE c.is_enabled
  AND o.country = ANY($2)
  AND s.sail_date BETWEEN $3 AND $4
ORDER BY s.departs_at, c.name
LIMIT $5 OFFSET $6
";

/// The SQL of every corpus case (see tests/it/support.rs for the format).
fn corpus_queries() -> Vec<String> {
    let text = include_str!("../tests/it/corpus.txt");
    let mut out = Vec::new();
    let mut sql: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim_end).chain(std::iter::once("")) {
        if line.trim_start().starts_with('#') {
            continue;
        }
        if line.is_empty() {
            if !sql.is_empty() {
                out.push(sql.join("\n"));
            }
            sql.clear();
        } else if !line.starts_with("params:") && !line.starts_with("cols:") {
            sql.push(line);
        }
    }
    out
}

/// Prints the median and maximum per-query analysis time over the corpus.
fn corpus_timings(snapshot: &Snapshot, queries: &[String]) {
    let mut per_query: Vec<(Duration, &str)> = queries
        .iter()
        .map(|sql| {
            let mut runs: Vec<Duration> = (0..30)
                .map(|_| {
                    let start = Instant::now();
                    let _ = std::hint::black_box(analyze(std::hint::black_box(sql), snapshot));
                    start.elapsed()
                })
                .collect();
            runs.sort();
            (runs[runs.len() / 2], sql.as_str())
        })
        .collect();
    per_query.sort();
    let median = per_query[per_query.len() / 2].0;
    let (max, slowest) = per_query[per_query.len() - 1];
    println!(
        "corpus: {} queries, median {median:?}, max {max:?} (budget 2 ms) for:\n{slowest}",
        per_query.len()
    );
}

fn bench(c: &mut Criterion) {
    let snapshot: Snapshot =
        serde_json::from_str(include_str!("../tests/fixtures/app.schema.json"))
            .expect("the fixture snapshot parses");
    let analysis = analyze(REPORT, &snapshot).expect("the report query checks");
    assert_eq!(analysis.columns.len(), 17);
    let queries = corpus_queries();
    corpus_timings(&snapshot, &queries);
    c.bench_function("parse only", |b| {
        b.iter(|| {
            sqlparser::parser::Parser::parse_sql(
                &sqlparser::dialect::PostgreSqlDialect {},
                std::hint::black_box(REPORT),
            )
        })
    });
    c.bench_function("check 40-line report", |b| {
        b.iter(|| analyze(std::hint::black_box(REPORT), &snapshot))
    });
    c.bench_function("check the whole corpus", |b| {
        b.iter(|| {
            for sql in &queries {
                let _ = analyze(std::hint::black_box(sql), &snapshot);
            }
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
