//! Start-up verification (`Connection::verify_compiled`, what `Pool::verify` runs on the
//! registered statements): a clean start, then each kind of drift, named by file:line.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use qail_pg::template::{Compiled, NotNull, Template};
use qail_pg::types::oid;
use qail_pg::{Connection, Pool};

/// A fresh database with `users`, `orders` and `greet(text)`, and a connection to it.
async fn database() -> (Connection, String) {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "qail_verify_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let mut admin = super::connect().await;
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .await
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    admin.close().await;
    let mut conn = Connection::connect_with(&super::config().dbname(&name))
        .await
        .unwrap();
    conn.batch_execute(
        "CREATE EXTENSION citext;
         CREATE TABLE users (id int8 PRIMARY KEY, email text NOT NULL, nick text);
         CREATE TABLE orders (id int8 PRIMARY KEY, name text NOT NULL);
         CREATE FUNCTION greet(text) RETURNS text LANGUAGE sql AS $$ SELECT 'hi ' || $1 $$;",
    )
    .await
    .unwrap();
    (conn, name)
}

async fn drop_database(conn: Connection, name: String) {
    conn.close().await;
    let mut admin = super::connect().await;
    admin
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await
        .unwrap();
}

fn statements() -> Vec<Compiled> {
    let at = |sql: &str, params: &[u32], columns: &[(&str, u32, &str)], source| {
        Template::leak_at(sql, params, columns, source).unwrap()
    };
    vec![
        Compiled {
            template: at(
                "SELECT id, email, nick FROM users WHERE id = $1",
                &[oid::INT8],
                &[
                    ("id", oid::INT8, "int8"),
                    ("email", oid::TEXT, "text"),
                    ("nick", oid::TEXT, "text"),
                ],
                "src/users.rs:42",
            ),
            not_null: &[NotNull::Yes, NotNull::Yes, NotNull::No],
        },
        Compiled {
            template: at(
                "SELECT name FROM orders ORDER BY id",
                &[],
                &[("name", oid::TEXT, "text")],
                "src/orders.rs:3",
            ),
            not_null: &[NotNull::Yes],
        },
        Compiled {
            template: at(
                "SELECT greet($1) AS greeting",
                &[oid::TEXT],
                &[("greeting", oid::TEXT, "text")],
                "src/greet.rs:7",
            ),
            not_null: &[NotNull::Unknown],
        },
    ]
}

/// Verifies after `change`, returns the error message (empty when clean).
async fn after(change: &str) -> String {
    let (mut conn, name) = database().await;
    if !change.is_empty() {
        conn.batch_execute(change).await.unwrap();
    }
    let result = conn.verify_compiled(&statements()).await;
    drop_database(conn, name).await;
    match result {
        Ok(n) => {
            assert_eq!(n, 3);
            String::new()
        }
        Err(e) => {
            assert!(e.is_schema_drift(), "{e}");
            e.to_string()
        }
    }
}

#[tokio::test]
async fn a_clean_start_verifies() {
    assert_eq!(after("").await, "");
}

#[tokio::test]
async fn a_dropped_column_is_named_with_file_and_line() {
    let e = after("ALTER TABLE users DROP COLUMN nick").await;
    assert!(e.contains("1 of the 3 compiled statements"), "{e}");
    assert!(e.contains("column \"nick\" does not exist"), "{e}");
    assert!(e.contains(": src/users.rs:42"), "{e}");
}

#[tokio::test]
async fn a_changed_type_is_named_with_file_and_line() {
    let e = after("ALTER TABLE users ALTER COLUMN email TYPE citext").await;
    assert!(
        e.contains("column `email` of `users` is now citext, compiled as text: src/users.rs:42"),
        "{e}"
    );
    assert!(!e.contains("src/orders.rs"), "{e}");
}

#[tokio::test]
async fn a_new_not_null_is_named_with_file_and_line() {
    let e = after("ALTER TABLE users ALTER COLUMN nick SET NOT NULL").await;
    assert!(
        e.contains(
            "column `nick` of `users` is now NOT NULL, compiled as nullable: src/users.rs:42"
        ),
        "{e}"
    );
    let e = after("ALTER TABLE orders ALTER COLUMN name DROP NOT NULL").await;
    assert!(
        e.contains(
            "column `name` of `orders` is now nullable, compiled as NOT NULL: src/orders.rs:3"
        ),
        "{e}"
    );
}

#[tokio::test]
async fn a_check_that_forbids_null_makes_a_column_not_null() {
    // What `schema pull` reads as NOT NULL: a validated CHECK (column IS NOT NULL).
    let e = after("ALTER TABLE users ADD CONSTRAINT nick_set CHECK (nick IS NOT NULL)").await;
    assert!(
        e.contains(
            "column `nick` of `users` is now NOT NULL, compiled as nullable: src/users.rs:42"
        ),
        "{e}"
    );
    let e = after("ALTER TABLE users ADD CONSTRAINT nick_set CHECK (nick IS NOT NULL AND id > 0)")
        .await;
    assert!(
        e.contains("column `nick` of `users` is now NOT NULL"),
        "{e}"
    );
    // Not yet validated, or NULL still allowed by an OR: nothing changed.
    let e = after(
        "ALTER TABLE users ADD CONSTRAINT nick_set CHECK (nick IS NOT NULL) NOT VALID;
         ALTER TABLE orders ADD CONSTRAINT named CHECK (name IS NOT NULL OR id > 0)",
    )
    .await;
    assert_eq!(e, "");
}

#[tokio::test]
async fn a_changed_parameter_type_is_named_with_file_and_line() {
    // Parsed with the compiled int8 the statement still runs (int4 = int8 exists); what the
    // schema makes of `$1` is int4 now.
    let e = after("ALTER TABLE users ALTER COLUMN id TYPE int4").await;
    assert!(
        e.contains("parameter $1 is now int4, compiled as int8: src/users.rs:42"),
        "{e}"
    );
    // greet(text) replaced by greet(uuid): the compiled text parameter is refused.
    let e = after(
        "DROP FUNCTION greet(text);
         CREATE FUNCTION greet(uuid) RETURNS text LANGUAGE sql AS $$ SELECT 'hi ' || $1 $$",
    )
    .await;
    assert!(
        e.contains("parameter $1 is now uuid, compiled as text: src/greet.rs:7"),
        "{e}"
    );
    assert!(
        e.contains("the server refuses it (function greet(text) does not exist): src/greet.rs:7"),
        "{e}"
    );
}

#[tokio::test]
async fn a_missing_table_is_named_with_file_and_line() {
    let e = after("DROP TABLE orders").await;
    assert!(e.contains("relation \"orders\" does not exist"), "{e}");
    assert!(e.contains(": src/orders.rs:3"), "{e}");
    assert!(!e.contains("src/users.rs"), "{e}");
}

#[tokio::test]
async fn a_missing_function_is_named_with_file_and_line() {
    let e = after("DROP FUNCTION greet(text)").await;
    assert!(e.contains("function greet(text) does not exist"), "{e}");
    assert!(e.contains(": src/greet.rs:7"), "{e}");
}

#[tokio::test]
async fn every_drifted_statement_is_named() {
    let e = after(
        "DROP TABLE orders; DROP FUNCTION greet(text); ALTER TABLE users ALTER COLUMN id TYPE int4",
    )
    .await;
    assert!(e.contains("3 of the 3 compiled statements"), "{e}");
    for at in ["src/users.rs:42", "src/orders.rs:3", "src/greet.rs:7"] {
        assert!(e.contains(at), "{e}");
    }
    assert!(
        e.contains("column `id` of `users` is now int4, compiled as int8"),
        "{e}"
    );
}

#[tokio::test]
async fn a_thousand_statements_verify_in_one_round_trip() {
    let (mut conn, name) = database().await;
    let many: Vec<Compiled> = (0..1000)
        .map(|i| Compiled {
            template: Template::leak_at(
                &format!("SELECT id, email, nick FROM users WHERE id = $1 AND {i} = {i}"),
                &[oid::INT8],
                &[
                    ("id", oid::INT8, "int8"),
                    ("email", oid::TEXT, "text"),
                    ("nick", oid::TEXT, "text"),
                ],
                "src/many.rs:1",
            )
            .unwrap(),
            not_null: &[NotNull::Yes, NotNull::Yes, NotNull::No],
        })
        .collect();
    let started = Instant::now();
    let n = conn.verify_compiled(&many).await.unwrap();
    let took = started.elapsed();
    println!("verified {n} statements in {took:?}");
    assert_eq!(n, 1000);
    assert!(took.as_millis() < 1000, "{took:?}");
    // The connection is usable afterwards.
    let row = conn.query_one("SELECT 1::int4", &[]).await.unwrap();
    assert_eq!(row.get::<i32>(0), 1);
    drop_database(conn, name).await;
}

#[tokio::test]
async fn a_pool_can_refuse_to_open_on_drift() {
    // The registry of this binary is empty (no `qail!` in qail-pg's tests): it opens.
    let pool = Pool::builder()
        .verify_statements(true)
        .connect_with(super::config())
        .await
        .unwrap();
    assert_eq!(pool.verify().await.unwrap(), 0);
}
