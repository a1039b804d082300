//! Code generation for `qail!`: the `static` template, the row type and its decoder, and the
//! type-checked parameters.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use qail_analyzer::wire::{self, WireColumn};
use qail_analyzer::{Analysis, OutputColumn, type_oid};
use qail_pg::template::NotNull;
use qail_schema::Snapshot;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::analyze::{Checked, analyze, column_error};
use crate::ast::{CopyForm, Piece, QueryInput, copy_form};
use crate::attr::Errors;
use crate::types::{self, Mapped};
use crate::{column_checks, compiler, naming, nested, snapshot};

/// Expands `qail!(…)` written at `source` (`file:line`).
pub(crate) fn query(input: &QueryInput, source: &str) -> syn::Result<TokenStream> {
    let loaded =
        snapshot::load_once_reported().map_err(|m| syn::Error::new(input.sql.span(), m))?;
    if let Some(copy) = copy_form(&input.sql.value()) {
        let copy = copy.map_err(|m| syn::Error::new(input.sql.span(), m))?;
        return copy_query(input, &copy, &loaded);
    }
    let checked = analyze(input, &loaded)?;
    let mut errors = Errors::default();
    let params = params(input, &checked, &loaded.snapshot, &mut errors);
    let columns = columns(input, &checked.analysis, &loaded.snapshot, &mut errors);
    let (row_items, decoder) = rows(
        input,
        &checked.analysis,
        &columns,
        &loaded.snapshot,
        &mut errors,
    );
    errors.finish()?;
    let (template, chosen) = template(input, &checked, &loaded.snapshot, source)
        .map_err(|m| syn::Error::new(input.sql.span(), m))?;
    let track = loaded.track();
    Ok(quote! {
        ::qail::__private::query(
            {
                #track
                #row_items
                #template
                (#chosen, ::core::marker::PhantomData::<fn() -> #decoder>)
            },
            [#(#params),*],
        )
    })
}

/// Expands a checked COPY: the equivalent bulk insert `INSERT INTO target VALUES {rows}` is
/// analyzed (so the columns and the rows' field types are checked the same way), then the
/// rows are sent with `COPY target FROM STDIN (FORMAT binary)`.
fn copy_query(
    input: &QueryInput,
    copy: &CopyForm,
    loaded: &snapshot::Loaded,
) -> syn::Result<TokenStream> {
    let span = input.sql.span();
    if let Some(arg) = input.args.first() {
        return Err(syn::Error::new(
            arg.span(),
            "a COPY takes no arguments: its rows are the `{rows}` in the SQL",
        ));
    }
    let rows = &copy.rows;
    let spread = if copy.spread { ".*" } else { "" };
    let insert = QueryInput {
        target: None,
        sql: syn::LitStr::new(
            &format!("INSERT INTO {} VALUES {{{rows}{spread}}}", copy.target),
            span,
        ),
        args: Vec::new(),
        choices: Vec::new(),
    };
    let checked = analyze(&insert, loaded)?;
    let mut errors = Errors::default();
    let checks = params(&insert, &checked, &loaded.snapshot, &mut errors);
    errors.finish()?;
    let oids: Vec<u32> = checked
        .analysis
        .params
        .iter()
        .map(|p| {
            type_oid(&p.ty)
                .and_then(qail_pg::types::oid::element_of)
                .unwrap_or(0)
        })
        .collect();
    let fields = checked
        .rewritten
        .captures
        .iter()
        .filter_map(|c| c.field.as_ref().map(|f| &f.member));
    let sql = format!("COPY {} FROM STDIN (FORMAT binary)", copy.target);
    let track = loaded.track();
    Ok(quote! {
        {
            #track
            static COPY: ::qail::__private::CopyStatement = ::qail::__private::CopyStatement {
                sql: #sql,
                column_oids: &[#(#oids),*],
            };
            let _ = (#(#checks,)*);
            ::qail::__private::CopyRows::new(&COPY, &#rows, |row, out| {
                #(out.field(&row.#fields)?;)*
                ::core::result::Result::Ok(())
            })
        }
    })
}

/// One checked [`Arg`](qail_pg::template::Arg) per parameter, spanned at its argument: small
/// `Copy` values are copied into the query, text and bytes keep their own lifetime, anything
/// else is borrowed ([`ToArg`](qail_pg::typed::ToArg) decides).
fn params(
    input: &QueryInput,
    checked: &Checked,
    snapshot: &Snapshot,
    errors: &mut Errors,
) -> Vec<TokenStream> {
    let mut out = Vec::new();
    for (i, param) in checked.analysis.params.iter().enumerate() {
        let n = i + 1;
        let (expr, span, what) = match input.args.get(i) {
            Some(arg) => (quote!(#arg), arg.span(), format!("parameter ${n}")),
            None => {
                let Some(capture) = checked.rewritten.captures.iter().find(|c| c.number == n)
                else {
                    continue;
                };
                let ident = &capture.ident;
                let expr = match &capture.field {
                    Some(field) => {
                        let member = &field.member;
                        quote!(::qail::__private::FieldArray::new(&#ident, |row| &row.#member))
                    }
                    None => quote!(#ident),
                };
                (
                    expr,
                    input.sql.span(),
                    format!("parameter ${n} ({{{ident}}})"),
                )
            }
        };
        let mapped = match types::map(&param.ty, snapshot) {
            Ok(m) => m,
            Err(m) => {
                errors.at(span, format!("{what}: {m}"));
                continue;
            }
        };
        if let Some(feature) = mapped.missing_feature {
            errors.at(span, feature.message(&what, &mapped.display));
            continue;
        }
        let marker = &mapped.marker;
        let in_clause = checked
            .rewritten
            .clauses
            .iter()
            .any(|c| c.numbers.contains(&n));
        // Note: a bulk insert's column parameter is an array; whether its elements may be NULL
        // is the column's NOT NULL.
        let bulk = checked
            .rewritten
            .captures
            .iter()
            .find(|c| c.number == n)
            .and_then(|c| c.field.as_ref());
        if !in_clause
            && bulk.is_none()
            && !param.nullable
            && let Some(column) = &param.column
        {
            out.push(column_checks::not_null_argument(
                span,
                &expr,
                marker,
                n,
                &what,
                column,
                checked.analysis.kind,
            ));
            continue;
        }
        let n = Literal::usize_unsuffixed(n);
        let check = if in_clause {
            quote!(clause_arg)
        } else if let Some(field) = bulk {
            if field.not_null {
                quote!(not_null_column)
            } else {
                quote!(arg)
            }
        } else if param.nullable {
            quote!(arg)
        } else {
            quote!(arg_non_null)
        };
        out.push(
            quote_spanned!(span=> ::qail::__private::check::#check::<_, #marker, #n>(&(#expr))),
        );
    }
    out
}

/// A result column as generated code sees it.
pub(crate) struct Column<'a> {
    pub(crate) out: &'a OutputColumn,
    pub(crate) ident: Ident,
    pub(crate) mapped: Option<Mapped>,
}

fn columns<'a>(
    input: &QueryInput,
    analysis: &'a Analysis,
    snapshot: &Snapshot,
    errors: &mut Errors,
) -> Vec<Column<'a>> {
    let span = input.sql.span();
    let ident_span = input.target.as_ref().map_or(span, Spanned::span);
    let mut out: Vec<Column<'a>> = Vec::new();
    for (i, col) in analysis.columns.iter().enumerate() {
        let Some(ident) = naming::field_ident(&col.name, ident_span) else {
            errors.push(column_error(
                input,
                col,
                format!(
                    "result column {} is named `{}`, which is not a usable Rust field name",
                    i + 1,
                    col.name
                ),
                "give it an alias, e.g. `AS value`",
            ));
            continue;
        };
        if let Some(prev) = out.iter().find(|c| c.ident == ident) {
            let names = if prev.out.name == col.name {
                format!("are both named `{}`", col.name)
            } else {
                format!(
                    "(`{}` and `{}`) would both be the field `{ident}`",
                    prev.out.name, col.name
                )
            };
            let table = col.source.as_ref().map_or("other", |s| s.table.as_str());
            let first = out
                .iter()
                .position(|c| c.ident == ident)
                .map_or(0, |p| p + 1);
            errors.push(column_error(
                input,
                col,
                format!("result columns {first} and {} {names}", i + 1),
                format!("give one an alias, e.g. `… AS {table}_{ident}`"),
            ));
            continue;
        }
        let mapped = match types::map(&col.ty, snapshot) {
            Ok(m) => Some(m),
            Err(_) if col.shape.is_some() => None,
            Err(m) if col.rust_type.is_some() || input.target.is_some() => {
                let _ = m;
                None
            }
            Err(m) => {
                let (what, fix) = m.split_once(": ").unwrap_or((&m, "cast the column in SQL"));
                errors.push(column_error(
                    input,
                    col,
                    format!("column \"{}\": {what}", col.name),
                    fix,
                ));
                continue;
            }
        };
        out.push(Column {
            out: col,
            ident,
            mapped,
        });
    }
    out
}

/// The row items (struct + impl, or decoder) and the decoder type.
fn rows(
    input: &QueryInput,
    analysis: &Analysis,
    columns: &[Column<'_>],
    snapshot: &Snapshot,
    errors: &mut Errors,
) -> (TokenStream, TokenStream) {
    if !analysis.returns_rows {
        if let Some(target) = &input.target {
            errors.at(target.span(), "this statement returns no rows, so it has no row type: remove `Type =>` and run it with `.execute(…)` (or add RETURNING)");
        }
        return (quote!(), quote!(::qail::__private::NoRows));
    }
    match &input.target {
        Some(target) => (typed_decoder(target, columns), quote!(__QailDecode)),
        None => (record(input, columns, snapshot, errors), quote!(Record)),
    }
}

/// `struct Record { … }` with one field per column and its `FromColumns` (up to 16 columns)
/// or by-index `FromRow`.
fn record(
    input: &QueryInput,
    columns: &[Column<'_>],
    snapshot: &Snapshot,
    errors: &mut Errors,
) -> TokenStream {
    let mut idents = Vec::new();
    let mut types = Vec::new();
    let mut reads = Vec::new();
    let mut patterns = Vec::new();
    let mut all_debug = true;
    let mut nested_items = Vec::new();
    for col in columns {
        let Some(ty) = nested::field(input, col.out, snapshot, &mut nested_items, errors)
            .unwrap_or_else(|| field_type(input, col, errors))
        else {
            continue;
        };
        all_debug &= col.out.rust_type.is_none();
        let ident = &col.ident;
        let ty = if col.out.nullable {
            quote!(::core::option::Option<#ty>)
        } else {
            ty
        };
        let (read, pattern) = nested::decoded_as(col.out, ident, &ty);
        idents.push(ident);
        types.push(ty);
        reads.push(read);
        patterns.push(pattern);
    }
    // Note: one `quote!` with repetitions (an optional attribute too: splicing a token
    // stream of its own costs a round trip through the proc-macro bridge), and string
    // literals built as literals (a doc comment or a string in `quote!` is parsed from text
    // at every expansion): the macro runs unoptimised in a default build, and every token
    // stream it builds costs.
    let debug = all_debug
        .then(|| Ident::new("Debug", Span::call_site()))
        .into_iter();
    // Note: what only the code or the documentation uses is left out when the compiler
    // produces neither (`cargo check`).
    let built = compiler::emits_code();
    let doc = built
        .then(|| Literal::string(" A row of this query: one field per result column."))
        .into_iter();
    let inline = built
        .then(|| Ident::new("inline", Span::call_site()))
        .into_iter();
    let reason = Literal::string("a query may select columns the code does not read");
    let impl_ = if (1..=MAX_TUPLE).contains(&idents.len()) {
        // Note: only a constructor from the tuple of the columns' values; the tuple is decoded
        // by the library's `Columns` (see `FromColumns`), so each query adds no decoding code,
        // no closure and no trait method call for rustc to check. The struct itself is private
        // (it cannot be named outside the block anyway): the tuple, an associated type, may
        // hold the user's private types (`AS "kind: Kind"`), which a `pub` struct's impl could
        // not expose (E0446).
        quote! {
            impl ::qail::__private::FromColumns for Record {
                type Columns = (#(#reads,)*);
                #(#[#inline])*
                fn from_columns((#(#patterns,)*): Self::Columns) -> Self {
                    Record { #(#idents,)* }
                }
            }
        }
    } else {
        quote! {
            impl ::qail::__private::FromRow for Record {
                fn from_row(
                    row: &mut ::qail::__private::RawRow<'_>,
                    columns: &[::qail::__private::Oid],
                ) -> ::core::result::Result<Self, ::qail::__private::Error> {
                    #(let #patterns: #reads = row.get_next(columns)?;)*
                    ::core::result::Result::Ok(Record { #(#idents,)* })
                }
            }
        }
    };
    quote! {
        #(#nested_items)*

        #(#[doc = #doc])*
        #(#[derive(#debug)])*
        #[allow(dead_code, reason = #reason)]
        struct Record { #(pub #idents: #types,)* }

        #[automatically_derived]
        #impl_
    }
}

/// The largest tuple [`qail_pg::template::Columns`] is implemented for.
const MAX_TUPLE: usize = 16;

/// The Rust type of a generated field (before `Option` for nullability): the alias's
/// `: Type`, else the mapped type (recording the feature it needs).
fn field_type(input: &QueryInput, col: &Column<'_>, errors: &mut Errors) -> Option<TokenStream> {
    let name = &col.out.name;
    if let Some(text) = &col.out.rust_type {
        return match syn::parse_str::<syn::Type>(text) {
            Ok(_)
                if col.mapped.as_ref().is_some_and(|m| m.rust.is_none())
                    && cannot_hold_enum(text) =>
            {
                let display = col
                    .mapped
                    .as_ref()
                    .map_or_else(String::new, |m| m.display.clone());
                errors.push(column_error(
                    input,
                    col.out,
                    format!("column \"{name}\" has the enum type {display}, which `{text}` cannot hold"),
                    format!("name a #[derive(QailType)] enum for {display} in the alias, or read the label as text: `{name}::text AS {name}`"),
                ));
                None
            }
            Ok(ty) => Some(quote!(#ty)),
            Err(_) => {
                errors.push(column_error(
                    input,
                    col.out,
                    format!("column \"{name}\": `{text}` in the alias is not a Rust type"),
                    format!(
                        "write the alias as {}",
                        raw_alias(&format!("{name}: path::Type"))
                    ),
                ));
                None
            }
        };
    }
    match &col.mapped {
        Some(Mapped {
            rust: Some(rust),
            missing_feature,
            display,
            ..
        }) => match missing_feature {
            Some(feature) => {
                errors.push(column_error(
                    input,
                    col.out,
                    format!("column \"{name}\" has type {display}"),
                    feature.fix(),
                ));
                None
            }
            None => Some(rust.clone()),
        },
        mapped => {
            let display = mapped
                .as_ref()
                .map_or_else(|| types::display(&col.out.ty), |m| m.display.clone());
            errors.push(column_error(
                input,
                col.out,
                format!("column \"{name}\" has the enum type {display}"),
                format!("name its Rust type (a #[derive(QailType)] enum) with an alias, {}, or use the `MyRow => \"…\"` form", raw_alias(&format!("{name}: MyEnum"))),
            ));
            None
        }
    }
}

/// An alias as the SQL must hold it, in a raw string literal so its double quotes need no
/// escaping: `r#"… AS "kind: MyEnum" …"#`.
pub(crate) fn raw_alias(alias: &str) -> String {
    format!("`r#\"… AS \"{alias}\" …\"#` (a raw string literal)")
}

/// Whether the Rust type written in an alias is one that never holds a PostgreSQL enum's
/// label: a number, a boolean or bytes (`String` and the user's own types may).
fn cannot_hold_enum(text: &str) -> bool {
    let plain: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = plain
        .strip_prefix("Option<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(&plain);
    [
        "bool", "i8", "i16", "i32", "i64", "i128", "u8", "u16", "u32", "u64", "u128", "f32", "f64",
        "Vec<u8>",
    ]
    .contains(&inner)
}

/// A decoder building the user's struct by column name: a missing or extra field and a
/// wrong field type are rustc errors at `Type`.
fn typed_decoder(target: &syn::Type, columns: &[Column<'_>]) -> TokenStream {
    let span = target.span();
    let target_name: String = quote!(#target)
        .to_string()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let tuple = (1..=MAX_TUPLE).contains(&columns.len());
    let values: Vec<Ident> = (1..=columns.len())
        .map(|i| Ident::new(&format!("__qail_col{i}"), Span::mixed_site()))
        .collect();
    let mut checks = Vec::new();
    let reads: Vec<TokenStream> = columns
        .iter()
        .zip(&values)
        .enumerate()
        .map(|(i, (col, value))| {
            let ident = &col.ident;
            let value = if tuple {
                quote!(#value)
            } else {
                quote_spanned!(span=> row.get_next(columns)?)
            };
            let none = TokenStream::new();
            let field = column_checks::Field {
                span,
                target: &target_name,
                column: &col.out.name,
                field: &ident.to_string(),
                pg: col.mapped.as_ref().map_or("", |m| m.display.as_str()),
                rust: column_checks::rust_names(&col.out.ty),
                nullable: col.out.nullable,
                why: col.out.why.join("; "),
                marker: col.mapped.as_ref().map_or(&none, |m| &m.marker),
                index: i + 1,
            };
            let read = match &col.mapped {
                Some(_) => field.check(&value, &mut checks),
                None => value,
            };
            if col.out.nullable {
                let read = field.check_nullable(&read, &mut checks);
                quote_spanned!(span=> #ident: #read)
            } else {
                quote_spanned!(span=> #ident: #read)
            }
        })
        .collect();
    let body = if tuple {
        // One call per row, as for the generated row types; the tuple's types are the fields'.
        let holes = values.iter().map(|_| quote!(_));
        quote_spanned! {span=>
            <(#(#holes,)*) as ::qail::__private::Columns>::decode(row, columns)
                .map(|(#(#values,)*)| #target { #(#reads,)* })
        }
    } else {
        quote_spanned!(span=> ::core::result::Result::Ok(#target { #(#reads,)* }))
    };
    let decode = format_ident!("__QailDecode", span = Span::call_site());
    quote! {
        struct #decode;
        #(#checks)*

        #[automatically_derived]
        impl ::qail::__private::Decoder for #decode {
            type Row = #target;
            fn decode(
                row: &mut ::qail::__private::RawRow<'_>,
                columns: &[::qail::__private::Oid],
            ) -> ::core::result::Result<#target, ::qail::__private::Error> {
                #body
            }
        }
    }
}

/// The statement's items and the expression choosing its template: `&Template { … }` with
/// bytes from qail-pg's encoder, a constant the compiler promotes to `'static` (no item of
/// its own), or `Template::NOT_BUILT` when the compiler produces no code (`cargo check`,
/// [`compiler::emits_code`]: the statement is encoded all the same, so that it fails alike); for a dynamic query `static VARIANTS: Variants = …` with its pieces, which
/// chooses the template at run time. Either way the statement is registered for
/// `Pool::verify` ([`register`]); a dynamic query's registered statement is its full form
/// (every optional clause present, each sort choice's first alternative): Parse and Describe
/// of it check every table, column and parameter the query can use.
fn template(
    input: &QueryInput,
    checked: &Checked,
    snapshot: &Snapshot,
    source: &str,
) -> Result<(TokenStream, TokenStream), String> {
    let sql = &checked.rewritten.sql;
    // What the server's Describe should say: the one description `cargo qail verify` uses.
    let oids = wire::param_oids(&checked.analysis);
    let wire = wire::columns(&checked.analysis, snapshot);
    let expected: Vec<(&str, u32, &str)> = wire
        .iter()
        .map(|c| (c.name.as_str(), c.type_oid, c.type_name.as_str()))
        .collect();
    let encoded = qail_pg::Template::encode(sql, &oids, &expected).map_err(|e| {
        format!("the statement cannot be encoded: {e}; remove NUL characters from the SQL")
    })?;
    let registered = register(&encoded, &oids, &wire, source)?;
    if !checked.rewritten.is_dynamic() && !compiler::emits_code() {
        return Ok((registered, quote!(::qail::__private::Template::NOT_BUILT)));
    }
    let changes_session = checked.analysis.changes_session;
    if !checked.rewritten.is_dynamic() {
        let name = &encoded.name;
        let bytes = Literal::byte_string(&encoded.bytes);
        let source = Literal::string(source);
        let template = quote! {
            &::qail::__private::Template {
                name: #name,
                param_oids: &[#(#oids),*],
                encoded: #bytes,
                source: #source,
                changes_session: #changes_session,
            }
        };
        return Ok((registered, template));
    }
    if input
        .choices
        .iter()
        .flat_map(|c| &c.texts)
        .any(|t| t.value().contains('\0'))
    {
        return Err("a sort choice's SQL contains a NUL character: remove it".to_owned());
    }
    let key = key(input, checked)?;
    let pieces = pieces(input, checked);
    let expected = expected
        .iter()
        .map(|(name, oid, wire)| quote!((#name, #oid, #wire)));
    let source = Literal::string(source);
    let items = quote! {
        #registered
        static VARIANTS: ::qail::__private::Variants = ::qail::__private::Variants {
            pieces: &[#(#pieces),*],
            param_oids: &[#(#oids),*],
            columns: &[#(#expected),*],
            cache: ::qail::__private::Cache::new(),
            source: #source,
            changes_session: #changes_session,
        };
    };
    Ok((items, quote!(VARIANTS.template(#key))))
}

/// The statement registered for `Pool::verify`: `static REGISTERED: [u8; N]`, qail-pg's
/// record of the template's parts and the NOT NULL-ness of its columns
/// ([`qail_pg::template::registry_record`]), placed in the registry's link section (qail-pg's
/// `template/registry.rs`), which the linker gathers from every crate: no build script, no
/// code run at start-up. A `#[used]` static whose section qail-pg's `__registry_section!`
/// picks for the target (one attribute, where a `cfg_attr` per object format cost the
/// compiler a third of the registration), not an attribute macro: the output holds no
/// `unsafe` block, and an attribute macro run for every `qail!` would cost the compiler as
/// much again as the static. Plain bytes, not a struct
/// of references: the compiler borrow-checks and evaluates every static's initializer, and
/// a byte string is the cheapest for it (qail-pg decodes the records when they are read).
///
/// Nothing is emitted when the compiler produces no code (`cargo check`, see
/// [`compiler::emits_code`]): only a linked program reads the section, and the statics were
/// a fifth of what the queries cost such a check beyond the analysis. The record is built
/// either way, so that a statement too long to register fails both.
fn register(
    encoded: &qail_pg::template::Encoded,
    oids: &[u32],
    columns: &[WireColumn],
    source: &str,
) -> Result<TokenStream, String> {
    let not_null: Vec<NotNull> = columns
        .iter()
        .map(|c| match c.not_null {
            Some(true) => NotNull::Yes,
            Some(false) => NotNull::No,
            None => NotNull::Unknown,
        })
        .collect();
    let record = qail_pg::template::registry_record(
        &encoded.name,
        oids,
        source,
        &encoded.bytes,
        &not_null,
    )
    .ok_or("the statement is too long to register: more than 65,535 parameters, columns or bytes of `file:line`")?;
    if !compiler::emits_code() {
        return Ok(TokenStream::new());
    }
    let sections = &qail_pg::template::SECTIONS;
    let [elf, mach_o, windows] =
        [sections.elf, sections.mach_o, sections.windows].map(Literal::string);
    let len = Literal::usize_unsuffixed(record.len());
    let bytes = Literal::byte_string(&record);
    // Note: string literals are interpolated, not written in `quote!`, which would parse
    // each from text at every expansion.
    Ok(quote! {
        #[used]
        #[unsafe(link_section = ::qail::__private::registry_section!(#elf, #mach_o, #windows))]
        static REGISTERED: [u8; #len] = *#bytes;
    })
}

/// The pieces of a dynamic query, as `::qail::__private::Piece`s.
fn pieces(input: &QueryInput, checked: &Checked) -> Vec<TokenStream> {
    let mut shifts = Vec::new();
    let mut shift = checked.rewritten.clauses.len();
    for choice in &input.choices {
        shifts.push(shift);
        shift += choice_width(choice.texts.len());
    }
    let small = |n: usize| Literal::u32_unsuffixed(u32::try_from(n).unwrap_or(u32::MAX));
    checked
        .rewritten
        .pieces
        .iter()
        .map(|piece| match piece {
            Piece::Text(text) => quote!(::qail::__private::Piece::Text(#text)),
            Piece::Clause(bit, text) => {
                let bit = small(*bit);
                quote!(::qail::__private::Piece::Clause { bit: #bit, text: #text })
            }
            Piece::Choice(c) => {
                let texts = &input.choices[*c].texts;
                let shift = small(shifts[*c]);
                let mask = Literal::u64_unsuffixed((1u64 << choice_width(texts.len())) - 1);
                quote!(::qail::__private::Piece::Choice { shift: #shift, mask: #mask, texts: &[#(#texts),*] })
            }
        })
        .collect()
}

/// The combination key of a dynamic query: bit `i` set when clause `i`'s captures are all
/// `Some`, then each sort choice's arm index, in as many bits as its arms need.
fn key(input: &QueryInput, checked: &Checked) -> Result<TokenStream, String> {
    let mut parts = Vec::new();
    for (bit, clause) in checked.rewritten.clauses.iter().enumerate() {
        let present = clause.numbers.iter().filter_map(|n| {
            let capture = checked.rewritten.captures.iter().find(|c| c.number == *n)?;
            let ident = &capture.ident;
            Some(quote!(::qail::__private::check::present(&#ident)))
        });
        let bit = Literal::usize_unsuffixed(bit);
        parts.push(quote!((((#(#present)&&*) as u64) << #bit)));
    }
    let mut shift = checked.rewritten.clauses.len();
    for choice in &input.choices {
        let width = choice_width(choice.texts.len());
        let matched = &choice.matched;
        let scrutinee = &matched.expr;
        let arms = matched.arms.iter().enumerate().map(|(i, arm)| {
            let pat = &arm.pat;
            let guard = arm.guard.as_ref().map(|(if_, cond)| quote!(#if_ #cond));
            let i = Literal::u64_suffixed(i as u64);
            quote!(#pat #guard => #i,)
        });
        let at = Literal::usize_unsuffixed(shift);
        parts.push(quote!(((match #scrutinee { #(#arms)* }) << #at)));
        shift += width;
    }
    if shift > 64 {
        return Err(format!(
            "the optional clauses and sort choices need {shift} bits to number their combinations, more than 64: split the query"
        ));
    }
    Ok(quote!(0u64 #(| #parts)*))
}

/// The bits that number `arms` alternatives.
fn choice_width(arms: usize) -> usize {
    (usize::BITS - arms.saturating_sub(1).leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(tokens: TokenStream) -> String {
        let input: QueryInput = syn::parse2(tokens).unwrap();
        match query(&input, "src/lib.rs:1") {
            Ok(t) => t.to_string(),
            Err(e) => e.to_compile_error().to_string(),
        }
    }

    #[test]
    fn generates_template_row_and_checked_params() {
        let out = expand(quote!(
            "SELECT id, code FROM harbors WHERE country = $1",
            country
        ));
        assert!(out.contains("static REGISTERED : [u8 ;"), "{out}");
        assert!(
            out.contains("& :: qail :: __private :: Template {"),
            "{out}"
        );
        assert!(out.contains("# [used]"), "{out}");
        let sections = &qail_pg::template::SECTIONS;
        assert!(
            out.contains(&format!(
                "unsafe (link_section = :: qail :: __private :: registry_section ! ({:?} , {:?} , {:?}))",
                sections.elf, sections.mach_o, sections.windows
            )),
            "{out}"
        );
        assert!(out.contains("source : \"src/lib.rs:1\""), "{out}");
        // The record ends with the columns' NOT NULL-ness: id NOT NULL, code nullable.
        let registered = &out[out.find("static REGISTERED").unwrap()..];
        let record = &registered[..registered.find("\" ;").unwrap()];
        assert!(record.ends_with("\\0\\x02\\x01\\x02"), "{record}");
        assert!(record.contains("src/lib.rs:1"), "{record}");
        assert!(
            out.contains("pub id : :: qail :: __private :: types :: Uuid"),
            "{out}"
        );
        assert!(
            out.contains("pub code : :: core :: option :: Option < :: std :: string :: String >"),
            "{out}"
        );
        assert!(
            out.contains("check :: arg_non_null :: < _ , :: qail :: __private :: pg :: text , 1 >"),
            "{out}"
        );
        assert!(out.contains("arg_non_null :: < _"), "{out}");
        assert!(
            out.contains("impl :: qail :: __private :: FromColumns for Record"),
            "{out}"
        );
        assert!(
            out.contains("type Columns = (:: qail :: __private :: types :: Uuid , :: core :: option :: Option < :: std :: string :: String > ,)"),
            "{out}"
        );
    }

    #[test]
    fn statements_without_rows_use_no_rows() {
        let out = expand(quote!("UPDATE harbors SET timezone = {tz}"));
        assert!(out.contains("NoRows"), "{out}");
        assert!(
            !out.contains("arg_non_null"),
            "a nullable SET target accepts Option: {out}"
        );
    }

    #[test]
    fn typed_form_builds_the_users_struct() {
        let out = expand(quote!(Harbor => "SELECT id, name FROM harbors"));
        assert!(out.contains("type Row = Harbor"), "{out}");
        assert!(out.contains("Harbor { id :"), "{out}");
    }

    #[test]
    fn column_errors_show_the_column_with_a_caret() {
        let out = expand(quote!(
            "SELECT h.id, o.id FROM harbors h JOIN operators o ON o.name = h.name"
        ));
        assert!(
            out.contains("result columns 1 and 2 are both named `id`"),
            "{out}"
        );
        assert!(
            out.contains("               ^^^^ give one an alias, e.g. `… AS operators_id`"),
            "{out}"
        );
        let out = expand(quote!("SELECT {id}::int4 + 1, name FROM harbors"));
        assert!(
            out.contains("SELECT {id}::int4 + 1, name FROM harbors"),
            "{out}"
        );
        assert!(
            out.contains("         ^^^^^^^^^^^^^^ give it an alias"),
            "{out}"
        );
    }

    #[test]
    fn analyzer_errors_show_the_sql_with_a_caret() {
        let out = expand(quote!("SELECT nme FROM harbors"));
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("did you mean"), "{out}");
        assert!(out.contains("^^^"), "{out}");
    }

    #[test]
    fn lists_become_any_of_an_array() {
        let out = expand(quote!("SELECT id FROM harbors WHERE id IN {ids}"));
        assert!(out.contains("= ANY($1)"), "{out}");
        assert!(
            out.contains("pg :: array < :: qail :: __private :: pg :: uuid >"),
            "{out}"
        );
    }

    #[test]
    fn optional_clauses_become_pieces_and_a_key() {
        let out = expand(quote!(
            "SELECT id FROM harbors WHERE true {? AND country = {country} } {? AND code = {code} }"
        ));
        assert!(out.contains("static VARIANTS"), "{out}");
        assert!(
            out.contains("Piece :: Clause { bit : 1 , text : \" AND code = $2 \" }"),
            "{out}"
        );
        assert!(out.contains("check :: clause_arg"), "{out}");
        assert!(out.contains("present (& country)"), "{out}");
        // The full form is registered: every clause present.
        assert!(out.contains("static REGISTERED : [u8 ;"), "{out}");
        let registered = &out[out.find("static REGISTERED").unwrap()..];
        assert!(
            registered.contains("WHERE true  AND country = $1   AND code = $2 \\0"),
            "{out}"
        );
    }

    #[test]
    fn a_failing_combination_is_named() {
        let out = expand(quote!(
            "SELECT id FROM harbors WHERE {? country = {country} } ORDER BY id"
        ));
        assert!(
            out.contains("with optional clause `{? country = {country} }` left out"),
            "{out}"
        );
        let out = expand(quote!(
            "SELECT id FROM harbors ORDER BY {sort}",
            sort = match order {
                Order::Name => "name",
                Order::Size => "size DESC",
            }
        ));
        assert!(
            out.contains("with sort choice `sort` = `Order :: Size`"),
            "{out}"
        );
        let out = expand(quote!(
            "SELECT id FROM harbors ORDER BY {sort}",
            sort = match order {
                Order::Size => "size DESC",
                Order::Name => "name",
            }
        ));
        assert!(
            out.contains("with sort choice `sort` = `Order :: Size`"),
            "{out}"
        );
    }

    #[test]
    fn clauses_may_not_change_the_columns() {
        let out = expand(quote!("SELECT id {? , {x}::int4 AS extra } FROM harbors"));
        assert!(
            out.contains("returns other columns (id) than with every clause (id, extra)"),
            "{out}"
        );
    }
}
