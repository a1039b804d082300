//! Record-valued columns: the fields and nullability the analyzer knows inside `ROW(…)`,
//! whole-row references, composite types and the arrays built from them.

use qail_analyzer::Shape;

use crate::support::{analyze, type_str};

/// A shape written compactly: `[{id uuid, code varchar?}]?` — `[…]` an array, `?` after `]`
/// nullable elements, `?` after a type a nullable field.
fn show(s: &Shape) -> String {
    match s {
        Shape::Record(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|f| {
                    let ty = match &f.shape {
                        Some(s) => show(s),
                        None => type_str(&f.ty),
                    };
                    format!("{} {ty}{}", f.name, if f.nullable { "?" } else { "" })
                })
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Shape::Array {
            element,
            nullable_elements,
        } => format!(
            "[{}]{}",
            show(element),
            if *nullable_elements { "?" } else { "" }
        ),
    }
}

/// (type, nullable, shape) of the last column.
fn last(sql: &str) -> (String, bool, String) {
    let a = analyze(sql);
    let c = a.columns.last().expect("a column");
    (
        type_str(&c.ty),
        c.nullable,
        c.shape.as_ref().map_or_else(|| "-".into(), show),
    )
}

#[test]
fn row_fields_are_named_after_plain_columns_else_by_position() {
    let (ty, nullable, shape) = last("SELECT ROW(h.id, h.code, upper(h.name)) FROM harbors h");
    assert_eq!(ty, "record");
    assert!(!nullable);
    assert_eq!(shape, "{id uuid, code varchar?, f3 text}");
}

#[test]
fn array_agg_of_rows_is_null_without_input_rows() {
    let (ty, nullable, shape) = last(
        "SELECT h.id, array_agg(ROW(c.id, c.name) ORDER BY c.name) AS connections
         FROM harbors h JOIN odyssey_connections c ON c.origin_harbor_id = h.id GROUP BY h.id",
    );
    assert_eq!(
        (ty.as_str(), nullable),
        ("record[]", false),
        "grouped: a group has rows"
    );
    assert_eq!(shape, "[{id uuid, name text}]");
    let (_, nullable, _) = last("SELECT array_agg(ROW(c.id)) FROM odyssey_connections c");
    assert!(nullable, "an ungrouped aggregate over no rows is NULL");
    let (_, nullable, shape) = last(
        "SELECT h.id, array_agg(ROW(c.id)) FILTER (WHERE c.is_enabled) FROM harbors h
         JOIN odyssey_connections c ON c.origin_harbor_id = h.id GROUP BY h.id",
    );
    assert!(nullable, "FILTER can leave a group with no input");
    assert_eq!(shape, "[{id uuid}]");
    let (_, nullable, shape) = last(
        "SELECT h.id, COALESCE(array_agg(ROW(c.id)) FILTER (WHERE c.is_enabled), '{}') AS c
         FROM harbors h JOIN odyssey_connections c ON c.origin_harbor_id = h.id GROUP BY h.id",
    );
    assert!(!nullable, "COALESCE with '{{}}' is never NULL");
    assert_eq!(shape, "[{id uuid}]");
}

#[test]
fn outer_join_rows_make_null_elements() {
    let (_, nullable, shape) = last(
        "SELECT h.id, array_agg(c) AS connections FROM harbors h
         LEFT JOIN odyssey_connections c ON c.origin_harbor_id = h.id GROUP BY h.id",
    );
    assert!(!nullable);
    assert!(
        shape.starts_with("[{id uuid, name text, origin_harbor_id uuid"),
        "{shape}"
    );
    assert!(shape.ends_with("updated_at timestamptz?}]?"), "{shape}");
}

#[test]
fn array_subqueries_name_fields_by_subquery_aliases() {
    let (ty, nullable, shape) = last(
        "SELECT h.id, ARRAY(SELECT x FROM (SELECT c.id, upper(c.name) AS label
                FROM odyssey_connections c WHERE c.origin_harbor_id = h.id) x) AS connections
         FROM harbors h",
    );
    assert_eq!((ty.as_str(), nullable), ("record[]", false));
    assert_eq!(shape, "[{id uuid, label text}]");
    let (_, _, shape) =
        last("SELECT ARRAY(SELECT ROW(c.id, c.duration_minutes) FROM odyssey_connections c) AS c");
    assert_eq!(shape, "[{id uuid, duration_minutes int4?}]");
}

#[test]
fn two_levels_nest() {
    let (_, _, shape) = last(
        "SELECT ARRAY(SELECT ROW(o.id, ARRAY(SELECT ROW(c.id, c.name) FROM odyssey_connections c
                WHERE c.operator_id = o.id)) FROM operators o) AS operators",
    );
    assert_eq!(shape, "[{id uuid, f2 [{id uuid, name text}]}]");
    let (_, _, shape) = last(
        "SELECT ARRAY(SELECT x FROM (SELECT o.name, ARRAY(SELECT ROW(c.name) FROM
                odyssey_connections c WHERE c.operator_id = o.id) AS lines FROM operators o) x) AS ops",
    );
    assert_eq!(shape, "[{name text, lines [{name text}]}]");
}

#[test]
fn composite_types_name_their_own_fields() {
    let (ty, nullable, shape) = last("SELECT address FROM harbor_contacts");
    assert_eq!((ty.as_str(), nullable), ("postal_address", true));
    assert_eq!(shape, "{street text?, city text?, zip varchar?}");
    let (_, _, shape) = last("SELECT previous_addresses FROM harbor_contacts");
    assert_eq!(shape, "[{street text?, city text?, zip varchar?}]?");
}

#[test]
fn scalars_have_no_shape() {
    assert_eq!(last("SELECT array_agg(id) FROM harbors").2, "-");
    assert_eq!(last("SELECT name FROM harbors").2, "-");
}

#[test]
fn json_aggregates_of_whole_rows_are_keyed_by_column_names() {
    let (ty, nullable, shape) = last(
        "SELECT h.id, json_agg(c.* ORDER BY c.name) AS connections
         FROM harbors h JOIN odyssey_connections c ON c.origin_harbor_id = h.id GROUP BY h.id",
    );
    assert_eq!((ty.as_str(), nullable), ("json", false));
    assert!(
        shape.starts_with("[{id uuid, name text, origin_harbor_id uuid"),
        "{shape}"
    );
    let (ty, nullable, shape) = last(
        "SELECT h.id, jsonb_agg(c) FILTER (WHERE c.is_enabled) AS enabled FROM harbors h
         LEFT JOIN odyssey_connections c ON c.origin_harbor_id = h.id GROUP BY h.id",
    );
    assert_eq!(
        (ty.as_str(), nullable),
        ("jsonb", true),
        "FILTER can leave none"
    );
    assert!(shape.ends_with("updated_at timestamptz?}]?"), "{shape}");
    let (_, nullable, _) = last(
        "SELECT h.id, COALESCE(jsonb_agg(c) FILTER (WHERE c.is_enabled), '[]') AS enabled
         FROM harbors h LEFT JOIN odyssey_connections c ON c.origin_harbor_id = h.id GROUP BY h.id",
    );
    assert!(!nullable, "COALESCE with '[]' is never NULL");
}

#[test]
fn json_of_an_anonymous_row_uses_the_servers_field_names() {
    // Note: PostgreSQL names every field of ROW(…) f1, f2, … in JSON, column or not.
    let (_, _, shape) = last("SELECT json_agg(ROW(h.id, upper(h.name))) FROM harbors h");
    assert_eq!(shape, "[{f1 uuid, f2 text}]");
    let (ty, nullable, shape) = last("SELECT row_to_json(ROW(h.id, h.code)) FROM harbors h");
    assert_eq!((ty.as_str(), nullable), ("json", false));
    assert_eq!(shape, "{f1 uuid, f2 varchar?}");
    let (ty, _, shape) = last("SELECT to_jsonb(h.*) FROM harbors h");
    assert_eq!(ty, "jsonb");
    assert!(shape.starts_with("{id uuid, name text"), "{shape}");
}

#[test]
fn json_objects_are_keyed_by_literal_keys() {
    let (ty, nullable, shape) = last(
        "SELECT jsonb_build_object('id', h.id, 'code', h.code, 'n', 1, 'code', h.name)
         FROM harbors h",
    );
    assert_eq!((ty.as_str(), nullable), ("jsonb", false));
    assert_eq!(
        shape, "{id uuid, code text, n int4}",
        "jsonb keeps the last duplicate key"
    );
    let (_, _, shape) = last(
        "SELECT json_build_object('name', o.name, 'lines', (SELECT json_agg(json_build_object(
                'name', c.name, 'minutes', c.duration_minutes)) FROM odyssey_connections c
                WHERE c.operator_id = o.id)) FROM operators o",
    );
    assert_eq!(
        shape, "{name text, lines [{name text, minutes int4?}]?}",
        "two levels; an aggregate over no rows is null"
    );
    assert_eq!(
        last("SELECT json_build_object(h.name, h.id) FROM harbors h").2,
        "-",
        "a computed key: no shape"
    );
    assert_eq!(last("SELECT json_agg(name) FROM harbors").2, "-");
}
