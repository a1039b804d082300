//! Times `introspect::pull` on a large schema: 1,000 tables of 20 columns (with primary keys,
//! a unique constraint, a foreign key and defaults) in schema `qail_pull_large`.
//!
//! ```text
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo run --release -p qail-schema --example pull_large
//! ```

use std::fmt::Write as _;
use std::time::Instant;

const SCHEMA: &str = "qail_pull_large";
const TABLES: usize = 1000;

fn ddl() -> String {
    let mut sql = format!("CREATE SCHEMA {SCHEMA};\n");
    for t in 0..TABLES {
        let _ = write!(sql, "CREATE TABLE {SCHEMA}.t{t} (id bigserial PRIMARY KEY");
        for c in 1..19 {
            let ty = ["text", "int4", "timestamptz", "numeric", "bool", "jsonb"][c % 6];
            let _ = write!(
                sql,
                ", c{c} {ty}{}",
                if c % 3 == 0 { " NOT NULL" } else { "" }
            );
        }
        let parent = if t == 0 {
            String::new()
        } else {
            format!(" REFERENCES {SCHEMA}.t{}", t - 1)
        };
        let _ = writeln!(sql, ", parent bigint{parent}, UNIQUE (c1, c2));");
    }
    sql
}

/// Drops the schema a hundred tables at a time: all at once needs more locks than a default
/// server has (max_locks_per_transaction).
async fn drop_schema(conn: &mut qail_pg::Connection) -> Result<(), qail_pg::Error> {
    for chunk in (0..TABLES).collect::<Vec<_>>().chunks(100) {
        let names: Vec<String> = chunk.iter().map(|t| format!("{SCHEMA}.t{t}")).collect();
        conn.batch_execute(&format!(
            "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '{SCHEMA}') THEN \
             EXECUTE 'DROP TABLE IF EXISTS {} CASCADE'; END IF; END $$",
            names.join(", ")
        ))
        .await?;
    }
    conn.batch_execute(&format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE"))
        .await
}

/// Times each catalog query on its own, from a fresh connection.
async fn breakdown(
    conn: &mut qail_pg::Connection,
    schemas: &[String],
) -> Result<(), qail_pg::Error> {
    let param = serde_json::to_string(schemas).expect("strings serialize");
    for (key, sql) in qail_schema::introspect::catalog_queries() {
        let started = Instant::now();
        let rows = conn.query(sql, &[&param]).await?;
        let len = rows.first().map_or(0, |r| r.get::<String>(0).len());
        println!(
            "  query {key}: {:?} ({} KiB)",
            started.elapsed(),
            len / 1024
        );
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let mut conn = qail_pg::Connection::connect(&url).await?;
    drop_schema(&mut conn).await?;
    let started = Instant::now();
    conn.batch_execute(&ddl()).await?;
    println!(
        "created {TABLES} tables × 20 columns in {:?}",
        started.elapsed()
    );

    let schemas = vec![SCHEMA.to_owned()];
    breakdown(&mut conn, &schemas).await?;
    let mut best = None;
    for run in 1..=3 {
        let started = Instant::now();
        let snap = qail_schema::introspect::pull(&mut conn, &schemas).await?;
        let pulled = started.elapsed();
        let started = Instant::now();
        let json = snap.to_json();
        let written = started.elapsed();
        let columns: usize = snap.relations.iter().map(|r| r.columns.len()).sum();
        println!(
            "run {run}: pulled {} relations / {columns} columns in {pulled:?}; to_json {} KiB in {written:?}",
            snap.relations.len(),
            json.len() / 1024
        );
        best = Some(best.map_or(pulled, |b: std::time::Duration| b.min(pulled)));
    }
    drop_schema(&mut conn).await?;
    println!("best pull: {:?}", best.unwrap_or_default());
    Ok(())
}
