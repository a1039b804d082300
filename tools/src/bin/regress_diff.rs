//! The analyzer against PostgreSQL's own regression SQL: every file is applied statement by
//! statement to a fresh database, and every statement that returns or could return rows
//! (SELECT, VALUES, TABLE, WITH, INSERT, UPDATE, DELETE, MERGE) is both described by the server
//! (Parse + Describe) and analyzed offline against a snapshot pulled from that database.
//!
//! ```text
//! regress_diff URL TEMPLATE FILE.sql...
//! ```
//!
//! `URL` is a superuser connection to a throwaway server (the SQL creates roles and other
//! global objects); `TEMPLATE` a database each file's database is copied from (the regression
//! suite's `test_setup.sql` applied). `scripts/regress-diff` fetches the SQL, makes the
//! server and runs this.
//!
//! A statement the server accepts is *exact* when the analyzer gives the same parameter and
//! column type OIDs and the same column names (typmods aside), *different* when the analyzer
//! accepts it with other types or names (each is listed), *rejected* when the analyzer
//! refuses it. A statement the server refuses is *wrongly accepted* when the analyzer accepts
//! it. Statements in a transaction block that already failed are not counted.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

use qail_analyzer::{Analysis, analyze, type_oid};
use qail_pg::{Connection, TransactionStatus};
use qail_schema::Snapshot;
use qail_schema::introspect::{pull, pull_in_transaction};
use qail_schema::script::split;
use qail_schema::snapshot::TypeRef;

#[derive(Default, Clone, Copy)]
struct Counts {
    exact: usize,
    different: usize,
    rejected: usize,
    wrongly_accepted: usize,
    crashed: usize,
    server_rejected: usize,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.exact += o.exact;
        self.different += o.different;
        self.rejected += o.rejected;
        self.wrongly_accepted += o.wrongly_accepted;
        self.crashed += o.crashed;
        self.server_rejected += o.server_rejected;
    }

    fn accepted(&self) -> usize {
        self.exact + self.different + self.rejected + self.crashed
    }
}

/// What the run found, beyond the counts.
#[derive(Default)]
struct Findings {
    different: Vec<String>,
    wrongly_accepted: Vec<String>,
    crashed: Vec<String>,
    /// The analyzer's first diagnostic on statements the server accepts → how many.
    rejections: BTreeMap<String, usize>,
    /// One example statement per rejection message.
    examples: HashMap<String, String>,
    /// Every rejected statement with the analyzer's first message.
    rejected: Vec<String>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: regress_diff URL TEMPLATE FILE.sql...");
        std::process::exit(2);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(run(&args[0], &args[1], &args[2..]));
}

async fn run(url: &str, template: &str, files: &[String]) {
    let mut total = Counts::default();
    let mut findings = Findings::default();
    let mut table = String::new();
    let _ = writeln!(
        table,
        "| file | server accepts | exact | different | rejected | wrongly accepted |"
    );
    let _ = writeln!(table, "|---|---:|---:|---:|---:|---:|");
    for path in files {
        let name = std::path::Path::new(path)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("file")
            .to_owned();
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
        let counts = one_file(url, template, &name, &text, &mut findings).await;
        let _ = writeln!(
            table,
            "| {name} | {} | {} ({}) | {} | {} | {} |",
            counts.accepted(),
            counts.exact,
            percent(counts.exact, counts.accepted()),
            counts.different,
            counts.rejected + counts.crashed,
            counts.wrongly_accepted
        );
        eprintln!("{name}: done");
        total.add(&counts);
    }
    let _ = writeln!(
        table,
        "| **total** | {} | {} ({}) | {} | {} | {} |",
        total.accepted(),
        total.exact,
        percent(total.exact, total.accepted()),
        total.different,
        total.rejected + total.crashed,
        total.wrongly_accepted
    );
    println!("{table}");
    println!(
        "server rejects {} statements; the analyzer crashed on {}",
        total.server_rejected, total.crashed
    );
    println!(
        "\n## Accepted with a different type or name ({})\n",
        findings.different.len()
    );
    for d in &findings.different {
        println!("{d}\n");
    }
    println!("\n## Crashes ({})\n", findings.crashed.len());
    for d in &findings.crashed {
        println!("{d}\n");
    }
    println!("\n## Rejected, by the analyzer's message\n");
    let mut by_count: Vec<(&String, &usize)> = findings.rejections.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (message, n) in by_count {
        println!(
            "{n:5}  {message}\n       e.g. {}",
            findings.examples[message]
        );
    }
    println!(
        "\n## Wrongly accepted ({})\n",
        findings.wrongly_accepted.len()
    );
    for d in &findings.wrongly_accepted {
        println!("{d}\n");
    }
    println!(
        "\n## Every rejected statement ({})\n",
        findings.rejected.len()
    );
    for d in &findings.rejected {
        println!("{d}\n");
    }
}

fn percent(n: usize, of: usize) -> String {
    if of == 0 {
        return "-".into();
    }
    format!("{:.1}%", n as f64 * 100.0 / of as f64)
}

/// Whether the statement returns or could return rows, from its first word.
fn is_query(sql: &str) -> bool {
    let word: String = sql
        .trim_start_matches(|c: char| c == '(' || c.is_whitespace())
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        word.as_str(),
        "select" | "values" | "table" | "with" | "insert" | "update" | "delete" | "merge"
    )
}

/// Whether running a statement can change what the snapshot holds.
fn changes_schema(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    let word = lower.split_whitespace().next().unwrap_or("");
    match word {
        "set" | "reset" => lower.contains("search_path") || lower.contains("role"),
        "show" | "explain" | "analyze" | "analyse" | "vacuum" | "begin" | "start" | "commit"
        | "end" | "savepoint" | "release" | "prepare" | "execute" | "deallocate" | "declare"
        | "fetch" | "close" | "move" | "listen" | "notify" | "unlisten" | "discard"
        | "checkpoint" | "copy" | "lock" | "cluster" | "reindex" | "refresh" => false,
        _ => true,
    }
}

/// psql meta-commands (`\…` to the end of the line) blanked out, keeping byte offsets.
fn without_meta_commands(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with('\\') {
                " ".repeat(line.len())
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

async fn one_file(
    url: &str,
    template: &str,
    name: &str,
    text: &str,
    findings: &mut Findings,
) -> Counts {
    let db = format!("regress_{name}");
    let mut admin = Connection::connect(url)
        .await
        .expect("connect to the server");
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .await
        .expect("drop the file's database");
    admin
        .batch_execute(&format!("CREATE DATABASE {db} TEMPLATE {template}"))
        .await
        .expect("create the file's database");
    let mut conn = Connection::connect(&with_database(url, &db))
        .await
        .expect("connect to the file's database");
    // Every statement is described afresh: a cached description would outlive the DDL.
    conn.set_statement_cache_size(0);
    conn.batch_execute("SET statement_timeout = '20s'")
        .await
        .expect("set a timeout");

    let text = without_meta_commands(text);
    let mut counts = Counts::default();
    let mut snapshot: Option<Snapshot> = None;
    let mut oids: HashMap<String, u32> = HashMap::new();
    for piece in split(&text) {
        let sql = &text[piece.range.clone()];
        let line = text[..piece.range.start].matches('\n').count() + 1;
        let place = format!("{name}.sql:{line}");
        if conn.transaction_status() == TransactionStatus::Failed {
            // psql would see every statement fail until the block ends.
            let _ = conn.batch_execute(sql).await;
            snapshot = None;
            continue;
        }
        if !is_query(sql) {
            let _ = conn.batch_execute(sql).await;
            if changes_schema(sql) {
                snapshot = None;
                oids.clear();
            }
            continue;
        }
        if snapshot.is_none() {
            snapshot = Some(
                pull_with_temp(&mut conn)
                    .await
                    .unwrap_or_else(|e| panic!("{place}: pull failed: {e}")),
            );
        }
        let snap = snapshot.as_ref().expect("pulled above");
        let server = conn.prepare(sql).await;
        let ours = catch_unwind(AssertUnwindSafe(|| analyze(sql, snap)));
        match (server, ours) {
            (Err(_), Ok(Ok(_))) => {
                counts.wrongly_accepted += 1;
                findings.wrongly_accepted.push(format!("{place}: {sql}"));
            }
            (Err(_), _) => counts.server_rejected += 1,
            (Ok(_), Err(_)) => {
                counts.crashed += 1;
                findings.crashed.push(format!("{place}: {sql}"));
            }
            (Ok(_), Ok(Err(diags))) => {
                counts.rejected += 1;
                let message = diags
                    .first()
                    .map_or_else(String::new, |d| d.message.clone());
                let key = shape(&message);
                *findings.rejections.entry(key.clone()).or_default() += 1;
                findings
                    .examples
                    .entry(key)
                    .or_insert_with(|| format!("{place}: {}", one_line(sql)));
                findings
                    .rejected
                    .push(format!("{place}: {message}\n  {}", one_line(sql)));
            }
            (Ok(statement), Ok(Ok(analysis))) => {
                let want: Vec<(String, u32)> = statement
                    .columns()
                    .iter()
                    .map(|c| (c.name().to_owned(), c.type_oid()))
                    .collect();
                let got = our_columns(&mut conn, &analysis, &mut oids).await;
                let want_params = statement.params().to_vec();
                let mut got_params = Vec::new();
                for p in &analysis.params {
                    got_params.push(oid(&mut conn, &p.ty, &mut oids).await);
                }
                if want == got && want_params == got_params {
                    counts.exact += 1;
                } else {
                    counts.different += 1;
                    let server = render(&mut conn, &want_params, &want).await;
                    let ours = render(&mut conn, &got_params, &got).await;
                    findings.different.push(format!(
                        "{place}: {}\n  server: {server}\n  ours:   {ours}",
                        one_line(sql)
                    ));
                }
            }
        }
        if sql.to_ascii_lowercase().contains("into") && !sql.trim_start().starts_with(['i', 'I']) {
            // SELECT … INTO makes a table.
            if conn.batch_execute(sql).await.is_ok() {
                snapshot = None;
            }
        }
    }
    conn.close().await;
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .await
        .expect("drop the file's database");
    admin.close().await;
    counts
}

/// The snapshot of every user schema and of the session's temporary schema, which
/// PostgreSQL searches first (the regression SQL makes many temporary tables).
async fn pull_with_temp(conn: &mut Connection) -> Result<Snapshot, Box<dyn std::error::Error>> {
    let rows = conn
        .query(
            "SELECT nspname::text, oid = pg_my_temp_schema() FROM pg_namespace \
             WHERE (nspname !~ '^pg_' AND nspname <> 'information_schema') \
             OR oid = pg_my_temp_schema()",
            &[],
        )
        .await?;
    let schemas: Vec<String> = rows.iter().map(|r| r.get::<String>(0)).collect();
    let temp = rows
        .iter()
        .find(|r| r.get::<bool>(1))
        .map(|r| r.get::<String>(0));
    let mut snapshot = match conn.transaction_status() {
        TransactionStatus::Idle => pull(conn, &schemas).await?,
        _ => pull_in_transaction(conn, &schemas).await?,
    };
    if let Some(temp) = temp {
        snapshot.search_path.insert(0, temp);
    }
    Ok(snapshot)
}

/// The statement on one line, shortened.
fn one_line(sql: &str) -> String {
    let flat: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// A diagnostic message with its quoted names and numbers blanked, so messages of one
/// class count together.
fn shape(message: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in message.chars() {
        match quote {
            Some(q) if c == q => {
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None if c == '"' || c == '`' => {
                out.push(c);
                out.push('…');
                quote = Some(c);
            }
            None => out.push(c),
        }
    }
    out
}

async fn our_columns(
    conn: &mut Connection,
    analysis: &Analysis,
    oids: &mut HashMap<String, u32>,
) -> Vec<(String, u32)> {
    let mut cols = Vec::new();
    for c in &analysis.columns {
        cols.push((c.name.clone(), oid(conn, &c.ty, oids).await));
    }
    cols
}

/// The OID of an analyzer type: built-ins from the catalog crate, the rest asked of the
/// server (0 when it has no such type).
async fn oid(conn: &mut Connection, t: &TypeRef, oids: &mut HashMap<String, u32>) -> u32 {
    if let Some(oid) = type_oid(t) {
        return oid;
    }
    let key = format!("\"{}\".\"{}\"{}", t.schema, t.name, t.array_dims.min(1));
    if let Some(&oid) = oids.get(&key) {
        return oid;
    }
    let name = format!("\"{}\".\"{}\"", t.schema, t.name);
    let found = conn
        .query(
            "SELECT oid, typarray FROM pg_type WHERE oid = to_regtype($1)",
            &[&name],
        )
        .await
        .ok()
        .and_then(|rows| {
            rows.first().map(|r| {
                if t.array_dims > 0 {
                    r.get::<u32>(1)
                } else {
                    r.get::<u32>(0)
                }
            })
        })
        .unwrap_or(0);
    oids.insert(key, found);
    found
}

/// `(params) name type, …` with the server's names for the types.
async fn render(conn: &mut Connection, params: &[u32], cols: &[(String, u32)]) -> String {
    let mut out = String::new();
    if !params.is_empty() {
        let names = type_names(conn, params).await;
        let _ = write!(out, "({}) ", names.join(", "));
    }
    let oids: Vec<u32> = cols.iter().map(|c| c.1).collect();
    let names = type_names(conn, &oids).await;
    let shown: Vec<String> = cols
        .iter()
        .zip(names)
        .map(|((n, _), t)| format!("{n} {t}"))
        .collect();
    out.push_str(&shown.join(", "));
    out
}

async fn type_names(conn: &mut Connection, oids: &[u32]) -> Vec<String> {
    let mut names = Vec::new();
    for &oid in oids {
        let name = conn
            .query("SELECT format_type($1::oid, NULL)", &[&oid])
            .await
            .ok()
            .and_then(|rows| rows.first().and_then(|r| r.try_get::<String>(0).ok()))
            .unwrap_or_else(|| format!("oid {oid}"));
        names.push(name);
    }
    names
}

/// The same URL pointing at another database.
fn with_database(url: &str, db: &str) -> String {
    let (main, query) = url
        .split_once('?')
        .map_or((url, None), |(m, q)| (m, Some(q)));
    let scheme_end = main.find("://").map_or(0, |i| i + 3);
    let base = match main[scheme_end..].find('/') {
        Some(slash) => &main[..scheme_end + slash],
        None => main,
    };
    match query {
        Some(q) => format!("{base}/{db}?{q}"),
        None => format!("{base}/{db}"),
    }
}
