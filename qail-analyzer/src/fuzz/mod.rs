//! The differential fuzzer: random valid queries over a schema with NULL-rich data
//! (`schema.sql`) go through the analyzer and through the server (Parse + Describe, then
//! execution). A finding is a column whose type or name differs from the server's, or a
//! column the analyzer calls non-null that returns NULL.
//!
//! The test suite runs a short, seeded run. A long run:
//! `QAIL_FUZZ_QUERIES=100000 QAIL_FUZZ_SEED=7 cargo test -p qail-analyzer --lib fuzz -- --nocapture`
//! (the report, counts per construct, is printed).

mod generate;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use qail_pg::Connection;

use crate::{analyze, type_oid};
use qail_schema::snapshot::Snapshot;

/// What happened to one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Both accept it, the types and names agree and no non-null column returned NULL.
    Agreed,
    /// The server rejects it (the generator's mistake; not counted against the analyzer).
    ServerRejected,
    /// The server rejects it but the analyzer accepts it.
    WronglyAccepted,
    /// The analyzer rejects a query the server accepts.
    AnalyzerRejected,
    /// Both accept it but execution failed (say, a division by zero).
    ExecutionError,
    /// A column's type or name differs from the server's.
    Mismatch,
    /// A column inferred non-null returned NULL.
    Unsound,
}

/// Counts of outcomes.
#[derive(Debug, Default, Clone)]
struct Counts {
    queries: usize,
    agreed: usize,
    server_rejected: usize,
    wrongly_accepted: usize,
    analyzer_rejected: usize,
    execution_errors: usize,
    mismatches: usize,
    unsound: usize,
}

impl Counts {
    fn add(&mut self, o: Outcome) {
        self.queries += 1;
        match o {
            Outcome::Agreed => self.agreed += 1,
            Outcome::ServerRejected => self.server_rejected += 1,
            Outcome::WronglyAccepted => self.wrongly_accepted += 1,
            Outcome::AnalyzerRejected => self.analyzer_rejected += 1,
            Outcome::ExecutionError => self.execution_errors += 1,
            Outcome::Mismatch => self.mismatches += 1,
            Outcome::Unsound => self.unsound += 1,
        }
    }
}

/// A query worth a look, with what went wrong.
#[derive(Debug, Clone)]
struct Finding {
    outcome: Outcome,
    tags: Vec<&'static str>,
    sql: String,
    detail: String,
}

/// A run's result: totals, counts per construct, and the findings (examples of the other
/// outcomes are kept too, a few of each).
#[derive(Debug, Default)]
struct Report {
    total: Counts,
    per_construct: BTreeMap<&'static str, Counts>,
    findings: Vec<Finding>,
}

/// How many examples of each non-finding outcome a report keeps.
const EXAMPLES: usize = 5;

impl Report {
    fn failures(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| matches!(f.outcome, Outcome::Mismatch | Outcome::Unsound))
    }

    fn keep(&mut self, f: Finding) {
        let failure = matches!(f.outcome, Outcome::Mismatch | Outcome::Unsound);
        let same = self
            .findings
            .iter()
            .filter(|g| g.outcome == f.outcome)
            .count();
        if failure || same < EXAMPLES {
            self.findings.push(f);
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<26} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "construct",
            "queries",
            "agreed",
            "srv-rej",
            "ana-rej",
            "wrong-ok",
            "exec-err",
            "mismatch",
            "unsound"
        )?;
        let rows = std::iter::once(("(all)", &self.total))
            .chain(self.per_construct.iter().map(|(k, v)| (*k, v)));
        for (name, c) in rows {
            writeln!(
                f,
                "{name:<26} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
                c.queries,
                c.agreed,
                c.server_rejected,
                c.analyzer_rejected,
                c.wrongly_accepted,
                c.execution_errors,
                c.mismatches,
                c.unsound
            )?;
        }
        for x in &self.findings {
            writeln!(
                f,
                "\n{:?} [{}]\n  {}\n  {}",
                x.outcome,
                x.tags.join(" "),
                x.sql,
                x.detail
            )?;
        }
        Ok(())
    }
}

/// Which generated queries a run keeps, by their constructs.
type Wanted = dyn Fn(&BTreeSet<&str>) -> bool;

/// Runs `queries` generated queries from `seed` against a scratch database; with `only`, the
/// generated queries whose constructs it refuses are skipped (not counted).
async fn run(seed: u64, queries: usize, only: Option<&Wanted>, db_suffix: &str) -> Report {
    let db = format!("qail_fuzz_{}_{db_suffix}", std::process::id());
    let base = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let mut admin = Connection::connect(&base)
        .await
        .expect("connect to DATABASE_URL");
    for step in [
        format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
        format!("CREATE DATABASE {db}"),
    ] {
        admin
            .batch_execute(&step)
            .await
            .expect("create the fuzzer's scratch database");
    }
    let mut conn = Connection::connect(&with_database(&base, &db))
        .await
        .expect("connect to the scratch database");
    conn.batch_execute(include_str!("schema.sql"))
        .await
        .expect("the fuzz schema applies");
    conn.batch_execute("SET statement_timeout = '5s'")
        .await
        .expect("set a statement timeout");
    let snapshot = qail_schema::introspect::pull(&mut conn, &[])
        .await
        .expect("the fuzz schema is pulled");
    let mut generator = generate::Gen::new(seed);
    let mut report = Report::default();
    while report.total.queries < queries {
        let q = generator.query();
        if only.is_some_and(|wanted| !wanted(&q.tags)) {
            continue;
        }
        let (outcome, detail) = one(&mut conn, &snapshot, &q.sql).await;
        report.total.add(outcome);
        for t in &q.tags {
            report.per_construct.entry(t).or_default().add(outcome);
        }
        if report.total.queries % 5000 == 0 {
            // Note: a long run shows it is alive and how it stands.
            eprintln!("{} queries: {:?}", report.total.queries, report.total);
        }
        if outcome != Outcome::Agreed {
            report.keep(Finding {
                outcome,
                tags: q.tags.iter().copied().collect(),
                sql: q.sql,
                detail,
            });
        }
    }
    conn.close().await;
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .await
        .expect("drop the fuzzer's scratch database");
    admin.close().await;
    report
}

/// One query through the analyzer, the server's Describe, and execution.
async fn one(conn: &mut Connection, snapshot: &Snapshot, sql: &str) -> (Outcome, String) {
    let ours = analyze(sql, snapshot);
    let server = match conn.prepare(sql).await {
        Ok(s) => s,
        Err(e) => {
            let outcome = if ours.is_ok() {
                Outcome::WronglyAccepted
            } else {
                Outcome::ServerRejected
            };
            return (outcome, e.to_string());
        }
    };
    let ours = match ours {
        Ok(a) => a,
        Err(d) => {
            let shown: Vec<String> = d.iter().map(|d| crate::render(sql, d)).collect();
            return (Outcome::AnalyzerRejected, shown.join("\n"));
        }
    };
    let want: Vec<(String, u32)> = server
        .columns()
        .iter()
        .map(|c| (c.name().to_string(), c.type_oid()))
        .collect();
    let got: Vec<(String, u32)> = ours
        .columns
        .iter()
        .map(|c| (c.name.clone(), type_oid(&c.ty).unwrap_or(0)))
        .collect();
    if want != got {
        return (
            Outcome::Mismatch,
            format!("server {want:?}\n  analyzer {got:?}"),
        );
    }
    let rows = match conn.query(sql, &[]).await {
        Ok(rows) => rows,
        Err(e) => return (Outcome::ExecutionError, e.to_string()),
    };
    for row in &rows {
        for (i, c) in ours.columns.iter().enumerate() {
            if !c.nullable && row.raw(i).is_none() {
                return (
                    Outcome::Unsound,
                    format!("column {} was inferred non-null and returned NULL", c.name),
                );
            }
        }
    }
    (Outcome::Agreed, String::new())
}

/// The same URL pointing at database `db`.
fn with_database(url: &str, db: &str) -> String {
    let (main, query) = url
        .split_once('?')
        .map_or((url, None), |(m, q)| (m, Some(q)));
    let scheme_end = main.find("://").map_or(0, |i| i + 3);
    let base = match main[scheme_end..].find('/') {
        Some(slash) => &main[..scheme_end + slash],
        None => main,
    };
    match query {
        Some(q) => format!("{base}/{db}?{q}"),
        None => format!("{base}/{db}"),
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test]
async fn generated_queries_agree_with_the_server() {
    let queries = usize::try_from(env_number("QAIL_FUZZ_QUERIES", 300)).expect("a count");
    let seed = env_number("QAIL_FUZZ_SEED", 1);
    let report = run(seed, queries, None, "main").await;
    println!("seed {seed}, {queries} queries\n{report}");
    let failures: Vec<String> = report
        .failures()
        .map(|f| format!("{:?}: {}\n  {}", f.outcome, f.sql, f.detail))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} generated queries disagree with the server:\n{}",
        failures.len(),
        queries,
        failures.join("\n\n")
    );
    // The generator must mostly produce queries the server accepts, or the run proves little.
    let valid = report.total.queries - report.total.server_rejected - report.total.wrongly_accepted;
    assert!(
        valid * 10 >= queries * 9,
        "only {valid} of {queries} generated queries are valid:\n{report}"
    );
}

#[tokio::test]
async fn the_fuzzer_finds_whole_row_references_typed_non_null() {
    crate::expr::UNSOUND_WHOLE_ROW.set(true);
    // Note: only queries with whole-row references and an outer join run; the others cannot
    // show this rule.
    let relevant = |tags: &BTreeSet<&str>| {
        tags.contains("whole-row")
            && ["left-join", "right-join", "full-join"]
                .iter()
                .any(|j| tags.contains(j))
    };
    let report = run(1, 120, Some(&relevant), "self").await;
    crate::expr::UNSOUND_WHOLE_ROW.set(false);
    let found = report
        .failures()
        .filter(|f| f.outcome == Outcome::Unsound && f.tags.contains(&"whole-row"))
        .count();
    assert!(
        found > 0,
        "with whole-row references typed non-null, the fuzzer found nothing:\n{report}"
    );
}
