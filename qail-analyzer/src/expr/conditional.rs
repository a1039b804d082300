//! Conditional expressions, typed with PostgreSQL's common-type rule (`select_common_type`):
//! CASE, COALESCE, GREATEST/LEAST, NULLIF.

use std::ops::Range;

use sqlparser::ast::{CaseWhen, Expr};

use crate::ctx::Ctx;
use crate::expr::operator::apply;
use crate::expr::{Fit, Ty, Typed, condition, conform, expr};
use crate::scope::Scope;
use crate::types::{builtin, common_type, display};
use qail_schema::snapshot::TypeRef;

/// `CASE [operand] WHEN … THEN … [ELSE …] END`.
pub(crate) fn case(
    cx: &mut Ctx,
    sc: &Scope,
    operand: Option<&Expr>,
    conditions: &[CaseWhen],
    else_result: Option<&Expr>,
    range: Range<usize>,
) -> Typed {
    let mut results = Vec::with_capacity(conditions.len() + 1);
    let subject = operand.as_ref().map(|o| expr(cx, sc, o));
    for when in conditions {
        let test = match &subject {
            Some(s) => {
                let v = expr(cx, sc, &when.condition);
                apply(cx, "=", s.clone(), v, cx.range(&when.condition))
            }
            None => condition(cx, sc, &when.condition, "CASE/WHEN"),
        };
        if test.is_error() {
            return Typed::error(range);
        }
        results.push(expr(cx, sc, &when.result));
    }
    let has_else = else_result.is_some();
    let mut name = "case".to_string();
    if let Some(e) = else_result {
        let typed = expr(cx, sc, e);
        // Note: PostgreSQL names a CASE after its ELSE result when that has a name of its
        // own (a column, a function, ARRAY[…], a subquery), else `case`.
        if strong_name(e)
            && let Some(n) = &typed.name
        {
            name = n.clone();
        }
        results.push(typed);
    }
    let mut t = unify(cx, results, "CASE", range, |parts| {
        parts.iter().any(|p| p.nullable)
    });
    if !has_else {
        t.nullable = true;
        t.why
            .push("CASE without ELSE yields NULL when no branch matches".into());
    }
    t.name = Some(name);
    t
}

/// Whether PostgreSQL's output-column naming (`FigureColname`) gives this expression a name
/// stronger than a CASE's own.
fn strong_name(e: &Expr) -> bool {
    match e {
        Expr::Identifier(_)
        | Expr::CompoundIdentifier(_)
        | Expr::Function(_)
        | Expr::Array(_)
        | Expr::Subquery(_)
        | Expr::Exists { .. } => true,
        Expr::Nested(inner) | Expr::Cast { expr: inner, .. } => strong_name(inner),
        Expr::Case {
            else_result: Some(inner),
            ..
        } => strong_name(inner),
        _ => false,
    }
}

/// COALESCE, GREATEST, LEAST: NULL only when every argument is NULL; NULL is a meaningful
/// parameter value here.
pub(crate) fn coalesce(
    cx: &mut Ctx,
    name: String,
    mut typed: Vec<Typed>,
    range: Range<usize>,
) -> Typed {
    for t in &mut typed {
        if let Some(n) = t.param {
            cx.param_nullable(n);
            t.nullable = true;
            t.why.push(format!("parameter ${n} may be NULL"));
        }
    }
    let mut t = unify(cx, typed, &name.to_uppercase(), range, |ps| {
        ps.iter().all(|p| p.nullable)
    });
    t.name = Some(name);
    t
}

pub(crate) fn nullif(cx: &mut Ctx, mut typed: Vec<Typed>, range: Range<usize>) -> Typed {
    let b = typed.pop().unwrap_or_else(|| Typed::error(range.clone()));
    let a = typed.pop().unwrap_or_else(|| Typed::error(range.clone()));
    let eq = apply(cx, "=", a.clone(), b, range.clone());
    if eq.is_error() {
        return Typed::error(range);
    }
    let ty = match (&a.ty, a.param) {
        (Ty::Known(t), _) => t.clone(),
        (_, Some(n)) => cx
            .params
            .get(n - 1)
            .and_then(|s| s.ty.clone())
            .unwrap_or_else(|| builtin("text")),
        _ => builtin("text"),
    };
    let mut t = Typed::known(ty, range);
    t.nullable = true;
    t.why
        .push("NULLIF yields NULL when its arguments are equal".into());
    t.name = Some("nullif".into());
    t
}

/// Unifies branch types (PostgreSQL's select_common_type) and fixes pending parameters.
pub(crate) fn unify(
    cx: &mut Ctx,
    mut parts: Vec<Typed>,
    what: &str,
    range: Range<usize>,
    nullable: impl Fn(&[Typed]) -> bool,
) -> Typed {
    if parts.iter().any(Typed::is_error) {
        return Typed::error(range);
    }
    let known: Vec<TypeRef> = parts.iter().filter_map(|p| p.arg().cloned()).collect();
    let ty = match common_type(&known, cx.snap) {
        Ok(t) => t,
        Err(pair) => {
            let (a, b) = *pair;
            let msg = format!(
                "{what} types {} and {} cannot be matched",
                display(&a),
                display(&b)
            );
            cx.error(
                range.clone(),
                msg,
                Some("cast the branches to one type".into()),
            );
            return Typed::error(range);
        }
    };
    for p in &mut parts {
        conform(cx, p, &ty, Fit::Implicit, what);
    }
    let mut t = Typed::known(ty, range);
    if nullable(&parts) {
        for p in &parts {
            t.absorb(p);
        }
    }
    t
}
