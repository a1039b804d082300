//! Every measurement is taken in a fresh child process: the harness binary in its `--child`
//! mode for the Rust drivers, the C program for libpq. The child measures itself around the
//! workload and prints one line of `key=value` pairs, or `missing=REASON` when the driver has
//! no way to run the workload.

use std::process::Command;
use std::time::Duration;

use crate::measure::{Counts, Result, Sample};

/// The line a child prints when its driver cannot run the workload.
pub(crate) const MISSING: &str = "missing=";

/// Runs `cmd` and reads the report line it prints on stdout; `Ok(None)` when the driver
/// cannot run the workload.
pub(crate) fn run(mut cmd: Command) -> Result<Option<Sample>> {
    let out = cmd.output().map_err(|e| {
        format!(
            "cannot start {:?}: {e}; build the harness with `cargo build --release` in bench/",
            cmd.get_program()
        )
    })?;
    if !out.status.success() {
        return Err(format!(
            "{:?} failed ({}): {}",
            cmd.get_program(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    let stdout = String::from_utf8(out.stdout)?;
    if stdout.lines().any(|l| l.starts_with(MISSING)) {
        return Ok(None);
    }
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.contains("queries="))
        .ok_or_else(|| format!("{:?} printed no report line", cmd.get_program()))?;
    parse_report(line).map(Some)
}

/// Parses `queries=… rows=… wall_ns=… cpu_ns=… [sys_ns=…] [minflt=…] [p50_ns=… p99_ns=…]
/// [acquire_p50_ns=… acquire_p99_ns=…] [digest=…] [max_rss_kib=…] [rss_anon_kib=…]
/// [rss_file_kib=…]`.
pub(crate) fn parse_report(line: &str) -> Result<Sample> {
    let mut sample = Sample::default();
    let mut counts = Counts::default();
    for pair in line.split_whitespace() {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("malformed report field `{pair}`"))?;
        let n: u64 = value
            .parse()
            .map_err(|_| format!("report field `{key}` is not a number: `{value}`"))?;
        match key {
            "queries" => counts.queries = n,
            "rows" => counts.rows = n,
            "wall_ns" => sample.wall = Duration::from_nanos(n),
            "cpu_ns" => sample.cpu = Duration::from_nanos(n),
            "sys_ns" => sample.sys = Duration::from_nanos(n),
            "minflt" => sample.minflt = n,
            "p50_ns" if n > 0 => sample.p50 = Some(Duration::from_nanos(n)),
            "p99_ns" if n > 0 => sample.p99 = Some(Duration::from_nanos(n)),
            "acquire_p50_ns" if n > 0 => sample.acquire_p50 = Some(Duration::from_nanos(n)),
            "acquire_p99_ns" if n > 0 => sample.acquire_p99 = Some(Duration::from_nanos(n)),
            "digest" => sample.digest = Some(n),
            "max_rss_kib" => sample.max_rss_kib = Some(n),
            "rss_anon_kib" => sample.rss_anon_kib = Some(n),
            "rss_file_kib" => sample.rss_file_kib = Some(n),
            _ => {}
        }
    }
    sample.counts = counts;
    Ok(sample)
}

/// Formats a sample as the report line [`parse_report`] reads.
pub(crate) fn format_report(s: &Sample) -> String {
    let ns = |d: Option<Duration>| d.map_or(0, |d| d.as_nanos());
    let optional = |key: &str, v: Option<u64>| v.map_or(String::new(), |v| format!(" {key}={v}"));
    let digest = optional("digest", s.digest);
    let anon = optional("rss_anon_kib", s.rss_anon_kib);
    let file = optional("rss_file_kib", s.rss_file_kib);
    format!(
        "queries={} rows={} wall_ns={} cpu_ns={} sys_ns={} minflt={} p50_ns={} p99_ns={} \
         acquire_p50_ns={} acquire_p99_ns={}{digest} max_rss_kib={}{anon}{file}",
        s.counts.queries,
        s.counts.rows,
        s.wall.as_nanos(),
        s.cpu.as_nanos(),
        s.sys.as_nanos(),
        s.minflt,
        ns(s.p50),
        ns(s.p99),
        ns(s.acquire_p50),
        ns(s.acquire_p99),
        s.max_rss_kib.unwrap_or(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_round_trips() {
        let s = Sample {
            counts: Counts {
                queries: 10,
                rows: 20,
            },
            wall: Duration::from_nanos(1_000),
            cpu: Duration::from_nanos(500),
            sys: Duration::from_nanos(200),
            minflt: 7,
            p50: Some(Duration::from_nanos(30)),
            p99: None,
            acquire_p50: None,
            acquire_p99: Some(Duration::from_nanos(40)),
            digest: Some(u64::MAX),
            max_rss_kib: Some(4096),
            rss_anon_kib: Some(1000),
            rss_file_kib: None,
        };
        let back = parse_report(&format_report(&s)).expect("own format parses");
        assert_eq!(back.counts, s.counts);
        assert_eq!(back.wall, s.wall);
        assert_eq!(back.cpu, s.cpu);
        assert_eq!(back.sys, s.sys);
        assert_eq!(back.minflt, 7);
        assert_eq!(back.p50, s.p50);
        assert_eq!(back.p99, None);
        assert_eq!(back.max_rss_kib, Some(4096));
        assert_eq!(back.rss_anon_kib, Some(1000));
        assert_eq!(back.rss_file_kib, None);
        assert_eq!(back.acquire_p50, None);
        assert_eq!(back.acquire_p99, s.acquire_p99);
        assert_eq!(back.digest, Some(u64::MAX));
        let without = Sample { digest: None, ..s };
        assert_eq!(
            parse_report(&format_report(&without))
                .expect("parses")
                .digest,
            None
        );
    }

    #[test]
    fn malformed_reports_are_errors() {
        assert!(parse_report("queries=ten").is_err());
        assert!(parse_report("queries").is_err());
    }
}
