//! The report: medians over rounds, one markdown table of every figure and one of qail's
//! ratios to the best peer.

use std::fmt::Write as _;
use std::time::Duration;

use crate::load::Sample;
use crate::{Options, Run};

/// A figure of a sample, its row label, and whether more is better.
struct Metric {
    label: &'static str,
    value: fn(&Sample) -> Option<f64>,
    digits: usize,
}

const METRICS: &[Metric] = &[
    Metric {
        label: "requests/s",
        value: |s| Some(s.rps()),
        digits: 0,
    },
    Metric {
        label: "latency p50, ms",
        value: |s| Some(s.latency_ms(0.5)),
        digits: 2,
    },
    Metric {
        label: "latency p99, ms",
        value: |s| Some(s.latency_ms(0.99)),
        digits: 2,
    },
    Metric {
        label: "server CPU, µs/request",
        value: |s| Some(s.cpu_us_per_req()),
        digits: 1,
    },
    Metric {
        label: "of which user space, µs/request",
        value: |s| Some(s.cpu_user * 1e6 / s.requests as f64),
        digits: 1,
    },
    Metric {
        label: "requests per server CPU-second",
        value: requests_per_cpu_second,
        digits: 0,
    },
    Metric {
        label: "PostgreSQL CPU, µs/request",
        value: |s| s.db_cpu.map(|c| c * 1e6 / s.requests as f64),
        digits: 1,
    },
    Metric {
        label: "load generator CPU, µs/request",
        value: |s| Some(s.client_cpu * 1e6 / s.requests as f64),
        digits: 1,
    },
    Metric {
        label: "server minor faults/request",
        value: |s| Some(s.faults as f64 / s.requests as f64),
        digits: 3,
    },
    Metric {
        label: "server peak RSS, MiB",
        value: |s| Some(s.peak_rss_kib as f64 / 1024.0),
        digits: 1,
    },
];

fn requests_per_cpu_second(s: &Sample) -> Option<f64> {
    (s.cpu > 0.0).then(|| s.requests as f64 / s.cpu)
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.retain(|x| x.is_finite());
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

/// Thousands separated by commas for whole numbers, else `digits` decimals.
fn number(x: f64, digits: usize) -> String {
    if digits > 0 {
        return format!("{x:.digits$}");
    }
    let whole = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 { format!("-{out}") } else { out }
}

/// The median of `metric` for one driver, test and concurrency.
fn figure(runs: &[Run], driver: &str, test: &str, c: usize, metric: &Metric) -> Option<f64> {
    median(
        runs.iter()
            .filter(|r| r.driver == driver && r.test == test && r.concurrency == c)
            .filter_map(|r| (metric.value)(&r.sample))
            .collect(),
    )
}

/// The report of a run.
pub fn table(o: &Options, runs: &[Run], took: Duration, load_avg: &str) -> String {
    let mut out = String::new();
    let qail: Vec<&str> = o
        .drivers
        .iter()
        .filter(|d| d.qail)
        .map(|d| d.name)
        .collect();
    let peers: Vec<&str> = o
        .drivers
        .iter()
        .filter(|d| !d.qail)
        .map(|d| d.name)
        .collect();
    let _ = writeln!(
        out,
        "Rounds: {} (drivers in rotated order, each a fresh server process per round), medians. \
         Each load: {} s warm-up, {} s measured. Connections: {} per server on shared clients, \
         {} per exclusive pool. Load average at start: {load_avg}. Run took {:.0} s.\n",
        o.rounds,
        o.warmup.as_secs_f64(),
        o.duration.as_secs_f64(),
        o.shared,
        o.exclusive,
        took.as_secs_f64()
    );
    // The summary: qail against the best peer on the two figures the goal names (the ferry
    // page has its own, `page_table`).
    if !o.ferry {
        peer_summary(&mut out, o, runs, &qail, &peers);
        driver_part(&mut out, o, runs, &qail, &peers);
    }
    every_figure(&mut out, o, runs);
    out
}

fn peer_summary(out: &mut String, o: &Options, runs: &[Run], qail: &[&str], peers: &[&str]) {
    let _ = write!(out, "| test | concurrency |");
    for q in qail {
        let _ = write!(
            out,
            " {q}: requests/s vs best peer | {q}: requests per CPU-s vs best peer |"
        );
    }
    let _ = writeln!(out);
    let _ = write!(out, "|---|---:|");
    for _ in qail {
        let _ = write!(out, "---:|---:|");
    }
    let _ = writeln!(out);
    for &(test, _) in &o.tests {
        for &c in &o.concurrency {
            let _ = write!(out, "| {test} | {c} |");
            for q in qail {
                for metric in [&METRICS[0], &METRICS[5]] {
                    let best = peers
                        .iter()
                        .copied()
                        .filter_map(|p| Some((p, figure(runs, p, test, c, metric)?)))
                        .max_by(|a, b| a.1.total_cmp(&b.1));
                    let mine = figure(runs, q, test, c, metric);
                    let cell = match (mine, best) {
                        (Some(m), Some((p, b))) if b > 0.0 => format!("{:.2}× ({p})", m / b),
                        _ => "–".into(),
                    };
                    let _ = write!(out, " {cell} |");
                }
            }
            let _ = writeln!(out);
        }
    }
    let _ = writeln!(out);
}

/// The driver's part of each test: the server's CPU per request less that of the same
/// server's `json` (no database work, the same code for every driver) at the same
/// concurrency, and what qail's better server's part would have to be for 1.2× the best
/// peer's requests per CPU-second, the floor unchanged. Only when `json` was measured.
fn driver_part(out: &mut String, o: &Options, runs: &[Run], qail: &[&str], peers: &[&str]) {
    const GOAL: f64 = 1.2;
    if !o.tests.iter().any(|(t, _)| *t == "json") {
        return;
    }
    let cpu = &METRICS[3];
    let _ = writeln!(
        out,
        "Server CPU per request less the same server's `json` (µs; the floor is `json`'s, \
         median of the drivers): the driver's part, in brackets its user-space part. `needed` is qail's part for {GOAL}× the best \
         peer's requests per CPU-second: (floor + best peer's part) / {GOAL} − floor; a last \
         column at or below 1 meets it.\n"
    );
    let _ = write!(out, "| test | c | floor |");
    for d in &o.drivers {
        let _ = write!(out, " {} |", d.name);
    }
    let _ = writeln!(
        out,
        " best peer's part | needed | needed ÷ best peer's part | qail's best part ÷ needed |"
    );
    let _ = write!(out, "|---|---:|---:|");
    for _ in &o.drivers {
        let _ = write!(out, "---:|");
    }
    let _ = writeln!(out, "---|---:|---:|---:|");
    for &(test, _) in o.tests.iter().filter(|(t, _)| *t != "json") {
        for &c in &o.concurrency {
            let part =
                |d: &str| Some(figure(runs, d, test, c, cpu)? - figure(runs, d, "json", c, cpu)?);
            let floor = median(
                o.drivers
                    .iter()
                    .filter_map(|d| figure(runs, d.name, "json", c, cpu))
                    .collect(),
            );
            let _ = write!(
                out,
                "| {test} | {c} | {} |",
                floor.map_or("n/a".into(), |x| number(x, 1))
            );
            let user = &METRICS[4];
            let user_part =
                |d: &str| Some(figure(runs, d, test, c, user)? - figure(runs, d, "json", c, user)?);
            for d in &o.drivers {
                let cell = match (part(d.name), user_part(d.name)) {
                    (Some(p), Some(u)) => format!("{} ({})", number(p, 1), number(u, 1)),
                    _ => "n/a".into(),
                };
                let _ = write!(out, " {cell} |");
            }
            // The best peer: the fewest µs of server CPU per request in all.
            let best = peers
                .iter()
                .copied()
                .filter_map(|p| Some((p, figure(runs, p, test, c, cpu)?, part(p)?)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let mine = qail.iter().filter_map(|q| part(q)).min_by(f64::total_cmp);
            match (best, floor) {
                (Some((p, total, peer_part)), Some(floor)) => {
                    let needed = total / GOAL - floor;
                    let (of_peer, ratio) = if needed > 0.0 {
                        let of_peer = if peer_part > 0.0 {
                            format!("{:.2}×", needed / peer_part)
                        } else {
                            "–".into()
                        };
                        (
                            of_peer,
                            mine.map_or("–".into(), |m| format!("{:.2}", m / needed)),
                        )
                    } else {
                        // Note: the floor alone is over the budget; no driver part meets it.
                        ("unreachable".into(), "unreachable".into())
                    };
                    let _ = writeln!(
                        out,
                        " {} ({p}) | {} | {of_peer} | {ratio} |",
                        number(peer_part, 1),
                        number(needed, 1)
                    );
                }
                _ => {
                    let _ = writeln!(out, " – | – | – | – |");
                }
            }
        }
    }
    let _ = writeln!(out);
}

fn every_figure(out: &mut String, o: &Options, runs: &[Run]) {
    let _ = write!(out, "| test | c | metric |");
    for d in &o.drivers {
        let _ = write!(out, " {} |", d.name);
    }
    let _ = writeln!(out);
    let _ = write!(out, "|---|---:|---|");
    for _ in &o.drivers {
        let _ = write!(out, "---:|");
    }
    let _ = writeln!(out);
    for &(test, _) in &o.tests {
        for &c in &o.concurrency {
            for metric in METRICS {
                let _ = write!(out, "| {test} | {c} | {} |", metric.label);
                for d in &o.drivers {
                    let cell = figure(runs, d.name, test, c, metric)
                        .map_or("n/a".into(), |x| number(x, metric.digits));
                    let _ = write!(out, " {cell} |");
                }
                let _ = writeln!(out);
            }
        }
    }
    let errors: Vec<String> = runs
        .iter()
        .filter(|r| r.sample.errors > 0)
        .map(|r| {
            format!(
                "{} {} c={}: {}",
                r.driver, r.test, r.concurrency, r.sample.errors
            )
        })
        .collect();
    if !errors.is_empty() {
        let _ = writeln!(
            out,
            "\nErrors (non-200 responses or failed connections): {}",
            errors.join("; ")
        );
    }
}

/// The ferry page's summary: each style's medians and its ratio to the first style
/// (`qail-prepared`), and its round trips per page.
pub fn page_table(o: &Options, runs: &[Run], round_trips: &[(&str, u64)]) -> String {
    let mut out = String::new();
    let Some(base) = o.drivers.first().map(|d| d.name) else {
        return out;
    };
    let _ = writeln!(
        out,
        "| style | c | requests/s | × {base} | p50, ms | p99, ms | server CPU, µs/page | × {base} | PostgreSQL CPU, µs/page | round trips/page |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let m = |i: usize, d: &str, c: usize| figure(runs, d, "page", c, &METRICS[i]);
    let show = |x: Option<f64>, digits: usize| x.map_or("n/a".into(), |x| number(x, digits));
    let ratio = |x: Option<f64>, b: Option<f64>| match (x, b) {
        (Some(x), Some(b)) if b > 0.0 => format!("{:.2}", x / b),
        _ => "–".into(),
    };
    for &c in &o.concurrency {
        for d in &o.drivers {
            let trips = round_trips
                .iter()
                .find(|(name, _)| *name == d.name)
                .map_or("n/a".into(), |(_, n)| n.to_string());
            let _ = writeln!(
                out,
                "| {} | {c} | {} | {} | {} | {} | {} | {} | {} | {trips} |",
                d.name,
                show(m(0, d.name, c), 0),
                ratio(m(0, d.name, c), m(0, base, c)),
                show(m(1, d.name, c), 2),
                show(m(2, d.name, c), 2),
                show(m(3, d.name, c), 1),
                ratio(m(3, d.name, c), m(3, base, c)),
                show(m(6, d.name, c), 1),
            );
        }
    }
    out
}
