//! `#[qail(…)]` attributes of the derives, and the error collector they report into.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr, Type};

/// Collects errors so the user sees all of them at once.
#[derive(Default)]
pub(crate) struct Errors(Vec<syn::Error>);

impl Errors {
    /// Records an error at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }

    /// Records an error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    /// All errors combined, or `Ok` when there were none.
    pub(crate) fn finish(self) -> syn::Result<()> {
        let mut errors = self.0.into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            first.combine(e);
        }
        Err(first)
    }
}

/// A derive's output, or on bad input its errors followed by `stub()` (impls with
/// unreachable bodies), so code using the type reports nothing but those errors.
pub(crate) fn or_stub(
    result: syn::Result<TokenStream>,
    stub: impl FnOnce() -> TokenStream,
) -> TokenStream {
    match result {
        Ok(tokens) => tokens,
        Err(e) => {
            let error = e.to_compile_error();
            let stub = stub();
            quote::quote!(#error #stub)
        }
    }
}

/// A string value with where it was written.
#[derive(Clone)]
pub(crate) struct Spanned {
    pub(crate) value: String,
    pub(crate) span: Span,
}

fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<Spanned> {
    let lit: LitStr = meta.value()?.parse()?;
    Ok(Spanned {
        value: lit.value(),
        span: lit.span(),
    })
}

/// The value of `rename_all`: a string; anything else is an error listing the rules.
fn rename_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<Spanned> {
    string(meta).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "rename_all takes one of {} in quotes, e.g. `rename_all = \"snake_case\"`",
                crate::naming::RENAME_RULES.join(", ")
            ),
        )
    })
}

/// Attributes on the struct or enum.
#[derive(Default)]
pub(crate) struct Container {
    /// `#[qail(table = "harbors")]`: check every field against this table.
    pub(crate) table: Option<Spanned>,
    /// `#[qail(type_name = "mood")]`: the PostgreSQL enum.
    pub(crate) type_name: Option<Spanned>,
    /// `#[qail(rename_all = "snake_case")]`.
    pub(crate) rename_all: Option<Spanned>,
    /// `#[qail(transparent)]`: a newtype with its field's PostgreSQL type.
    pub(crate) transparent: bool,
}

/// Attributes on a field of a row struct.
#[derive(Default)]
pub(crate) struct Field {
    /// `#[qail(rename = "…")]`: the column name, when it differs from the field's.
    pub(crate) rename: Option<Spanned>,
    /// `#[qail(default)]`: no column; `Default::default()`.
    pub(crate) default: bool,
    /// `#[qail(flatten)]`: a nested row type reading the next columns.
    pub(crate) flatten: bool,
    /// `#[qail(try_from = "T")]`: read a `T`, then convert.
    pub(crate) try_from: Option<Type>,
    /// `#[qail(json)]`: read a json/jsonb column and deserialize.
    pub(crate) json: bool,
}

/// Attributes on an enum variant.
#[derive(Default)]
pub(crate) struct Variant {
    /// `#[qail(rename = "…")]`: the label.
    pub(crate) rename: Option<Spanned>,
}

fn each_qail(
    attrs: &[Attribute],
    errors: &mut Errors,
    mut f: impl FnMut(&ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("qail")) {
        if let Err(e) = attr.parse_nested_meta(|meta| f(&meta)) {
            errors.push(e);
        }
    }
}

fn unknown(meta: &ParseNestedMeta<'_>, known: &str) -> syn::Error {
    let name = meta
        .path
        .get_ident()
        .map_or_else(|| "this".to_owned(), ToString::to_string);
    meta.error(format!(
        "unknown qail attribute `{name}`: expected one of {known}"
    ))
}

impl Container {
    /// Reads the container's `#[qail(…)]` attributes.
    pub(crate) fn parse(attrs: &[Attribute], errors: &mut Errors) -> Container {
        let mut c = Container::default();
        each_qail(attrs, errors, |meta| {
            if meta.path.is_ident("table") {
                c.table = Some(string(meta)?);
            } else if meta.path.is_ident("type_name") {
                c.type_name = Some(string(meta)?);
            } else if meta.path.is_ident("rename_all") {
                c.rename_all = Some(rename_rule(meta)?);
            } else if meta.path.is_ident("transparent") {
                c.transparent = true;
            } else {
                return Err(unknown(
                    meta,
                    "`table`, `type_name`, `rename_all`, `transparent`",
                ));
            }
            Ok(())
        });
        c
    }
}

impl Field {
    /// Reads a field's `#[qail(…)]` attributes.
    pub(crate) fn parse(attrs: &[Attribute], errors: &mut Errors) -> Field {
        let mut f = Field::default();
        each_qail(attrs, errors, |meta| {
            if meta.path.is_ident("rename") {
                f.rename = Some(string(meta)?);
            } else if meta.path.is_ident("default") {
                f.default = true;
            } else if meta.path.is_ident("flatten") {
                f.flatten = true;
            } else if meta.path.is_ident("json") {
                f.json = true;
            } else if meta.path.is_ident("try_from") {
                let s = string(meta)?;
                let ty = syn::parse_str::<Type>(&s.value).map_err(|_| {
                    syn::Error::new(
                        s.span,
                        format!("`{}` is not a Rust type: write try_from = \"i64\"", s.value),
                    )
                })?;
                f.try_from = Some(ty);
            } else {
                return Err(unknown(
                    meta,
                    "`rename`, `default`, `flatten`, `try_from`, `json`",
                ));
            }
            Ok(())
        });
        f
    }

    /// Which of the mutually exclusive attributes are set, for the conflict check.
    pub(crate) fn modes(&self) -> Vec<&'static str> {
        let mut modes = Vec::new();
        if self.default {
            modes.push("default");
        }
        if self.flatten {
            modes.push("flatten");
        }
        if self.try_from.is_some() {
            modes.push("try_from");
        }
        if self.json {
            modes.push("json");
        }
        modes
    }
}

impl Variant {
    /// Reads a variant's `#[qail(…)]` attributes.
    pub(crate) fn parse(attrs: &[Attribute], errors: &mut Errors) -> Variant {
        let mut v = Variant::default();
        each_qail(attrs, errors, |meta| {
            if meta.path.is_ident("rename") {
                v.rename = Some(string(meta)?);
            } else {
                return Err(unknown(meta, "`rename`"));
            }
            Ok(())
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn reads_container_and_field_attributes() {
        let mut errors = Errors::default();
        let attrs: Vec<Attribute> =
            vec![parse_quote!(#[qail(table = "harbors", rename_all = "snake_case")])];
        let c = Container::parse(&attrs, &mut errors);
        assert_eq!(c.table.unwrap().value, "harbors");
        assert_eq!(c.rename_all.unwrap().value, "snake_case");
        let attrs: Vec<Attribute> = vec![parse_quote!(#[qail(rename = "Id", try_from = "i64")])];
        let f = Field::parse(&attrs, &mut errors);
        assert_eq!(f.rename.unwrap().value, "Id");
        assert!(f.try_from.is_some());
        assert!(errors.finish().is_ok());
    }

    #[test]
    fn unknown_attributes_are_all_reported() {
        let mut errors = Errors::default();
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[qail(tabel = "x")]),
            parse_quote!(#[qail(bogus)]),
        ];
        Container::parse(&attrs, &mut errors);
        let err = errors.finish().unwrap_err();
        assert_eq!(err.into_iter().count(), 2);
    }
}
