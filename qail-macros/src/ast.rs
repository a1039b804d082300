//! The input of `qail!`: `[Type =>] "SQL" [, args…] [, name = match …]`, and the SQL's
//! `{ident}` captures, `IN {list}`s, `{? … }` optional clauses and `{name}` sort choices,
//! scanned by [`qail_analyzer::capture`] (shared with the language server) and made Rust
//! identifiers here. Kept free of code generation.

use proc_macro2::{Ident, Span};
use qail_analyzer::capture;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, LitStr, Token, Type};

/// `qail!([Type =>] "SQL", args…)`.
pub(crate) struct QueryInput {
    /// The user's row type in the `Type => "SQL"` form.
    pub(crate) target: Option<Type>,
    /// The SQL literal.
    pub(crate) sql: LitStr,
    /// Positional arguments for `$1…$n`.
    pub(crate) args: Vec<Expr>,
    /// Sort choices, `name = match value { Pattern => "SQL", … }`, after the arguments.
    pub(crate) choices: Vec<Choice>,
}

/// A sort choice declared as `name = match value { Pattern => "SQL", … }`: `{name}` in the SQL
/// becomes the SQL of the arm that matches.
pub(crate) struct Choice {
    pub(crate) name: Ident,
    /// The `match` with its arms; each arm's body is the SQL literal.
    pub(crate) matched: syn::ExprMatch,
    /// The SQL of each arm, in order.
    pub(crate) texts: Vec<LitStr>,
}

/// A named argument `name = match value { Pattern => "SQL", … }` as a [`Choice`].
fn parse_choice(expr: &Expr) -> syn::Result<Option<Choice>> {
    let Expr::Assign(assign) = expr else {
        return Ok(None);
    };
    let usage = "declare a sort choice as `name = match value { Pattern => \"SQL\", … }` and write `{name}` in the SQL";
    let Expr::Path(path) = &*assign.left else {
        return Err(syn::Error::new_spanned(&assign.left, usage));
    };
    let Some(name) = path.path.get_ident() else {
        return Err(syn::Error::new_spanned(&assign.left, usage));
    };
    let Expr::Match(matched) = &*assign.right else {
        return Err(syn::Error::new_spanned(&assign.right, usage));
    };
    let mut texts = Vec::new();
    for arm in &matched.arms {
        match &*arm.body {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => texts.push(text.clone()),
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "each arm of a sort choice is the SQL it stands for, as a string literal: `Pattern => \"price DESC, id\"`",
                ));
            }
        }
    }
    if texts.is_empty() {
        return Err(syn::Error::new_spanned(matched, usage));
    }
    Ok(Some(Choice {
        name: name.clone(),
        matched: matched.clone(),
        texts,
    }))
}

impl Parse for QueryInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let target = if input.peek(LitStr) {
            None
        } else {
            let ty: Type = input.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected the SQL string, or `RowType => \"SQL\"`: qail!(\"SELECT …\", args…)",
                )
            })?;
            input.parse::<Token![=>]>()?;
            Some(ty)
        };
        let sql: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the SQL as a string literal: qail!(\"SELECT …\")",
            )
        })?;
        let mut args = Vec::new();
        let mut choices: Vec<Choice> = Vec::new();
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
            let rest = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
            for expr in rest {
                match parse_choice(&expr)? {
                    Some(choice) => choices.push(choice),
                    None if choices.is_empty() => args.push(expr),
                    None => {
                        return Err(syn::Error::new_spanned(
                            expr,
                            "positional arguments come before the sort choices (`name = match …`)",
                        ));
                    }
                }
            }
        }
        Ok(QueryInput {
            target,
            sql,
            args,
            choices,
        })
    }
}

pub(crate) use qail_analyzer::capture::{ChoiceSpec, Piece};

/// A `{ident}` capture: the variable and its `$n` number (1-based). A bulk insert's
/// `VALUES {rows}` is one capture per column, each with the field of a row it sends.
pub(crate) struct Capture {
    pub(crate) ident: Ident,
    pub(crate) number: usize,
    pub(crate) field: Option<Field>,
}

/// The field of each row a bulk insert's column parameter sends.
#[derive(Clone)]
pub(crate) struct Field {
    pub(crate) member: syn::Member,
    /// Whether the column is NOT NULL (the field then cannot be an `Option`).
    pub(crate) not_null: bool,
}

/// The SQL as [`capture::CapturedSql`] scans it, with each capture's variable as a Rust
/// identifier.
pub(crate) struct QuerySql {
    scan: capture::CapturedSql,
    /// Captured variables, in `$n` order.
    pub(crate) captures: Vec<Capture>,
}

impl std::ops::Deref for QuerySql {
    type Target = capture::CapturedSql;

    fn deref(&self) -> &capture::CapturedSql {
        &self.scan
    }
}

/// Scans the SQL with [`capture::rewrite`] (the scanner the language server shares) and makes
/// each capture a Rust identifier spanned at the SQL literal: a Rust keyword is not a capture,
/// nor a column `{rows.*}` cannot name as a field.
pub(crate) fn rewrite(
    sql: &str,
    positional: usize,
    span: Span,
    choices: &[ChoiceSpec],
    selected: &[usize],
    bulk: capture::BulkColumns<'_>,
) -> Result<QuerySql, String> {
    let scan = capture::rewrite(sql, positional, choices, selected, bulk).map_err(|e| e.message)?;
    let mut captures = Vec::with_capacity(scan.captures.len());
    for c in &scan.captures {
        let ident = rust_ident(&c.name, span)
            .ok_or_else(|| capture::not_a_capture(&c.name, c.range.clone()).message)?;
        let field = match &c.field {
            None => None,
            Some(f) => {
                let member = match &f.member {
                    capture::Member::Named(name) => {
                        syn::Member::Named(rust_ident(name, span).ok_or_else(|| {
                            capture::not_a_field(name, &c.name, c.range.clone()).message
                        })?)
                    }
                    capture::Member::Index(i) => syn::Member::Unnamed(syn::Index {
                        index: u32::try_from(*i).unwrap_or(u32::MAX),
                        span,
                    }),
                };
                Some(Field {
                    member,
                    not_null: f.not_null,
                })
            }
        };
        captures.push(Capture {
            ident,
            number: c.number,
            field,
        });
    }
    Ok(QuerySql { scan, captures })
}

/// `name` as an identifier spanned at `span`, unless it is a Rust keyword (or not a name).
fn rust_ident(name: &str, span: Span) -> Option<Ident> {
    let ident = syn::parse_str::<Ident>(name).ok()?;
    Some(Ident::new(&ident.to_string(), span))
}

/// A checked COPY, `COPY table (columns…) FROM {rows}` (or `{rows.*}`): the target as
/// written, the rows' variable, and whether their fields are named like the columns.
pub(crate) struct CopyForm {
    pub(crate) target: String,
    pub(crate) rows: Ident,
    pub(crate) spread: bool,
}

/// The [`CopyForm`] of `sql`, when it is one ([`capture::copy_form`] with the rows' variable
/// as an identifier).
pub(crate) fn copy_form(sql: &str) -> Option<Result<CopyForm, String>> {
    let form = capture::copy_form(sql)?;
    Some(form.and_then(|f| {
        let rows = syn::parse_str::<Ident>(&f.rows).map_err(|_| {
            let at = sql.find('{').unwrap_or(0);
            capture::not_a_capture(&f.rows, at..sql.len()).message
        })?;
        Ok(CopyForm {
            target: f.target,
            rows,
            spread: f.spread,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qail_analyzer::capture::{BulkColumn, insert_target, no_bulk};
    use quote::quote;

    fn rw(sql: &str, positional: usize) -> QuerySql {
        rewrite(sql, positional, Span::call_site(), &[], &[], &no_bulk).unwrap()
    }

    #[test]
    fn parses_plain_and_typed_forms() {
        let q: QueryInput = syn::parse2(quote!("SELECT 1")).unwrap();
        assert!(q.target.is_none() && q.args.is_empty());
        let q: QueryInput = syn::parse2(quote!(Harbor => "SELECT $1", a + 1, b,)).unwrap();
        assert!(q.target.is_some());
        assert_eq!(q.args.len(), 2);
        assert!(syn::parse2::<QueryInput>(quote!(Harbor "x")).is_err());
        assert!(syn::parse2::<QueryInput>(quote!("x" a)).is_err());
    }

    #[test]
    fn captures_become_numbered_parameters() {
        let r = rw(
            "SELECT * FROM t WHERE a = {x} AND b = $1 AND c = {y} OR d = {x}",
            1,
        );
        assert_eq!(
            r.sql,
            "SELECT * FROM t WHERE a = $2 AND b = $1 AND c = $3 OR d = $2"
        );
        let names: Vec<_> = r
            .captures
            .iter()
            .map(|c| (c.ident.to_string(), c.number))
            .collect();
        assert_eq!(names, [("x".to_owned(), 2), ("y".to_owned(), 3)]);
        assert_eq!(r.max_positional, 1);
    }

    #[test]
    fn bad_captures_are_explained() {
        let e = rewrite("SELECT {a b}", 0, Span::call_site(), &[], &[], &no_bulk)
            .err()
            .unwrap();
        assert!(e.contains("plain identifier"), "{e}");
        let e = rewrite("SELECT {a", 0, Span::call_site(), &[], &[], &no_bulk)
            .err()
            .unwrap();
        assert!(e.contains("unclosed"), "{e}");
    }

    #[test]
    fn lists_and_clauses_are_rewritten() {
        let sql = "SELECT 1 WHERE a IN {xs} AND b not  in {ys} AND c = {z} {? AND d = {d} AND e IN {es} } LIMIT 1";
        let r = rw(sql, 0);
        assert_eq!(
            r.sql,
            "SELECT 1 WHERE a = ANY($1) AND b <> ALL($2) AND c = $3  AND d = $4 AND e = ANY($5)  LIMIT 1"
        );
        assert_eq!(r.clauses.len(), 1);
        assert_eq!(r.clauses[0].numbers, [4, 5]);
        assert_eq!(
            &sql[r.clauses[0].original.clone()],
            "{? AND d = {d} AND e IN {es} }"
        );
        let at = r.sql.find("<> ALL").unwrap();
        assert_eq!(&sql[r.original_range(&(at..at + 10))], "not  in {ys}");
        let at = r.sql.find("LIMIT").unwrap();
        assert_eq!(r.original_offset(at), sql.find("LIMIT").unwrap());
        assert!(matches!(&r.pieces[1], Piece::Clause(0, t) if t == " AND d = $4 AND e = ANY($5) "));
        // `IN` inside a word is not the keyword.
        assert_eq!(rw("SELECT {x} AS within", 0).sql, "SELECT $1 AS within");
        assert_eq!(
            rw("SELECT 1 FROM t JOIN u ON u.a = {x}", 0).sql,
            "SELECT 1 FROM t JOIN u ON u.a = $1"
        );
    }

    #[test]
    fn clause_mistakes_are_explained() {
        let e = |sql| {
            rewrite(sql, 0, Span::call_site(), &[], &[], &no_bulk)
                .err()
                .unwrap()
        };
        assert!(e("SELECT 1 {? AND true }").contains("has no `{name}` capture"));
        assert!(e("SELECT 1 {? AND a = {a} ").contains("not closed"));
        assert!(e("SELECT 1 {? AND a = {a} {? AND b = {b} } }").contains("inside another"));
        assert!(e("SELECT 1 {? AND a = $1 }").contains("capture a variable"));
        assert!(e("SELECT {a} {? AND a = {a} }").contains("both inside and outside"));
    }

    #[test]
    fn sort_choices_fill_their_slot() {
        let choices = [ChoiceSpec {
            name: "sort".to_owned(),
            texts: vec!["name".to_owned(), "id DESC".to_owned()],
        }];
        let r = rewrite(
            "SELECT 1 ORDER BY {sort}, {x}",
            0,
            Span::call_site(),
            &choices,
            &[1],
            &no_bulk,
        )
        .unwrap();
        assert_eq!(r.sql, "SELECT 1 ORDER BY id DESC, $1");
        assert!(matches!(r.pieces[1], Piece::Choice(0)));
        let q: QueryInput = syn::parse2(quote!(
            "SELECT 1",
            a,
            sort = match o {
                A => "x",
                _ => "y",
            }
        ))
        .unwrap();
        assert_eq!(
            (q.args.len(), q.choices.len(), q.choices[0].texts.len()),
            (1, 1, 2)
        );
        assert!(syn::parse2::<QueryInput>(quote!("SELECT 1", sort = o)).is_err());
        assert!(
            syn::parse2::<QueryInput>(quote!(
                "SELECT 1",
                sort = match o {
                    A => 1,
                }
            ))
            .is_err()
        );
    }

    fn sailing_columns(before: &str) -> Result<Vec<BulkColumn>, String> {
        let (_, table, columns) = insert_target(before).ok_or("no target")?;
        assert_eq!(table, "sailings");
        Ok(columns
            .into_iter()
            .map(|name| BulkColumn {
                name,
                array: "int8[]".to_owned(),
                not_null: true,
            })
            .collect())
    }

    #[test]
    fn bulk_inserts_unnest_one_array_per_column() {
        let sql = "INSERT INTO sailings (id, \"Seats\") VALUES {rows} RETURNING id";
        let r = rewrite(sql, 0, Span::call_site(), &[], &[], &sailing_columns).unwrap();
        assert_eq!(
            r.sql,
            "INSERT INTO sailings (id, \"Seats\") SELECT * FROM UNNEST($1::int8[], $2::int8[]) RETURNING id"
        );
        let fields: Vec<_> = r
            .captures
            .iter()
            .map(|c| c.field.clone().unwrap().member)
            .collect();
        assert_eq!(fields, [syn::parse_quote!(0), syn::parse_quote!(1)]);
        let sql = "INSERT INTO public.sailings (id, seats) VALUES {rows.*}";
        let r = rewrite(sql, 0, Span::call_site(), &[], &[], &sailing_columns).unwrap();
        let fields: Vec<_> = r
            .captures
            .iter()
            .map(|c| c.field.clone().unwrap().member)
            .collect();
        assert_eq!(fields, [syn::parse_quote!(id), syn::parse_quote!(seats)]);
        let at = r.sql.find("SELECT").unwrap();
        assert_eq!(
            &sql[r.original_range(&(at..r.sql.len()))],
            "VALUES {rows.*}"
        );
        assert_eq!(
            insert_target("INSERT INTO \"My\".\"T\" (A, \"b\")"),
            Some((
                Some("My".to_owned()),
                "T".to_owned(),
                vec!["a".to_owned(), "b".to_owned()]
            ))
        );
        assert!(rewrite("SELECT {rows.*}", 0, Span::call_site(), &[], &[], &no_bulk).is_err());
    }

    #[test]
    fn copy_forms_are_recognized() {
        let c = copy_form(" copy sailings (id, notes) FROM {rows.*} ")
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.target.as_str(), c.rows.to_string(), c.spread),
            ("sailings (id, notes)", "rows".to_owned(), true)
        );
        assert!(copy_form("SELECT 1").is_none());
        assert!(copy_form("COPY t (a) FROM STDIN").unwrap().is_err());
        assert!(
            copy_form("COPY t (a) FROM {rows} WHERE true")
                .unwrap()
                .is_err()
        );
    }
}
