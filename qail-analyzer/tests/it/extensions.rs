//! Extension types, operators and casts pulled into the snapshot (citext, pg_trgm, hstore,
//! ltree): queries over them are typed like the server's Parse + Describe says.

use qail_analyzer::{analyze, render, type_oid};
use qail_schema::Snapshot;
use qail_schema::snapshot::TypeRef;

use crate::util;

/// The OID of a built-in type, or of a base type the snapshot pulled (same database).
fn oid_of(t: &TypeRef, snap: &Snapshot) -> Option<u32> {
    type_oid(t).or_else(|| {
        let scalar = TypeRef {
            array_dims: 0,
            ..t.clone()
        };
        let b = snap.base_type(&scalar)?;
        Some(if t.array_dims > 0 { b.array_oid } else { b.oid })
    })
}

/// (extension, query) pairs; a query runs only when its extension is available.
const QUERIES: &[(&str, &str)] = &[
    ("citext", "SELECT id, email FROM people WHERE email = $1"),
    (
        "citext",
        "SELECT id FROM people WHERE email = 'A@B.C' AND nick <> email",
    ),
    (
        "citext",
        "SELECT email FROM people WHERE email LIKE 'a%' ORDER BY email",
    ),
    (
        "citext",
        "SELECT email FROM people WHERE email ILIKE $1 OR email NOT LIKE $2",
    ),
    (
        "citext",
        "SELECT email FROM people WHERE email ~ '^a' AND email !~* $1",
    ),
    (
        "citext",
        "SELECT email || '!' AS e, email::text AS t, upper(email) AS u FROM people",
    ),
    ("citext", "SELECT id FROM people WHERE email = $1::text"),
    (
        "citext",
        "SELECT email FROM people WHERE email IN ('a', 'b') OR email > $1",
    ),
    (
        "citext",
        "INSERT INTO people (id, email) VALUES ($1, $2) RETURNING email, nick",
    ),
    (
        "citext",
        "UPDATE people SET nick = $1 WHERE email = $2 RETURNING nick",
    ),
    (
        "citext",
        "SELECT count(DISTINCT email) AS n FROM people GROUP BY lower(email)",
    ),
    (
        "citext",
        "SELECT max(email) AS m, min(nick) AS n, max(replace(email, 'a', 'b')) AS r FROM people",
    ),
    ("pg_trgm", "SELECT id FROM people WHERE bio % $1"),
    (
        "pg_trgm",
        "SELECT bio <-> $1 AS dist, similarity(bio, $1) AS s FROM people ORDER BY 1",
    ),
    (
        "hstore",
        "SELECT attrs -> 'k' AS v, attrs -> $1 AS w FROM people",
    ),
    (
        "hstore",
        "SELECT attrs ? 'k' AS has, attrs @> $1 AS sub FROM people",
    ),
    (
        "hstore",
        "SELECT attrs || $1 AS merged FROM people WHERE attrs ?| $2",
    ),
    (
        "ltree",
        "SELECT path FROM people WHERE path <@ 'a.b' OR path ~ $1",
    ),
    (
        "ltree",
        "SELECT nlevel(path) AS n, path || 'x' AS deeper FROM people",
    ),
];

#[tokio::test]
async fn extension_operators_and_types_are_typed_like_the_server() {
    let db = "qail_extension_operators";
    let mut conn = util::scratch_db(db).await;
    let available: Vec<String> = conn
        .query(
            "SELECT name::text FROM pg_available_extensions \
             WHERE name IN ('citext', 'pg_trgm', 'hstore', 'ltree')",
            &[],
        )
        .await
        .expect("pg_available_extensions")
        .iter()
        .map(|r| r.get::<String>(0))
        .collect();
    let mut columns = vec!["id int PRIMARY KEY", "bio text"];
    for (ext, column) in [
        ("citext", "email citext NOT NULL, nick citext"),
        ("hstore", "attrs hstore"),
        ("ltree", "path ltree"),
    ] {
        if available.iter().any(|a| a == ext) {
            columns.push(column);
        }
    }
    for ext in &available {
        conn.batch_execute(&format!("CREATE EXTENSION \"{ext}\""))
            .await
            .expect("create the extension");
    }
    conn.batch_execute(&format!("CREATE TABLE people ({})", columns.join(", ")))
        .await
        .expect("create the table");
    let snap = qail_schema::introspect::pull(&mut conn, &[])
        .await
        .expect("pull");
    let citext = snap.base_types.iter().find(|b| b.name == "citext");
    if available.iter().any(|a| a == "citext") {
        let c = citext.expect("citext pulled as a base type");
        assert_eq!((c.category, c.extension.as_deref()), ('S', Some("citext")));
        assert!(
            snap.operators
                .iter()
                .any(|o| o.name == "~~" && o.left.as_ref().is_some_and(|l| l.name == "citext"))
        );
        assert!(
            snap.casts
                .iter()
                .any(|c| c.from.name == "citext" && c.to.name == "text")
        );
    }
    // Note: a snapshot written and read back types the same (the new lists are in the file).
    let snap = Snapshot::from_json(&snap.to_json()).expect("the snapshot reads back");

    let (mut ran, mut skipped, mut failures) = (0, Vec::new(), Vec::new());
    for (ext, sql) in QUERIES {
        if !available.iter().any(|a| a == ext) {
            skipped.push(*ext);
            continue;
        }
        ran += 1;
        let server = match conn.prepare(sql).await {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{sql}\n  the server rejects it: {e}"));
                continue;
            }
        };
        let ours = match analyze(sql, &snap) {
            Ok(a) => a,
            Err(diags) => {
                let shown: Vec<String> = diags.iter().map(|d| render(sql, d)).collect();
                failures.push(format!("{sql}\n  {}", shown.join("\n  ")));
                continue;
            }
        };
        let got_params: Vec<Option<u32>> =
            ours.params.iter().map(|p| oid_of(&p.ty, &snap)).collect();
        let want_params: Vec<Option<u32>> = server.params().iter().copied().map(Some).collect();
        let got_cols: Vec<(String, Option<u32>)> = ours
            .columns
            .iter()
            .map(|c| (c.name.clone(), oid_of(&c.ty, &snap)))
            .collect();
        let want_cols: Vec<(String, Option<u32>)> = server
            .columns()
            .iter()
            .map(|c| (c.name().to_owned(), Some(c.type_oid())))
            .collect();
        if got_params != want_params || got_cols != want_cols {
            failures.push(format!(
                "{sql}\n  server params {want_params:?} cols {want_cols:?}\n  ours   params {got_params:?} cols {got_cols:?}"
            ));
        }
    }
    drop(conn);
    util::drop_db(db).await;
    if !skipped.is_empty() {
        eprintln!("extensions not available on this server, their queries skipped: {skipped:?}");
    }
    assert!(ran >= 11, "only {ran} queries ran (citext is needed)");
    assert!(
        failures.is_empty(),
        "{} of {ran} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
