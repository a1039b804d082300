//! `#[derive(QailRow)]`: a by-index `FromRow` reading one column per field, in order, and the
//! optional `#[qail(table = "…")]` check of every field against the snapshot.

use proc_macro2::TokenStream;
use qail_schema::snapshot::Relation;
use quote::{quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Token};

use crate::attr::{self, Errors};
use crate::{naming, nested, snapshot, types};

/// Expands the derive; on bad input, the errors plus a stub impl so nothing else cascades.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    attr::or_stub(expand(input), || stub(input))
}

fn stub(input: &DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::qail::__private::FromRow for #ident #ty_generics #where_clause {
                fn from_row(
                    _: &mut ::qail::__private::RawRow<'_>,
                    _: &[::qail::__private::Oid],
                ) -> ::core::result::Result<Self, ::qail::__private::Error> {
                    ::core::unreachable!()
                }
            }
        };
    }
}

fn named_fields(input: &DeriveInput) -> syn::Result<&Punctuated<syn::Field, Token![,]>> {
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Ok(&named.named),
            _ => Err(syn::Error::new(
                input.ident.span(),
                "QailRow needs a struct with named fields: the field names are matched to column names",
            )),
        },
        _ => Err(syn::Error::new(
            input.ident.span(),
            "QailRow can only be derived for a struct with named fields; for a PostgreSQL enum, derive QailType",
        )),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let container = attr::Container::parse(&input.attrs, &mut errors);
    let fields = named_fields(input)?;
    if let Some(t) = &container.type_name {
        errors.at(t.span, "`type_name` belongs on a #[derive(QailType)] enum; for a row struct, use `table = \"…\"`");
    }
    let mut reads = Vec::new();
    let mut parsed = Vec::new();
    for field in fields {
        let attrs = attr::Field::parse(&field.attrs, &mut errors);
        let modes = attrs.modes();
        if modes.len() > 1 {
            errors.at(
                field.span(),
                format!(
                    "`{}` cannot be combined on one field: keep one",
                    modes.join("` and `")
                ),
            );
        }
        if attrs.json
            && let Some(feature) = types::missing_feature("json")
        {
            errors.at(
                field.span(),
                feature.message("a #[qail(json)] field", "json"),
            );
        }
        reads.push(read(field, &attrs));
        parsed.push((field, attrs));
    }
    let checks = match &container.table {
        Some(table) => table_checks(&input.ident.to_string(), table, &parsed, &mut errors),
        None => TokenStream::new(),
    };
    errors.finish()?;
    let ident = &input.ident;
    let record = record(input, &parsed);
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        const _: () = {
            #checks
            #record

            #[automatically_derived]
            impl #impl_generics ::qail::__private::FromRow for #ident #ty_generics #where_clause {
                fn from_row(
                    row: &mut ::qail::__private::RawRow<'_>,
                    columns: &[::qail::__private::Oid],
                ) -> ::core::result::Result<Self, ::qail::__private::Error> {
                    ::core::result::Result::Ok(Self { #(#reads,)* })
                }
            }
        };
    })
}

/// A struct without generics whose fields are plain columns can also be read from a record
/// or composite value (a nested row: `Vec<Self>` for `array_agg(ROW(…))`), field by field in
/// order.
fn record(input: &DeriveInput, parsed: &[(&syn::Field, attr::Field)]) -> TokenStream {
    let plain = parsed.iter().all(|(_, a)| a.modes().is_empty());
    if !input.generics.params.is_empty() || !plain {
        return TokenStream::new();
    }
    let fields: Option<Vec<_>> = parsed
        .iter()
        .map(|(f, _)| {
            let ident = f.ident.clone()?;
            let name = ident.unraw_string();
            Some((ident, name, 0))
        })
        .collect();
    fields.map_or_else(TokenStream::new, |f| {
        nested::record_decode(&input.ident, &f)
    })
}

/// How one field is read from the row.
fn read(field: &syn::Field, attrs: &attr::Field) -> TokenStream {
    let ident = &field.ident;
    let ty = &field.ty;
    let span = field.ty.span();
    if attrs.default {
        quote_spanned!(span=> #ident: ::core::default::Default::default())
    } else if attrs.flatten {
        quote_spanned!(span=> #ident: <#ty as ::qail::__private::FromRow>::from_row(row, columns)?)
    } else if let Some(from) = &attrs.try_from {
        quote_spanned!(span=> #ident: row.get_next_as::<#from, #ty>(columns)?)
    } else if attrs.json {
        quote_spanned!(span=> #ident: row.get_next::<::qail::__private::types::Json<#ty>>(columns)?.0)
    } else {
        quote_spanned!(span=> #ident: row.get_next::<#ty>(columns)?)
    }
}

/// `#[qail(table = "…")]`: every column-reading field must be a column of the table, with a
/// compatible type and `Option` where the column is nullable.
fn table_checks(
    target: &str,
    table: &attr::Spanned,
    fields: &[(&syn::Field, attr::Field)],
    errors: &mut Errors,
) -> TokenStream {
    let loaded = match snapshot::load_once_reported() {
        Ok(l) => l,
        Err(m) => {
            errors.at(table.span, m);
            return TokenStream::new();
        }
    };
    let (schema, name) = match table.value.split_once('.') {
        Some((s, n)) => (Some(s), n),
        None => (None, table.value.as_str()),
    };
    let Some(relation) = loaded.snapshot.relation(schema, name) else {
        let hint = naming::closest(
            name,
            loaded.snapshot.relations.iter().map(|r| r.name.as_str()),
        )
        .map_or_else(
            || "check the name, or run `cargo qail schema pull` if the table is new".to_owned(),
            |c| format!("did you mean \"{c}\"?"),
        );
        errors.at(
            table.span,
            format!(
                "table \"{}\" is not in the schema snapshot: {hint}",
                table.value
            ),
        );
        return TokenStream::new();
    };
    let mut checks: Vec<TokenStream> = loaded.track().into_iter().collect();
    for (field, attrs) in fields {
        if attrs.default || attrs.flatten {
            continue;
        }
        if let Some(check) = field_check(target, relation, field, attrs, &loaded.snapshot, errors) {
            checks.push(check);
        }
    }
    quote!(#(#checks)*)
}

fn field_check(
    target: &str,
    relation: &Relation,
    field: &syn::Field,
    attrs: &attr::Field,
    snapshot: &qail_schema::Snapshot,
    errors: &mut Errors,
) -> Option<TokenStream> {
    let ident = field.ident.as_ref()?;
    let (column_name, span) = match &attrs.rename {
        Some(r) => (r.value.clone(), r.span),
        None => (ident.unraw_string(), ident.span()),
    };
    let Some((index, column)) = relation
        .columns
        .iter()
        .enumerate()
        .find(|(_, c)| c.name == column_name)
    else {
        let hint = naming::closest(
            &column_name,
            relation.columns.iter().map(|c| c.name.as_str()),
        )
        .map_or_else(
            || "rename the field, or map it with #[qail(rename = \"column\")]".to_owned(),
            |c| format!("did you mean \"{c}\"? (or #[qail(rename = \"{c}\")])"),
        );
        errors.at(
            span,
            format!(
                "table \"{}\" has no column \"{column_name}\": {hint}",
                relation.name
            ),
        );
        return None;
    };
    if attrs.try_from.is_some() || attrs.json {
        return None;
    }
    let mapped = types::map(&column.ty, snapshot).ok()?;
    let marker = &mapped.marker;
    let ty = &field.ty;
    let mut items = Vec::new();
    let field = crate::column_checks::Field {
        span: ty.span(),
        target,
        column: &column_name,
        field: &ident.unraw_string(),
        pg: &mapped.display,
        rust: crate::column_checks::rust_names(&column.ty),
        nullable: !column.not_null,
        why: String::new(),
        marker,
        index: index + 1,
    };
    let check = field.check_type(&quote!(#ty), &mut items);
    let nullable = (!column.not_null).then(|| {
        let check = field.check_nullable_type(&quote!(#ty), &mut items);
        quote_spanned!(ty.span()=> let _ = #check;)
    });
    Some(quote_spanned! {ty.span()=>
        const _: () = {
            #(#items)*
            let _ = #check;
            #nullable
        };
    })
}

trait Unraw {
    fn unraw_string(&self) -> String;
}

impl Unraw for syn::Ident {
    fn unraw_string(&self) -> String {
        let s = self.to_string();
        s.strip_prefix("r#").map_or(s.clone(), str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn reads_fields_in_order_with_attributes() {
        let input: DeriveInput = parse_quote! {
            struct Harbor {
                id: i64,
                #[qail(rename = "Name")] name: String,
                #[qail(default)] extra: u8,
                #[qail(try_from = "i64")] small: u16,
                #[qail(flatten)] inner: Inner,
            }
        };
        let out = derive(&input).to_string();
        assert!(
            out.contains("impl :: qail :: __private :: FromRow for Harbor"),
            "{out}"
        );
        let id = out.find("id : row . get_next :: < i64 >").unwrap();
        let small = out.find("get_next_as :: < i64 , u16 >").unwrap();
        assert!(id < small);
        assert!(out.contains("Default :: default ()"));
        assert!(out.contains("< Inner as :: qail :: __private :: FromRow > :: from_row"));
    }

    #[test]
    fn bad_input_gives_errors_and_a_stub() {
        let input: DeriveInput = parse_quote! { enum Mood { Happy } };
        let out = derive(&input).to_string();
        assert!(out.contains("compile_error"));
        assert!(out.contains("unreachable"));
        let input: DeriveInput = parse_quote! {
            #[qail(bogus)]
            struct R { #[qail(default, flatten)] a: A, #[qail(nope)] b: B }
        };
        let out = derive(&input).to_string();
        assert_eq!(out.matches("compile_error").count(), 3, "{out}");
    }
}
