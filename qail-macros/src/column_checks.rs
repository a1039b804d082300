//! Checks whose rustc error names a column: the argument for a NOT NULL column of an INSERT
//! or UPDATE, and a field of the user's struct in the `Type => "…"` form.
//!
//! `#[diagnostic::on_unimplemented]` can only put type parameters into its text, so each
//! check declares a trait of its own at the call site, with the column's name written into
//! the message, and a method or a bound naming that trait: the error reads as the message,
//! spanned where the check is emitted.

use proc_macro2::{Span, TokenStream};
use qail_analyzer::StatementKind;
use qail_analyzer::rust_type;
use qail_schema::Snapshot;
use qail_schema::snapshot::TypeRef;
use quote::quote_spanned;

/// Why a check's trait may be named after the user's type and field. A literal built here,
/// not written in `quote!`, which would parse it from text at every expansion.
fn reason() -> proc_macro2::Literal {
    proc_macro2::Literal::string("named after the user's type and field")
}

/// `{` and `}` written as themselves in an `on_unimplemented` string.
fn literal(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

/// Argument `$n` (`what`: "parameter $2", "parameter $2 ({name})") checked against `marker`
/// as the value of the NOT NULL column `column`: an `Option` fails with a message naming
/// the column and what to do.
pub(crate) fn not_null_argument(
    span: Span,
    expr: &TokenStream,
    marker: &TokenStream,
    n: usize,
    what: &str,
    column: &str,
    kind: StatementKind,
) -> TokenStream {
    let message = literal(&format!(
        "{what} is the value of the NOT NULL column \"{column}\", but an `Option` was passed"
    ));
    let label = literal(&format!("the table refuses NULL in \"{column}\""));
    let leave_out = match kind {
        StatementKind::Update => format!("leave \"{column}\" out of the SET list"),
        _ => format!("leave \"{column}\" out of the INSERT so that it takes its default"),
    };
    let note = literal(&format!(
        "pass the value itself: decide what `None` means before the query (`.unwrap_or(…)`, \
         or return early), or {leave_out}"
    ));
    let n = proc_macro2::Literal::usize_unsuffixed(n);
    // Note: the trait's method, named by a path whose `Self` rustc infers from the argument's
    // `ToPg::Null` (`check::not_null` takes it as `fn(&T::Null)`), is what fails for an
    // `Option`: no function is declared here, where a function (its signature's checks, its
    // body's type and borrow checks) cost the compiler more than the rest of the check. The
    // argument stays outside the block, so a temporary lives to the end of the statement.
    quote_spanned! {span=>
        ::qail::__private::check::not_null::<_, #marker, #n>(&(#expr), {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait NotNullColumn {
                fn column(&self) {}
            }
            impl NotNullColumn for ::qail::__private::NotOption {}
            NotNullColumn::column
        })
    }
}

/// What a typed-form field is checked with: the column `value` read into the field `field`
/// of `target`, which must be a Rust type of the column's PostgreSQL type (`marker`,
/// `pg` as PostgreSQL names it); `rust` is the type the column decodes to. The message names
/// the column and that type.
pub(crate) struct Field<'a> {
    pub(crate) span: Span,
    pub(crate) target: &'a str,
    pub(crate) column: &'a str,
    pub(crate) field: &'a str,
    pub(crate) pg: &'a str,
    /// The Rust types the column decodes to (two where qail maps it to either).
    pub(crate) rust: Vec<String>,
    pub(crate) nullable: bool,
    /// Why the column can be NULL ("right side of LEFT JOIN …"), or empty.
    pub(crate) why: String,
    pub(crate) marker: &'a TokenStream,
    pub(crate) index: usize,
}

impl Field<'_> {
    /// The field's value, `value`, passed through the check; the check's trait is added to
    /// `items` (declared beside the decoder, so that rustc names it briefly).
    pub(crate) fn check(&self, value: &TokenStream, items: &mut Vec<TokenStream>) -> TokenStream {
        let Field {
            span,
            target,
            column,
            field,
            pg,
            nullable,
            marker,
            ..
        } = self;
        let wanted = (!self.rust.is_empty()).then(|| {
            let each = self.rust.iter().map(|rust| match nullable {
                true => format!("Option<{rust}>"),
                false => rust.clone(),
            });
            each.collect::<Vec<_>>().join("` or `")
        });
        let message = literal(&match &wanted {
            Some(rust) => format!(
                "column \"{column}\" is PostgreSQL `{pg}`, read as `{rust}`: the field `{target}.{field}` cannot be `{{Self}}`"
            ),
            None => format!(
                "column \"{column}\" is PostgreSQL `{pg}`: the field `{target}.{field}` cannot be `{{Self}}`"
            ),
        })
        // Note: `{Self}` is the one placeholder kept.
        .replace("{{Self}}", "{Self}");
        let label = literal(&format!("the field `{field}` of this type"));
        let note = literal(&match &wanted {
            Some(rust) => format!(
                "make the field `{rust}`, or cast the column in SQL to a type the field holds (`…::type AS {field}`)"
            ),
            None => format!(
                "make the field a type that maps to `{pg}`, or cast the column in SQL (`…::type AS {field}`)"
            ),
        });
        let c = proc_macro2::Literal::usize_unsuffixed(self.index);
        let name = self.trait_name();
        let reason = reason();
        items.push(quote_spanned! {*span=>
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            #[allow(non_camel_case_types, reason = #reason)]
            trait #name: ::core::marker::Sized {
                fn checked(self) -> Self;
            }
            #[diagnostic::do_not_recommend]
            impl<T: ::qail::__private::FromPg<#marker, #c>> #name for T {
                #[inline(always)]
                fn checked(self) -> Self {
                    self
                }
            }
        });
        quote_spanned!(*span=> <_ as #name>::checked(#value))
    }

    /// The field's value, `value`, checked to be an `Option` (the column can be NULL); the
    /// check's trait is added to `items`.
    pub(crate) fn check_nullable(
        &self,
        value: &TokenStream,
        items: &mut Vec<TokenStream>,
    ) -> TokenStream {
        let name = self.nullable_trait(items);
        quote_spanned!(self.span=> <_ as #name>::checked(#value))
    }

    /// [`Field::check_nullable`] of the field's type `ty` alone.
    pub(crate) fn check_nullable_type(
        &self,
        ty: &TokenStream,
        items: &mut Vec<TokenStream>,
    ) -> TokenStream {
        let name = self.nullable_trait(items);
        quote_spanned!(self.span=> <#ty as #name>::checked)
    }

    /// Declares the trait implemented by `Option` alone, with the message naming the
    /// column, and returns its name.
    fn nullable_trait(&self, items: &mut Vec<TokenStream>) -> proc_macro2::Ident {
        let Field {
            target,
            column,
            field,
            why,
            ..
        } = self;
        let because = match why.as_str() {
            "" => String::new(),
            why => format!(" ({why})"),
        };
        let message = literal(&format!(
            "column \"{column}\" can be NULL{because}, but the field `{target}.{field}` is `{{Self}}`, which cannot hold NULL"
        ))
        .replace("{{Self}}", "{Self}");
        let label = literal(&format!("make the field `{field}` an `Option<…>`"))
            .replace("Option<…>", "Option<{Self}>");
        let note = literal(&format!(
            "or make the column non-null in SQL: `COALESCE({column}, …)`, or an alias when you \
             know better, `r#\"… AS \"{column}!\" …\"#` (a raw string literal)"
        ));
        let name = quote::format_ident!("{}Nullable", self.trait_name());
        let reason = reason();
        items.push(quote_spanned! {self.span=>
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            #[allow(non_camel_case_types, reason = #reason)]
            trait #name: ::core::marker::Sized {
                fn checked(self) -> Self;
            }
            #[diagnostic::do_not_recommend]
            impl<T> #name for ::core::option::Option<T> {
                #[inline(always)]
                fn checked(self) -> Self {
                    self
                }
            }
        });
        name
    }

    /// The check of the field's type `ty` alone (no value): `<ty as Check>::checked`, its
    /// trait added to `items`.
    pub(crate) fn check_type(&self, ty: &TokenStream, items: &mut Vec<TokenStream>) -> TokenStream {
        let value = quote::quote!(());
        let _ = self.check(&value, items);
        let name = self.trait_name();
        quote_spanned!(self.span=> <#ty as #name>::checked)
    }

    /// The check's trait, named after the type and the field (`SailingDepartsAt`): rustc
    /// writes "the trait `SailingDepartsAt` is not implemented for `String`".
    fn trait_name(&self) -> proc_macro2::Ident {
        let target = self.target.split('<').next().unwrap_or(self.target);
        let target = target.rsplit("::").next().unwrap_or(target);
        let field = self.field.trim_start_matches("r#");
        let camel: String = field
            .split('_')
            .map(|word| {
                let mut chars = word.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_uppercase().chain(chars).collect()
                })
            })
            .collect();
        let name = format!("{target}{camel}");
        if syn::parse_str::<proc_macro2::Ident>(&name).is_ok() {
            proc_macro2::Ident::new(&name, Span::call_site())
        } else {
            quote::format_ident!("Column{}", self.index)
        }
    }
}

/// The Rust types a column of PostgreSQL type `ty` decodes to, as a user writes them
/// (`uuid::Uuid`, `Vec<String>`; the date and time types of the crate this build maps, or both
/// when neither feature is on). Empty when qail has no mapping of its own.
pub(crate) fn rust_names(ty: &TypeRef) -> Vec<String> {
    // Note: built-in types and citext only, as the struct's fields are checked against the
    // snapshot's types elsewhere; the analyzer's rule and this build's features decide.
    let Ok(choice) = rust_type::choose(ty, &Snapshot::default()) else {
        return Vec::new();
    };
    if choice.field.is_none() {
        return Vec::new();
    }
    let names = match crate::types::enabled().rust_name(&choice) {
        Ok(name) => vec![name],
        // Note: a feature is off: every type the column could be read as.
        Err(_) => choice.hint.split(" or ").map(str::to_owned).collect(),
    };
    if choice.array {
        names.into_iter().map(|t| format!("Vec<{t}>")).collect()
    } else {
        names
    }
}
