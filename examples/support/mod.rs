//! What the examples share: a connection into the example's own schema, the fixture's DDL,
//! the ferry seed, argument parsing, and printing of timings and tables.
//!
//! Each example includes this file with `#[path = "support/mod.rs"] mod support;`.

pub(crate) mod seed;

use std::error::Error as StdError;
use std::time::Duration;

use qail::{Config, Connection};

/// What the examples' `main` returns.
pub(crate) type Result<T, E = Box<dyn StdError>> = std::result::Result<T, E>;

/// The DDL the snapshot `qail.schema.json` was built from. The examples create the tables they
/// need from it, so the first Describe of every query matches what `qail!` checked.
const FIXTURE: &str = include_str!("../../qail-analyzer/tests/fixtures/app.sql");

/// The server: `DATABASE_URL`, else the local default.
pub(crate) fn url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// The configuration of `DATABASE_URL` with `search_path` set to `schema`, so the unqualified
/// table names of the queries resolve to the example's own tables.
pub(crate) fn config_in(schema: &str) -> Result<Config> {
    let config = Config::parse(&url()).map_err(|e| {
        format!("DATABASE_URL is not a valid connection string ({e}); set it to e.g. postgres://postgres@127.0.0.1:5432/postgres")
    })?;
    Ok(in_schema(config, schema))
}

/// `config` with `search_path` set to `schema` (through the `options` startup parameter).
pub(crate) fn in_schema(config: Config, schema: &str) -> Config {
    let search_path = format!("-c search_path={schema}");
    let options = match &config.options {
        Some(options) => format!("{options} {search_path}"),
        None => search_path,
    };
    config.options(options)
}

/// Connects with `search_path` = `schema`.
pub(crate) async fn connect_in(schema: &str) -> Result<Connection> {
    let config = config_in(schema)?;
    Connection::connect_with(&config).await.map_err(|e| {
        format!(
            "cannot connect to {} ({e}); start PostgreSQL (scripts/example does) or set DATABASE_URL",
            url()
        )
        .into()
    })
}

/// Drops and recreates `schema`, then creates `objects` (types and tables, in order) in it
/// with the fixture's own statements. Running an example twice starts from scratch both times.
pub(crate) async fn recreate_schema(
    conn: &mut Connection,
    schema: &str,
    objects: &[&str],
) -> Result<()> {
    let ddl = fixture_ddl(objects)?;
    conn.batch_execute(&format!(
        "SET client_min_messages = warning;
         DROP SCHEMA IF EXISTS {schema} CASCADE;
         CREATE SCHEMA {schema};
         SET search_path = {schema};
         {ddl}"
    ))
    .await?;
    Ok(())
}

/// The fixture's `CREATE TYPE` / `CREATE TABLE` statements for `objects`, unqualified, so they
/// create the objects in the first schema of the search path.
fn fixture_ddl(objects: &[&str]) -> Result<String> {
    let text: Vec<&str> = FIXTURE
        .lines()
        .filter(|line| !line.trim_start().starts_with("--"))
        .collect();
    let text = text.join("\n");
    let mut ddl = String::new();
    for object in objects {
        let statement = text
            .split(';')
            .map(str::trim)
            .find(|s| {
                let rest = s
                    .strip_prefix("CREATE TABLE ")
                    .or_else(|| s.strip_prefix("CREATE TYPE "));
                rest.and_then(|r| r.split_whitespace().next()) == Some(object)
            })
            .ok_or_else(|| {
                format!("the fixture app.sql has no CREATE TABLE or CREATE TYPE {object}; add it there and regenerate qail.schema.json")
            })?;
        ddl.push_str(statement);
        ddl.push_str(";\n");
    }
    Ok(ddl)
}

/// Command-line arguments: `--name value` options and bare numbers.
pub(crate) struct Args {
    args: Vec<String>,
}

impl Args {
    /// The process's arguments, after checking every `--option` is one of `known`.
    pub(crate) fn parse(known: &[&str], usage: &str) -> Args {
        let args: Vec<String> = std::env::args().skip(1).collect();
        for arg in &args {
            let name = arg.split('=').next().unwrap_or(arg);
            if arg == "--help" || arg == "-h" {
                println!("{usage}");
                std::process::exit(0);
            }
            if name.starts_with("--") && !known.contains(&name) {
                eprintln!("unknown option {arg}\n{usage}");
                std::process::exit(2);
            }
        }
        Args { args }
    }

    /// The text given as `--name VALUE` or `--name=VALUE`, if any; a missing value ends the
    /// process with the usage.
    pub(crate) fn string(&self, name: &str, usage: &str) -> Option<String> {
        let mut found = None;
        let mut iter = self.args.iter();
        while let Some(arg) = iter.next() {
            if arg == name {
                match iter.next() {
                    Some(value) => found = Some(value.clone()),
                    None => {
                        eprintln!("{name} needs a value\n{usage}");
                        std::process::exit(2);
                    }
                }
            } else if let Some(v) = arg.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                found = Some(v.to_owned());
            }
        }
        found
    }

    /// The number given as `--name N`, `--name=N` or (when `positional`) as a bare argument;
    /// `default` when absent. A malformed number ends the process with the usage.
    pub(crate) fn number(&self, name: &str, positional: bool, default: u64, usage: &str) -> u64 {
        let mut found = None;
        let mut iter = self.args.iter();
        while let Some(arg) = iter.next() {
            if arg == name {
                found = iter.next().map(String::as_str);
            } else if let Some(v) = arg.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                found = Some(v);
            } else if positional && !arg.starts_with("--") && arg.parse::<u64>().is_ok() {
                found.get_or_insert(arg.as_str());
            }
        }
        match found.map(|v| v.replace('_', "").parse::<u64>()) {
            None => default,
            Some(Ok(n)) => n,
            Some(Err(_)) => {
                eprintln!("{name} needs a whole number\n{usage}");
                std::process::exit(2);
            }
        }
    }
}

/// The value at percentile `p` (0–100) of sorted samples.
pub(crate) fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or_default()
}

/// A duration in the unit that reads best: µs below 1 ms, ms below 1 s, else s.
pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 0.001 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// A rate such as queries per second, rounded, with thousands separators.
pub(crate) fn per_second(count: usize, elapsed: Duration) -> String {
    let rate = count as f64 / elapsed.as_secs_f64().max(1e-9);
    let rounded = format!("{rate:.0}");
    rounded.parse::<u64>().map_or(rounded, thousands)
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Prints a table: the first column left-aligned, the others right-aligned.
pub(crate) fn print_table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.zip(&widths).enumerate() {
            let pad = " ".repeat(w - cell.chars().count());
            if i == 0 {
                out.push_str(&format!("{cell}{pad}"));
            } else {
                out.push_str(&format!("  {pad}{cell}"));
            }
        }
        println!("{}", out.trim_end());
    };
    line(&mut header.iter().copied());
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    line(&mut rule.iter().map(String::as_str));
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
}

/// A small deterministic pseudo-random generator (xorshift64*): enough to spread seed data
/// and shuffle run orders without a dependency.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced by a fixed odd constant).
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next value.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        let n64 = u64::try_from(n).unwrap_or(u64::MAX);
        usize::try_from(self.next() % n64).expect("a value below a usize fits a usize")
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_has_the_ferry_tables() {
        let ddl = fixture_ddl(&["harbors", "operators", "odyssey_connections"]).unwrap();
        assert!(ddl.starts_with("CREATE TABLE harbors ("));
        assert!(ddl.contains("CREATE TABLE odyssey_connections ("));
        assert!(fixture_ddl(&["nope"]).is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
        let samples: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(percentile(&samples, 50), Duration::from_micros(50));
        assert_eq!(percentile(&samples, 99), Duration::from_micros(99));
    }
}
