//! A snapshot that disagrees with the live table: the first execution fails with a schema
//! drift error naming the column, never a wrong value.

use qail::qail;

use crate::connect_in;

#[tokio::test]
async fn changed_column_type_is_schema_drift() {
    // The snapshot says harbors.name is text; here it is int4.
    let ddl =
        "CREATE TABLE harbors (id uuid PRIMARY KEY, name int4 NOT NULL, country text NOT NULL,
               code varchar(8), latitude float8, longitude float8, timezone text,
               created_at timestamptz NOT NULL DEFAULT now());
               INSERT INTO harbors (id, name, country) VALUES (gen_random_uuid(), 7, 'GR');";
    let mut conn = connect_in("drift", ddl).await;
    let err = qail!("SELECT id, name FROM harbors")
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    assert!(err.to_string().contains("name"), "{err}");
    // The error names where the query is written.
    assert!(
        err.to_string()
            .contains("the compiled query at tests/macros/drift.rs:"),
        "{err}"
    );
    // Counted in the pools' statistics (for every connection of the process).
    let pool = qail::Pool::connect(&crate::url()).await.unwrap();
    assert!(pool.stats().schema_drifts >= 1);
    pool.close().await;
    // The connection stays usable and the statement was not kept.
    let err = qail!("SELECT id, name FROM harbors")
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    let n = qail!("SELECT country FROM harbors")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(n[0].country, "GR");
}

#[tokio::test]
async fn verify_names_every_drifted_registered_statement_by_file_and_line() {
    // The statements of this test binary were registered by `qail!` at link time; here the
    // schema disagrees with the snapshot on harbors.name, so the ones that read it drift.
    let ddl =
        "CREATE TABLE harbors (id uuid PRIMARY KEY, name int4 NOT NULL, country text NOT NULL,
               code varchar(8), latitude float8, longitude float8, timezone text,
               created_at timestamptz NOT NULL DEFAULT now());";
    let mut conn = connect_in("verify", ddl).await;
    let line = line!() + 1;
    let _unused = qail!("SELECT name AS harbor_name FROM harbors");
    let err = conn.verify().await.unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&format!(
            "column `harbor_name` (`name` of `harbors`) is now int4, compiled as text: \
             tests/macros/drift.rs:{line}"
        )),
        "{message}"
    );
}
