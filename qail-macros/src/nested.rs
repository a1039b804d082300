//! Nested row structs for record-valued columns: `ROW(…)`, whole-row references, composite
//! types, and arrays of them (`array_agg(ROW(…))`, `ARRAY(SELECT …)`).
//!
//! A column whose analysis carries a [`Shape`] becomes a field of a generated struct named
//! after its parent and the column, in CamelCase: the column `connections` of `Record` is
//! `RecordConnections`, its field `stops` is `RecordConnectionsStops`. An array is a `Vec`, of
//! `Option<_>` when an element can be NULL; a nullable column or field is an `Option`. The
//! struct's fields are named after the record's fields (the naming rule is the analyzer's:
//! plain column references keep their names, other expressions are `f1`, `f2`, …; alias them
//! in a subquery to choose). Each struct decodes the binary record field by field through
//! `qail_pg::types::record::Fields`, checking every field's type OID.
//!
//! A `json`/`jsonb` column with a shape (`json_agg(…)`) is the JSON document of
//! [`crate::json`], decoded with serde; a JSON field inside a binary record is read as
//! `serde_json::Value`, since a record field decodes in binary, by its own type.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use qail_analyzer::{OutputColumn, Shape, ShapeField, is_json, type_oid};
use qail_schema::Snapshot;
use quote::{format_ident, quote};

use crate::analyze::column_error;
use crate::ast::QueryInput;
use crate::attr::Errors;
use crate::json;
use crate::naming::{self, camel};
use crate::shape::{Failure, shape_type};
use crate::types::{self, Mapped};

/// The type of the generated row's field for a record-valued column: `None` for other
/// columns, `Some(None)` once an error is reported. A column typed by its alias
/// (`AS "c: Type"`) is left to the alias.
pub(crate) fn field(
    input: &QueryInput,
    col: &OutputColumn,
    snapshot: &Snapshot,
    items: &mut Vec<TokenStream>,
    errors: &mut Errors,
) -> Option<Option<TokenStream>> {
    if col.rust_type.is_some() {
        return None;
    }
    let typed = if is_json(&col.ty) {
        json::column_type(col.shape.as_ref()?, "Record", &col.name, snapshot, items)
    } else {
        column_type(col.shape.as_ref(), "Record", &col.name, snapshot, items)?
    };
    match typed {
        Ok(ty) => Some(Some(ty)),
        Err((message, fix)) => {
            let message = format!("column \"{}\": {message}", col.name);
            errors.push(column_error(input, col, message, fix));
            Some(None)
        }
    }
}

/// How the row's decoder reads a field of type `ty` (with its `Option`): the type it decodes
/// and the pattern that binds `ident` from it. A JSON document read into generated structs
/// is decoded through serde as `Json<…>`; every other field as itself.
pub(crate) fn decoded_as(
    col: &OutputColumn,
    ident: &Ident,
    ty: &TokenStream,
) -> (TokenStream, TokenStream) {
    if col.rust_type.is_none() && col.shape.is_some() && is_json(&col.ty) {
        (
            quote!(::qail::__private::types::Json<#ty>),
            quote!(::qail::__private::types::Json(#ident)),
        )
    } else {
        (ty.clone(), quote!(#ident))
    }
}

/// The Rust type of a record-valued column (before `Option` for its own nullability), with
/// the structs it needs appended to `items`; `None` when the column has no shape. An error
/// says what to change in the SQL.
pub(crate) fn column_type(
    shape: Option<&Shape>,
    parent: &str,
    column: &str,
    snapshot: &Snapshot,
    items: &mut Vec<TokenStream>,
) -> Option<Result<TokenStream, Failure>> {
    let shape = shape?;
    let name = format!("{parent}{}", camel(column));
    Some(shape_type(shape, &name, snapshot, items, record))
}

/// The struct for one record shape and its `Decode` (and `ArrayElement`, so that arrays of
/// it are `Vec`s).
fn record(
    ident: &Ident,
    fields: &[ShapeField],
    snapshot: &Snapshot,
    items: &mut Vec<TokenStream>,
) -> Result<TokenStream, Failure> {
    let mut decls = Vec::with_capacity(fields.len());
    let mut reads = Vec::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let field = naming::field_ident(&f.name, Span::call_site()).ok_or_else(|| {
            (
                format!(
                    "field {} of the record is named `{}`, which is not a usable Rust field name",
                    i + 1,
                    f.name
                ),
                "select the record's fields in a subquery with aliases, \
                 `ARRAY(SELECT x FROM (SELECT … AS label) x)`"
                    .to_string(),
            )
        })?;
        if let Some(prev) = fields[..i].iter().position(|p| p.name == f.name) {
            return Err((
                format!(
                    "fields {} and {} of the record are both named `{}`",
                    prev + 1,
                    i + 1,
                    f.name
                ),
                "select the record's fields in a subquery with distinct aliases, \
                 `ARRAY(SELECT x FROM (SELECT a.id, b.id AS other_id …) x)`"
                    .to_string(),
            ));
        }
        let child = format!("{ident}{}", camel(&f.name));
        // Note: a JSON document inside a binary record is read as `serde_json::Value`.
        let ty = match f.shape.as_ref().filter(|_| !is_json(&f.ty)) {
            Some(shape) => shape_type(shape, &child, snapshot, items, record)?,
            None => scalar(f, snapshot)?,
        };
        let ty = if f.nullable {
            quote!(::core::option::Option<#ty>)
        } else {
            ty
        };
        decls.push(quote!(pub #field: #ty));
        let base = (f.shape.is_none() || is_json(&f.ty))
            .then(|| type_oid(&f.ty))
            .flatten()
            .unwrap_or(0);
        reads.push((field, f.name.clone(), base));
    }
    let doc = format!(" A record of this query: `{ident}`.");
    let decode = record_decode(ident, &reads);
    Ok(quote! {
        #[doc = #doc]
        #[derive(Debug)]
        #[allow(dead_code, reason = "a query may select fields the code does not read")]
        pub struct #ident { #(#decls,)* }

        #decode
    })
}

/// `Decode` of a struct from a record or composite value, one field per struct field in
/// order (each `(field, name in messages, built-in type OID or 0)`), and `ArrayElement` so
/// that arrays of it are `Vec`s. Shared by the generated row structs and `#[derive(QailRow)]`.
pub(crate) fn record_decode(ident: &Ident, fields: &[(Ident, String, u32)]) -> TokenStream {
    let count = Literal::usize_unsuffixed(fields.len());
    let reads = fields.iter().map(|(field, name, base)| {
        let name = Literal::string(name);
        let base = Literal::u32_unsuffixed(*base);
        quote!(#field: fields.next_of(#name, #base)?)
    });
    let fields_ty = quote!(::qail::__private::record::Fields);
    let decode = format_ident!("decode");
    quote! {
        #[automatically_derived]
        impl<'r> ::qail::__private::Decode<'r> for #ident {
            fn accepts(ty: ::qail::__private::Oid) -> bool {
                ::qail::__private::record::accepts(ty)
            }
            fn #decode(
                ty: ::qail::__private::Oid,
                raw: &'r [u8],
            ) -> ::core::result::Result<Self, ::qail::__private::BoxError> {
                let mut fields = #fields_ty::new(ty, raw, #count)?;
                let value = #ident { #(#reads,)* };
                fields.finish()?;
                ::core::result::Result::Ok(value)
            }
        }

        #[automatically_derived]
        impl ::qail::__private::ArrayElement for #ident {
            const ARRAY_OID: ::qail::__private::Oid = ::qail::__private::RECORD_ARRAY;
        }
    }
}

/// The Rust type of a scalar field.
fn scalar(f: &ShapeField, snapshot: &Snapshot) -> Result<TokenStream, Failure> {
    let mapped = types::map(&f.ty, snapshot).map_err(|m| {
        let (what, fix) = m.split_once(": ").unwrap_or((&m, "cast the field in SQL"));
        (
            format!("field `{}` of the record: {what}", f.name),
            fix.to_string(),
        )
    })?;
    match mapped {
        Mapped {
            rust: Some(rust),
            missing_feature: None,
            ..
        } => Ok(rust),
        Mapped {
            missing_feature: Some(feature),
            display,
            ..
        } => Err((
            format!("field `{}` of the record has type {display}", f.name),
            feature.fix(),
        )),
        Mapped { display, .. } => Err((
            format!(
                "field `{}` of the record has the type {display}, which has no generated Rust type",
                f.name
            ),
            "cast it in SQL (`::text`)".to_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qail_schema::snapshot::TypeRef;

    fn ty(name: &str) -> TypeRef {
        TypeRef {
            schema: "pg_catalog".into(),
            name: name.into(),
            oid: None,
            array_dims: 0,
        }
    }

    fn field(name: &str, t: &str, nullable: bool, shape: Option<Shape>) -> ShapeField {
        ShapeField {
            name: name.into(),
            server_name: name.into(),
            ty: ty(t),
            nullable,
            shape,
        }
    }

    #[test]
    fn arrays_of_records_become_vecs_of_named_structs() {
        let stops = Shape::Array {
            element: Box::new(Shape::Record(vec![field("name", "text", false, None)])),
            nullable_elements: true,
        };
        let shape = Shape::Array {
            element: Box::new(Shape::Record(vec![
                field("id", "int4", false, None),
                field("code", "text", true, None),
                field("stops", "record", false, Some(stops)),
            ])),
            nullable_elements: false,
        };
        let mut items = Vec::new();
        let t = column_type(
            Some(&shape),
            "Record",
            "connections",
            &Snapshot::default(),
            &mut items,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            t.to_string().replace(' ', ""),
            "::std::vec::Vec<RecordConnections>"
        );
        let all = quote!(#(#items)*).to_string().replace(' ', "");
        assert!(
            all.contains("pubstructRecordConnectionsStops{pubname:::std::string::String,}"),
            "{all}"
        );
        assert!(
            all.contains("pubcode:::core::option::Option<::std::string::String>"),
            "{all}"
        );
        assert!(
            all.contains(
                "pubstops:::std::vec::Vec<::core::option::Option<RecordConnectionsStops>>"
            ),
            "{all}"
        );
    }

    #[test]
    fn duplicate_field_names_say_how_to_alias() {
        let shape = Shape::Record(vec![
            field("id", "int4", false, None),
            field("id", "int4", false, None),
        ]);
        let e = column_type(
            Some(&shape),
            "Record",
            "x",
            &Snapshot::default(),
            &mut Vec::new(),
        )
        .unwrap()
        .unwrap_err();
        assert!(
            e.0.contains("both named `id`") && e.1.contains("AS other_id"),
            "{e:?}"
        );
        assert_eq!(camel("origin_harbor"), "OriginHarbor");
    }
}
