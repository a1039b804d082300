//! Wall time, client CPU time, minor page faults and per-query latency of one driver's run of
//! one workload.
//!
//! Every run is a process of its own (see `child`), so `getrusage(RUSAGE_SELF)` taken around
//! the workload is all the client's work (encoding, decoding, syscalls, the allocator's page
//! faults) of that run, every thread and background task included, and nothing of another
//! driver's.

use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};

/// The error type of the harness: any driver's error, with its message.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The harness's result type.
pub(crate) type Result<T> = std::result::Result<T, BoxError>;

/// What a workload did: queries sent and rows decoded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) queries: u64,
    pub(crate) rows: u64,
}

impl Counts {
    /// Adds another batch's counts.
    pub(crate) fn add(&mut self, queries: u64, rows: u64) {
        self.queries += queries;
        self.rows += rows;
    }
}

/// One measured run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sample {
    pub(crate) counts: Counts,
    pub(crate) wall: Duration,
    pub(crate) cpu: Duration,
    /// The system (kernel) part of `cpu`.
    pub(crate) sys: Duration,
    /// Minor page faults (pages the kernel had to map in).
    pub(crate) minflt: u64,
    /// Per-query latency percentiles, for sequential workloads; per batch (acquire, 100
    /// queries, release) for the pool workloads.
    pub(crate) p50: Option<Duration>,
    pub(crate) p99: Option<Duration>,
    /// Percentiles of the time spent acquiring a pooled connection, for the pool workloads.
    pub(crate) acquire_p50: Option<Duration>,
    pub(crate) acquire_p99: Option<Duration>,
    /// A digest of the payload of the run's first load, for the nested workloads.
    pub(crate) digest: Option<u64>,
    /// Peak resident set size of the whole process in KiB.
    pub(crate) max_rss_kib: Option<u64>,
}

impl Sample {
    /// The user-space part of `cpu`.
    pub(crate) fn user(&self) -> Duration {
        self.cpu.saturating_sub(self.sys)
    }
}

/// What this process has used so far: CPU time (user + system, system) and minor faults.
fn process_usage() -> Result<(Duration, Duration, u64)> {
    let usage = getrusage(UsageWho::RUSAGE_SELF)?;
    let sys = timeval(usage.system_time());
    let minflt = u64::try_from(usage.minor_page_faults()).unwrap_or(0);
    Ok((timeval(usage.user_time()) + sys, sys, minflt))
}

/// Peak resident set size of this process in KiB.
///
/// Read from `VmHWM` in /proc/self/status: `ru_maxrss` is carried over from the parent
/// across fork and exec on Linux, so a child started by the harness would report the
/// harness's own peak. `getrusage` is the fallback where /proc is missing.
pub(crate) fn max_rss_kib() -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(kib) = vm_hwm_kib(&status) {
        return Ok(kib);
    }
    let usage = getrusage(UsageWho::RUSAGE_SELF)?;
    Ok(u64::try_from(usage.max_rss())?)
}

fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

fn timeval(tv: nix::sys::time::TimeVal) -> Duration {
    let secs = u64::try_from(tv.tv_sec()).unwrap_or(0);
    let micros = u64::try_from(tv.tv_usec()).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(micros)
}

/// A running measurement: started after connecting, finished when the workload returns.
pub(crate) struct Meter {
    started: Instant,
    cpu_at_start: Duration,
    sys_at_start: Duration,
    minflt_at_start: u64,
    /// Latencies of sequential queries, pushed by the workload.
    pub(crate) latencies: Latencies,
    /// Waits for a pooled connection, pushed by the pool workloads.
    pub(crate) acquire: Latencies,
}

impl Meter {
    /// Starts the clocks.
    pub(crate) fn start() -> Result<Meter> {
        let (cpu_at_start, sys_at_start, minflt_at_start) = process_usage()?;
        Ok(Meter {
            cpu_at_start,
            sys_at_start,
            minflt_at_start,
            started: Instant::now(),
            latencies: Latencies::default(),
            acquire: Latencies::default(),
        })
    }

    /// Stops the clocks and turns the run into a [`Sample`].
    pub(crate) fn finish(self, counts: Counts) -> Result<Sample> {
        let wall = self.started.elapsed();
        let (cpu, sys, minflt) = process_usage()?;
        let (p50, p99) = self.latencies.percentiles();
        let (acquire_p50, acquire_p99) = self.acquire.percentiles();
        Ok(Sample {
            counts,
            wall,
            cpu: cpu.saturating_sub(self.cpu_at_start),
            sys: sys.saturating_sub(self.sys_at_start),
            minflt: minflt.saturating_sub(self.minflt_at_start),
            p50,
            p99,
            acquire_p50,
            acquire_p99,
            digest: None,
            max_rss_kib: None,
        })
    }
}

/// Latencies of individual sequential queries.
#[derive(Debug, Default)]
pub(crate) struct Latencies(Vec<Duration>);

impl Latencies {
    /// Records one query that started at `since`.
    pub(crate) fn record(&mut self, since: Instant) {
        self.0.push(since.elapsed());
    }

    /// Adds latencies recorded elsewhere (by a spawned task).
    pub(crate) fn extend(&mut self, more: Vec<Duration>) {
        self.0.extend(more);
    }

    fn percentiles(mut self) -> (Option<Duration>, Option<Duration>) {
        if self.0.is_empty() {
            return (None, None);
        }
        self.0.sort_unstable();
        (Some(percentile(&self.0, 50)), Some(percentile(&self.0, 99)))
    }
}

/// The `pct`-th percentile (nearest rank) of sorted, non-empty `sorted`.
pub(crate) fn percentile(sorted: &[Duration], pct: usize) -> Duration {
    let rank = (sorted.len() * pct).div_ceil(100).max(1);
    sorted
        .get(rank - 1)
        .or(sorted.last())
        .copied()
        .unwrap_or_default()
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
pub(crate) fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values.get(mid).copied()
    } else {
        Some((values[mid - 1] + values[mid]) / 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(percentile(&v, 50), Duration::from_micros(50));
        assert_eq!(percentile(&v, 99), Duration::from_micros(99));
        assert_eq!(percentile(&v[..1], 99), Duration::from_micros(1));
    }

    #[test]
    fn peak_rss_comes_from_vm_hwm() {
        assert_eq!(
            vm_hwm_kib("Name:\tx\nVmHWM:\t    6688 kB\nVmRSS:\t1 kB\n"),
            Some(6688)
        );
        assert_eq!(vm_hwm_kib("Name:\tx\n"), None);
        assert!(max_rss_kib().expect("readable on Linux") > 0);
    }

    #[test]
    fn process_cpu_advances_with_work() {
        let before = process_usage().expect("getrusage works on Linux").0;
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i * i));
        }
        std::hint::black_box(x);
        assert!(process_usage().expect("getrusage works on Linux").0 > before);
    }
}
