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
    /// Anonymous memory resident at the end of the run (heap, stacks), in KiB.
    pub(crate) rss_anon_kib: Option<u64>,
    /// File pages resident at the end of the run (the executable's and the shared
    /// libraries' code and data), in KiB.
    pub(crate) rss_file_kib: Option<u64>,
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

/// This process's resident memory, in KiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Resident {
    /// The peak resident set size (`VmHWM`).
    pub(crate) peak: u64,
    /// Anonymous memory resident now (`RssAnon`): heap and stacks.
    pub(crate) anon: Option<u64>,
    /// File pages resident now (`RssFile`): the executable's and shared libraries'.
    pub(crate) file: Option<u64>,
}

impl Resident {
    /// Reads it from /proc/self/status.
    ///
    /// The peak is `VmHWM`: `ru_maxrss` is carried over from the parent across fork and exec
    /// on Linux, so a child started by the harness would report the harness's own peak.
    /// `getrusage` is the fallback where /proc is missing (and the split is then unknown).
    /// Linux keeps no peak per kind: `anon` and `file` are the split at the time of reading.
    pub(crate) fn now() -> Result<Resident> {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        if let Some(resident) = Resident::parse(&status) {
            return Ok(resident);
        }
        let usage = getrusage(UsageWho::RUSAGE_SELF)?;
        Ok(Resident {
            peak: u64::try_from(usage.max_rss())?,
            anon: None,
            file: None,
        })
    }

    fn parse(status: &str) -> Option<Resident> {
        let kib = |key: &str| {
            let line = status.lines().find_map(|l| l.strip_prefix(key))?;
            line.trim().trim_end_matches("kB").trim().parse().ok()
        };
        Some(Resident {
            peak: kib("VmHWM:")?,
            anon: kib("RssAnon:"),
            file: kib("RssFile:"),
        })
    }

    /// Puts the figures into `sample`.
    pub(crate) fn record(self, sample: &mut Sample) {
        sample.max_rss_kib = Some(self.peak);
        sample.rss_anon_kib = self.anon;
        sample.rss_file_kib = self.file;
    }
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
            rss_anon_kib: None,
            rss_file_kib: None,
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
    fn resident_memory_comes_from_proc_status() {
        let status = "Name:\tx\nVmHWM:\t    6688 kB\nVmRSS:\t6000 kB\nRssAnon:\t    1024 kB\n\
                      RssFile:\t    4976 kB\nRssShmem:\t0 kB\n";
        assert_eq!(
            Resident::parse(status),
            Some(Resident {
                peak: 6688,
                anon: Some(1024),
                file: Some(4976),
            })
        );
        assert_eq!(Resident::parse("Name:\tx\n"), None);
        let own = Resident::now().expect("readable on Linux");
        assert!(own.peak > 0);
        assert!(
            own.file.is_some_and(|k| k > 0),
            "{own:?}: the executable is mapped"
        );
        assert!(
            own.anon.is_some_and(|k| k > 0),
            "{own:?}: the stack is resident"
        );
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
