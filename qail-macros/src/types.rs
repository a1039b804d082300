//! PostgreSQL type → the marker type the checks use, the Rust type of a generated field, and
//! the Cargo feature the mapping needs (DESIGN.md "Types").

use proc_macro2::{Ident, Span, TokenStream};
pub(crate) use qail_analyzer::rust_type::display;
use qail_analyzer::rust_type::{self, Features, Marker, MissingFeature};
use qail_schema::Snapshot;
use qail_schema::snapshot::TypeRef;
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

/// A qail feature a mapping needs and this build lacks (the analyzer's rule, its message).
pub(crate) type Feature = MissingFeature;

/// qail's features this build has: qail's features switch on the same features of this
/// crate, so `cfg!` here sees what the user enabled.
pub(crate) fn enabled() -> Features {
    let enabled = [
        ("uuid", cfg!(feature = "uuid")),
        ("chrono", cfg!(feature = "chrono")),
        ("time", cfg!(feature = "time")),
        ("json", cfg!(feature = "json")),
        ("decimal", cfg!(feature = "decimal")),
        ("net", cfg!(feature = "net")),
    ];
    Features::new(enabled.iter().filter(|(_, on)| *on).map(|(f, _)| *f))
}

/// The qail feature a type mapping needs (`uuid`, `chrono`…), if this build lacks it.
pub(crate) fn missing_feature(feature: &str) -> Option<Feature> {
    enabled().missing(feature)
}

/// Maps a PostgreSQL type, or says why it cannot be used and what to write instead.
pub(crate) fn map(ty: &TypeRef, snapshot: &Snapshot) -> Result<Mapped, String> {
    let choice = rust_type::choose(ty, snapshot)?;
    let marker = match &choice.marker {
        Marker::Builtin(name) => {
            let name = Ident::new(name, Span::call_site());
            quote!(::qail::__private::pg::#name)
        }
        Marker::UserEnum => quote!(::qail::__private::pg::user_enum),
        Marker::Citext => quote!(::qail::__private::pg::citext),
    };
    let rust = choice.field.map(field_type);
    let (marker, rust) = if choice.array {
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
        missing_feature: choice.feature.and_then(missing_feature),
        display: display(ty),
    })
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
