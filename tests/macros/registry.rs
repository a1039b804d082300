//! The registry of compiled statements that `Pool::verify` reads: every `qail!` of the binary
//! is in it, a query with optional clauses or sort choices in its full form.
//!
//! Built with `--release`, fat LTO and `-C link-arg=-Wl,--gc-sections` these tests check that
//! the linker keeps the entries: `CARGO_PROFILE_RELEASE_LTO=fat
//! RUSTFLAGS="-C link-arg=-Wl,--gc-sections" cargo test --release --test macros registry`.

use qail::qail;
use qail_pg::template::{Compiled, NotNull, STATEMENTS};

use crate::connect_in;

/// The registered statements written at `line` of this file.
fn registered_at(line: u32) -> Vec<&'static Compiled> {
    let source = format!("tests/macros/registry.rs:{line}");
    STATEMENTS
        .iter()
        .filter(|c| c.template.source == source)
        .collect()
}

enum Order {
    Name,
    Newest,
}

#[test]
fn every_qail_of_the_binary_is_registered_once() {
    let id = qail::uuid::Uuid::nil();
    let line = line!() + 1;
    let query = qail!("SELECT name, code FROM harbors WHERE id = $1", id);
    let found = registered_at(line);
    assert_eq!(found.len(), 1, "{:?}", &*STATEMENTS);
    // The statement the query runs, as the registry holds it (decoded from its record).
    let (registered, runs) = (found[0].template, query.template());
    assert_eq!(
        (registered.name, registered.sql(), registered.param_oids),
        (runs.name, runs.sql(), runs.param_oids)
    );
    assert_eq!(registered.parse(), runs.parse());
    assert_eq!(
        registered.columns().collect::<Vec<_>>(),
        runs.columns().collect::<Vec<_>>()
    );
    // name is NOT NULL, code nullable.
    assert_eq!(found[0].not_null, &[NotNull::Yes, NotNull::No]);
    // Each statement once, however many queries the binary holds.
    let mut sources: Vec<(&str, &str)> = STATEMENTS
        .iter()
        .map(|c| (c.template.source, c.template.name))
        .collect();
    let all = sources.len();
    sources.sort_unstable();
    sources.dedup();
    assert_eq!(sources.len(), all);
}

#[test]
fn not_null_is_the_table_column_s_not_the_result_s() {
    // The WHERE makes the result NOT NULL, but the column `code` is nullable: what the
    // server's pg_attribute says is compared, so that is what is registered (anything else
    // is a false "now nullable" from `verify`).
    let line = line!() + 1;
    let _query = qail!("SELECT code FROM harbors WHERE code IS NOT NULL");
    let found = registered_at(line);
    assert_eq!(found.len(), 1, "{:?}", &*STATEMENTS);
    assert_eq!(found[0].not_null, &[NotNull::No]);
}

#[test]
fn a_dynamic_query_is_registered_with_every_clause_and_its_first_choice() {
    let country: Option<&str> = None;
    let limit: Option<i64> = Some(5);
    let order = if limit.is_some() {
        Order::Newest
    } else {
        Order::Name
    };
    let line = line!() + 1;
    let query = qail!(
        "SELECT id, name FROM harbors WHERE true {? AND country = {country} }
         ORDER BY {sort} {? LIMIT {limit} }",
        sort = match order {
            Order::Name => "name, id",
            Order::Newest => "created_at DESC, id",
        }
    );
    let found = registered_at(line);
    assert_eq!(found.len(), 1, "{:?}", &*STATEMENTS);
    let sql = found[0].template.sql();
    assert!(sql.contains("AND country = $1"), "{sql}");
    assert!(sql.contains("ORDER BY name, id"), "{sql}");
    assert!(sql.contains("LIMIT $2"), "{sql}");
    // The query run here is another combination, with the full one's parameter types.
    assert!(!query.template().sql().contains("country"));
    assert_eq!(query.template().param_oids, found[0].template.param_oids);
}

#[tokio::test]
async fn verify_checks_the_optional_clauses_of_a_dynamic_query() {
    // Here harbors has no column country, which only the optional clause reads.
    let ddl = "CREATE TABLE harbors (id uuid PRIMARY KEY, name text NOT NULL, code varchar(8),
               latitude float8, longitude float8, timezone text,
               created_at timestamptz NOT NULL DEFAULT now());";
    let mut conn = connect_in("registry", ddl).await;
    let country: Option<&str> = None;
    let line = line!() + 1;
    let _unused = qail!("SELECT id FROM harbors WHERE true {? AND country = {country} }");
    let err = conn.verify().await.unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&format!(
            "the server refuses it (column \"country\" does not exist): \
             tests/macros/registry.rs:{line}"
        )),
        "{message}"
    );
}
