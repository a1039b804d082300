//! Nullability cases other checkers are known to get wrong, with the reasons the analyzer
//! gives (they end up in the compile error when a user asks for a non-null column).

use qail_schema::check::{Analysis, ColumnSource, check, render};

use crate::support::snapshot;

fn analyze(sql: &str) -> Analysis {
    check(sql, snapshot()).unwrap_or_else(|d| {
        panic!(
            "{}",
            d.iter()
                .map(|d| render(sql, d))
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

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
