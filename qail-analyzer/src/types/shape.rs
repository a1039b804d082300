//! What the analyzer knows inside a value whose PostgreSQL type says little: the fields of a
//! record (`ROW(…)`, a whole-row reference, a composite type) and the elements of an array of
//! records (`array_agg(ROW(…))`, `ARRAY(SELECT ROW(…) …)`, a composite array).
//!
//! The server describes `ROW(a, b)` as `record` and `array_agg(ROW(a, b))` as `record[]`; the
//! field types and their nullability are the analyzer's knowledge, reported in
//! [`OutputColumn::shape`](crate::OutputColumn::shape) so that generated code can
//! decode nested rows by index.
//!
//! Field names: a field of `ROW(…)` that is a plain column reference (`c.name`) is named after
//! the column; any other field is `f1`, `f2`, … by position, as PostgreSQL itself names the
//! fields of an anonymous record (`row_to_json(ROW(1))` is `{"f1":1}`). To name computed
//! fields, select them with aliases in a subquery and aggregate its whole row:
//! `ARRAY(SELECT x FROM (SELECT c.id, upper(c.name) AS label FROM …) x)`. A whole-row
//! reference names its fields after the relation's columns, and a composite type after its
//! own fields.
//!
//! The shape of a `json` or `jsonb` value describes its document: a record is a JSON object
//! (fields named by its keys), an array a JSON array; each field keeps the PostgreSQL type
//! its value had before `to_json` turned it into JSON, from which the JSON value's form
//! follows (see `check::expr::json`).

use crate::types::user_kind;
use qail_schema::snapshot::{Snapshot, TypeRef, UserTypeKind};

/// The structure inside a record or an array of records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A record: its fields in order.
    Record(Vec<ShapeField>),
    /// An array whose elements have a shape.
    Array {
        /// The elements' shape.
        element: Box<Shape>,
        /// Whether an element can be NULL (a NULL input to `array_agg`, a NULL whole row of
        /// the nullable side of an outer join, any element of a composite array column).
        nullable_elements: bool,
    },
}

/// A field of a record [`Shape`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeField {
    /// Its name (see the module documentation for the rule).
    pub name: String,
    /// The name PostgreSQL itself gives the field, the key of its JSON object in `to_json`:
    /// `name`, except for the fields of an anonymous `ROW(…)`, which are always `f1`, `f2`, ….
    pub server_name: String,
    /// Its PostgreSQL type (a domain as its base type).
    pub ty: TypeRef,
    /// Whether it can be NULL.
    pub nullable: bool,
    /// What is known inside it, when it is itself a record or an array of records.
    pub shape: Option<Shape>,
}

impl Shape {
    /// An array of elements of this shape.
    pub(crate) fn array(self, nullable_elements: bool) -> Shape {
        Shape::Array {
            element: Box::new(self),
            nullable_elements,
        }
    }

    /// The shape of this value's JSON (`to_json`): a record is an object keyed by the fields'
    /// server names, an array a JSON array. A field that is already `json` or `jsonb` keeps
    /// the shape it has, which is a JSON shape already.
    pub(crate) fn to_json(&self) -> Shape {
        match self {
            Shape::Record(fields) => Shape::Record(
                fields
                    .iter()
                    .map(|f| ShapeField {
                        name: f.server_name.clone(),
                        server_name: f.server_name.clone(),
                        ty: f.ty.clone(),
                        nullable: f.nullable,
                        shape: if is_json(&f.ty) {
                            f.shape.clone()
                        } else {
                            f.shape.as_ref().map(Shape::to_json)
                        },
                    })
                    .collect(),
            ),
            Shape::Array {
                element,
                nullable_elements,
            } => element.to_json().array(*nullable_elements),
        }
    }
}

/// Whether `ty` is `json` or `jsonb` (not an array of them), whose [`Shape`] describes its
/// JSON document.
pub fn is_json(ty: &TypeRef) -> bool {
    ty.schema == "pg_catalog" && ty.array_dims == 0 && matches!(ty.name.as_str(), "json" | "jsonb")
}

/// The shape of a composite type (or an array of one) from the snapshot. Composite fields
/// carry no NOT NULL constraint, so every field is nullable, and so is every element of an
/// array of them.
pub(crate) fn of_type(ty: &TypeRef, snap: &Snapshot) -> Option<Shape> {
    let Some(UserTypeKind::Composite { fields }) = user_kind(ty, snap) else {
        return None;
    };
    if ty.array_dims > 1 {
        return None;
    }
    let record = Shape::Record(
        fields
            .iter()
            .map(|f| {
                let element = TypeRef {
                    array_dims: 0,
                    ..f.ty.clone()
                };
                ShapeField {
                    name: f.name.clone(),
                    server_name: f.name.clone(),
                    ty: super::base(&f.ty, snap),
                    nullable: true,
                    shape: if element == *ty {
                        None
                    } else {
                        of_type(&f.ty, snap)
                    },
                }
            })
            .collect(),
    );
    Some(if ty.array_dims == 1 {
        record.array(true)
    } else {
        record
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qail_schema::snapshot::{Field, UserType};

    #[test]
    fn composite_types_name_their_fields() {
        let mut snap = Snapshot::default();
        let text = crate::types::builtin("text");
        snap.types.push(UserType {
            schema: "public".into(),
            name: "address".into(),
            kind: UserTypeKind::Composite {
                fields: vec![Field {
                    name: "city".into(),
                    ty: text.clone(),
                }],
            },
        });
        let ty = TypeRef {
            schema: "public".into(),
            name: "address".into(),
            oid: None,
            array_dims: 1,
        };
        let Some(Shape::Array {
            element,
            nullable_elements: true,
        }) = of_type(&ty, &snap)
        else {
            panic!("an array of records");
        };
        assert_eq!(
            *element,
            Shape::Record(vec![ShapeField {
                name: "city".into(),
                server_name: "city".into(),
                ty: text,
                nullable: true,
                shape: None
            }])
        );
        assert_eq!(of_type(&crate::types::builtin("int4"), &snap), None);
    }
}
