//! `web-bench`: starts each driver's web server in turn (its own process), loads it over
//! HTTP/1.1 keep-alive connections at fixed concurrencies for a fixed time after a warm-up,
//! and reports medians over interleaved rounds: requests/s, latency p50/p99, the server
//! process's CPU time (user + system) and minor page faults per request, the PostgreSQL
//! backends' CPU time per request, and qail's ratios to the best peer.
//!
//! With `--ferry` it loads the ferry page instead (`bench/ferry`'s `web-ferry`, database
//! `qail_bench`): each API style's endpoint is a "driver", checked to answer the same page as
//! `qail!` and counted for its round trips per page, and the ratios are to `qail-prepared`.
//!
//! ```text
//! web-bench [--ferry] [--rounds 3] [--warmup 2] [--duration 10] [--concurrency 16,256]
//!           [--tests json,db,queries,fortunes,updates] [--drivers NAME,…]
//!           [--shared CORES] [--exclusive 16] [--url URL] [--out FILE]
//! ```

mod load;
mod report;

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use load::{Proc, Sample};

const USAGE: &str = "web-bench [--ferry] [--rounds 3] [--warmup 2] [--duration 10] [--concurrency 16,256]
          [--tests json,db,queries,fortunes,updates] [--drivers qail-pool,qail-clients,tokio-postgres,sqlx,xitca-postgres]
          [--shared CORES] [--exclusive 16] [--url postgres://postgres@127.0.0.1:5432] [--out FILE]
Seconds for --warmup and --duration; --shared and --exclusive are the connections of the
servers on shared clients (by default one per core) and on exclusive pools. --ferry loads the ferry page's endpoints
(drivers qail-prepared,qail-uncached,rest-expand,rest-naive,graphql-loader,graphql-naive)
instead of the four tests; give it before --drivers.";

type Error = Box<dyn std::error::Error + Send + Sync>;

/// A server: its column, its binary, and whether its connections are shared (a few, each
/// serving many requests at once) or exclusive (one request at a time each). A ferry page
/// style has the path it is loaded on.
#[derive(Clone, Copy)]
struct Driver {
    name: &'static str,
    binary: &'static str,
    shared: bool,
    qail: bool,
    page: Option<&'static str>,
}

const DRIVERS: &[Driver] = &[
    Driver {
        name: "qail-pool",
        binary: "web-qail-pool",
        shared: false,
        qail: true,
        page: None,
    },
    Driver {
        name: "qail-clients",
        binary: "web-qail-clients",
        shared: true,
        qail: true,
        page: None,
    },
    Driver {
        name: "tokio-postgres",
        binary: "web-tokio-postgres",
        shared: true,
        qail: false,
        page: None,
    },
    Driver {
        name: "sqlx",
        binary: "web-sqlx",
        shared: false,
        qail: false,
        page: None,
    },
    Driver {
        name: "xitca-postgres",
        binary: "web-xitca-postgres",
        shared: true,
        qail: false,
        page: None,
    },
];

/// The ferry page's API styles, all endpoints of one server (`web-ferry`), each loaded in a
/// process of its own; the first is the one the others are compared with.
const FERRY: &[Driver] = &[
    ferry("qail-prepared", "/page/qail"),
    ferry("qail-uncached", "/page/qail-uncached"),
    ferry(
        "rest-expand",
        "/page/rest?expand=origin,destination,operator",
    ),
    ferry("rest-naive", "/page/rest-naive"),
    ferry(
        "graphql-loader",
        concat!("/graphql/loader?query=", graphql_page!()),
    ),
    ferry(
        "graphql-naive",
        concat!("/graphql/naive?query=", graphql_page!()),
    ),
];

/// The GraphQL query of the page, URL-encoded:
/// `{connections{id name duration_minutes origin{id name country}
/// destination{id name country} operator{id name website}}}`.
macro_rules! graphql_page {
    () => {
        "%7Bconnections%7Bid%20name%20duration_minutes%20origin%7Bid%20name%20country%7D\
         %20destination%7Bid%20name%20country%7D%20operator%7Bid%20name%20website%7D%7D%7D"
    };
}
use graphql_page;

const fn ferry(name: &'static str, path: &'static str) -> Driver {
    Driver {
        name,
        binary: "web-ferry",
        shared: false,
        qail: true,
        page: Some(path),
    }
}

/// The tests and the path each loads: TechEmpower's four database tests, and `json`, the
/// same server answering without the database (the floor every driver's server shares).
const TESTS: &[(&str, &str)] = &[
    ("json", "/json"),
    ("db", "/db"),
    ("queries", "/queries?q=20"),
    ("fortunes", "/fortunes"),
    ("updates", "/updates?q=20"),
];

struct Options {
    ferry: bool,
    rounds: usize,
    warmup: Duration,
    duration: Duration,
    concurrency: Vec<usize>,
    tests: Vec<(&'static str, &'static str)>,
    drivers: Vec<Driver>,
    shared: usize,
    exclusive: usize,
    url: String,
    out: Option<PathBuf>,
}

impl Options {
    /// The benchmark's database.
    fn database(&self) -> &'static str {
        if self.ferry {
            "qail_bench"
        } else {
            "qail_bench_web"
        }
    }
}

fn options() -> Result<Options, Error> {
    let mut o = Options {
        ferry: false,
        rounds: 3,
        warmup: Duration::from_secs(2),
        duration: Duration::from_secs(10),
        concurrency: vec![16, 256],
        tests: TESTS.to_vec(),
        drivers: DRIVERS.to_vec(),
        // One shared connection per core: with more, each connection carries fewer queries
        // per write and more backends compete for the cores (every shared driver's CPU per
        // request was lower with 2 than with 4 on the 2-core machine; bench/README.md).
        shared: std::thread::available_parallelism().map_or(2, usize::from),
        exclusive: 16,
        url: std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into()),
        out: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--help" || arg == "-h" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        if arg == "--ferry" {
            o.ferry = true;
            o.drivers = FERRY.to_vec();
            o.tests = vec![("page", "")];
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
        let list = || value.split(',').map(str::trim).filter(|s| !s.is_empty());
        match arg.as_str() {
            "--rounds" => o.rounds = value.parse()?,
            "--warmup" => o.warmup = Duration::from_secs_f64(value.parse()?),
            "--duration" => o.duration = Duration::from_secs_f64(value.parse()?),
            "--concurrency" => {
                o.concurrency = list().map(str::parse).collect::<Result<_, _>>()?;
            }
            "--tests" => {
                o.tests = list()
                    .map(|t| {
                        TESTS
                            .iter()
                            .find(|(name, _)| *name == t)
                            .copied()
                            .ok_or_else(|| {
                                format!("no test {t:?}: json, db, queries, fortunes, updates")
                            })
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--drivers" => {
                let known = if o.ferry { FERRY } else { DRIVERS };
                o.drivers = list()
                    .map(|d| {
                        known
                            .iter()
                            .find(|x| x.name == d)
                            .copied()
                            .ok_or_else(|| format!("no driver {d:?}"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--shared" => o.shared = value.parse()?,
            "--exclusive" => o.exclusive = value.parse()?,
            "--url" => o.url = value,
            "--out" => o.out = Some(value.into()),
            _ => return Err(format!("unknown option {arg}; see --help").into()),
        }
    }
    if o.rounds == 0 || o.concurrency.is_empty() || o.tests.is_empty() || o.drivers.is_empty() {
        return Err("rounds, concurrency, tests and drivers must not be empty".into());
    }
    Ok(o)
}

/// The server's URL of the benchmark database `name` (`qail_bench_web`, or `qail_bench` for
/// the ferry page), plain TCP unless the URL says otherwise.
fn database_url(url: &str, name: &str) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let rest = base.split_once("://").map_or(base, |(_, r)| r);
    let server = match rest.find('/') {
        Some(i) => &base[..base.len() - rest.len() + i],
        None => base,
    };
    let query = if query.contains("sslmode") {
        query.to_owned()
    } else if query.is_empty() {
        "sslmode=disable".to_owned()
    } else {
        format!("{query}&sslmode=disable")
    };
    format!("{server}/{name}?{query}")
}

/// A running server.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(driver: &Driver, o: &Options) -> Result<Server, Error> {
        let dir = std::env::current_exe()?
            .parent()
            .ok_or("the runner's directory")?
            .to_path_buf();
        // Note: a port the system had free a moment ago; the server binds it at once.
        let addr = TcpListener::bind("127.0.0.1:0")?.local_addr()?;
        let connections = if driver.shared { o.shared } else { o.exclusive };
        let mut child = Command::new(dir.join(driver.binary))
            .arg(addr.to_string())
            .arg(database_url(&o.url, o.database()))
            .arg(connections.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting {}: {e} (build with bench/web/run)", driver.binary))?;
        let mut line = String::new();
        let stdout = child.stdout.take().ok_or("the server's stdout")?;
        BufReader::new(stdout).read_line(&mut line)?;
        if line.trim() != "ready" {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{} did not start", driver.name).into());
        }
        Ok(Server { child, addr })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stop(mut self) -> Result<(), Error> {
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

/// One load's figures, keyed by round, driver, test and concurrency.
struct Run {
    driver: &'static str,
    test: &'static str,
    concurrency: usize,
    sample: Sample,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("web-bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Error> {
    let o = options()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let db = database_url(&o.url, o.database());
    let started = Instant::now();
    let load_avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load_avg = load_avg.split(' ').take(3).collect::<Vec<_>>().join(" / ");
    let mut runs = Vec::new();
    // The round trips of each ferry page style, per page.
    let mut round_trips = Vec::new();
    for round in 0..o.rounds {
        for k in 0..o.drivers.len() {
            let driver = o.drivers[(k + round) % o.drivers.len()];
            let server = Server::start(&driver, &o)?;
            if round == 0 {
                let checked = match driver.page {
                    Some(path) => rt
                        .block_on(load::check_page(
                            server.addr,
                            path,
                            FERRY[0].page.unwrap_or(""),
                        ))
                        .map(|trips| round_trips.push((driver.name, trips))),
                    None => rt.block_on(load::check(server.addr, &db)),
                };
                checked.map_err(|e| format!("{}: {e}", driver.name))?;
            }
            for &(test, path) in &o.tests {
                let path = driver.page.unwrap_or(path);
                for &concurrency in &o.concurrency {
                    let sample = rt.block_on(load::run(
                        server.addr,
                        path,
                        concurrency,
                        o.warmup,
                        o.duration,
                        &Proc::of(server.pid()),
                        &db,
                    ))?;
                    eprintln!(
                        "round {} {:>14} {:>8} c={:<3} {:>9.0} req/s  p99 {:>7.2} ms  {:>6.1} µs CPU/req  errors {}",
                        round + 1,
                        driver.name,
                        test,
                        concurrency,
                        sample.rps(),
                        sample.p99_ms(),
                        sample.cpu_us_per_req(),
                        sample.errors
                    );
                    runs.push(Run {
                        driver: driver.name,
                        test,
                        concurrency,
                        sample,
                    });
                }
            }
            server.stop()?;
        }
    }
    let mut table = report::table(&o, &runs, started.elapsed(), load_avg.trim());
    if o.ferry {
        table = report::page_table(&o, &runs, &round_trips) + "\n" + &table;
    }
    print!("{table}");
    if let Some(out) = &o.out {
        std::fs::write(out, &table)?;
    }
    Ok(())
}
