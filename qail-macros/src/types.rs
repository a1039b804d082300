//! PostgreSQL type → the marker type the checks use, the Rust type of a generated field, and
//! the Cargo feature the mapping needs (DESIGN.md "Types").

use proc_macro2::{Ident, Span, TokenStream};
use qail_schema::Snapshot;
use qail_schema::snapshot::{TypeRef, UserTypeKind};
use quote::quote;

/// How one PostgreSQL type appears in generated code.
pub(crate) struct Mapped {
    /// `::qail::__private::pg::…` marker type.
    pub(crate) marker: TokenStream,
    /// The Rust type of a generated field; `None` for a user enum (its Rust type is the
    /// user's, named with `AS "col: Type"` or the `Type =>` form).
    pub(crate) rust: Option<TokenStream>,
    /// The qail feature the mapping needs, when it is off in this build.
    pub(crate) missing_feature: Option<Feature>,
    /// The type as PostgreSQL names it, for messages (`int4`, `text[]`, `mood`).
    pub(crate) display: String,
}

/// A Cargo feature of qail that a type mapping needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Feature {
    /// How the message names it: `` `net` ``, `` `chrono` (or `time`) ``.
    pub(crate) name: &'static str,
    /// What to add to `features = […]`.
    pub(crate) plain: &'static str,
}

impl Feature {
    /// "… has type inet: enable the qail feature `net` …", for `what` (a column or a
    /// parameter) of type `display`.
    pub(crate) fn message(self, what: &str, display: &str) -> String {
        format!("{what} has type {display}: {}", self.fix())
    }

    /// "enable the qail feature `net` in Cargo.toml (…)".
    pub(crate) fn fix(self) -> String {
        format!(
            "enable the qail feature {} in Cargo.toml (qail = {{ version = \"…\", features = [\"{}\"] }})",
            self.name, self.plain
        )
    }
}

/// The qail feature a type mapping needs (qail-catalog's `Rust::feature`: `uuid`, `chrono`…),
/// if it is off. qail's features switch on the same features of this crate, so `cfg!` here
/// sees what the user enabled.
pub(crate) fn missing_feature(feature: &str) -> Option<Feature> {
    let (on, name, plain) = match feature {
        "uuid" => (cfg!(feature = "uuid"), "`uuid`", "uuid"),
        "json" => (cfg!(feature = "json"), "`json`", "json"),
        "decimal" => (cfg!(feature = "decimal"), "`decimal`", "decimal"),
        "net" => (cfg!(feature = "net"), "`net`", "net"),
        "chrono" => (
            cfg!(any(feature = "chrono", feature = "time")),
            "`chrono` (or `time`)",
            "chrono",
        ),
        _ => (true, "", ""),
    };
    (!on).then_some(Feature { name, plain })
}

/// Maps a PostgreSQL type, or says why it cannot be used and what to write instead.
pub(crate) fn map(ty: &TypeRef, snapshot: &Snapshot) -> Result<Mapped, String> {
    let display = display(ty);
    if ty.array_dims > 1 {
        return Err(format!(
            "type {display} has {} dimensions; qail maps one-dimensional arrays only: unnest it or cast to a one-dimensional array",
            ty.array_dims
        ));
    }
    let (marker, rust, require) = scalar(ty, snapshot)?;
    let (marker, rust) = if ty.array_dims == 1 {
        (
            quote!(::qail::__private::pg::array<#marker>),
            rust.map(|r| quote!(::std::vec::Vec<#r>)),
        )
    } else {
        (marker, rust)
    };
    Ok(Mapped {
        marker,
        rust,
        missing_feature: require.and_then(missing_feature),
        display,
    })
}

type Scalar = (TokenStream, Option<TokenStream>, Option<&'static str>);

fn scalar(ty: &TypeRef, snapshot: &Snapshot) -> Result<Scalar, String> {
    if ty.schema == "pg_catalog" {
        let rust = qail_catalog::type_by_name(&ty.name)
            .and_then(|t| t.rust)
            .filter(|r| !r.field.is_empty());
        if let Some(rust) = rust {
            let marker = Ident::new(&ty.name, Span::call_site());
            let feature = Some(rust.feature).filter(|f| !f.is_empty());
            return Ok((
                quote!(::qail::__private::pg::#marker),
                Some(field_type(rust.field)),
                feature,
            ));
        }
        return Err(format!(
            "PostgreSQL type {} has no Rust mapping in qail: cast it in SQL (`::text`), or name a Rust type that implements Decode with an alias, `r#\"… AS \"col: path::Type\" …\"#` (a raw string literal)",
            ty.name
        ));
    }
    let user = snapshot.user_type(Some(&ty.schema), &ty.name);
    match user.map(|u| &u.kind) {
        Some(UserTypeKind::Enum { .. }) => {
            Ok((quote!(::qail::__private::pg::user_enum), None, None))
        }
        Some(UserTypeKind::Domain { base, .. }) => scalar(base, snapshot),
        _ if ty.name == "citext" => Ok((
            quote!(::qail::__private::pg::citext),
            Some(quote!(::std::string::String)),
            None,
        )),
        _ => Err(format!(
            "type {}.{} is not supported by qail!: cast it in SQL (`::text`), or name a Rust type with an alias, `r#\"… AS \"col: path::Type\" …\"#` (a raw string literal)",
            ty.schema, ty.name
        )),
    }
}

/// The tokens of a catalog field type: a primitive (`i32`), `String`, `Vec<u8>`, or a name under
/// the facade's `__private::types` (`Timestamptz`). Built as tokens, not parsed from a string,
/// because this runs for every column and parameter of every query.
fn field_type(field: &str) -> TokenStream {
    match field {
        "String" => quote!(::std::string::String),
        "Vec<u8>" => quote!(::std::vec::Vec<u8>),
        "bool" | "i16" | "i32" | "i64" | "f32" | "f64" | "u32" => {
            let prim = Ident::new(field, Span::call_site());
            quote!(#prim)
        }
        other => {
            let name = Ident::new(other, Span::call_site());
            quote!(::qail::__private::types::#name)
        }
    }
}

/// `int4`, `text[]`, `billing.currency`.
pub(crate) fn display(ty: &TypeRef) -> String {
    let base = if ty.schema == "pg_catalog" || ty.schema == "public" {
        ty.name.clone()
    } else {
        format!("{}.{}", ty.schema, ty.name)
    };
    let dims = usize::try_from(ty.array_dims).unwrap_or(0);
    format!("{base}{}", "[]".repeat(dims))
}

/// The name RowDescription reports for the type (`int4`, `_int4` for an array).
pub(crate) fn wire_name(ty: &TypeRef) -> String {
    if ty.array_dims > 0 {
        format!("_{}", ty.name)
    } else {
        ty.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(name: &str, dims: u32) -> TypeRef {
        TypeRef {
            schema: "pg_catalog".into(),
            name: name.into(),
            oid: None,
            array_dims: dims,
        }
    }

    fn tokens(t: &TokenStream) -> String {
        t.to_string().replace(' ', "")
    }

    #[test]
    fn builtins_and_arrays() {
        let snap = Snapshot::default();
        let m = map(&builtin("int4", 0), &snap).unwrap();
        assert_eq!(tokens(&m.marker), "::qail::__private::pg::int4");
        assert_eq!(tokens(m.rust.as_ref().unwrap()), "i32");
        assert!(m.missing_feature.is_none());
        let m = map(&builtin("uuid", 1), &snap).unwrap();
        assert_eq!(
            tokens(&m.marker),
            "::qail::__private::pg::array<::qail::__private::pg::uuid>"
        );
        assert_eq!(
            tokens(m.rust.as_ref().unwrap()),
            "::std::vec::Vec<::qail::__private::types::Uuid>"
        );
        assert!(m.missing_feature.is_none(), "uuid is a default feature");
        assert_eq!(m.display, "uuid[]");
        let m = map(&builtin("inet", 0), &snap).unwrap();
        assert_eq!(m.missing_feature.is_some(), !cfg!(feature = "net"));
    }

    #[test]
    fn unsupported_types_say_what_to_do() {
        let snap = Snapshot::default();
        let e = map(&builtin("point", 0), &snap).err().unwrap();
        assert!(e.contains("cast it"), "{e}");
        let e = map(&builtin("int4", 2), &snap).err().unwrap();
        assert!(e.contains("one-dimensional"), "{e}");
    }
}
