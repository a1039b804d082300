//! Nullability cases other checkers are known to get wrong, with the reasons the analyzer
//! gives (they end up in the compile error when a user asks for a non-null column).

use qail_analyzer::{Analysis, ColumnSource};

use crate::support::analyze;

/// (name, nullable) per column.
fn shape(a: &Analysis) -> Vec<(&str, bool)> {
    a.columns
        .iter()
        .map(|c| (c.name.as_str(), c.nullable))
        .collect()
}

const FERRY: &str =
    "SELECT c.id, c.name, o.name AS origin, d.name AS destination, op.name AS operator
FROM odyssey_connections c
LEFT JOIN harbors o ON o.id = c.origin_harbor_id
LEFT JOIN harbors d ON d.id = c.destination_harbor_id
LEFT JOIN operators op ON op.id = c.operator_id
WHERE c.is_enabled = $1";

#[test]
fn triple_left_join_keeps_the_preserved_side_non_null() {
    let a = analyze(FERRY);
    assert_eq!(
        shape(&a),
        [
            ("id", false),
            ("name", false),
            ("origin", true),
            ("destination", true),
            ("operator", true)
        ]
    );
    assert_eq!(a.columns[2].why, ["right side of LEFT JOIN harbors AS o"]);
    assert_eq!(
        a.columns[4].why,
        ["right side of LEFT JOIN operators AS op"]
    );
    assert!(a.columns[0].why.is_empty());
}

#[test]
fn right_side_not_null_columns_are_still_nullable() {
    let a = analyze(
        "SELECT op.id, op.active FROM odyssey_connections c LEFT JOIN operators op ON op.id = c.operator_id",
    );
    assert_eq!(shape(&a), [("id", true), ("active", true)]);
}

#[test]
fn where_on_the_joined_table_rejects_nulls() {
    let a = analyze(
        "SELECT op.name, op.website FROM odyssey_connections c LEFT JOIN operators op ON op.id = c.operator_id
         WHERE op.active AND c.is_enabled",
    );
    assert_eq!(shape(&a), [("name", false), ("website", true)]);
    assert_eq!(a.columns[1].why, ["column op.website is nullable"]);
}

#[test]
fn or_does_not_reject_nulls() {
    let a = analyze(
        "SELECT op.name FROM odyssey_connections c LEFT JOIN operators op ON op.id = c.operator_id
         WHERE op.active OR c.is_enabled",
    );
    assert_eq!(shape(&a), [("name", true)]);
}

#[test]
fn double_left_join_chain() {
    let a = analyze(
        "SELECT h.name, c.name AS connection, op.name AS operator FROM harbors h
         LEFT JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         LEFT JOIN operators op ON op.id = c.operator_id",
    );
    assert_eq!(
        shape(&a),
        [("name", false), ("connection", true), ("operator", true)]
    );
}

#[test]
fn inner_join_after_left_join_makes_the_left_joined_side_non_null() {
    let a = analyze(
        "SELECT c.name, op.name AS operator FROM harbors h
         LEFT JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         JOIN operators op ON op.id = c.operator_id",
    );
    assert_eq!(shape(&a), [("name", false), ("operator", false)]);
}

#[test]
fn full_join_makes_both_sides_nullable() {
    let a = analyze(
        "SELECT c.name, op.name AS operator FROM odyssey_connections c FULL JOIN operators op ON op.id = c.operator_id",
    );
    assert_eq!(shape(&a), [("name", true), ("operator", true)]);
    assert_eq!(a.columns[0].why, ["left side of FULL JOIN operators AS op"]);
}

#[test]
fn right_join_makes_the_left_side_nullable() {
    let a = analyze(
        "SELECT c.name, op.name FROM odyssey_connections c RIGHT JOIN operators op ON op.id = c.operator_id",
    );
    assert_eq!(shape(&a), [("name", true), ("name", false)]);
}

#[test]
fn aggregates() {
    let a = analyze(
        "SELECT count(*) AS n, count(b.id) AS ids, sum(b.seats) AS seats, avg(b.total) AS avg_total,
                min(b.booked_at) AS first, COALESCE(sum(b.seats), 0) AS seats_or_zero
         FROM bookings b",
    );
    assert_eq!(
        shape(&a),
        [
            ("n", false),
            ("ids", false),
            ("seats", true),
            ("avg_total", true),
            ("first", true),
            ("seats_or_zero", false)
        ]
    );
    assert_eq!(
        a.columns[2].why,
        ["sum() is NULL when there are no input rows"]
    );
}

#[test]
fn coalesce_with_a_literal_is_non_null() {
    let a = analyze(
        "SELECT COALESCE(code, 'n/a') AS code, COALESCE(latitude, longitude) AS l FROM harbors",
    );
    assert_eq!(shape(&a), [("code", false), ("l", true)]);
}

#[test]
fn comparisons_of_non_null_operands_are_non_null() {
    let a = analyze(
        "SELECT name = country AS same, code = country AS code_same, now() AS t, 1 AS one FROM harbors",
    );
    assert_eq!(
        shape(&a),
        [
            ("same", false),
            ("code_same", true),
            ("t", false),
            ("one", false)
        ]
    );
}

#[test]
fn alias_overrides_and_rust_types() {
    let a = analyze(
        r#"SELECT origin AS "origin!", c.name AS "name?", c.id AS "id: crate::ConnectionId" FROM enabled_connections c"#,
    );
    assert_eq!(shape(&a), [("origin", false), ("name", true), ("id", true)]);
    assert_eq!(
        a.columns[2].rust_type.as_deref(),
        Some("crate::ConnectionId")
    );
    assert_eq!(a.columns[0].rust_type, None);
}

#[test]
fn sources_name_the_table_column() {
    let a = analyze("SELECT o.name AS origin, lower(o.name) AS l FROM harbors o");
    let want = ColumnSource {
        schema: "public".into(),
        table: "harbors".into(),
        column: "name".into(),
    };
    assert_eq!(a.columns[0].source.as_ref(), Some(&want));
    assert_eq!(a.columns[1].source, None);
}

#[test]
fn parameter_nullability_follows_the_target() {
    let a = analyze("UPDATE harbors SET name = $1, code = $2 WHERE id = $3");
    let nullable: Vec<bool> = a.params.iter().map(|p| p.nullable).collect();
    assert_eq!(nullable, [false, true, false]);
    assert!(!a.returns_rows);
}

#[test]
fn grouping_sets_make_partially_grouped_columns_nullable() {
    let a = analyze(
        "SELECT country, code, count(*) AS n FROM harbors GROUP BY GROUPING SETS ((country, code), (country))",
    );
    assert_eq!(
        shape(&a),
        [("country", false), ("code", true), ("n", false)]
    );
    let a = analyze("SELECT country, count(*) AS n FROM harbors GROUP BY ROLLUP (country)");
    assert_eq!(shape(&a), [("country", true), ("n", false)]);
    assert_eq!(
        a.columns[0].why,
        ["NULL in the rows of grouping sets that leave it out"]
    );
}

#[test]
fn scalar_subqueries_are_nullable_unless_they_return_one_row() {
    let a = analyze(
        "SELECT (SELECT count(*) FROM bookings) AS n, (SELECT max(price) FROM sailings) AS top, \
         (SELECT name FROM harbors LIMIT 1) AS any_name, (SELECT 1) AS one",
    );
    assert_eq!(
        shape(&a),
        [
            ("n", false),
            ("top", true),
            ("any_name", true),
            ("one", false)
        ]
    );
    assert!(a.columns[2].why.iter().any(|w| w.contains("no row")));
}

#[test]
fn not_null_domains_and_composite_fields() {
    let a = analyze("SELECT berths, email, (address).city FROM harbor_contacts");
    assert_eq!(
        shape(&a),
        [("berths", false), ("email", true), ("city", true)]
    );
    assert_eq!(
        a.columns[0].ty.name, "int4",
        "a domain column is its base type"
    );
    let a =
        analyze("SELECT c.berths FROM harbors h LEFT JOIN harbor_contacts c ON c.harbor_id = h.id");
    assert_eq!(shape(&a), [("berths", true)]);
}

#[test]
fn recursive_cte_columns_are_nullable_if_a_term_makes_them_so() {
    let a = analyze(
        "WITH RECURSIVE t(n, label) AS (SELECT 1, 'a'::text UNION ALL SELECT n + 1, NULL FROM t WHERE n < 3) \
         SELECT n, label FROM t",
    );
    assert_eq!(shape(&a), [("n", false), ("label", true)]);
}

#[test]
fn set_returning_functions_in_from() {
    let a = analyze(
        "SELECT g, t, o, e.key, e.value FROM generate_series(1, 3) AS g, \
         unnest($1::text[]) WITH ORDINALITY AS u(t, o), jsonb_each_text($2) AS e",
    );
    assert_eq!(
        shape(&a),
        [
            ("g", false),
            ("t", true),
            ("o", false),
            ("key", false),
            ("value", true)
        ]
    );
}

#[test]
fn aggregates_of_a_group_are_null_only_from_their_input() {
    let a = analyze(
        "SELECT customer_id, sum(seats) AS seats, max(discount_code) AS code, \
         array_agg(discount_code) AS codes, sum(seats) FILTER (WHERE seats > 2) AS big \
         FROM bookings GROUP BY customer_id",
    );
    assert_eq!(
        shape(&a),
        [
            ("customer_id", false),
            ("seats", false),
            ("code", true),
            ("codes", false),
            ("big", true)
        ]
    );
    // Without GROUP BY the input may be empty: one row of NULL aggregates.
    let a = analyze("SELECT sum(seats) AS seats FROM bookings");
    assert_eq!(shape(&a), [("seats", true)]);
}

/// Each column records the SQL text it comes from, for diagnostics about the column.
#[test]
fn columns_record_their_select_list_item() {
    let texts = |sql: &'static str| -> Vec<&'static str> {
        analyze(sql)
            .columns
            .iter()
            .map(|c| &sql[c.range.clone()])
            .collect()
    };
    assert_eq!(
        texts("SELECT h.id, upper(h.name) AS \"loud!\", 1 + 1 FROM harbors h"),
        ["h.id", "upper(h.name) AS \"loud!\"", "1 + 1"]
    );
    assert_eq!(
        texts("SELECT o.* FROM operators o LIMIT 1")[..2],
        ["o.*", "o.*"]
    );
    assert_eq!(
        texts("SELECT name FROM harbors UNION SELECT name FROM operators"),
        ["name"]
    );
    assert_eq!(texts("VALUES (1, 'a'), (2, 'b')"), ["1", "'a'"]);
    assert_eq!(
        texts("UPDATE harbors SET name = $1 WHERE id = $2 RETURNING id, name AS renamed"),
        ["id", "name AS renamed"]
    );
}
