//! The differential check shared by the corpus and the real-application suites: a query's
//! parameter types, column names and column types from the analyzer must equal what the
//! server's Parse + Describe reports.

use std::collections::HashMap;

use qail_analyzer::{analyze, render, type_oid};
use qail_pg::Connection;
use qail_schema::Snapshot;
use qail_schema::snapshot::{RelationKind, TypeRef};

pub(crate) fn base_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// The same URL pointing at another database.
pub(crate) fn with_database(url: &str, db: &str) -> String {
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

/// The name without the analyzer's alias suffixes (`!`, `?`, `: Type`).
pub(crate) fn plain_name(name: &str) -> String {
    if name == "?column?" {
        return name.to_string();
    }
    let head = match name.find(':').filter(|&i| !name[i..].starts_with("::")) {
        Some(i) => &name[..i],
        None => name,
    };
    match head.trim_end().trim_end_matches(['!', '?']) {
        // Note: a name that is only `?` or `!` is a name.
        "" => name.to_string(),
        plain => plain.to_string(),
    }
}

/// `schema.name[]` (schema omitted for pg_catalog and public): the key of a type.
pub(crate) fn type_key(t: &TypeRef) -> String {
    let base = if t.schema == "pg_catalog" || t.schema == "public" {
        t.name.clone()
    } else {
        format!("{}.{}", t.schema, t.name)
    };
    format!("{base}{}", "[]".repeat(t.array_dims as usize))
}

/// OIDs of a snapshot's user types (they differ per database), scalar and array.
pub(crate) async fn user_type_oids(
    conn: &mut Connection,
    snapshot: &Snapshot,
) -> HashMap<String, u32> {
    let mut map = HashMap::new();
    // Note: a table's or view's row type is a type too (the type of its whole-row reference).
    let names = snapshot
        .types
        .iter()
        .map(|t| (&t.schema, &t.name))
        .chain(
            snapshot
                .relations
                .iter()
                .filter(|r| r.kind != RelationKind::Sequence)
                .map(|r| (&r.schema, &r.name)),
        )
        .chain(snapshot.base_types.iter().map(|b| (&b.schema, &b.name)));
    for (schema, type_name) in names {
        let t = (schema.clone(), type_name.clone());
        let name = format!("\"{}\".\"{}\"", t.0, t.1);
        let rows = conn
            .query(
                "SELECT oid, typarray FROM pg_type WHERE oid = to_regtype($1)",
                &[&name],
            )
            .await
            .expect("the catalog answers");
        let row = rows
            .first()
            .expect("the snapshot's types exist on the server");
        let scalar = TypeRef {
            schema: t.0.clone(),
            name: t.1.clone(),
            oid: None,
            array_dims: 0,
        };
        let array = TypeRef {
            array_dims: 1,
            ..scalar.clone()
        };
        map.insert(type_key(&scalar), row.get::<u32>(0));
        map.insert(type_key(&array), row.get::<u32>(1));
    }
    map
}

pub(crate) fn oid_of(t: &TypeRef, users: &HashMap<String, u32>) -> u32 {
    type_oid(t)
        .or_else(|| users.get(&type_key(t)).copied())
        .unwrap_or(0)
}

/// Prepares `sql` on the server and analyzes it offline; a description of the difference,
/// if there is one.
pub(crate) async fn compare(
    conn: &mut Connection,
    snapshot: &Snapshot,
    users: &HashMap<String, u32>,
    sql: &str,
) -> Result<(), String> {
    let server = conn
        .prepare(sql)
        .await
        .map_err(|e| format!("the server rejects the query: {e}"))?;
    let ours = analyze(sql, snapshot).map_err(|diags| {
        let shown: Vec<String> = diags.iter().map(|d| render(sql, d)).collect();
        format!("the analyzer rejects the query:\n{}", shown.join("\n"))
    })?;
    let want_params = server.params().to_vec();
    let got_params: Vec<u32> = ours.params.iter().map(|p| oid_of(&p.ty, users)).collect();
    let want_cols: Vec<(String, u32)> = server
        .columns()
        .iter()
        .map(|c| (plain_name(c.name()), c.type_oid()))
        .collect();
    let got_cols: Vec<(String, u32)> = ours
        .columns
        .iter()
        .map(|c| (c.name.clone(), oid_of(&c.ty, users)))
        .collect();
    if want_params != got_params || want_cols != got_cols {
        return Err(format!(
            "server params {want_params:?} cols {want_cols:?}\n  ours   params {got_params:?} cols {got_cols:?}"
        ));
    }
    Ok(())
}

/// Creates a fresh database `db` on the server of `DATABASE_URL`; returns its URL.
pub(crate) async fn scratch_database(db: &str) -> String {
    let url = base_url();
    let mut admin = Connection::connect(&url)
        .await
        .expect("connect to DATABASE_URL");
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .await
        .expect("drop the scratch database");
    admin
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await
        .expect("create the scratch database");
    admin.close().await;
    with_database(&url, db)
}

/// Drops a database made by [`scratch_database`].
pub(crate) async fn drop_database(db: &str) {
    let mut admin = Connection::connect(&base_url())
        .await
        .expect("connect to DATABASE_URL");
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .await
        .expect("drop the scratch database");
    admin.close().await;
}

#[test]
fn database_urls_are_rewritten() {
    assert_eq!(
        with_database("postgres://u@h:5432/postgres", "x"),
        "postgres://u@h:5432/x"
    );
    assert_eq!(
        with_database("postgres://u@h/db?sslmode=disable", "x"),
        "postgres://u@h/x?sslmode=disable"
    );
    assert_eq!(with_database("postgres://u@h", "x"), "postgres://u@h/x");
    assert_eq!(plain_name("name!"), "name");
    assert_eq!(plain_name("origin: String"), "origin");
    assert_eq!(plain_name("?"), "?");
}
