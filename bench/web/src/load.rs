//! The load: `concurrency` HTTP/1.1 keep-alive connections, each sending its next request as
//! soon as the previous response's body is in, for a warm-up and then the measured time. The
//! server's CPU time and page faults come from `/proc/PID/stat` read at the start and end of
//! the measured time, the PostgreSQL backends' from the `/proc` entries of the benchmark
//! database's client backends (found through `pg_stat_activity` with `psql`).

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::header::HOST;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::Error;

/// A process's counters, as `/proc/PID/stat` has them.
#[derive(Clone, Copy, Default)]
struct Stat {
    /// User + system time, clock ticks.
    ticks: u64,
    /// User time alone, clock ticks.
    user: u64,
    /// Minor page faults.
    minflt: u64,
}

fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Note: the fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = text.get(text.rfind(')')? + 2..)?.split(' ').collect();
    let field = |i: usize| fields.get(i)?.parse::<u64>().ok();
    // Fields 10 (minflt), 14 (utime) and 15 (stime) of proc(5), counted from 3 here.
    Some(Stat {
        minflt: field(7)?,
        ticks: field(11)? + field(12)?,
        user: field(11)?,
    })
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 when it cannot say).
fn ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// The server process measured.
pub struct Proc {
    pid: u32,
}

impl Proc {
    /// The process `pid`.
    pub fn of(pid: u32) -> Proc {
        Proc { pid }
    }
}

/// The client backends of the benchmark database, by `psql` on the server's maintenance
/// database (so its own backend is not among them).
fn backends(db: &str) -> Vec<u32> {
    let base = db.split('?').next().unwrap_or(db);
    let Some((server, name)) = base.rsplit_once('/') else {
        return Vec::new();
    };
    // Note: the name is one of the runner's own (`qail_bench_web`, `qail_bench`).
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Vec::new();
    }
    let out = Command::new("psql")
        .arg(format!("{server}/postgres"))
        .arg("-Atqc")
        .arg(format!(
            "SELECT pid FROM pg_stat_activity \
             WHERE datname = '{name}' AND backend_type = 'client backend'"
        ))
        .output();
    out.ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// One load's figures.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// Responses completed in the measured time.
    pub requests: u64,
    /// Responses other than 200, and connections that failed.
    pub errors: u64,
    /// The measured time, seconds.
    pub seconds: f64,
    /// Latencies of the responses counted, µs, sorted.
    pub latencies: Vec<u32>,
    /// The server's CPU time, seconds.
    pub cpu: f64,
    /// The server's user-space CPU time (the rest of `cpu` is the kernel's), seconds.
    pub cpu_user: f64,
    /// The server's minor page faults.
    pub faults: u64,
    /// The PostgreSQL backends' CPU time, seconds (`None` when `/proc` or `psql` could not say).
    pub db_cpu: Option<f64>,
    /// The load generator's own CPU time, seconds.
    pub client_cpu: f64,
    /// The server's peak resident set, KiB (`VmHWM`, at the end of the load).
    pub peak_rss_kib: u64,
}

impl Sample {
    /// Requests per second.
    pub fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds
    }

    /// The latency at quantile `q`, ms.
    pub fn latency_ms(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies.len() - 1) as f64 * q).round() as usize;
        f64::from(self.latencies[i]) / 1000.0
    }

    /// p99 latency, ms.
    pub fn p99_ms(&self) -> f64 {
        self.latency_ms(0.99)
    }

    /// The server's CPU time per request, µs.
    pub fn cpu_us_per_req(&self) -> f64 {
        self.cpu * 1e6 / self.requests as f64
    }
}

fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// What each connection's loop counted.
#[derive(Default)]
struct Counted {
    requests: u64,
    errors: u64,
    latencies: Vec<u32>,
}

/// Loads `path` on `addr` with `concurrency` connections: `warmup`, then `duration` measured.
pub async fn run(
    addr: SocketAddr,
    path: &str,
    concurrency: usize,
    warmup: Duration,
    duration: Duration,
    server: &Proc,
    db: &str,
) -> Result<Sample, Error> {
    let start = Instant::now();
    let from = start + warmup;
    let until = from + duration;
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| tokio::spawn(connection(addr, path.to_owned(), from, until)))
        .collect();
    tokio::time::sleep_until(from).await;
    let pids = backends(db);
    let db_before: Vec<Option<Stat>> = pids.iter().map(|p| stat(*p)).collect();
    let before = stat(server.pid).ok_or("the server's /proc/PID/stat")?;
    let me_before = stat(std::process::id()).unwrap_or_default();
    let t0 = Instant::now();
    tokio::time::sleep_until(until).await;
    let after = stat(server.pid).ok_or("the server's /proc/PID/stat")?;
    let me_after = stat(std::process::id()).unwrap_or_default();
    let seconds = t0.elapsed().as_secs_f64();
    let db_after: Vec<Option<Stat>> = pids.iter().map(|p| stat(*p)).collect();
    let peak_rss_kib = peak_rss_kib(server.pid);
    let mut sample = Sample {
        seconds,
        ..Sample::default()
    };
    for task in tasks {
        let counted = task.await?;
        sample.requests += counted.requests;
        sample.errors += counted.errors;
        sample.latencies.extend(counted.latencies);
    }
    sample.latencies.sort_unstable();
    let hz = ticks_per_second();
    sample.cpu = (after.ticks - before.ticks) as f64 / hz;
    sample.cpu_user = after.user.saturating_sub(before.user) as f64 / hz;
    sample.faults = after.minflt - before.minflt;
    sample.client_cpu = me_after.ticks.saturating_sub(me_before.ticks) as f64 / hz;
    sample.peak_rss_kib = peak_rss_kib;
    let db_ticks: u64 = db_before
        .iter()
        .zip(&db_after)
        .filter_map(|(b, a)| Some(a.as_ref()?.ticks.saturating_sub(b.as_ref()?.ticks)))
        .sum();
    sample.db_cpu = (!pids.is_empty()).then(|| db_ticks as f64 / hz);
    if sample.requests == 0 {
        return Err(format!("no response to {path} in the measured time").into());
    }
    Ok(sample)
}

/// One keep-alive connection's loop until `until`; responses completed from `from` on count.
async fn connection(addr: SocketAddr, path: String, from: Instant, until: Instant) -> Counted {
    let mut counted = Counted::default();
    while Instant::now() < until {
        // Note: a connection the server closed is opened again; each failure counts.
        if requests(addr, &path, from, until, &mut counted)
            .await
            .is_err()
        {
            counted.errors += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    counted
}

async fn requests(
    addr: SocketAddr,
    path: &str,
    from: Instant,
    until: Instant,
    counted: &mut Counted,
) -> Result<(), Error> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    while Instant::now() < until {
        let req = Request::get(path)
            .header(HOST, "localhost")
            .body(Empty::<Bytes>::new())?;
        let t = Instant::now();
        let res = sender.send_request(req).await?;
        let ok = res.status() == StatusCode::OK;
        let body = res.into_body().collect().await?.to_bytes();
        let done = Instant::now();
        if done < from || done > until {
            continue;
        }
        if ok && !body.is_empty() {
            counted.requests += 1;
            let us = (done - t).as_micros();
            counted
                .latencies
                .push(u32::try_from(us).unwrap_or(u32::MAX));
        } else {
            counted.errors += 1;
        }
    }
    Ok(())
}

/// GETs `path` once, the body as text.
async fn get(addr: SocketAddr, path: &str) -> Result<String, Error> {
    let stream = TcpStream::connect(addr).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let req = Request::get(path)
        .header(HOST, "localhost")
        .body(Empty::<Bytes>::new())?;
    let res = sender.send_request(req).await?;
    let status = res.status();
    let body = String::from_utf8(res.into_body().collect().await?.to_bytes().to_vec())?;
    if status != StatusCode::OK {
        return Err(format!("{path}: {status}: {body}").into());
    }
    Ok(body)
}

/// The `(id, randomNumber)` pairs of a JSON answer.
fn worlds(body: &str) -> Vec<(i32, i32)> {
    body.split("{\"id\":")
        .skip(1)
        .filter_map(|part| {
            let (id, rest) = part.split_once(",\"randomNumber\":")?;
            let n = rest.split('}').next()?;
            Some((id.parse().ok()?, n.parse().ok()?))
        })
        .collect()
}

/// Checks the server's answers before it is measured: the JSON message, one world, 20
/// worlds, the 13 fortunes sorted and escaped, and 20 updated worlds whose new numbers are in
/// the table.
pub async fn check(addr: SocketAddr, db: &str) -> Result<(), Error> {
    let message = get(addr, "/json").await?;
    if message != r#"{"message":"Hello, World!"}"# {
        return Err(format!("/json answered {message}").into());
    }
    let one = worlds(&get(addr, "/db").await?);
    if one.len() != 1 || !(1..=10_000).contains(&one[0].0) {
        return Err(format!("/db answered {one:?}").into());
    }
    let many = worlds(&get(addr, "/queries?q=20").await?);
    if many.len() != 20 {
        return Err(format!("/queries?q=20 answered {} worlds", many.len()).into());
    }
    let page = get(addr, "/fortunes").await?;
    let rows = page.matches("<tr><td>").count();
    let script = page.find("&lt;script&gt;alert(&quot;This should not be displayed");
    let first = page.find("<tr><td>11</td>");
    if rows != 13 || script.is_none() || first > page.find("<tr><td>4</td>") {
        return Err(format!("/fortunes answered {page}").into());
    }
    let updated = worlds(&get(addr, "/updates?q=20").await?);
    if updated.len() != 20 {
        return Err(format!("/updates?q=20 answered {} worlds", updated.len()).into());
    }
    let pairs: Vec<String> = updated.iter().map(|(i, n)| format!("({i},{n})")).collect();
    let sql = format!(
        "SELECT count(DISTINCT id) FROM world WHERE (id, randomnumber) IN ({})",
        pairs.join(",")
    );
    let mut ids: Vec<i32> = updated.iter().map(|(i, _)| *i).collect();
    ids.sort_unstable();
    ids.dedup();
    let out = Command::new("psql")
        .arg(db)
        .arg("-Atqc")
        .arg(sql)
        .output()?;
    let stored: usize = String::from_utf8(out.stdout)?.trim().parse()?;
    // Note: an id drawn twice in one request keeps one of its two numbers, which counts once.
    if stored != ids.len() {
        return Err(format!(
            "/updates: {stored} of {} rows hold their new numbers",
            ids.len()
        )
        .into());
    }
    Ok(())
}

/// The page of one ferry endpoint's answer: the list itself, or GraphQL's
/// `data.connections`.
fn page_of(body: &str) -> Result<serde_json::Value, Error> {
    let mut v: serde_json::Value = serde_json::from_str(body)?;
    if let Some(connections) = v.pointer_mut("/data/connections") {
        v = connections.take();
    }
    Ok(v)
}

/// The round trips the server counted so far.
async fn round_trips(addr: SocketAddr) -> Result<u64, Error> {
    Ok(get(addr, "/round-trips").await?.trim().parse()?)
}

/// Checks a ferry endpoint before it is measured: its page is `reference`'s (the same 50
/// connections in the same order, the same fields and values, nested the same way), and
/// answers the round trips to the database it made for one page, as the server counts them.
pub async fn check_page(addr: SocketAddr, path: &str, reference: &str) -> Result<u64, Error> {
    let expected = page_of(&get(addr, reference).await?)?;
    let rows = expected.as_array().map_or(0, Vec::len);
    let complete = expected.as_array().is_some_and(|lines| {
        lines
            .iter()
            .all(|l| l["origin"].is_object() && l["destination"].is_object())
    });
    if rows != 50 || !complete {
        return Err(format!("{reference} answered {rows} connections: {expected}").into());
    }
    let before = round_trips(addr).await?;
    let page = page_of(&get(addr, path).await?)?;
    let after = round_trips(addr).await?;
    if page != expected {
        return Err(format!("{path} answered another page than {reference}: {page}").into());
    }
    Ok(after - before)
}
