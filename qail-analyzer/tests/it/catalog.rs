//! qail-catalog against the server: the committed generated table is what the server's
//! pg_catalog renders to, and every overlay entry saying "never NULL for non-NULL input" holds
//! on the inputs we can generate.

use qail_catalog::{Function, Null, Operator};
use qail_pg::Connection;

use crate::util::{connect, url};

#[path = "../../../tools/src/bin/gen_catalog/fetch.rs"]
pub(crate) mod fetch;

/// Every server this test reaches (`DATABASE_URL`, and the `MAJOR=URL` lines of
/// `QAIL_PG_URLS` that `scripts/pg-versions urls` prints): the committed table's entries for
/// its major version are what its pg_catalog renders to; with a server of every supported
/// version, the whole file is what they render to together.
#[tokio::test]
async fn catalog_is_current() {
    let committed = include_str!("../../../qail-catalog/src/generated.rs");
    let mut servers = Vec::new();
    let mut failures = Vec::new();
    for url in fetch::urls() {
        let mut conn = connect(&url).await;
        let rows = fetch::rows(&mut conn).await;
        if let Err(e) = qail_catalog::render::check(committed, &rows) {
            failures.push(format!("{url}: {e}"));
        }
        servers.push(rows);
    }
    let majors: Vec<String> = servers
        .iter()
        .filter_map(|r| r.major().ok())
        .map(|m| m.to_string())
        .collect();
    eprintln!("catalog checked against PostgreSQL {}", majors.join(", "));
    if failures.is_empty()
        && let Ok(fresh) = qail_catalog::render::render(&servers)
        && fresh != committed
    {
        let line = fresh
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| fresh.lines().count().min(committed.lines().count()));
        failures.push(format!(
            "the whole file (first difference at line {}):\n  servers:   {}\n  committed: {}",
            line + 1,
            fresh.lines().nth(line).unwrap_or("<end>"),
            committed.lines().nth(line).unwrap_or("<end>"),
        ));
    }
    assert!(
        failures.is_empty(),
        "qail-catalog/src/generated.rs differs from what the servers' pg_catalog and \
         qail-catalog/input/*.txt render; run scripts/gen-catalog and review the diff:\n{}",
        failures.join("\n")
    );
}

/// Non-NULL sample values of a type, as SQL literals (without the cast).
fn samples(ty: &str) -> &'static [&'static str] {
    match ty {
        "bool" => &["true", "false"],
        "int2" | "int4" | "oid" => &["0", "1", "-3", "42"],
        "int8" => &["0", "1", "-3", "10000000000"],
        "float4" | "float8" | "numeric" => &["0", "1.5", "-2.25", "12345.678"],
        "money" => &["0", "1.50", "-2"],
        // Note: `day` and `hex` make date_trunc/date_part and encode/decode run.
        "text" | "varchar" | "bpchar" | "name" => {
            &["", "abc", "Hello, World", "a.b.c", "1", "day", "hex"]
        }
        "char" => &["a", "Z"],
        "bytea" => &["\\x", "\\x00ff", "abc"],
        "date" => &["2024-02-29", "1999-12-31", "1970-01-01"],
        "time" => &["12:34:56", "00:00", "23:59:59.5"],
        "timetz" => &["12:34:56+02", "00:00+00"],
        "timestamp" => &["2024-02-29 12:34:56", "1970-01-01", "1999-12-31 23:59:59.5"],
        "timestamptz" => &[
            "2024-02-29 12:34:56+00",
            "1970-01-01+00",
            "1999-12-31 23:59:59.5-05",
        ],
        "interval" => &["1 day", "-2 hours", "1 year 2 months 3 seconds"],
        "uuid" => &[
            "00000000-0000-0000-0000-000000000000",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ],
        "json" | "jsonb" => &[
            "{}",
            "{\"a\": 1, \"b\": [1, 2]}",
            "[1, \"x\", null]",
            "\"s\"",
            "3",
        ],
        "jsonpath" => &["$.a", "$[*]", "strict $.b"],
        "inet" => &["192.168.0.1/24", "::1", "10.0.0.1"],
        "cidr" => &["192.168.0.0/24", "::/0"],
        "macaddr" => &["08:00:2b:01:02:03"],
        "tsvector" => &["a b c", "fat:2 rat:3", ""],
        "tsquery" => &["a & b", "fat | rat", "!x"],
        "regconfig" => &["english", "simple"],
        "int4range" | "int8range" | "numrange" => &["[1,5)", "empty", "(,3]"],
        "daterange" => &["[2024-01-01,2024-02-01)", "empty"],
        "tsrange" | "tstzrange" => &["[2024-01-01,2024-02-01)", "empty"],
        "_text" | "_varchar" | "_name" => &["{}", "{a,b}", "{a,NULL,c}"],
        "_int4" | "_int2" | "_int8" | "_float8" | "_numeric" => &["{}", "{1,2,3}", "{1,NULL}"],
        "_bool" => &["{}", "{true,false}"],
        _ => &[],
    }
}

/// The concrete type generated for a (polymorphic) argument type.
fn concrete(ty: &str) -> &str {
    match ty {
        "any" | "anyelement" | "anynonarray" | "anycompatible" | "anycompatiblenonarray" => "int4",
        "anyarray" | "anycompatiblearray" => "_int4",
        other => other,
    }
}

/// Functions with effects outside the query (locks, notifications, sequences) are not run.
fn has_effects(name: &str) -> bool {
    [
        "pg_advisory",
        "pg_try_advisory",
        "pg_notify",
        "nextval",
        "setval",
        "pg_sleep",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// The k-th combination of sample arguments (each argument cycles through its samples,
/// shifted by its position; `keep` chooses which samples of the last argument may be used),
/// or `None` when some argument type has no samples.
fn arguments_where(types: &[&str], k: usize, keep: impl Fn(&str) -> bool) -> Option<Vec<String>> {
    let last = types.len().saturating_sub(1);
    types
        .iter()
        .enumerate()
        .map(|(i, ty)| {
            let ty = concrete(ty);
            let s: Vec<&str> = samples(ty)
                .iter()
                .copied()
                .filter(|s| i != last || keep(s))
                .collect();
            let lit = s.get((k + i) % s.len().max(1))?;
            Some(format!(
                "'{}'::pg_catalog.\"{ty}\"",
                lit.replace('\'', "''")
            ))
        })
        .collect()
}

fn combinations(types: &[&str]) -> usize {
    types
        .iter()
        .map(|t| samples(concrete(t)).len())
        .max()
        .unwrap_or(1)
        .max(1)
}

/// Runs `sql` (one boolean column: "the result is NULL"); `None` when the server rejects the
/// input (an error is not a NULL).
async fn is_null(conn: &mut Connection, sql: &str) -> Option<bool> {
    let rows = conn.query(sql, &[]).await.ok()?;
    rows.first().map(|r| r.get::<bool>(0))
}

fn call_sql(f: &Function, args: &[String]) -> Option<String> {
    let call = match (f.kind, args) {
        ('a', []) => format!("pg_catalog.{}(*)", f.name),
        _ => format!("pg_catalog.{}({})", f.name, args.join(", ")),
    };
    Some(match (f.set, f.kind) {
        (true, _) if f.result == "record" => return None,
        (true, _) => format!("SELECT coalesce(bool_or(v IS NULL), false) FROM {call} AS r(v)"),
        (false, 'w') => format!("SELECT ({call} OVER ()) IS NULL"),
        _ => format!("SELECT ({call}) IS NULL"),
    })
}

fn operator_sql(o: &Operator, args: &[String]) -> String {
    match args {
        [right] => format!("SELECT (OPERATOR(pg_catalog.{}) {right}) IS NULL", o.name),
        [left, right] => format!(
            "SELECT ({left} OPERATOR(pg_catalog.{}) {right}) IS NULL",
            o.name
        ),
        _ => unreachable!("operators take one or two operands"),
    }
}

/// Runs every generated input of one overlay entry; `Err` names an input that gave NULL,
/// `Ok(true)` when at least one input ran.
async fn check(
    conn: &mut Connection,
    types: &[&str],
    null: Null,
    sql: impl Fn(&[String]) -> Option<String>,
) -> Result<bool, String> {
    let mut ran = false;
    for k in 0..combinations(types) {
        // Note: Null::Format promises non-NULL only for a non-empty format (the last argument).
        let args = arguments_where(types, k, |s| null != Null::Format || !s.is_empty());
        let Some(args) = args else {
            return Ok(false);
        };
        let Some(sql) = sql(&args) else {
            return Ok(false);
        };
        match is_null(conn, &sql).await {
            Some(true) => return Err(sql),
            Some(false) => ran = true,
            None => {}
        }
    }
    Ok(ran)
}

#[tokio::test]
async fn catalog_overlay_never_null() {
    let mut conn = connect(&url()).await;
    conn.batch_execute("SET statement_timeout = '5s'")
        .await
        .expect("set a statement timeout");
    let (mut checked, mut skipped, mut failures) = (0, Vec::new(), Vec::new());
    for f in qail_catalog::FUNCTIONS
        .iter()
        .filter(|f| f.null != Null::Maybe)
    {
        let label = format!("{}({})", f.name, f.args.join(","));
        if has_effects(f.name) {
            skipped.push(label);
            continue;
        }
        match check(&mut conn, f.args, f.null, |args| call_sql(f, args)).await {
            Ok(true) => checked += 1,
            Ok(false) => skipped.push(label),
            Err(sql) => failures.push(format!("{label}: {sql}")),
        }
    }
    for o in qail_catalog::OPERATORS
        .iter()
        .filter(|o| o.null != Null::Maybe)
    {
        let label = format!("operator {}({},{})", o.name, o.left, o.right);
        let types: Vec<&str> = [o.left, o.right]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect();
        match check(&mut conn, &types, o.null, |args| {
            Some(operator_sql(o, args))
        })
        .await
        {
            Ok(true) => checked += 1,
            Ok(false) => skipped.push(label),
            Err(sql) => failures.push(format!("{label}: {sql}")),
        }
    }
    eprintln!(
        "overlay: {checked} entries checked on the server, {} skipped (no generated input, or effects): {}",
        skipped.len(),
        skipped.join(", ")
    );
    assert!(
        failures.is_empty(),
        "overlay entries returned NULL for non-NULL input (remove them from \
         qail-catalog/input/nonnull.txt or fix their rule):\n{}",
        failures.join("\n")
    );
    assert!(
        checked >= 400,
        "only {checked} overlay entries could be checked"
    );
}
