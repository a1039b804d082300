//! How long `cargo qail lsp` takes to answer completion and hover on a large schema: 1,000
//! tables of 20 columns, built from DDL files (so the snapshot records sources), and a `.rs`
//! file with 100 `qail!` queries over them.
//!
//! The server runs on an in-memory connection (`lsp_server::Connection::memory`), so a figure
//! is the server's whole answer, JSON encoding and decoding included, without the pipe to an
//! editor. Each request is timed from sending it to receiving its response.
//!
//! ```text
//! cargo run --release -p qail-schema --features lsp,ddl --example lsp_latency
//! ```

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};

const TABLES: usize = 1_000;
const COLUMNS: usize = 20;
const QUERIES: usize = 100;
const ROUNDS: usize = 200;

fn main() {
    let dir = std::env::temp_dir().join(format!("qail-lsp-latency-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("migrations")).expect("temp dir");
    let ddl = schema();
    let ddl_path = dir.join("migrations/01.sql");
    std::fs::write(&ddl_path, &ddl).expect("write DDL");
    let started = Instant::now();
    let (mut snap, warnings) = qail_schema::ddl::from_sql(&[(ddl_path.display().to_string(), ddl)]);
    assert!(warnings.is_empty(), "{warnings:?}");
    qail_schema::ddl::relative_to(&mut snap, &dir);
    let snapshot = dir.join("qail.schema.json");
    snap.save(&snapshot).expect("write snapshot");
    println!(
        "snapshot: {} relations × {COLUMNS} columns, {} sources, built from DDL in {:?}",
        snap.relations.len(),
        snap.sources.len(),
        started.elapsed()
    );

    let (server, client) = Connection::memory();
    let fixed = snapshot.clone();
    let thread = std::thread::spawn(move || cargo_qail::lsp::serve(&server, Some(fixed)));
    let mut c = Client {
        conn: client,
        id: 0,
    };
    c.request("initialize", json!({"capabilities": {}}));
    c.notify("initialized", json!({}));

    let (text, sites) = source();
    let uri = format!("file://{}", dir.join("src/queries.rs").display());
    let started = Instant::now();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": text}}),
    );
    let diagnostics = c.wait_diagnostics();
    println!(
        "open: {QUERIES} queries loaded, analyzed and published ({diagnostics} diagnostics) in {:?} (includes loading the snapshot)",
        started.elapsed()
    );
    assert_eq!(diagnostics, 0);

    let kinds: [(&str, &str, SiteOf); 5] = [
        (
            "completion after `alias.`",
            "textDocument/completion",
            |s| s.after_dot,
        ),
        ("completion after FROM", "textDocument/completion", |s| {
            s.after_from
        }),
        (
            "completion of a column name",
            "textDocument/completion",
            |s| s.in_where,
        ),
        ("hover on a LEFT-joined column", "textDocument/hover", |s| {
            s.joined
        }),
        ("hover on a parameter", "textDocument/hover", |s| s.param),
    ];
    println!(
        "\n{:<32} {:>9} {:>9} {:>9} {:>7}",
        "request", "median", "p99", "max", "items"
    );
    for (name, method, at) in kinds {
        let mut times = Vec::with_capacity(ROUNDS);
        let mut items = 0;
        for round in 0..ROUNDS {
            let site = &sites[round % sites.len()];
            let offset = at(site);
            let params = json!({"textDocument": {"uri": uri}, "position": position(&text, offset)});
            let started = Instant::now();
            let result = c.request(method, params);
            times.push(started.elapsed());
            assert!(!result.is_null(), "{name} at {offset}: no answer");
            items = result.as_array().map_or(1, Vec::len);
        }
        times.sort();
        println!(
            "{name:<32} {:>9} {:>9} {:>9} {items:>7}",
            ms(times[ROUNDS / 2]),
            ms(times[ROUNDS * 99 / 100]),
            ms(times[ROUNDS - 1])
        );
    }
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    thread.join().expect("server thread").expect("server");
    let _ = std::fs::remove_dir_all(&dir);
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// `CREATE TABLE t0000 (id bigint PRIMARY KEY, parent_id bigint, c02 text, …)`.
fn schema() -> String {
    let mut ddl = String::new();
    for t in 0..TABLES {
        let _ = write!(
            ddl,
            "CREATE TABLE t{t:04} (\n    id bigint PRIMARY KEY,\n    parent_id bigint"
        );
        for c in 2..COLUMNS {
            let ty = [
                "text NOT NULL",
                "integer",
                "timestamptz",
                "numeric NOT NULL",
                "boolean",
            ][c % 5];
            let _ = write!(ddl, ",\n    c{c:02} {ty}");
        }
        ddl.push_str("\n);\n\n");
    }
    ddl
}

/// Picks a request's offset out of a [`Site`].
type SiteOf = fn(&Site) -> usize;

/// Where the requests are made in one query.
struct Site {
    after_dot: usize,
    after_from: usize,
    in_where: usize,
    joined: usize,
    param: usize,
}

/// A `.rs` file of `QUERIES` queries, each joining two tables, and the request sites.
fn source() -> (String, Vec<Site>) {
    let mut text = String::from("use qail::qail;\n\n");
    let mut sites = Vec::new();
    for q in 0..QUERIES {
        let (a, b) = (q * 7 % TABLES, (q * 13 + 1) % TABLES);
        let _ = write!(
            text,
            "pub async fn q{q}(conn: &mut qail::Connection, id: i64) {{\n    let rows = qail!(\"SELECT a.id, a.c02, b.c03\n        FROM t{a:04} a LEFT JOIN t{b:04} b ON b.parent_id = a.id\n        WHERE a.c05 = {{id}} AND a.c03 > 0\").fetch_all(conn).await;\n}}\n\n"
        );
        let query = text.rfind("SELECT a.id").expect("query");
        let at = |needle: &str| query + text[query..].find(needle).expect(needle);
        sites.push(Site {
            after_dot: at("a.c02") + 2,
            after_from: at("FROM ") + 5,
            in_where: at("c05 =") + 2,
            joined: at("b.c03") + 3,
            param: at("{id}") + 1,
        });
    }
    (text, sites)
}

fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": before[start..].chars().map(char::len_utf16).sum::<usize>()})
}

struct Client {
    conn: Connection,
    id: i32,
}

impl Client {
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = RequestId::from(self.id);
        let req = Request::new(id.clone(), method.to_owned(), params);
        self.conn.sender.send(req.into()).expect("send");
        loop {
            match self.conn.receiver.recv().expect("receive") {
                Message::Response(r) if r.id == id => {
                    assert!(r.error.is_none(), "{method}: {:?}", r.error);
                    return r.result.unwrap_or(Value::Null);
                }
                _ => {}
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        let n = Notification::new(method.to_owned(), params);
        self.conn.sender.send(n.into()).expect("send");
    }

    /// Waits for the next diagnostics; returns how many there are.
    fn wait_diagnostics(&mut self) -> usize {
        loop {
            if let Message::Notification(n) = self.conn.receiver.recv().expect("receive")
                && n.method == "textDocument/publishDiagnostics"
            {
                return n.params["diagnostics"].as_array().map_or(0, Vec::len);
            }
        }
    }
}
