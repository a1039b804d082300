//! `#[derive(QailType)]`: a PostgreSQL enum (labels checked against the snapshot) or a
//! `#[qail(transparent)]` newtype, implementing qail-pg's Encode/Decode.

use proc_macro2::{Span, TokenStream};
use qail_schema::snapshot::UserTypeKind;
use quote::quote;
use syn::spanned::Spanned as _;
use syn::{Data, DataEnum, DeriveInput, Fields};

use crate::attr::{self, Errors};
use crate::{naming, snapshot};

/// Expands the derive; on bad input, the errors plus stub impls so nothing else cascades.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    attr::or_stub(expand(input), || stub(input))
}

fn stub(input: &DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    // Note: a Rust enum stands for a PostgreSQL enum in `qail!` queries too; without these
    // the queries using it would each add an error naming the `user_enum` marker.
    let enum_markers = (matches!(input.data, Data::Enum(_)) && input.generics.params.is_empty())
        .then(|| {
            quote! {
                #[automatically_derived]
                impl<const N: usize> ::qail::__private::ToPg<::qail::__private::pg::user_enum, N> for #ident {
                    type Null = ::qail::__private::NotOption;
                }
                #[automatically_derived]
                impl<'a> ::qail::__private::ToArg<'a, 'a> for #ident {
                    fn to_arg(value: &'a Self) -> ::qail::__private::Arg<'a> {
                        ::qail::__private::Arg::Ref(value)
                    }
                }
                #[automatically_derived]
                impl<const C: usize> ::qail::__private::FromPg<::qail::__private::pg::user_enum, C> for #ident {}
            }
        });
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::qail::__private::Encode for #ident #ty_generics #where_clause {
                fn encode(&self, _: ::qail::__private::Oid, _: &mut ::std::vec::Vec<u8>) -> ::core::result::Result<::qail::__private::IsNull, ::qail::__private::BoxError> { ::core::unreachable!() }
                fn accepts(_: ::qail::__private::Oid) -> bool { ::core::unreachable!() }
                fn type_oid(&self) -> ::qail::__private::Oid { ::core::unreachable!() }
                fn encode_checked(&self, _: ::qail::__private::Oid, _: &mut ::std::vec::Vec<u8>) -> ::core::result::Result<::qail::__private::IsNull, ::qail::__private::BoxError> { ::core::unreachable!() }
            }
            #[automatically_derived]
            impl<'r> ::qail::__private::Decode<'r> for #ident #ty_generics #where_clause {
                fn accepts(_: ::qail::__private::Oid) -> bool { ::core::unreachable!() }
                fn decode(_: ::qail::__private::Oid, _: &'r [u8]) -> ::core::result::Result<Self, ::qail::__private::BoxError> { ::core::unreachable!() }
            }
            #enum_markers
        };
    }
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let container = attr::Container::parse(&input.attrs, &mut errors);
    if let Some(t) = &container.table {
        errors.at(t.span, "`table` belongs on a #[derive(QailRow)] struct");
    }
    let tokens = match &input.data {
        Data::Enum(data) if !container.transparent => {
            enumeration(input, data, &container, &mut errors)
        }
        Data::Struct(data) if container.transparent => {
            transparent(input, &data.fields, &mut errors)
        }
        Data::Struct(_) => {
            errors.at(input.ident.span(), "QailType on a struct needs #[qail(transparent)] (a newtype sent as its field's type); for a row, derive QailRow");
            None
        }
        _ => {
            errors.at(input.ident.span(), "QailType derives a PostgreSQL enum from a Rust enum of unit variants, or a #[qail(transparent)] newtype struct");
            None
        }
    };
    errors.finish()?;
    Ok(tokens.unwrap_or_default())
}

/// The labels of the Rust enum, each with its variant.
fn labels(
    data: &DataEnum,
    container: &attr::Container,
    errors: &mut Errors,
) -> Vec<(syn::Ident, String, Span)> {
    let rule = container.rename_all.as_ref().and_then(|r| {
        let ok = naming::RENAME_RULES.contains(&r.value.as_str());
        if !ok {
            errors.at(
                r.span,
                format!(
                    "unknown rename_all rule \"{}\": use one of {}",
                    r.value,
                    naming::RENAME_RULES.join(", ")
                ),
            );
        }
        ok.then_some(r.value.as_str())
    });
    let mut out: Vec<(syn::Ident, String, Span)> = Vec::new();
    for variant in &data.variants {
        let attrs = attr::Variant::parse(&variant.attrs, errors);
        if !matches!(variant.fields, Fields::Unit) {
            errors.at(
                variant.ident.span(),
                "a PostgreSQL enum variant carries no data: make it a unit variant",
            );
        }
        let name = variant.ident.to_string();
        let (label, span) = match (attrs.rename, rule) {
            (Some(r), _) => (r.value, r.span),
            (None, Some(rule)) => (
                naming::rename(rule, &name).unwrap_or(name),
                variant.ident.span(),
            ),
            (None, None) => (name, variant.ident.span()),
        };
        if out.iter().any(|(_, l, _)| *l == label) {
            errors.at(
                span,
                format!("two variants have the label \"{label}\": rename one"),
            );
        }
        out.push((variant.ident.clone(), label, span));
    }
    out
}

/// Checks the labels against the snapshot's enum: a label missing on either side is an error.
fn check_labels(
    input: &DeriveInput,
    container: &attr::Container,
    labels: &[(syn::Ident, String, Span)],
    errors: &mut Errors,
) -> TokenStream {
    let (name, span, explicit) = match &container.type_name {
        Some(t) => (t.value.clone(), t.span, true),
        None => (
            naming::to_snake(&input.ident.to_string()),
            input.ident.span(),
            false,
        ),
    };
    let loaded = match snapshot::load_once_reported() {
        Ok(l) => l,
        Err(m) if explicit => {
            errors.at(span, m);
            return TokenStream::new();
        }
        Err(_) => return TokenStream::new(),
    };
    let (schema, bare) = match name.split_once('.') {
        Some((s, n)) => (Some(s), n),
        None => (None, name.as_str()),
    };
    let pg_labels = match loaded.snapshot.user_type(schema, bare).map(|t| &t.kind) {
        Some(UserTypeKind::Enum { labels }) => labels,
        Some(_) => {
            errors.at(span, format!("type \"{name}\" is not an enum in the schema snapshot: name an enum type in #[qail(type_name = \"…\")]"));
            return TokenStream::new();
        }
        None if explicit => {
            let enums = loaded
                .snapshot
                .types
                .iter()
                .filter(|t| matches!(t.kind, UserTypeKind::Enum { .. }));
            let hint = naming::closest(bare, enums.map(|t| t.name.as_str())).map_or_else(
                || "check the name, or run `cargo qail schema pull` if the type is new".to_owned(),
                |c| format!("did you mean \"{c}\"?"),
            );
            errors.at(
                span,
                format!("enum type \"{name}\" is not in the schema snapshot: {hint}"),
            );
            return TokenStream::new();
        }
        None => return TokenStream::new(),
    };
    compare_labels(input, &name, labels, pg_labels, errors);
    loaded.track().unwrap_or_default()
}

/// The `rename_all` to suggest on the enum: the rule that gives every PostgreSQL label, if
/// one does, else the list of rules.
fn rename_all_hint(labels: &[(syn::Ident, String, Span)], pg_labels: &[String]) -> String {
    let fits = |rule: &str| {
        labels.iter().all(|(variant, _, _)| {
            naming::rename(rule, &variant.to_string()).is_some_and(|l| pg_labels.contains(&l))
        })
    };
    match naming::RENAME_RULES.iter().find(|rule| fits(rule)) {
        Some(rule) => format!("#[qail(rename_all = \"{rule}\")] on the enum for every variant"),
        None => format!(
            "#[qail(rename_all = \"…\")] on the enum, one of {}",
            naming::RENAME_RULES.join(", ")
        ),
    }
}

/// Reports every Rust label PostgreSQL lacks and every PostgreSQL label the Rust enum lacks
/// (unless it was already suggested for a near-miss Rust label).
fn compare_labels(
    input: &DeriveInput,
    name: &str,
    labels: &[(syn::Ident, String, Span)],
    pg_labels: &[String],
    errors: &mut Errors,
) {
    let mut suggested = Vec::new();
    let rename_all = rename_all_hint(labels, pg_labels);
    for (_, label, span) in labels {
        if !pg_labels.contains(label) {
            let close = naming::closest(label, pg_labels.iter().map(String::as_str));
            suggested.extend(close);
            let hint = close.map_or_else(
                || format!("its labels are {}", quoted(pg_labels)),
                |c| format!("did you mean \"{c}\"? (#[qail(rename = \"{c}\")], or {rename_all})"),
            );
            errors.at(
                *span,
                format!("PostgreSQL enum \"{name}\" has no label \"{label}\": {hint}"),
            );
        }
    }
    for label in pg_labels {
        if !labels.iter().any(|(_, l, _)| l == label) && !suggested.contains(&label.as_str()) {
            errors.at(input.ident.span(), format!(
                "PostgreSQL enum \"{name}\" has the label \"{label}\", which `{}` has no variant for: add one (with #[qail(rename = \"{label}\")] if its name differs)",
                input.ident
            ));
        }
    }
}

fn quoted(labels: &[String]) -> String {
    labels
        .iter()
        .map(|l| format!("\"{l}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn enumeration(
    input: &DeriveInput,
    data: &DataEnum,
    container: &attr::Container,
    errors: &mut Errors,
) -> Option<TokenStream> {
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "a PostgreSQL enum type cannot be generic: remove the generic parameters",
        );
        return None;
    }
    let labels = labels(data, container, errors);
    let rule_ok = container
        .rename_all
        .as_ref()
        .is_none_or(|r| naming::RENAME_RULES.contains(&r.value.as_str()));
    let track = if rule_ok {
        check_labels(input, container, &labels, errors)
    } else {
        TokenStream::new()
    };
    let impls = enum_impls(&input.ident, &labels);
    Some(quote! {
        const _: () = {
            #track
            #impls
        };
    })
}

/// Encode/Decode of an enum as its label text, and its place in the type checks.
fn enum_impls(ident: &syn::Ident, labels: &[(syn::Ident, String, Span)]) -> TokenStream {
    let variants: Vec<_> = labels.iter().map(|(v, _, _)| v).collect();
    let texts: Vec<_> = labels
        .iter()
        .map(|(_, l, _)| proc_macro2::Literal::byte_string(l.as_bytes()))
        .collect();
    let enum_name = ident.to_string();
    quote! {
            #[automatically_derived]
            impl ::qail::__private::Encode for #ident {
                fn encode(&self, _: ::qail::__private::Oid, buf: &mut ::std::vec::Vec<u8>) -> ::core::result::Result<::qail::__private::IsNull, ::qail::__private::BoxError> {
                    buf.extend_from_slice(match self { #(Self::#variants => #texts,)* });
                    ::core::result::Result::Ok(::qail::__private::IsNull::No)
                }
                fn accepts(ty: ::qail::__private::Oid) -> bool {
                    ty == 0 || ty >= ::qail::__private::FIRST_USER_OID
                }
                fn type_oid(&self) -> ::qail::__private::Oid {
                    0
                }
                fn encode_checked(&self, ty: ::qail::__private::Oid, buf: &mut ::std::vec::Vec<u8>) -> ::core::result::Result<::qail::__private::IsNull, ::qail::__private::BoxError> {
                    if !<Self as ::qail::__private::Encode>::accepts(ty) {
                        return ::core::result::Result::Err(::std::format!("`{}` is a PostgreSQL enum and cannot be sent as type OID {}: cast the parameter to the enum type", #enum_name, ty).into());
                    }
                    ::qail::__private::Encode::encode(self, ty, buf)
                }
            }

            #[automatically_derived]
            impl<'r> ::qail::__private::Decode<'r> for #ident {
                fn accepts(ty: ::qail::__private::Oid) -> bool {
                    ty >= ::qail::__private::FIRST_USER_OID
                }
                fn decode(_: ::qail::__private::Oid, raw: &'r [u8]) -> ::core::result::Result<Self, ::qail::__private::BoxError> {
                    match raw {
                        #(#texts => ::core::result::Result::Ok(Self::#variants),)*
                        other => ::core::result::Result::Err(::std::format!(
                            "`{}` has no variant for the label {:?}: add one, or run `cargo qail schema pull` and rebuild", #enum_name, ::std::string::String::from_utf8_lossy(other)
                        ).into()),
                    }
                }
            }

            #[automatically_derived]
            impl<const N: usize> ::qail::__private::ToPg<::qail::__private::pg::user_enum, N> for #ident {
                type Null = ::qail::__private::NotOption;
            }
            #[automatically_derived]
            impl<'a> ::qail::__private::ToArg<'a, 'a> for #ident {
                fn to_arg(value: &'a Self) -> ::qail::__private::Arg<'a> {
                    ::qail::__private::Arg::Ref(value)
                }
            }
            #[automatically_derived]
            impl<const C: usize> ::qail::__private::FromPg<::qail::__private::pg::user_enum, C> for #ident {}
    }
}

fn transparent(input: &DeriveInput, fields: &Fields, errors: &mut Errors) -> Option<TokenStream> {
    let field = match fields {
        Fields::Unnamed(f) if f.unnamed.len() == 1 => &f.unnamed[0],
        Fields::Named(f) if f.named.len() == 1 => &f.named[0],
        _ => {
            errors.at(
                input.ident.span(),
                "#[qail(transparent)] needs a struct with exactly one field",
            );
            return None;
        }
    };
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "#[qail(transparent)] does not support generic structs yet: use a concrete field type",
        );
        return None;
    }
    let ident = &input.ident;
    let inner = &field.ty;
    let member = field
        .ident
        .as_ref()
        .map_or_else(|| quote!(0), |i| quote!(#i));
    Some(quote! {
        const _: () = {
            #[automatically_derived]
            impl ::qail::__private::Encode for #ident {
                fn encode(&self, ty: ::qail::__private::Oid, buf: &mut ::std::vec::Vec<u8>) -> ::core::result::Result<::qail::__private::IsNull, ::qail::__private::BoxError> {
                    ::qail::__private::Encode::encode(&self.#member, ty, buf)
                }
                fn accepts(ty: ::qail::__private::Oid) -> bool {
                    <#inner as ::qail::__private::Encode>::accepts(ty)
                }
                fn type_oid(&self) -> ::qail::__private::Oid {
                    ::qail::__private::Encode::type_oid(&self.#member)
                }
                fn encode_checked(&self, ty: ::qail::__private::Oid, buf: &mut ::std::vec::Vec<u8>) -> ::core::result::Result<::qail::__private::IsNull, ::qail::__private::BoxError> {
                    ::qail::__private::Encode::encode_checked(&self.#member, ty, buf)
                }
            }

            #[automatically_derived]
            impl<'r> ::qail::__private::Decode<'r> for #ident {
                fn accepts(ty: ::qail::__private::Oid) -> bool {
                    <#inner as ::qail::__private::Decode<'r>>::accepts(ty)
                }
                fn decode(ty: ::qail::__private::Oid, raw: &'r [u8]) -> ::core::result::Result<Self, ::qail::__private::BoxError> {
                    <#inner as ::qail::__private::Decode<'r>>::decode(ty, raw).map(|v| Self { #member: v })
                }
            }

            #[automatically_derived]
            impl<P, const N: usize> ::qail::__private::ToPg<P, N> for #ident where #inner: ::qail::__private::ToPg<P, N> {
                type Null = <#inner as ::qail::__private::ToPg<P, N>>::Null;
            }
            #[automatically_derived]
            impl<'a> ::qail::__private::ToArg<'a, 'a> for #ident {
                fn to_arg(value: &'a Self) -> ::qail::__private::Arg<'a> {
                    ::qail::__private::Arg::Ref(value)
                }
            }
            #[automatically_derived]
            impl<P, const C: usize> ::qail::__private::FromPg<P, C> for #ident where #inner: ::qail::__private::FromPg<P, C> {}
        };
    })
}
