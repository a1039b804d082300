//! The built-in signature table against the server's pg_proc: every function an application
//! can call is in qail-catalog's table, and the analyzer types a call of it exactly like the
//! server's Describe.
//!
//! "Can call": in `pg_catalog`, a function, aggregate or window function (procedures are
//! CALLed, not in queries), none of whose argument or result types is a value SQL cannot
//! write. Deliberately left out, with the reason:
//! - `internal`, `cstring`, `trigger`, `event_trigger`, `*_handler` and `opaque` arguments or
//!   results: type input/output, planner support, index and table access method, procedural
//!   language and trigger functions, only the server calls them;
//! - the input, output, receive, send, typmod and analyze functions of every type
//!   (`pg_type.typinput` …), for the same reason;
//! - functions taking `anyenum` or `record`, or returning `record` (the columns of a
//!   `record` come from a column definition list, not from the function).
//!
//! Not yet typed, a known gap the test holds to: calls over multirange types
//! (`int4multirange`, `range_agg`), which the analyzer does not model; any other call it
//! rejects fails the test.

use qail_analyzer::{analyze, type_oid};
use qail_schema::Snapshot;

use crate::util::connect;

/// The callable functions: name, argument typnames, whether VARIADIC.
const CALLABLE: &str = "\
SELECT p.proname::text,
       coalesce((SELECT string_agg(t.typname::text, ',' ORDER BY u.i)
                 FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS u(o, i)
                 JOIN pg_type t ON t.oid = u.o), ''),
       p.prokind::text
FROM pg_proc p
WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.prokind IN ('f', 'a', 'w')
  AND NOT EXISTS (SELECT 1 FROM unnest(p.proargtypes::oid[] || p.prorettype) AS u(o)
                  JOIN pg_type t ON t.oid = u.o
                  WHERE t.typname IN ('internal', 'cstring', 'trigger', 'event_trigger',
                                      'language_handler', 'fdw_handler', 'index_am_handler',
                                      'tsm_handler', 'table_am_handler', 'opaque', 'anyenum',
                                      'record'))
  AND NOT EXISTS (SELECT 1 FROM pg_type t
                  WHERE p.oid IN (t.typinput, t.typoutput, t.typreceive, t.typsend,
                                  t.typmodin, t.typmodout, t.typanalyze))";

/// A concrete argument for a (polymorphic) parameter type, as SQL.
fn argument(ty: &str) -> String {
    let concrete = match ty {
        "any" | "anyelement" | "anynonarray" | "anycompatible" | "anycompatiblenonarray" => "int4",
        "anyarray" | "anycompatiblearray" => "_int4",
        "anyrange" | "anycompatiblerange" => "int4range",
        "anymultirange" | "anycompatiblemultirange" => "int4multirange",
        other => other,
    };
    // Note: an array as its element's name with `[]`, the way queries write it.
    match concrete.strip_prefix('_') {
        Some(element) => format!("NULL::pg_catalog.\"{element}\"[]"),
        None => format!("NULL::pg_catalog.\"{concrete}\""),
    }
}

/// On every server the tests reach (`DATABASE_URL` and `QAIL_PG_URLS`), with a snapshot of
/// its version: every callable built-in function is typed like that server does.
#[tokio::test]
async fn the_builtin_table_covers_every_callable_function() {
    for url in crate::catalog::fetch::urls() {
        covers_every_callable_function(&url).await;
    }
}

async fn covers_every_callable_function(url: &str) {
    let mut conn = connect(url).await;
    let rows = conn.query(CALLABLE, &[]).await.expect("pg_proc answers");
    // Note: the target is the server's own version, as for a snapshot pulled from it.
    let snap = Snapshot {
        server_version: conn.parameter_status("server_version").map(str::to_owned),
        ..Snapshot::new()
    };
    let version = snap.server_version.clone().unwrap_or_default();
    let (mut missing, mut rejected, mut differ) = (Vec::new(), Vec::new(), Vec::new());
    let (mut exact, mut refused) = (0, 0);
    for r in &rows {
        let (name, args, kind) = (r.get::<String>(0), r.get::<String>(1), r.get::<String>(2));
        let arg_list: Vec<&str> = args.split(',').filter(|a| !a.is_empty()).collect();
        let listed = qail_catalog::functions(&name)
            .iter()
            .any(|f| f.args == arg_list.as_slice());
        if !listed {
            missing.push(format!("{name}({args})"));
            continue;
        }
        let call = format!(
            "pg_catalog.\"{name}\"({})",
            arg_list
                .iter()
                .map(|a| argument(a))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let sql = match kind.as_str() {
            "w" => format!("SELECT {call} OVER () AS v"),
            _ => format!("SELECT {call} AS v"),
        };
        let Ok(server) = conn.prepare(&sql).await else {
            refused += 1;
            // Note: the server refuses some of these calls too (ambiguous with NULL
            // arguments, or a polymorphic result it cannot infer); nothing to compare.
            continue;
        };
        match analyze(&sql, &snap) {
            Err(d) => rejected.push(format!("{sql}: {}", d[0].message)),
            Ok(a) => {
                let ours: Vec<Option<u32>> = a.columns.iter().map(|c| type_oid(&c.ty)).collect();
                let theirs: Vec<Option<u32>> = server
                    .columns()
                    .iter()
                    .map(|c| Some(c.type_oid()))
                    .collect();
                if ours == theirs {
                    exact += 1;
                } else {
                    differ.push(format!("{sql}: server {theirs:?}, ours {ours:?}"));
                }
            }
        }
    }
    eprintln!(
        "PostgreSQL {version}: {} callable functions: {exact} typed exactly, {} rejected, {} typed differently, {} missing, {refused} refused by the server with NULL arguments",
        rows.len(),
        rejected.len(),
        differ.len(),
        missing.len()
    );
    assert!(rows.len() > 2000, "only {} callable functions", rows.len());
    assert!(
        missing.is_empty(),
        "not in the built-in table:\n{}",
        missing.join("\n")
    );
    let unexpected: Vec<&String> = rejected
        .iter()
        .filter(|r| !r.contains("multirange") && !r.contains("range_agg"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "rejected by the analyzer, accepted by the server:\n{}",
        unexpected
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        differ.is_empty(),
        "typed differently from the server:\n{}",
        differ.join("\n")
    );
}
