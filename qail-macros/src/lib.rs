//! Procedural macros of qail: `qail!`, `#[derive(QailRow)]`, `#[derive(QailType)]`.
//!
//! Use them through the `qail` crate; this crate's output refers to `::qail::__private`.
//! The entry points only parse and hand over: the model (`ast`, `attr`), the checks
//! (`check`, `snapshot`, `types`, `naming`) and code generation (`expand`, `nested` for the
//! structs of record-valued columns, `derive_row`, `derive_type`) are plain functions over
//! `proc_macro2` types.

mod ast;
mod attr;
mod check;
mod derive_row;
mod derive_type;
mod expand;
mod naming;
mod nested;
mod snapshot;
mod types;

use proc_macro::TokenStream;

/// A query checked against the schema snapshot at compile time.
///
/// `qail!("SQL", args…)` yields a `Query` whose rows are a generated struct with one field per
/// column; `qail!(Type => "SQL", args…)` builds the rows into `Type` by column name.
/// Parameters are `$1…$n` followed by that many arguments, or `{name}` capturing a variable.
///
/// Arguments are borrowed by the query: run it in the same statement
/// (`qail!(…).fetch_all(&mut conn).await?`), or bind a computed argument to a variable first
/// when the query is kept in a `let` before it runs.
#[proc_macro]
pub fn qail(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as ast::QueryInput);
    expand::query(&input)
        .unwrap_or_else(|e| errors_in_expression(&e))
        .into()
}

/// Every error of `e` as `compile_error!`s in a block whose value is the last one, so several
/// errors are reported where the macro stands for an expression.
fn errors_in_expression(e: &syn::Error) -> proc_macro2::TokenStream {
    let mut errors: Vec<_> = e.into_iter().map(|e| e.to_compile_error()).collect();
    let last = errors.pop();
    quote::quote!({ #(#errors)* (#last) })
}

/// Decodes a struct from a result row by column index, one field per column in order.
///
/// Field attributes: `#[qail(rename = "col")]`, `#[qail(default)]`, `#[qail(flatten)]`,
/// `#[qail(try_from = "T")]`, `#[qail(json)]`. Container: `#[qail(table = "harbors")]` checks
/// every field against that table in the snapshot.
#[proc_macro_derive(QailRow, attributes(qail))]
pub fn derive_qail_row(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    derive_row::derive(&input).into()
}

/// A PostgreSQL enum (`#[qail(type_name = "mood")]`, labels checked against the snapshot,
/// `#[qail(rename_all = "…")]`, per-variant `#[qail(rename = "…")]`) or a
/// `#[qail(transparent)]` newtype.
#[proc_macro_derive(QailType, attributes(qail))]
pub fn derive_qail_type(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    derive_type::derive(&input).into()
}
