//! Procedural macros of qail: `qail!`, `#[derive(QailRow)]`, `#[derive(QailType)]`.
//!
//! Use them through the `qail` crate; this crate's output refers to `::qail::__private`.
//! The entry points only parse and hand over: the model (`ast`, `attr`), the checks
//! (`check`, `snapshot`, `types`, `naming`), what the compiler was asked to produce
//! (`compiler`) and code generation (`expand`, `nested` for the structs of record-valued
//! columns, `json` for those of JSON documents, `derive_row`, `derive_type`) are plain
//! functions over `proc_macro2` types.

mod analyze;
mod ast;
mod attr;
mod cache;
mod column_checks;
mod compiler;
mod derive_row;
mod derive_type;
mod expand;
mod json;
mod migrate;
mod naming;
mod nested;
mod shape;
mod snapshot;
mod test_attr;
mod types;

use proc_macro::TokenStream;

/// A query checked against the schema snapshot at compile time.
///
/// `qail!("SQL", args…)` yields a `Query` whose rows are a generated struct with one field per
/// column; `qail!(Type => "SQL", args…)` builds the rows into `Type` by column name.
/// Parameters are `$1…$n` followed by that many arguments, or `{name}` capturing a variable.
///
/// Small `Copy` arguments (integers, floats, `bool`, uuids, dates and times, `numeric`,
/// `interval`, and `Option`s of them) are copied into the query, so a query can outlive the
/// expression that computed them: `(0..n).map(|i| qail!("… WHERE id = $1", i * 2))`. Text and
/// bytes (`&str`, `&String`, `&[u8]`) are borrowed for their own lifetime; other arguments
/// (arrays, JSON) are borrowed from the expression, so bind a computed one to a variable
/// first when the query is kept in a `let` before it runs. Nothing is allocated either way.
///
/// # Nested results
///
/// A column that holds rows becomes a generated struct (`Record` + the column in CamelCase),
/// in a `Vec` for an array, in an `Option` when it can be NULL:
/// - in binary, field by field: `ROW(…)`, `array_agg(ROW(…) ORDER BY …)`, `array_agg(t)`,
///   `ARRAY(SELECT …)`, composite columns; every PostgreSQL type is read exactly;
/// - from JSON with serde: `json_agg(t)` / `jsonb_agg(t.*)`, `json_agg(json_build_object('k',
///   v, …))`, `jsonb_build_object(…)`, `to_jsonb(t)`, `row_to_json(t)`, nested to any depth.
///   Fields are named after the object's keys (`f1`, `f2`, … inside `ROW(…)`, as PostgreSQL
///   writes them). A value is read from JSON only when JSON gives it back exactly — `bool`,
///   integers, floats (`"NaN"` and the infinities included), `numeric` (into `Decimal` from
///   its digits, never through a float), text, `uuid`, `json`, arrays of these and nested
///   objects; `bytea`, timestamps and dates (which can be infinite) and other text-format
///   types are compile errors that name the fix (the binary form, or a cast in SQL). JSON
///   aggregates need the `json` feature.
///
/// # Dynamic queries
///
/// | written in the SQL | means | sent as |
/// |---|---|---|
/// | `col IN {ids}` (`NOT IN`) | `ids`: a `Vec`, slice or `&[T]` | `col = ANY($n)` (`<> ALL`), one array parameter; empty matches nothing |
/// | `{? AND col = {v} }` | an optional clause: included when every capture in it (an `Option`) is `Some` | the clause's text, or nothing |
/// | `{? LIMIT {n} }`, `{? AND (t, id) > ({after_t}, {after_id}) }` | optional LIMIT/OFFSET, keyset pagination | as above |
/// | `ORDER BY {sort}` with `sort = match v { P => "SQL", … }` after the arguments | a sort choice, the `match` checked exhaustive by rustc | the matching arm's SQL |
/// | `INSERT INTO t (a, b) VALUES {rows}` (`{rows.*}`) | a slice of tuples in column order (of structs with fields named like the columns) | `SELECT * FROM UNNEST($1::a[], $2::b[])`, one array per column |
/// | `COPY t (a, b) FROM {rows}` (`{rows.*}`) | the same rows, checked as the bulk insert | `COPY … FROM STDIN (FORMAT binary)`; run with `.execute(&mut conn)` |
///
/// Every combination of optional clauses and sort choices is checked at compile time, and an
/// error names the combination (`with optional clause `{? AND a = {a} }` left out: …`). With
/// up to 4 clauses every subset is analyzed; with more, the full query, each clause left out
/// alone and all of them left out (n + 2 analyses), which covers every combination of
/// independent clauses such as filters. All combinations share one row type (a column is
/// nullable if any combination makes it so) and bind every parameter (those of absent clauses
/// as NULL, unreferenced). At run time the present clauses and the chosen arms form a key;
/// each key's statement is built once per process from the checked pieces, then looked up.
///
/// ```text
/// let rows = qail!(
///     "SELECT id, price FROM sailings WHERE seats_left > 0
///      {? AND vessel_id = {vessel} } {? AND price <= {max_price} }
///      ORDER BY {sort} {? LIMIT {limit} }",
///     sort = match order { Order::Soonest => "departs_at, id", Order::Cheapest => "price, id" }
/// )
/// .fetch_all(&mut conn)
/// .await?;
/// ```
#[proc_macro]
pub fn qail(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as ast::QueryInput);
    // Note: `file:line` of the invocation, as `file!()` and `line!()` would give it; written
    // as one literal, it costs the compiler no macro expansion of its own.
    let call = proc_macro::Span::call_site();
    let source = format!("{}:{}", call.file(), call.line());
    expand::query(&input, &source)
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

/// Embeds a migrations directory (default `migrations`, relative to the crate's Cargo.toml)
/// as a `qail::migrate::Migrator`: every migration file through `include_str!`, so an edited
/// file rebuilds the crate; file names are checked while it expands.
///
/// ```text
/// let migrator = qail::migrate!("migrations");
/// migrator.run(&pool).await?;   // applies what is pending at start-up
/// ```
///
/// A file added or removed rebuilds the crate only with a build script line,
/// `qail_migrate::rerun_if_migrations_changed("migrations");` (stable Rust gives a macro no
/// way to watch a directory).
#[proc_macro]
pub fn migrate(input: TokenStream) -> TokenStream {
    let root = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    migrate::expand(input.into(), std::path::Path::new(&root))
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
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

/// A test on a database of its own: `#[qail::test] async fn t(pool: qail::Pool)` (or a
/// `qail::Connection`, or the database's URL as a `String`), cloned from a template database
/// built once from the crate's `migrations/` (or `schema.sql`) and shared by every test
/// process; `#[qail::test(fixtures("users"))]` applies `fixtures/users.sql` first. A passing
/// test's database is dropped, a failing one's kept and its URL printed. The guide's testing
/// page has the details and the environment variables.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(item as syn::ItemFn);
    test_attr::TestArgs::parse(args.into())
        .and_then(|args| test_attr::expand(&args, &item))
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}
