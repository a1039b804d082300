//! The shapes of JSON built from rows: `json_agg(t)` / `jsonb_agg(t.*)`, `json_agg(ROW(…))`,
//! `json_build_object('key', value, …)` / `jsonb_build_object`, `to_json(t)` / `to_jsonb` /
//! `row_to_json(t)`, and aggregates of those (`json_agg(json_build_object(…))`).
//!
//! PostgreSQL turns a record into a JSON object keyed by the record's field names (an
//! anonymous `ROW(…)`'s fields are `f1`, `f2`, …), an array into a JSON array, and keeps a
//! `json`/`jsonb` value as it is. The resulting [`Shape`] names each key and keeps the
//! PostgreSQL type of its value before the conversion, so that a reader knows what form the
//! value has in the document (a number, a string, an object…) and whether it can be null.
//! Object keys must be string literals to be known; any other key leaves the value unshaped
//! (`serde_json::Value`).

use crate::expr::Typed;
use crate::types::shape::{Shape, ShapeField, is_json};
use crate::types::{base, builtin};
use qail_schema::snapshot::Snapshot;

/// Sets the JSON shape of a call to one of the functions above from its inputs' shapes.
pub(crate) fn through_call(t: &mut Typed, name: &str, inputs: &[Typed], snap: &Snapshot) {
    if t.is_error() || t.shape.is_some() {
        return;
    }
    t.shape = match name {
        "json_agg" | "jsonb_agg" => inputs
            .first()
            .and_then(|i| document(i).map(|s| s.array(i.nullable))),
        "to_json" | "to_jsonb" | "row_to_json" => inputs.first().and_then(document),
        "json_build_object" => object(inputs, snap, false),
        "jsonb_build_object" => object(inputs, snap, true),
        _ => None,
    };
}

/// The JSON shape of a value converted with `to_json`: its record or array shape with the
/// server's field names, or the shape it already has as `json`.
fn document(input: &Typed) -> Option<Shape> {
    let shape = input.shape.as_ref()?;
    Some(match input.arg() {
        Some(ty) if is_json(ty) => shape.clone(),
        _ => shape.to_json(),
    })
}

/// `json_build_object(k1, v1, …)` with string-literal keys: an object with those keys in
/// order. `jsonb` keeps the last of duplicate keys; `json` keeps both, which the reader
/// reports.
fn object(inputs: &[Typed], snap: &Snapshot, jsonb: bool) -> Option<Shape> {
    if !inputs.len().is_multiple_of(2) {
        return None;
    }
    let mut fields: Vec<ShapeField> = Vec::with_capacity(inputs.len() / 2);
    for pair in inputs.chunks_exact(2) {
        let key = pair[0].literal.clone()?;
        let value = &pair[1];
        let ty = value
            .arg()
            .map_or_else(|| builtin("text"), |ty| base(ty, snap));
        let field = ShapeField {
            name: key.clone(),
            server_name: key,
            nullable: value.nullable,
            shape: document(value),
            ty,
        };
        match fields.iter().position(|f| jsonb && f.name == field.name) {
            Some(at) => fields[at] = field,
            None => fields.push(field),
        }
    }
    Some(Shape::Record(fields))
}
