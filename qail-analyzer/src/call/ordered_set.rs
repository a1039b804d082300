//! Ordered-set aggregates: `percentile_cont(0.5) WITHIN GROUP (ORDER BY x)`,
//! `percentile_disc`, `mode()`; the rules of the hypothetical-set forms
//! (`rank(3) WITHIN GROUP (ORDER BY x)`) and of an aggregate's own ORDER BY.

use std::ops::Range;

use sqlparser::ast::{
    DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentClause,
    FunctionArguments,
};

use crate::ctx::Ctx;
use crate::expr::{Fit, Ty, Typed, conform, expr};
use crate::scope::Scope;
use crate::types::{array_of, builtin, common_type, display, scalar_name};

/// An ordered-set aggregate: the direct argument is a fraction (or an array of them), the
/// aggregated value is the `WITHIN GROUP (ORDER BY …)` expression.
pub(crate) fn ordered_set(
    cx: &mut Ctx,
    sc: &Scope,
    f: &Function,
    name: &str,
    range: Range<usize>,
) -> Typed {
    let direct = direct_args(f);
    let want = usize::from(name != "mode");
    if aggregate_order(f).is_some() {
        cx.error(
            range.clone(),
            "cannot use multiple ORDER BY clauses with WITHIN GROUP",
            Some("order the aggregated values in WITHIN GROUP (ORDER BY …) only".into()),
        );
        return Typed::error(range);
    }
    let [sort] = f.within_group.as_slice() else {
        return misuse(cx, name, range);
    };
    if direct.len() != want {
        return misuse(cx, name, range);
    }
    let mut many = false;
    if let Some(frac) = direct.first() {
        let mut t = expr(cx, sc, frac);
        many = t.arg().is_some_and(|a| a.array_dims > 0);
        let target = builtin("float8");
        let target = if many { array_of(&target) } else { target };
        conform(cx, &mut t, &target, Fit::Implicit, "fraction");
        if t.is_error() {
            return Typed::error(range);
        }
    }
    let mut value = expr(cx, sc, &sort.expr);
    if value.ty == Ty::Unknown {
        conform(
            cx,
            &mut value,
            &builtin("text"),
            Fit::Implicit,
            "sort value",
        );
    }
    if name == "percentile_cont" && value.arg().and_then(scalar_name) != Some("interval") {
        conform(
            cx,
            &mut value,
            &builtin("float8"),
            Fit::Implicit,
            "sort value",
        );
    }
    let Ty::Known(ty) = value.ty else {
        return Typed::error(range);
    };
    let mut t = Typed::known(if many { array_of(&ty) } else { ty }, range);
    t.name = Some(name.to_string());
    t.nullable = true;
    t.why
        .push(format!("{name}() is NULL when there are no input rows"));
    t
}

/// The direct arguments of `f`, written without names.
fn direct_args(f: &Function) -> Vec<&Expr> {
    match &f.args {
        FunctionArguments::List(list) => list
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The ORDER BY inside an aggregate's parentheses (`string_agg(x, ',' ORDER BY x)`).
fn aggregate_order(f: &Function) -> Option<&[sqlparser::ast::OrderByExpr]> {
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    list.clauses.iter().find_map(|c| match c {
        FunctionArgumentClause::OrderBy(items) => Some(items.as_slice()),
        _ => None,
    })
}

/// Reports what PostgreSQL refuses in a call of an aggregate with an ORDER BY: with DISTINCT,
/// an ORDER BY expression that is not an argument; in a hypothetical-set aggregate
/// (`rank(3) WITHIN GROUP (ORDER BY x)`), a direct argument without its ORDER BY column or of
/// a type the column's cannot be matched with. `true` when it reported one.
pub(crate) fn refused(cx: &mut Ctx, sc: &Scope, f: &Function, name: &str) -> bool {
    let args = direct_args(f);
    if let (FunctionArguments::List(list), Some(order)) = (&f.args, aggregate_order(f))
        && list.duplicate_treatment == Some(DuplicateTreatment::Distinct)
        && let Some(stray) = order.iter().find(|o| !args.contains(&&o.expr))
    {
        cx.error(
            cx.range(&stray.expr),
            "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list",
            Some("order by the aggregated expression itself, written the same way".into()),
        );
        return true;
    }
    if f.within_group.is_empty()
        || !matches!(name, "rank" | "dense_rank" | "percent_rank" | "cume_dist")
    {
        return false;
    }
    let range = cx.range(f);
    if args.len() != f.within_group.len() {
        cx.error(
            range,
            format!(
                "{name}() WITHIN GROUP takes one direct argument per ORDER BY column ({} and {})",
                args.len(),
                f.within_group.len()
            ),
            Some(format!(
                "write {name}(value) WITHIN GROUP (ORDER BY column), one value per column"
            )),
        );
        return true;
    }
    for (arg, sort) in args.iter().zip(&f.within_group) {
        let mut a = expr(cx, sc, arg);
        let mut s = expr(cx, sc, &sort.expr);
        let (Some(at), Some(st)) = (a.arg().cloned(), s.arg().cloned()) else {
            // Note: an untyped value takes the column's type (its literal checked), and
            // the other way round.
            match (a.arg().cloned(), s.arg().cloned()) {
                (None, Some(st)) => conform(cx, &mut a, &st, Fit::Implicit, "hypothetical value"),
                (Some(at), None) => conform(cx, &mut s, &at, Fit::Implicit, "sort value"),
                _ => {}
            }
            if a.is_error() || s.is_error() {
                return true;
            }
            continue;
        };
        if common_type(&[at.clone(), st.clone()], cx.snap).is_err() {
            cx.error(
                cx.range(*arg),
                format!(
                    "WITHIN GROUP types {} and {} cannot be matched",
                    display(&at),
                    display(&st)
                ),
                Some("cast the value to the ORDER BY column's type".into()),
            );
            return true;
        }
    }
    false
}

fn misuse(cx: &mut Ctx, name: &str, range: Range<usize>) -> Typed {
    let example = if name == "mode" {
        "mode() WITHIN GROUP (ORDER BY x)".to_string()
    } else {
        format!("{name}(0.5) WITHIN GROUP (ORDER BY x)")
    };
    cx.error(
        range.clone(),
        format!("{name} is an ordered-set aggregate"),
        Some(format!("write it as {example}")),
    );
    Typed::error(range)
}

#[cfg(test)]
mod tests {
    fn refused(sql: &str) -> Option<String> {
        let ddl = "CREATE TABLE v (x int4, s text);".to_owned();
        let (snap, _) = qail_schema::ddl::from_sql(&[("v.sql".to_owned(), ddl)]);
        match crate::analyze(sql, &snap) {
            Ok(_) => None,
            Err(d) => Some(d[0].message.clone()),
        }
    }

    #[test]
    fn aggregate_orderings_postgresql_refuses_are_refused() {
        let cases = [
            (
                "SELECT string_agg(DISTINCT x::text, ',' ORDER BY x) FROM v",
                "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list",
            ),
            (
                "SELECT percentile_cont(0.5 ORDER BY x) WITHIN GROUP (ORDER BY x) FROM v",
                "cannot use multiple ORDER BY clauses with WITHIN GROUP",
            ),
            (
                "SELECT rank(3) WITHIN GROUP (ORDER BY s) FROM v",
                "WITHIN GROUP types integer and text cannot be matched",
            ),
            (
                "SELECT rank(3) WITHIN GROUP (ORDER BY x, s) FROM v",
                "rank() WITHIN GROUP takes one direct argument per ORDER BY column (1 and 2)",
            ),
            (
                "SELECT rank('fred') WITHIN GROUP (ORDER BY x) FROM v",
                "invalid input syntax for type integer: \"fred\"",
            ),
        ];
        for (sql, message) in cases {
            assert_eq!(refused(sql).as_deref(), Some(message), "{sql}");
        }
        for sql in [
            "SELECT string_agg(DISTINCT s, ',' ORDER BY s) FROM v",
            "SELECT rank(3) WITHIN GROUP (ORDER BY x), cume_dist('a', 2) WITHIN GROUP (ORDER BY s, x) FROM v",
            "SELECT rank(2.5) WITHIN GROUP (ORDER BY x) FROM v",
        ] {
            assert_eq!(refused(sql), None, "{sql}");
        }
    }
}
