//! The shapes of record-valued expressions: `ROW(…)`, whole-row references, and the arrays
//! built from them (`array_agg(…)`, `ARRAY(SELECT …)`, `COALESCE(array_agg(…), '{}')`). The
//! model and the field-naming rule are in [`crate::types::shape`].

use sqlparser::ast::Expr;

use crate::expr::Typed;
use crate::scope::Scope;
use crate::types::shape::{Shape, ShapeField};
use crate::types::{base, builtin};
use qail_schema::snapshot::Snapshot;

/// The shape of `ROW(items…)`: a field per item, named after a plain column reference, else
/// `f<position>`.
pub(crate) fn row(items: &[&Expr], typed: &[Typed], snap: &Snapshot) -> Shape {
    let fields = items
        .iter()
        .zip(typed)
        .enumerate()
        .map(|(i, (item, t))| ShapeField {
            name: field_name(item).unwrap_or_else(|| format!("f{}", i + 1)),
            server_name: format!("f{}", i + 1),
            ty: t.arg().map_or_else(|| builtin("text"), |ty| base(ty, snap)),
            nullable: t.nullable,
            shape: t.shape.clone(),
        })
        .collect();
    Shape::Record(fields)
}

/// The column name of a plain column reference (`name`, `c.name`, `(c.name)`).
fn field_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(id) => Some(crate::scope::norm(id)),
        Expr::CompoundIdentifier(ids) => ids.last().map(crate::scope::norm),
        Expr::Nested(inner) => field_name(inner),
        _ => None,
    }
}

/// The fields of relation `name`'s whole row (a domain column as its base type); for a
/// function returning a scalar, whose whole row is that value, the value's own shape.
pub(crate) fn whole_row_shape(sc: &Scope, name: &str, snap: &Snapshot) -> Option<Shape> {
    let mut scope = Some(sc);
    while let Some(s) = scope {
        if let Some(r) = s.find_rel(&[name.to_string()]) {
            let rel = &s.rels[r];
            if rel.scalar && rel.cols.len() == 1 {
                return rel.cols[0].shape.clone();
            }
            let fields = rel
                .cols
                .iter()
                .enumerate()
                .map(|(c, col)| ShapeField {
                    name: col.name.clone(),
                    server_name: col.name.clone(),
                    ty: base(&col.ty, snap),
                    nullable: !col.not_null && !rel.proven[c],
                    shape: col.shape.clone(),
                })
                .collect();
            return Some(Shape::Record(fields));
        }
        scope = s.parent;
    }
    None
}

/// Carries the element shape through an aggregate or a conditional that keeps its input's
/// value: `array_agg(record)` is an array of those records (an element is NULL when an input
/// is), `COALESCE(x, '{}')` / `min(x)` keep `x`'s shape.
pub(crate) fn through_call(t: &mut Typed, name: &str, inputs: &[Typed]) {
    if t.is_error() || t.shape.is_some() {
        return;
    }
    let Some(first) = inputs.first() else {
        return;
    };
    match name {
        "array_agg" => {
            if let Some(shape) = &first.shape
                && matches!(shape, Shape::Record(_))
            {
                t.shape = Some(shape.clone().array(first.nullable));
            }
        }
        "coalesce" | "nullif" | "greatest" | "least" | "min" | "max" | "any_value" => {
            // Note: every argument converts to the result type, so the first shaped one
            // describes them all only when the others have no shape of their own (literals).
            let mut shaped = inputs.iter().filter_map(|i| i.shape.as_ref());
            if let Some(s) = shaped.next()
                && shaped.all(|o| o == s)
            {
                t.shape = Some(s.clone());
            }
        }
        _ => {}
    }
}

/// `ARRAY(SELECT x …)` of a record column `x`: an array of its shape, elements as nullable
/// as the column.
pub(crate) fn array_of(col: &Typed) -> Option<Shape> {
    match &col.shape {
        Some(s @ Shape::Record(_)) => Some(s.clone().array(col.nullable)),
        _ => None,
    }
}
