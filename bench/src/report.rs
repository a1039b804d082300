//! Medians over rounds, and the markdown table: workloads × drivers, with qail's ratio to
//! each peer.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::drivers::Driver;
use crate::measure::{Sample, median};
use crate::workload::Workload;

/// Every sample taken, by workload and driver; `None` marks a workload a driver lacks.
#[derive(Debug, Default)]
pub(crate) struct Results {
    samples: BTreeMap<(Workload, Driver), Vec<Sample>>,
    missing: BTreeMap<(Workload, Driver), String>,
}

/// One row of the table: how to compute the figure from a sample, and which way is better.
struct Metric {
    label: &'static str,
    value: fn(&Sample) -> Option<f64>,
    higher_is_better: bool,
}

fn per_sec(n: u64, s: &Sample) -> Option<f64> {
    let secs = s.wall.as_secs_f64();
    (secs > 0.0).then(|| n as f64 / secs)
}

fn per(n: u64, total_ns: f64) -> Option<f64> {
    (n > 0).then(|| total_ns / n as f64)
}

fn metrics(w: Workload) -> Vec<Metric> {
    let mut m = Vec::new();
    if matches!(
        w,
        Workload::Insert | Workload::Copy | Workload::BulkUnnest | Workload::BulkCopy
    ) {
        m.push(Metric {
            label: "rows/s",
            value: |s| per_sec(s.counts.rows, s),
            higher_is_better: true,
        });
    } else {
        m.push(Metric {
            label: "queries/s",
            value: |s| per_sec(s.counts.queries, s),
            higher_is_better: true,
        });
    }
    if w.is_sequential() {
        m.push(Metric {
            label: "p50 latency, µs",
            value: |s| s.p50.map(|d| d.as_secs_f64() * 1e6),
            higher_is_better: false,
        });
        m.push(Metric {
            label: "p99 latency, µs",
            value: |s| s.p99.map(|d| d.as_secs_f64() * 1e6),
            higher_is_better: false,
        });
    }
    if w.pool_size().is_some() {
        m.extend([
            Metric {
                label: "p50 batch (acquire + 100 queries), µs",
                value: |s| s.p50.map(|d| d.as_secs_f64() * 1e6),
                higher_is_better: false,
            },
            Metric {
                label: "p99 batch (acquire + 100 queries), µs",
                value: |s| s.p99.map(|d| d.as_secs_f64() * 1e6),
                higher_is_better: false,
            },
            Metric {
                label: "p50 acquire wait, µs",
                value: |s| s.acquire_p50.map(|d| d.as_secs_f64() * 1e6),
                higher_is_better: false,
            },
            Metric {
                label: "p99 acquire wait, µs",
                value: |s| s.acquire_p99.map(|d| d.as_secs_f64() * 1e6),
                higher_is_better: false,
            },
        ]);
    }
    m.extend([
        Metric {
            label: "client CPU, µs/query",
            value: |s| per(s.counts.queries, s.cpu.as_secs_f64() * 1e6),
            higher_is_better: false,
        },
        Metric {
            label: "of which user, µs/query",
            value: |s| per(s.counts.queries, s.user().as_secs_f64() * 1e6),
            higher_is_better: false,
        },
        Metric {
            label: "of which system, µs/query",
            value: |s| per(s.counts.queries, s.sys.as_secs_f64() * 1e6),
            higher_is_better: false,
        },
        Metric {
            label: "client CPU, ns/row",
            value: |s| per(s.counts.rows, s.cpu.as_secs_f64() * 1e9),
            higher_is_better: false,
        },
        Metric {
            label: "minor faults/query",
            value: |s| per(s.counts.queries, s.minflt as f64),
            higher_is_better: false,
        },
        Metric {
            label: "peak RSS, MiB",
            value: |s| s.max_rss_kib.map(|k| k as f64 / 1024.0),
            higher_is_better: false,
        },
        Metric {
            label: "resident at end: file pages, MiB",
            value: |s| s.rss_file_kib.map(|k| k as f64 / 1024.0),
            higher_is_better: false,
        },
        Metric {
            label: "resident at end: anonymous, MiB",
            value: |s| s.rss_anon_kib.map(|k| k as f64 / 1024.0),
            higher_is_better: false,
        },
    ]);
    m
}

impl Results {
    /// Records one round's sample.
    pub(crate) fn push(&mut self, w: Workload, d: Driver, s: Sample) {
        self.samples.entry((w, d)).or_default().push(s);
    }

    /// Records that `d` cannot run `w`, and why (no API for it, or the error).
    pub(crate) fn mark_missing(&mut self, w: Workload, d: Driver, why: String) {
        self.missing.entry((w, d)).or_insert(why);
    }

    fn median_of(&self, w: Workload, d: Driver, metric: &Metric) -> Option<f64> {
        let mut values: Vec<f64> = self
            .samples
            .get(&(w, d))?
            .iter()
            .filter_map(metric.value)
            .collect();
        median(&mut values)
    }

    /// Drivers whose row counts for `w` differ from the first driver's: a correctness check.
    pub(crate) fn row_count_mismatches(&self, w: Workload) -> Vec<String> {
        let mut seen: Vec<(Driver, u64, u64)> = Vec::new();
        for ((sw, d), samples) in &self.samples {
            if let Some(s) = samples.first().filter(|_| *sw == w) {
                seen.push((*d, s.counts.queries, s.counts.rows));
            }
        }
        let Some(&(first, q0, r0)) = seen.first() else {
            return Vec::new();
        };
        seen.iter()
            .filter(|&&(_, q, r)| (q, r) != (q0, r0))
            .map(|(d, q, r)| format!("{w}: {d} did {q} queries/{r} rows, {first} {q0}/{r0}"))
            .collect()
    }

    /// The markdown table for `workloads` × `drivers`.
    pub(crate) fn table(&self, workloads: &[Workload], drivers: &[Driver]) -> String {
        let peers: Vec<Driver> = drivers
            .iter()
            .copied()
            .filter(|d| *d != Driver::Qail)
            .collect();
        let show_ratios = drivers.contains(&Driver::Qail);
        let mut out = String::from("| workload | metric |");
        for d in drivers {
            let _ = write!(out, " {d} |");
        }
        if show_ratios {
            for p in &peers {
                let _ = write!(out, " qail vs {p} |");
            }
        }
        out.push_str("\n|---|---|");
        let cols = drivers.len() + if show_ratios { peers.len() } else { 0 };
        out.push_str(&"---:|".repeat(cols));
        out.push('\n');
        for &w in workloads {
            for metric in metrics(w) {
                let _ = write!(out, "| {w} | {} |", metric.label);
                for &d in drivers {
                    let cell = match self.median_of(w, d, &metric) {
                        Some(v) => fmt_value(v),
                        None if self.missing.contains_key(&(w, d)) => "n/a".to_owned(),
                        None => "–".to_owned(),
                    };
                    let _ = write!(out, " {cell} |");
                }
                if show_ratios {
                    let qail = self.median_of(w, Driver::Qail, &metric);
                    for &p in &peers {
                        let ratio = qail.zip(self.median_of(w, p, &metric)).and_then(|(q, p)| {
                            let r = if metric.higher_is_better {
                                q / p
                            } else {
                                p / q
                            };
                            r.is_finite().then_some(r)
                        });
                        let cell = ratio.map_or("–".to_owned(), |r| format!("{r:.2}×"));
                        let _ = write!(out, " {cell} |");
                    }
                }
                out.push('\n');
            }
        }
        out
    }

    /// Whether every run of the nested workloads among `workloads` returned the same payload
    /// (the digest of its first load), whichever driver and strategy: one line saying so, or
    /// one line per run that differs.
    pub(crate) fn payload_notes(&self, workloads: &[Workload]) -> Vec<String> {
        let digests: Vec<(Workload, Driver, Option<u64>)> = self
            .samples
            .iter()
            .filter(|((w, _), _)| w.is_nested() && workloads.contains(w))
            .flat_map(|((w, d), samples)| samples.iter().map(|s| (*w, *d, s.digest)))
            .collect();
        let Some(&(w0, d0, first)) = digests.first() else {
            return Vec::new();
        };
        let differ: Vec<String> = digests
            .iter()
            .filter(|(_, _, d)| *d != first || d.is_none())
            .map(|(w, d, digest)| {
                format!("{w} / {d}: payload digest {digest:?}, {w0} / {d0} {first:?}")
            })
            .collect();
        if differ.is_empty() {
            vec![format!(
                "nested payload: all {} runs returned the same first load (digest {:016x})",
                digests.len(),
                first.unwrap_or(0)
            )]
        } else {
            differ
        }
    }

    /// Why each missing cell is missing, one line each.
    pub(crate) fn missing_notes(&self) -> Vec<String> {
        self.missing
            .iter()
            .map(|((w, d), why)| format!("{w} / {d}: {why}"))
            .collect()
    }
}

/// Three significant figures, thousands separated.
fn fmt_value(v: f64) -> String {
    if v >= 1000.0 {
        let s = format!("{v:.0}");
        let mut out = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(ch);
        }
        out
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::measure::Counts;

    fn sample(queries: u64, wall_ms: u64, cpu_ms: u64) -> Sample {
        Sample {
            counts: Counts {
                queries,
                rows: queries,
            },
            wall: Duration::from_millis(wall_ms),
            cpu: Duration::from_millis(cpu_ms),
            ..Sample::default()
        }
    }

    #[test]
    fn values_are_readable() {
        assert_eq!(fmt_value(1_234_567.8), "1,234,568");
        assert_eq!(fmt_value(123.4), "123");
        assert_eq!(fmt_value(12.34), "12.3");
        assert_eq!(fmt_value(1.234), "1.23");
    }

    #[test]
    fn table_shows_medians_and_ratios_where_higher_is_better() {
        let mut r = Results::default();
        for wall in [1000, 500, 2000] {
            r.push(Workload::Pipeline, Driver::Qail, sample(10_000, wall, 100));
        }
        r.push(Workload::Pipeline, Driver::Sqlx, sample(10_000, 2000, 400));
        r.mark_missing(Workload::Pipeline, Driver::Qail302, "TODO".into());
        let t = r.table(
            &[Workload::Pipeline],
            &[Driver::Qail, Driver::Sqlx, Driver::Qail302],
        );
        // qail: median wall 1 s → 10,000 q/s; sqlx 5,000 q/s → qail 2× better.
        assert!(
            t.contains("| pipeline | queries/s | 10,000 | 5,000 | n/a | 2.00× | – |"),
            "{t}"
        );
        // CPU: qail 10 µs/query, sqlx 40 µs/query → qail 4× better.
        assert!(
            t.contains("| pipeline | client CPU, µs/query | 10.0 | 40.0 | n/a | 4.00× |"),
            "{t}"
        );
    }

    #[test]
    fn nested_payloads_are_compared_across_strategies() {
        let mut r = Results::default();
        let with = |digest| Sample {
            digest: Some(digest),
            ..sample(1, 1, 1)
        };
        r.push(Workload::Nested, Driver::Qail, with(7));
        r.push(Workload::NestedN1, Driver::TokioPostgres, with(7));
        let all = [Workload::Nested, Workload::NestedN1];
        let notes = r.payload_notes(&all);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("all 2 runs"), "{notes:?}");
        r.push(Workload::NestedJoin, Driver::Qail, with(8));
        let notes = r.payload_notes(&[Workload::Nested, Workload::NestedJoin]);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("nested_join / qail"), "{notes:?}");
        assert!(r.payload_notes(&[Workload::Point]).is_empty());
    }

    #[test]
    fn pool_workloads_show_acquire_waits() {
        let labels: Vec<_> = metrics(Workload::Pool4).iter().map(|m| m.label).collect();
        assert!(labels.contains(&"p99 acquire wait, µs"));
        assert!(
            !metrics(Workload::Point)
                .iter()
                .any(|m| m.label.contains("acquire"))
        );
    }

    #[test]
    fn row_count_mismatch_is_reported() {
        let mut r = Results::default();
        r.push(Workload::Join, Driver::Qail, sample(10, 1, 1));
        r.push(Workload::Join, Driver::Sqlx, sample(9, 1, 1));
        assert_eq!(r.row_count_mismatches(Workload::Join).len(), 1);
        assert!(r.row_count_mismatches(Workload::Point).is_empty());
    }
}
