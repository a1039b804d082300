//! Nested structs for JSON documents built from rows: `json_agg(t)`, `jsonb_agg(t.*)`,
//! `json_agg(json_build_object('k', v, …))`, `jsonb_build_object(…)`, `to_jsonb(t)`,
//! `row_to_json(t)`. The analyzer gives each object's keys and the PostgreSQL type each
//! value had before `to_json`; the struct is decoded from the column's JSON with serde.
//!
//! Naming follows [`crate::nested`]: `Record` + the column in CamelCase, then each nested
//! key. Fields are named after the keys (snake case, `#[serde(rename)]` to the key).
//!
//! A value is decoded from JSON only when JSON carries it exactly: booleans, integers,
//! floats (PostgreSQL writes NaN and the infinities as strings, read back as such),
//! `numeric` (its digits parsed into `Decimal` from the document's text, never through a
//! float; a value `Decimal` cannot hold is a decode error), text, uuid, `json`/`jsonb`,
//! one-dimensional arrays of these, and nested objects and arrays. Anything else is a
//! compile error that names the fix, because its JSON form loses something: `bytea` is a hex
//! string, timestamps and dates can be `"infinity"`, other types are strings in a text
//! format.
//! The binary forms (`array_agg(ROW(…))`, `ARRAY(SELECT …)`) read every type exactly.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use qail_analyzer::{Shape, ShapeField, is_json};
use qail_schema::Snapshot;
use quote::quote;

use crate::naming;
use crate::nested::{Failure, camel, shape_type};
use crate::types::{self, Mapped};

/// The Rust type of a JSON column with a shape (before `Option` for its own nullability),
/// with the structs it needs appended to `items`.
pub(crate) fn column_type(
    shape: &Shape,
    parent: &str,
    column: &str,
    snapshot: &Snapshot,
    items: &mut Vec<TokenStream>,
) -> Result<TokenStream, Failure> {
    if let Some(feature) = types::missing_feature("json") {
        return Err((
            "a JSON document read into generated structs needs serde".to_string(),
            feature.fix(),
        ));
    }
    shape_type(
        shape,
        &format!("{parent}{}", camel(column)),
        snapshot,
        items,
        object,
    )
}

/// The struct for one JSON object and its serde `Deserialize`.
fn object(
    ident: &Ident,
    fields: &[ShapeField],
    snapshot: &Snapshot,
    items: &mut Vec<TokenStream>,
) -> Result<TokenStream, Failure> {
    let mut decls = Vec::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let field = naming::field_ident(&f.name, Span::call_site()).ok_or_else(|| {
            (
                format!("the JSON key `{}` is not a usable Rust field name", f.name),
                "use a key made of letters, digits and underscores that starts with a letter"
                    .to_string(),
            )
        })?;
        if let Some(prev) = fields[..i]
            .iter()
            .position(|p| naming::field_ident(&p.name, Span::call_site()) == Some(field.clone()))
        {
            let message = if fields[prev].name == f.name {
                format!("the JSON object has the key `{}` twice", f.name)
            } else {
                format!(
                    "the JSON keys `{}` and `{}` are both the field `{field}`",
                    fields[prev].name, f.name
                )
            };
            return Err((
                message,
                "give every key of the object a name of its own".to_string(),
            ));
        }
        let (ty, number) = match &f.shape {
            Some(shape) => (
                shape_type(
                    shape,
                    &format!("{ident}{}", camel(&f.name)),
                    snapshot,
                    items,
                    object,
                )?,
                None,
            ),
            None => scalar(f, snapshot)?,
        };
        let ty = if f.nullable {
            quote!(::core::option::Option<#ty>)
        } else {
            ty
        };
        let key = Literal::string(&f.name);
        let with = number.map(|reader| {
            let path = format!("::qail::__private::json_number::{reader}");
            quote!(#[serde(deserialize_with = #path)])
        });
        decls.push(quote!(#[serde(rename = #key)] #with pub #field: #ty));
    }
    let doc = format!(" An object of a JSON document of this query: `{ident}`.");
    Ok(quote! {
        #[doc = #doc]
        #[derive(Debug, ::qail::__private::serde::Deserialize)]
        #[serde(crate = "::qail::__private::serde")]
        #[allow(dead_code, reason = "a query may select fields the code does not read")]
        pub struct #ident { #(#decls,)* }
    })
}

/// The Rust type of a scalar value of a JSON object, and the `json_number` reader of a
/// number that serde alone would read through `f64` (`floats`, `decimals`);
/// an error for a type whose JSON form does not give the value back exactly.
fn scalar(
    f: &ShapeField,
    snapshot: &Snapshot,
) -> Result<(TokenStream, Option<&'static str>), Failure> {
    let what = |why: &str| {
        format!(
            "the JSON key `{}` has type {}, {why}",
            f.name,
            types::display(&f.ty)
        )
    };
    let binary =
        "read it in binary instead, with `ROW(…)`, `array_agg(ROW(…))` or `ARRAY(SELECT …)`";
    if is_json(&f.ty) {
        return Ok((quote!(::qail::__private::types::JsonValue), None));
    }
    let name = if f.ty.schema == "pg_catalog" {
        f.ty.name.as_str()
    } else {
        ""
    };
    let refused = match name {
        "bool" | "int2" | "int4" | "int8" | "float4" | "float8" | "numeric" | "text"
        | "varchar" | "bpchar" | "name" | "uuid" | "json" | "jsonb" => None,
        "bytea" => Some((
            what("which JSON carries as a `\\x…` hex string"),
            format!(
                "{binary}, or encode the value in SQL (`encode(…, 'base64')`) to read a String"
            ),
        )),
        "timestamptz" | "timestamp" | "date" => Some((
            what("which can be infinite, and JSON carries it as a string (\"infinity\" then)"),
            format!("{binary}, or cast the value in SQL (`::text`) to read a String"),
        )),
        _ if f.ty.is_citext() => None,
        _ => Some((
            what("which JSON carries as a string in its text format"),
            format!("{binary}, or cast the value in SQL (`::text`) to read a String"),
        )),
    };
    if let Some(failure) = refused {
        return Err(failure);
    }
    let mapped = types::map(&f.ty, snapshot).map_err(|m| {
        let (why, fix) = m
            .split_once(": ")
            .unwrap_or((&m, "cast it in SQL (`::text`)"));
        (format!("the JSON key `{}`: {why}", f.name), fix.to_string())
    })?;
    match mapped {
        Mapped {
            rust: Some(rust),
            missing_feature: None,
            ..
        } => Ok((
            rust,
            match name {
                "float4" | "float8" => Some("floats"),
                "numeric" => Some("decimals"),
                _ => None,
            },
        )),
        Mapped {
            missing_feature: Some(feature),
            display,
            ..
        } => Err((
            format!("the JSON key `{}` has type {display}", f.name),
            feature.fix(),
        )),
        Mapped { display, .. } => Err((
            format!(
                "the JSON key `{}` has type {display}, which has no generated Rust type",
                f.name
            ),
            "cast the value in SQL (`::text`)".to_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qail_schema::snapshot::TypeRef;

    fn field(name: &str, t: &str, dims: u32, nullable: bool) -> ShapeField {
        ShapeField {
            name: name.into(),
            server_name: name.into(),
            ty: TypeRef {
                schema: "pg_catalog".into(),
                name: t.into(),
                oid: None,
                array_dims: dims,
            },
            nullable,
            shape: None,
        }
    }

    fn generate(shape: &Shape) -> Result<(String, String), Failure> {
        let mut items = Vec::new();
        let t = column_type(shape, "Record", "lines", &Snapshot::default(), &mut items)?;
        Ok((
            t.to_string().replace(' ', ""),
            quote!(#(#items)*).to_string().replace(' ', ""),
        ))
    }

    #[test]
    fn objects_become_serde_structs_keyed_by_the_json_keys() {
        let shape = Shape::Record(vec![
            field("Line Id", "int8", 0, false),
            field("lat", "float8", 0, true),
            field("tags", "text", 1, false),
        ]);
        let shape = Shape::Array {
            element: Box::new(shape),
            nullable_elements: true,
        };
        let (ty, items) = generate(&shape).unwrap();
        assert_eq!(ty, "::std::vec::Vec<::core::option::Option<RecordLines>>");
        assert!(
            items.contains("#[serde(rename=\"LineId\")]publine_id:i64"),
            "{items}"
        );
        assert!(
            items.contains("json_number::floats\")]publat:::core::option::Option<f64>"),
            "{items}"
        );
        assert!(
            items.contains("pubtags:::std::vec::Vec<::std::string::String>"),
            "{items}"
        );
    }

    #[test]
    fn values_json_does_not_carry_exactly_are_refused_with_a_fix() {
        for (t, why, fix) in [
            ("bytea", "hex string", "encode(…, 'base64')"),
            ("timestamptz", "can be infinite", "`::text`"),
            ("date", "can be infinite", "`::text`"),
            ("interval", "text format", "`::text`"),
        ] {
            for dims in [0, 1] {
                let e = generate(&Shape::Record(vec![field("v", t, dims, false)])).unwrap_err();
                assert!(e.0.contains(why) && e.1.contains(fix), "{t}: {e:?}");
                assert!(e.1.contains("array_agg(ROW(…))"), "{t}: {e:?}");
            }
        }
        let e = generate(&Shape::Record(vec![
            field("a", "int4", 0, false),
            field("a", "int4", 0, false),
        ]))
        .unwrap_err();
        assert!(e.0.contains("the key `a` twice"), "{e:?}");
    }
}
