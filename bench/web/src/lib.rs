//! TechEmpower's database tests as one HTTP server around any driver: routing, parameters,
//! random ids, JSON and the fortunes page are written once here, and each driver's binary
//! (`src/bin/*.rs`) supplies only a [`Db`]: how it reads a world, many worlds, the
//! fortunes, and writes the updates.
//!
//! | route | response |
//! |---|---|
//! | `/db` | one random row of `world` as `{"id":…,"randomNumber":…}` |
//! | `/queries?q=N` | N random rows (N clamped to 1–500, 1 when absent or not a number), a JSON array |
//! | `/fortunes` | every row of `fortune` plus one added at request time, sorted by message, HTML-escaped into a table |
//! | `/updates?q=N` | N random rows read one by one, each given a new random number, written back in one statement; the updated rows as JSON |
//! | `/json` | `{"message":"Hello, World!"}`, made per request; no database work: the server's own cost per request, the same code for every driver |
//!
//! A server is started as `BINARY ADDR DATABASE_URL CONNECTIONS`: it connects, listens on
//! `ADDR`, prints `ready` on stdout, and serves HTTP/1.1 on a multi-threaded tokio runtime
//! (one worker per core) until it is killed.

use std::cell::Cell;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::future::Future;
use std::io::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue, SERVER};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// The error every driver's calls return.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The SQL of every statement, the same for every driver. `qail!` takes a literal, so the
/// qail servers write it out again; the text is the same.
pub mod sql {
    /// One row of `world` by id.
    pub const WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
    /// Every fortune.
    pub const FORTUNES: &str = "SELECT id, message FROM fortune";
    /// The updates of one request in one statement: ids and their new numbers as two arrays
    /// of the same length, ids sorted (so concurrent requests lock rows in the same order).
    pub const UPDATE: &str = "UPDATE world SET randomnumber = v.r \
        FROM UNNEST($1::int4[], $2::int4[]) AS v(id, r) WHERE world.id = v.id";
}

/// How many rows `world` has: ids are 1 to this.
pub const WORLD_ROWS: i32 = 10_000;

/// A row of `world`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct World {
    /// Its id, 1 to 10,000.
    pub id: i32,
    /// Its number, 1 to 10,000.
    pub randomnumber: i32,
}

/// A row of `fortune`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fortune {
    /// Its id.
    pub id: i32,
    /// Its message, unescaped.
    pub message: String,
}

/// What a driver does for the four tests. Each call may run on any worker thread, from any
/// number of requests at once.
pub trait Db: Send + Sync + 'static {
    /// The row of `world` with this id.
    fn world(&self, id: i32) -> impl Future<Output = Result<World, Error>> + Send;

    /// The rows of `world` with these ids, one query each (pipelined where the driver can),
    /// in the order of `ids`.
    fn worlds(&self, ids: &[i32]) -> impl Future<Output = Result<Vec<World>, Error>> + Send;

    /// Every row of `fortune`.
    fn fortunes(&self) -> impl Future<Output = Result<Vec<Fortune>, Error>> + Send;

    /// Reads the rows `ids` one query each (as [`worlds`](Db::worlds)), then writes
    /// `numbers[i]` as the number of `ids[i]` in one [`sql::UPDATE`]; returns the rows read
    /// with their new numbers. `ids` are sorted.
    fn update(
        &self,
        ids: &[i32],
        numbers: &[i32],
    ) -> impl Future<Output = Result<Vec<World>, Error>> + Send;
}

/// Runs the server of `connect`'s driver from the command line (`ADDR DATABASE_URL
/// CONNECTIONS`), exiting with a message on a bad argument or a failed start.
pub fn main<D, F>(connect: impl FnOnce(String, usize) -> F)
where
    D: Db,
    F: Future<Output = Result<D, Error>>,
{
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, url, connections] = &args[..] else {
        eprintln!(
            "usage: {} ADDR DATABASE_URL CONNECTIONS",
            args.first().map_or("server", String::as_str)
        );
        std::process::exit(2);
    };
    let Ok(connections) = connections.parse::<usize>() else {
        eprintln!("CONNECTIONS must be a number, not {connections:?}");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let run = async {
        let db = Arc::new(connect(url.clone(), connections).await?);
        let listener = TcpListener::bind(addr.as_str()).await?;
        println!("ready");
        std::io::stdout().flush()?;
        serve(listener, db).await
    };
    if let Err(e) = runtime.block_on(run) {
        eprintln!("server failed: {e}");
        std::process::exit(1);
    }
}

/// Accepts connections for ever, each served on a task of its own.
async fn serve<D: Db>(listener: TcpListener, db: Arc<D>) -> Result<(), Error> {
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let db = db.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let db = db.clone();
                async move { Ok::<_, Infallible>(respond(&*db, req).await) }
            });
            // Note: a client closing its connection ends the task; nothing to report.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The response to one request.
async fn respond<D: Db>(db: &D, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let q = || queries(req.uri().query());
    let result = match req.uri().path() {
        "/json" => Ok(json_message("Hello, World!")),
        "/db" => db.world(random_id()).await.map(|w| json_world(&w)),
        "/queries" => {
            let ids: Vec<i32> = (0..q()).map(|_| random_id()).collect();
            db.worlds(&ids).await.map(|ws| json_worlds(&ws))
        }
        "/fortunes" => db.fortunes().await.map(fortunes_page),
        "/updates" => {
            let mut ids: Vec<i32> = (0..q()).map(|_| random_id()).collect();
            ids.sort_unstable();
            let numbers: Vec<i32> = ids.iter().map(|_| random_id()).collect();
            db.update(&ids, &numbers).await.map(|ws| json_worlds(&ws))
        }
        _ => return plain(StatusCode::NOT_FOUND, "not found\n".into()),
    };
    match result {
        Ok(body) => {
            let html = req.uri().path() == "/fortunes";
            // Note: `/json` is answered as `/db` is (same headers, a body of about the same size),
            // so the two differ by the database work alone.
            let mut res = Response::new(Full::new(Bytes::from(body)));
            let kind = if html {
                "text/html; charset=utf-8"
            } else {
                "application/json"
            };
            res.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
            res.headers_mut()
                .insert(SERVER, HeaderValue::from_static("qail-bench-web"));
            res
        }
        Err(e) => plain(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
    }
}

fn plain(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::new(Bytes::from(body)));
    *res.status_mut() = status;
    res
}

/// The `q` parameter: 1–500, 1 when absent or not a number.
pub fn queries(query: Option<&str>) -> usize {
    let value = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("q="));
    value
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(1, |n| n.clamp(1, 500))
}

thread_local! {
    static RNG: Cell<u64> = Cell::new(seed());
}

/// A seed that differs between threads and runs.
fn seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let local = 0u8;
    // Note: the stack address tells the threads apart; the low bit keeps xorshift off zero.
    let addr = std::ptr::addr_of!(local) as usize as u64;
    ((t as u64) ^ addr.rotate_left(32)) | 1
}

/// A random number 1–10,000 (xorshift64, one generator per thread).
pub fn random_id() -> i32 {
    RNG.with(|rng| {
        let mut x = rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rng.set(x);
        // Note: x % 10,000 < 10,000 fits any integer type.
        i32::try_from(x % 10_000).unwrap_or(0) + 1
    })
}

fn push_world(out: &mut String, w: &World) {
    let _ = write!(
        out,
        r#"{{"id":{},"randomNumber":{}}}"#,
        w.id, w.randomnumber
    );
}

/// `{"id":…,"randomNumber":…}`.
pub fn json_world(w: &World) -> String {
    let mut out = String::with_capacity(40);
    push_world(&mut out, w);
    out
}

/// `{"message":…}`, TechEmpower's JSON test (the message needs no escaping).
pub fn json_message(message: &str) -> String {
    let mut out = String::with_capacity(40);
    let _ = write!(out, r#"{{"message":"{message}"}}"#);
    out
}

/// A JSON array of worlds.
pub fn json_worlds(ws: &[World]) -> String {
    let mut out = String::with_capacity(2 + ws.len() * 36);
    out.push('[');
    for (i, w) in ws.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_world(&mut out, w);
    }
    out.push(']');
    out
}

/// The fortunes page: the rows plus the one added at request time, sorted by message.
pub fn fortunes_page(mut rows: Vec<Fortune>) -> String {
    rows.push(Fortune {
        id: 0,
        message: "Additional fortune added at request time.".into(),
    });
    rows.sort_unstable_by(|a, b| a.message.cmp(&b.message));
    let mut out = String::with_capacity(1200);
    out.push_str(
        "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
         <tr><th>id</th><th>message</th></tr>",
    );
    for f in &rows {
        let _ = write!(out, "<tr><td>{}</td><td>", f.id);
        escape_html(&mut out, &f.message);
        out.push_str("</td></tr>");
    }
    out.push_str("</table></body></html>");
    out
}

/// Appends `text` with `& < > " '` escaped.
pub fn escape_html(out: &mut String, text: &str) {
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        let escaped = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#x27;",
            _ => continue,
        };
        out.push_str(&text[start..i]);
        out.push_str(escaped);
        start = i + 1;
    }
    out.push_str(&text[start..]);
}

/// Gives each row read its new number (`numbers[i]` for the row of `ids[i]`).
pub fn renumber(mut rows: Vec<World>, numbers: &[i32]) -> Vec<World> {
    for (row, n) in rows.iter_mut().zip(numbers) {
        row.randomnumber = *n;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_is_clamped_and_defaults_to_one() {
        assert_eq!(queries(None), 1);
        assert_eq!(queries(Some("q=20")), 20);
        assert_eq!(queries(Some("x=1&q=0")), 1);
        assert_eq!(queries(Some("q=1000")), 500);
        assert_eq!(queries(Some("q=abc")), 1);
    }

    #[test]
    fn fortunes_are_sorted_and_escaped() {
        let page = fortunes_page(vec![
            Fortune {
                id: 2,
                message: "b & c".into(),
            },
            Fortune {
                id: 11,
                message: "<script>alert(\"x\");</script>".into(),
            },
        ]);
        // Byte order: '<' before 'A' before 'b'.
        let script = page.find(
            "<tr><td>11</td><td>&lt;script&gt;alert(&quot;x&quot;);&lt;/script&gt;</td></tr>",
        );
        let added =
            page.find("<tr><td>0</td><td>Additional fortune added at request time.</td></tr>");
        let b = page.find("<tr><td>2</td><td>b &amp; c</td></tr>");
        assert!(script.is_some() && script < added && added < b, "{page}");
        assert_eq!(page.matches("<tr><td>").count(), 3);
    }

    #[test]
    fn ids_stay_in_range() {
        assert!(
            (0..10_000)
                .map(|_| random_id())
                .all(|id| (1..=WORLD_ROWS).contains(&id))
        );
    }
}
