//! A scripted LSP client: runs `cargo-qail lsp` and speaks JSON-RPC with it over its standard
//! input and output, as an editor does.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use serde_json::{Value, json};

/// How long any answer may take before the test fails (a hung server, not a slow one).
const PATIENCE: Duration = Duration::from_secs(20);

pub(crate) struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Notifications received while waiting for responses.
    pub(crate) notifications: Vec<Value>,
    /// The version last sent of each open document.
    versions: std::collections::HashMap<String, i64>,
}

impl Client {
    /// Starts the server in `dir` with `args` after `lsp`, and initializes it.
    pub(crate) fn start(dir: &Path, args: &[&str]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
            .arg("lsp")
            .args(args)
            .current_dir(dir)
            .env_remove("QAIL_SCHEMA")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start cargo-qail lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut r) {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            incoming,
            next_id: 1,
            notifications: Vec::new(),
            versions: std::collections::HashMap::new(),
        };
        let root = uri(dir);
        let init = c.request(
            "initialize",
            json!({"processId": null, "rootUri": root, "capabilities": {}}),
        );
        assert!(
            init["capabilities"]["completionProvider"].is_object(),
            "{init}"
        );
        c.notify("initialized", json!({}));
        c
    }

    fn send(&mut self, msg: &Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its result (panics on an error response).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.recv();
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                assert!(msg.get("error").is_none(), "{method} failed: {msg}");
                return msg["result"].clone();
            }
            self.notifications.push(msg);
        }
    }

    fn recv(&mut self) -> Value {
        match self.incoming.recv_timeout(PATIENCE) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => panic!("the server did not answer in {PATIENCE:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// The next diagnostics published for `uri` (received earlier or now) for the version last
    /// sent: those of earlier versions are skipped.
    pub(crate) fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let version = self.versions.get(uri).copied();
        let is_for = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"].as_i64() == version
        };
        self.notifications.retain(|m| {
            !(m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"].as_i64() != version)
        });
        if let Some(i) = self.notifications.iter().position(is_for) {
            let m = self.notifications.remove(i);
            return m["params"]["diagnostics"].as_array().unwrap().clone();
        }
        loop {
            let m = self.recv();
            if is_for(&m) {
                return m["params"]["diagnostics"].as_array().unwrap().clone();
            }
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                continue;
            }
            self.notifications.push(m);
        }
    }

    pub(crate) fn open(&mut self, path: &Path, text: &str) -> String {
        let uri = uri(path);
        self.versions.insert(uri.clone(), 1);
        let language = if path.extension().is_some_and(|e| e == "rs") {
            "rust"
        } else {
            "sql"
        };
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
        uri
    }

    pub(crate) fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.versions.insert(uri.to_owned(), version);
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// `method` at the position of the `n`th byte of `text` (the open document's text).
    pub(crate) fn at(&mut self, method: &str, uri: &str, text: &str, offset: usize) -> Value {
        self.request(
            method,
            json!({"textDocument": {"uri": uri}, "position": position(text, offset)}),
        )
    }

    /// Shuts the server down and checks that it exits with success.
    pub(crate) fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the server exited with {status}");
    }
}

/// `{"line": …, "character": …}` of byte `offset` (UTF-16 columns).
pub(crate) fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let character: usize = before[start..].chars().map(char::len_utf16).sum();
    json!({"line": line, "character": character})
}

pub(crate) fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            len = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// A fresh directory for one test: a crate with `migrations/01.sql`, and its snapshot
/// `qail.schema.json` built by `cargo qail schema from-sql` (so it records sources).
pub(crate) fn project(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qail-lsp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("migrations")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nqail = { version = \"0.1\", features = [\"time\"], default-features = false }\n",
    )
    .unwrap();
    std::fs::write(dir.join("migrations/01.sql"), MIGRATION).unwrap();
    from_sql(&dir);
    dir
}

/// Rebuilds the snapshot from the migrations.
pub(crate) fn from_sql(dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args([
            "schema",
            "from-sql",
            "migrations",
            "--out",
            "qail.schema.json",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

pub(crate) const MIGRATION: &str = "CREATE TYPE sea AS ENUM ('calm', 'stormy');

CREATE TABLE harbors (
    id serial PRIMARY KEY,
    name text NOT NULL,
    country text NOT NULL
);

CREATE TABLE ships (
    id serial PRIMARY KEY,
    harbor_id int REFERENCES harbors,
    name text NOT NULL,
    sea sea NOT NULL,
    launched timestamptz
);
";
