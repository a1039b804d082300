//! Diagnostics as the user sees them: the message, the caret under the offending SQL and
//! the fix.

use qail_analyzer::{analyze, render};

use crate::support::snapshot;

/// Every diagnostic for `sql`, rendered and joined by blank lines.
fn rendered(sql: &str) -> String {
    match analyze(sql, snapshot()) {
        Ok(a) => panic!("expected an error for {sql}, got {a:?}"),
        Err(diags) => diags
            .iter()
            .map(|d| render(sql, d))
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

const CASES: &[(&str, &str)] = &[
    (
        r#"SELECT 1::"integer" AS i"#,
        r#"error: type "integer" does not exist
  |  SELECT 1::"integer" AS i
  |            ^^^^^^^^^ `integer` is a type name only unquoted: write it without the double quotes"#,
    ),
    (
        "UPDATE harbor_contacts SET address.town = $1 WHERE id = 1",
        r#"error: cannot assign to field "town" of column "address" because there is no such column in data type postal_address
  |  UPDATE harbor_contacts SET address.town = $1 WHERE id = 1
  |                                     ^^^^ check the field name against the composite type"#,
    ),
    (
        "SELECT 1 UNION SELECT 'x'",
        r#"error: invalid input syntax for type integer: "x"
  |  SELECT 1 UNION SELECT 'x'
  |                        ^^^ write a valid integer literal, or pass it as a parameter"#,
    ),
    (
        "SELECT NULL UNION SELECT NULL UNION SELECT 1",
        r#"error: UNION types text and integer cannot be matched (column "?column?")
  |  SELECT NULL UNION SELECT NULL UNION SELECT 1
  |  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ cast one side so both have the same type"#,
    ),
    (
        "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 0.5 FROM t WHERE n < 5) SELECT n FROM t",
        r#"error: recursive query "t" column "n" has type integer in its non-recursive term but type numeric overall
  |  WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 0.5 FROM t WHERE n < 5) SELECT n FROM t
  |                          ^^^^^^^^ cast the non-recursive term's column to numeric"#,
    ),
    (
        "SELECT country, count(*) FROM harbors GROUP BY ALL",
        r#"error: GROUP BY ALL is not supported
  |  SELECT country, count(*) FROM harbors GROUP BY ALL
  |  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ PostgreSQL 15 rejects it; list the grouping columns: GROUP BY a, b"#,
    ),
    (
        "SELECT rank() OVER w FROM harbors WINDOW w AS (ORDER BY nam)",
        r#"error: column "nam" does not exist in table "harbors"
  |  SELECT rank() OVER w FROM harbors WINDOW w AS (ORDER BY nam)
  |                                                          ^^^ did you mean "name"?"#,
    ),
    (
        "SELECT id::date FROM harbors",
        r#"error: cannot cast type uuid to date
  |  SELECT id::date FROM harbors
  |         ^^^^^^^^ PostgreSQL has no such cast; convert through text (x::text::T) only if the text form parses as T, or use a conversion function"#,
    ),
    (
        "SELECT (address).town FROM harbor_contacts",
        r#"error: column "town" not found in data type postal_address
  |  SELECT (address).town FROM harbor_contacts
  |          ^^^^^^^^^^^^^ postal_address has the fields street, city, zip"#,
    ),
    (
        "SELECT (name).x FROM harbors",
        r#"error: type text is not composite
  |  SELECT (name).x FROM harbors
  |          ^^^^^^^ select a field of a composite column: (column).field"#,
    ),
    (
        "SELECT percentile_cont(price) FROM sailings",
        r#"error: percentile_cont is an ordered-set aggregate
  |  SELECT percentile_cont(price) FROM sailings
  |         ^^^^^^^^^^^^^^^^^^^^^ write it as percentile_cont(0.5) WITHIN GROUP (ORDER BY x)"#,
    ),
    (
        "SELECT x.a FROM jsonb_to_recordset($1::jsonb) AS x(a)",
        r#"error: a function returning record needs a column definition list
  |  SELECT x.a FROM jsonb_to_recordset($1::jsonb) AS x(a)
  |                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ write AS x(a int4, b text) after the call"#,
    ),
    (
        "SELECT id FROM odyssey_connections WHERE tags = 'a'",
        r#"error: malformed array literal: "a"
  |  SELECT id FROM odyssey_connections WHERE tags = 'a'
  |                                                  ^^^ write an array literal as '{a,b}', or use ARRAY[…]"#,
    ),
    (
        "SELECT make_interval(dayz => 3)",
        r#"error: make_interval() has no parameter named "dayz"
  |  SELECT make_interval(dayz => 3)
  |         ^^^^^^^^^^^^^^^^^^^^^^^ use one of: years, months, weeks, days, hours, mins, secs"#,
    ),
    (
        "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT nn + 1 FROM t) SELECT n FROM t",
        r#"error: column "nn" does not exist in table "t"
  |  WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT nn + 1 FROM t) SELECT n FROM t
  |                                                    ^^ did you mean "n"?"#,
    ),
    (
        "SELECT u FROM unnest(1) AS u",
        r#"error: unnest() needs an array argument
  |  SELECT u FROM unnest(1) AS u
  |                       ^ cast the argument to an array type, e.g. $1::int4[]"#,
    ),
    (
        "UPDATE harbor_contacts SET address = ROW($1, $2) WHERE id = 1",
        r#"error: postal_address has 3 fields but the row has 2
  |  UPDATE harbor_contacts SET address = ROW($1, $2) WHERE id = 1
  |                                       ^^^^^^^^^^ give one value per field"#,
    ),
    (
        "SELECT id, nme FROM harbors WHERE id = $1",
        r#"error: column "nme" does not exist in table "harbors"
  |  SELECT id, nme FROM harbors WHERE id = $1
  |             ^^^ did you mean "name"?"#,
    ),
    (
        "SELECT id FROM harbours",
        r#"error: relation "harbours" does not exist
  |  SELECT id FROM harbours
  |                 ^^^^^^^^ did you mean "harbors"?"#,
    ),
    (
        "SELECT id FROM billing.invoice",
        r#"error: relation "billing.invoice" does not exist
  |  SELECT id FROM billing.invoice
  |                 ^^^^^^^^^^^^^^^ did you mean "invoices"?"#,
    ),
    (
        "SELECT name FROM harbors h JOIN operators o ON o.id = h.id",
        r#"error: column reference "name" is ambiguous
  |  SELECT name FROM harbors h JOIN operators o ON o.id = h.id
  |         ^^^^ qualify it: h.name or o.name"#,
    ),
    (
        "SELECT id FROM harbors WHERE name = 1",
        r#"error: operator does not exist: text = integer
  |  SELECT id FROM harbors WHERE name = 1
  |                               ^^^^^^^^ add a cast so both sides have the same type, e.g. 1::text"#,
    ),
    (
        "SELECT id FROM harbors WHERE id = 'abc' AND country = 42",
        r#"error: invalid input syntax for type uuid: "abc"
  |  SELECT id FROM harbors WHERE id = 'abc' AND country = 42
  |                                    ^^^^^ write a valid uuid literal, or pass it as a parameter

error: operator does not exist: text = integer
  |  SELECT id FROM harbors WHERE id = 'abc' AND country = 42
  |                                              ^^^^^^^^^^^^ add a cast so both sides have the same type, e.g. 42::text"#,
    ),
    (
        "INSERT INTO harbors (id, name, country) VALUES ($1, $2)",
        r#"error: INSERT has more target columns than expressions (2 vs 3)
  |  INSERT INTO harbors (id, name, country) VALUES ($1, $2)
  |                                                  ^^^^^^ give 3 values, one per target column"#,
    ),
    (
        "INSERT INTO harbors (id, name) VALUES ($1, $2, $3)",
        r#"error: INSERT has more expressions than target columns (3 vs 2)
  |  INSERT INTO harbors (id, name) VALUES ($1, $2, $3)
  |                                         ^^^^^^^^^^ give 2 values, one per target column"#,
    ),
    (
        "SELECT id FROM harbors WHERE",
        r#"error: syntax error: Expected: an expression, found: EOF
  |  SELECT id FROM harbors WHERE
  |                              ^ fix the SQL syntax here"#,
    ),
    (
        "SELECT id,\n  FROM harbors",
        r#"error: syntax error: Expected an expression, found: FROM
  |    FROM harbors
  |    ^^^^ fix the SQL syntax here"#,
    ),
    (
        "SELECT $1",
        r#"error: could not determine the type of parameter $1
  |  SELECT $1
  |         ^^ add a cast, e.g. $1::text or $1::int4"#,
    ),
    (
        "SELECT id FROM harbors WHERE name = $1 AND id = $1",
        r#"error: parameter $1 is used as uuid here but as text elsewhere
  |  SELECT id FROM harbors WHERE name = $1 AND id = $1
  |                                                  ^^ use a separate parameter, or cast: $1::uuid"#,
    ),
    (
        "SELECT x.id FROM harbors h",
        r#"error: missing FROM-clause entry for table "x"
  |  SELECT x.id FROM harbors h
  |         ^ did you mean "h"?"#,
    ),
    (
        "SELECT lowr(name) FROM harbors",
        r#"error: function lowr(text) does not exist
  |  SELECT lowr(name) FROM harbors
  |         ^^^^^^^^^ did you mean "lower"?"#,
    ),
    (
        "SELECT lower(capacity) FROM vessels",
        r#"error: function lower(smallint) does not exist
  |  SELECT lower(capacity) FROM vessels
  |         ^^^^^^^^^^^^^^ no overload takes these argument types; add explicit casts"#,
    ),
    (
        "SELECT * FROM bookings JOIN sailings USING (id)",
        r#"error: JOIN/USING types uuid and bigint cannot be matched
  |  SELECT * FROM bookings JOIN sailings USING (id)
  |                                              ^^ join with ON and an explicit cast"#,
    ),
    (
        "INSERT INTO customers (email, full_name, loyalty_points) VALUES ($1, $2, 'many'::text)",
        r#"error: column "loyalty_points" is of type integer but expression is of type text
  |  INSERT INTO customers (email, full_name, loyalty_points) VALUES ($1, $2, 'many'::text)
  |                                                                           ^^^^^^^^^^^^ add a cast: ::int4"#,
    ),
    (
        "INSERT INTO customers (emial, full_name) VALUES ($1, $2)",
        r#"error: column "emial" of relation "customers" does not exist
  |  INSERT INTO customers (emial, full_name) VALUES ($1, $2)
  |                         ^^^^^ did you mean "email"?"#,
    ),
    (
        "UPDATE harbors SET nme = $1 WHERE id = $2",
        r#"error: column "nme" of relation "harbors" does not exist
  |  UPDATE harbors SET nme = $1 WHERE id = $2
  |                     ^^^ did you mean "name"?"#,
    ),
    (
        "SELECT id FROM harbors WHERE name",
        r#"error: argument of WHERE must be type boolean, not type text
  |  SELECT id FROM harbors WHERE name
  |                               ^^^^ write a comparison, e.g. `x = $1`"#,
    ),
    (
        "SELECT id FROM sailings WHERE sail_date + $1 > now()",
        r#"error: operator is not unique: date + unknown
  |  SELECT id FROM sailings WHERE sail_date + $1 > now()
  |                                ^^^^^^^^^^^^^^ add a cast to the unknown operand, e.g. $1::int4"#,
    ),
    (
        "SELECT h.id FROM harbors h WHERE h.id::uuidd = $1",
        r#"error: type "uuidd" does not exist
  |  SELECT h.id FROM harbors h WHERE h.id::uuidd = $1
  |                                         ^^^^^ did you mean "uuid"?"#,
    ),
    (
        "SELECT id, sum(seats) FROM bookings WHERE status = 'confirmed' GROUP BY 3",
        r#"error: position 3 is not in select list
  |  SELECT id, sum(seats) FROM bookings WHERE status = 'confirmed' GROUP BY 3
  |                                                                          ^ use a position between 1 and 2"#,
    ),
    (
        "SELECT name FROM harbors UNION SELECT name, id FROM operators",
        r#"error: each UNION query must have the same number of columns (1 vs 2)
  |  SELECT name FROM harbors UNION SELECT name, id FROM operators
  |  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ select the same number of columns on both sides"#,
    ),
    (
        "DROP TABLE harbors",
        r#"error: only SELECT, INSERT, UPDATE, DELETE and MERGE can be checked
  |  DROP TABLE harbors
  |  ^^^^^^^^^^^^^^^^^^ run other statements with execute() or batch_execute()"#,
    ),
    (
        "SELECT 1; SELECT 2",
        r#"error: more than one statement
  |  SELECT 1; SELECT 2
  |  ^^^^^^^^^^^^^^^^^^ write one statement per query; use batch_execute for scripts"#,
    ),
    (
        "SELECT id FROM bookings WHERE status = 'confimed'",
        r#"error: invalid input value for enum booking_status: "confimed"
  |  SELECT id FROM bookings WHERE status = 'confimed'
  |                                         ^^^^^^^^^^ did you mean "confirmed"?"#,
    ),
    (
        "INSERT INTO vessels (operator_id, name, kind, capacity) VALUES ($1, $2, 'yacht', 1)",
        r#"error: invalid input value for enum vessel_kind: "yacht"
  |  INSERT INTO vessels (operator_id, name, kind, capacity) VALUES ($1, $2, 'yacht', 1)
  |                                                                          ^^^^^^^ use one of: ferry, catamaran, hydrofoil"#,
    ),
    (
        "SELECT country, name, count(*) FROM harbors GROUP BY country",
        r#"error: column "harbors.name" must appear in the GROUP BY clause or be used in an aggregate function
  |  SELECT country, name, count(*) FROM harbors GROUP BY country
  |                  ^^^^ add harbors.name to GROUP BY, or aggregate it, e.g. max(harbors.name)"#,
    ),
    (
        "SELECT o.name, count(*) FROM operators o JOIN vessels v ON v.operator_id = o.id GROUP BY v.operator_id",
        r#"error: column "o.name" must appear in the GROUP BY clause or be used in an aggregate function
  |  SELECT o.name, count(*) FROM operators o JOIN vessels v ON v.operator_id = o.id GROUP BY v.operator_id
  |         ^^^^^^ add o.name to GROUP BY, or aggregate it, e.g. max(o.name)"#,
    ),
];

#[test]
fn diagnostics_render_with_caret_and_fix() {
    let mut mismatches = Vec::new();
    for (sql, want) in CASES {
        let got = rendered(sql);
        if got != *want {
            mismatches.push(format!("{sql:?}\n--- want\n{want}\n--- got\n{got}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}
