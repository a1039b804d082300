//! Expression typing: the typed-expression model, literals, parameters and column references,
//! and the dispatch of every other form to its module (operators, predicates, casts,
//! subqueries, constructors, conditional expressions, subscripts, function calls).

pub(crate) mod cast;
pub(crate) mod conditional;
pub(crate) mod constructor;
pub(crate) mod json;
pub(crate) mod literal;
pub(crate) mod operator;
pub(crate) mod predicate;
pub(crate) mod record;
pub(crate) mod subquery;
pub(crate) mod subscript;

use std::ops::Range;

use sqlparser::ast::{Expr, Ident, Value};

use crate::call::syntax;
use crate::ctx::Ctx;
use crate::names::report_lookup;
use crate::scope::{LookupError, Scope, norm};
use crate::types::{assignable, builtin, display, implicit};
use crate::{ColumnSource, Shape, call};
use qail_schema::snapshot::TypeRef;

/// The type of an expression, as far as it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ty {
    Known(TypeRef),
    /// A string literal or NULL: PostgreSQL's `unknown`, resolved by context.
    Unknown,
    /// A parameter whose type is not fixed yet.
    Param(usize),
    /// An error was already reported; stay quiet about this expression.
    Error,
}

/// A typed expression.
#[derive(Debug, Clone)]
pub(crate) struct Typed {
    pub(crate) ty: Ty,
    pub(crate) nullable: bool,
    pub(crate) why: Vec<String>,
    /// The output column name PostgreSQL derives (`None` is `?column?`).
    pub(crate) name: Option<String>,
    pub(crate) source: Option<ColumnSource>,
    /// `Some(n)` when the expression is exactly `$n`.
    pub(crate) param: Option<usize>,
    /// The text of a string literal, checked once its type is known.
    pub(crate) literal: Option<String>,
    pub(crate) range: Range<usize>,
    /// The fields inside a record, or inside the elements of an array of records.
    pub(crate) shape: Option<Shape>,
}

impl Typed {
    pub(crate) fn new(ty: Ty, range: Range<usize>) -> Self {
        Typed {
            ty,
            nullable: false,
            why: Vec::new(),
            name: None,
            source: None,
            param: None,
            literal: None,
            range,
            shape: None,
        }
    }

    pub(crate) fn known(t: TypeRef, range: Range<usize>) -> Self {
        Self::new(Ty::Known(t), range)
    }

    pub(crate) fn error(range: Range<usize>) -> Self {
        Self::new(Ty::Error, range)
    }

    /// The type for overload resolution: `None` for unknown.
    pub(crate) fn arg(&self) -> Option<&TypeRef> {
        match &self.ty {
            Ty::Known(t) => Some(t),
            _ => None,
        }
    }

    pub(crate) fn is_error(&self) -> bool {
        self.ty == Ty::Error
    }

    /// Nullable because of this operand (strict operators propagate NULL).
    pub(crate) fn absorb(&mut self, other: &Typed) {
        if other.nullable {
            self.nullable = true;
            for w in &other.why {
                if !self.why.contains(w) {
                    self.why.push(w.clone());
                }
            }
        }
    }
}

/// Types `e` in `scope`.
pub(crate) fn expr(cx: &mut Ctx, sc: &Scope, e: &Expr) -> Typed {
    let range = cx.range(e);
    match e {
        Expr::Identifier(id) if crate::query::assign::is_default(e) => {
            // Note: sqlparser reads DEFAULT as a name; only VALUES and SET take it.
            cx.error(
                cx.ident_range(id),
                "DEFAULT is not allowed in this context",
                Some("DEFAULT stands only for a whole value in VALUES or SET; quote a column named \"default\"".into()),
            );
            Typed::error(range)
        }
        Expr::Identifier(id) => column(cx, sc, &[], id),
        Expr::Tuple(_) => {
            constructor::row(cx, sc, e, range.clone()).unwrap_or_else(|| Typed::error(range))
        }
        Expr::CompoundIdentifier(ids) => match ids.split_last() {
            Some((last, qual)) => column(cx, sc, qual, last),
            None => Typed::error(range),
        },
        Expr::Value(v) => value(cx, &v.value, range),
        Expr::Nested(inner) => expr(cx, sc, inner),
        Expr::BinaryOp { left, op, right } => operator::binary(cx, sc, left, op, right, range),
        Expr::UnaryOp { op, expr: inner } => operator::unary(cx, sc, *op, inner, range),
        Expr::IsNull(x) | Expr::IsNotNull(x) => predicate::null_test(cx, sc, x, range),
        Expr::IsTrue(x) | Expr::IsFalse(x) | Expr::IsNotTrue(x) | Expr::IsNotFalse(x) => {
            let t = condition(cx, sc, x, "IS TRUE");
            predicate::non_null_bool(&t, range)
        }
        Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => {
            match predicate::reassociate_distinct(e) {
                Some(fixed) => expr(cx, sc, &fixed),
                None => predicate::distinct(cx, sc, a, b, range),
            }
        }
        Expr::InList { expr: x, list, .. } => predicate::in_list(cx, sc, x, list, range),
        Expr::InSubquery {
            expr: x, subquery, ..
        } => predicate::in_subquery(cx, sc, x, subquery, range),
        Expr::AnyOp {
            left,
            compare_op,
            right,
            ..
        }
        | Expr::AllOp {
            left,
            compare_op,
            right,
        } => predicate::any_op(cx, sc, left, &compare_op.to_string(), right, range),
        Expr::Between {
            expr: x, low, high, ..
        } => predicate::between(cx, sc, x, low, high, range),
        Expr::Like {
            expr: x,
            pattern,
            any,
            ..
        } => predicate::like(cx, sc, x, pattern, "~~", *any, range),
        Expr::ILike {
            expr: x,
            pattern,
            any,
            ..
        } => predicate::like(cx, sc, x, pattern, "~~*", *any, range),
        Expr::SimilarTo {
            expr: x, pattern, ..
        } => predicate::like(cx, sc, x, pattern, "~", false, range),
        Expr::Cast {
            expr: x, data_type, ..
        } => cast::cast(cx, sc, x, data_type, range),
        Expr::TypedString(ts) => cast::typed_string(cx, &ts.data_type, range),
        Expr::Interval(_) => cast::interval(range),
        Expr::Exists { subquery, .. } => subquery::exists(cx, sc, subquery, range),
        Expr::Subquery(q) => subquery::scalar_subquery(cx, sc, q, range),
        Expr::Function(_) => call::call(cx, sc, e, range),
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => conditional::case(
            cx,
            sc,
            operand.as_deref(),
            conditions,
            else_result.as_deref(),
            range,
        ),
        Expr::Collate { expr: x, .. } => expr(cx, sc, x),
        Expr::Extract { .. }
        | Expr::Ceil { .. }
        | Expr::Floor { .. }
        | Expr::Substring { .. }
        | Expr::Position { .. }
        | Expr::Trim { .. }
        | Expr::Overlay { .. }
        | Expr::AtTimeZone { .. } => syntax::form(cx, sc, e, range),
        Expr::Array(arr) => constructor::array(cx, sc, &arr.elem, range),
        Expr::CompoundFieldAccess { root, access_chain } => {
            subscript::subscript(cx, sc, root, access_chain, range)
        }
        _ => unsupported(cx, range),
    }
}

/// An expression the analyzer does not type yet.
pub(crate) fn unsupported(cx: &mut Ctx, range: Range<usize>) -> Typed {
    cx.error(
        range.clone(),
        "this expression is not supported by the analyzer yet",
        Some("rewrite it with standard operators and functions, or add an explicit cast".into()),
    );
    Typed::error(range)
}

fn value(cx: &mut Ctx, v: &Value, range: Range<usize>) -> Typed {
    match v {
        Value::Number(n, _) => Typed::known(builtin(number_type(n)), range),
        Value::Boolean(_) => Typed::known(builtin("bool"), range),
        Value::Null => {
            let mut t = Typed::new(Ty::Unknown, range);
            t.nullable = true;
            t.why.push("NULL literal".into());
            t
        }
        Value::Placeholder(p) => param(cx, p, range),
        Value::SingleQuotedString(text) | Value::EscapedStringLiteral(text) => {
            let mut t = Typed::new(Ty::Unknown, range);
            t.literal = Some(text.clone());
            t
        }
        Value::DollarQuotedString(d) => {
            let mut t = Typed::new(Ty::Unknown, range);
            t.literal = Some(d.value.clone());
            t
        }
        Value::UnicodeStringLiteral(_) | Value::NationalStringLiteral(_) => {
            Typed::new(Ty::Unknown, range)
        }
        Value::HexStringLiteral(_) | Value::SingleQuotedByteStringLiteral(_) => {
            Typed::known(builtin("varbit"), range)
        }
        _ => {
            cx.error(
                range.clone(),
                "this literal is not PostgreSQL syntax",
                Some("use a 'string' or a number".into()),
            );
            Typed::error(range)
        }
    }
}

/// `int4` if it fits, else `int8`, else `numeric` — PostgreSQL's rule for integer literals.
fn number_type(n: &str) -> &'static str {
    if n.contains(['.', 'e', 'E']) {
        "numeric"
    } else if n.parse::<i32>().is_ok() {
        "int4"
    } else if n.parse::<i64>().is_ok() {
        "int8"
    } else {
        "numeric"
    }
}

fn param(cx: &mut Ctx, p: &str, range: Range<usize>) -> Typed {
    let n = p
        .strip_prefix('$')
        .and_then(|d| d.parse::<usize>().ok())
        .filter(|n| (1..=65535).contains(n));
    let Some(n) = n else {
        cx.error(
            range.clone(),
            format!("unsupported placeholder {p}"),
            Some("number parameters $1, $2, …".into()),
        );
        return Typed::error(range);
    };
    let ty = match cx.param_use(n, range.clone()) {
        Some(t) => Ty::Known(t),
        None => Ty::Param(n),
    };
    let mut t = Typed::new(ty, range);
    t.param = Some(n);
    t
}

fn column(cx: &mut Ctx, sc: &Scope, qual: &[Ident], id: &Ident) -> Typed {
    let q: Vec<String> = qual.iter().map(norm).collect();
    let name = norm(id);
    let whole = match (qual.first(), cx.ident_range(id)) {
        (Some(first), end) => cx.ident_range(first).start..end.end,
        (None, r) => r,
    };
    match sc.lookup(&q, &name) {
        Ok(f) => {
            let mut t = Typed::known(f.ty, whole);
            t.nullable = f.nullable;
            t.why = f.why;
            t.name = Some(f.name);
            t.source = f.source;
            t.shape = f.shape;
            t
        }
        Err(LookupError::NoColumn { .. }) if q.is_empty() && sc.has_rel(&name) => {
            // Note: a bare relation name is its whole row.
            let row = sc.whole_row(&name).expect("the relation is in scope");
            let mut t = Typed::known(row.ty, whole);
            if !unsound_whole_row() {
                t.nullable = row.nullable;
                t.why = row.why;
            }
            t.shape = record::whole_row_shape(sc, &name, cx.snap);
            t.name = Some(name);
            t
        }
        Err(e) => {
            report_lookup(cx, &q, &name, qual, id, e);
            Typed::error(whole)
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Test builds only: type whole-row references on the nullable side of an outer join as
    /// never NULL, the unsound rule the differential fuzzer must catch.
    pub(crate) static UNSOUND_WHOLE_ROW: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn unsound_whole_row() -> bool {
    #[cfg(test)]
    return UNSOUND_WHOLE_ROW.get();
    #[cfg(not(test))]
    false
}

/// Fixes an operand's type after overload resolution: a pending parameter takes `to`.
pub(crate) fn settle(cx: &mut Ctx, t: &mut Typed, to: &TypeRef) {
    if let Ty::Param(n) = t.ty {
        cx.bind_param(n, to, t.range.clone());
    }
    if matches!(t.ty, Ty::Param(_) | Ty::Unknown) {
        t.ty = Ty::Known(to.clone());
        if let Some((msg, hint)) = t
            .literal
            .take()
            .and_then(|l| literal::invalid(&l, to, cx.snap, cx.target))
        {
            cx.error(t.range.clone(), msg, Some(hint));
            t.ty = Ty::Error;
        }
    }
}

/// How strictly an expression must fit a target type.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Operator/function argument contexts: implicit casts only.
    Implicit,
    /// INSERT/UPDATE targets: assignment casts too.
    Assign,
}

/// Types `e` and requires it to convert to `target`; `what` names the target in errors.
pub(crate) fn expect(
    cx: &mut Ctx,
    sc: &Scope,
    e: &Expr,
    target: &TypeRef,
    fit: Fit,
    what: &str,
) -> Typed {
    if fit == Fit::Assign
        && let Some(t) = constructor::row_into(cx, sc, e, target)
    {
        return t;
    }
    let mut t = expr(cx, sc, e);
    conform(cx, &mut t, target, fit, what);
    t
}

/// Requires a typed expression to convert to `target`.
pub(crate) fn conform(cx: &mut Ctx, t: &mut Typed, target: &TypeRef, fit: Fit, what: &str) {
    match &t.ty {
        Ty::Known(have) => {
            let ok = match fit {
                Fit::Implicit => implicit(have, target, cx.snap),
                Fit::Assign => assignable(have, target, cx.snap),
            };
            if !ok {
                let have = have.clone();
                cx.mismatch(t.range.clone(), what, target, &have);
                t.ty = Ty::Error;
                return;
            }
            t.ty = Ty::Known(target.clone());
        }
        Ty::Param(_) | Ty::Unknown => settle(cx, t, target),
        Ty::Error => {}
    }
}

/// A boolean condition (WHERE, ON, HAVING, CASE WHEN, AND/OR/NOT operands).
pub(crate) fn condition(cx: &mut Ctx, sc: &Scope, e: &Expr, clause: &str) -> Typed {
    // Note: WHERE and JOIN/ON are evaluated per row, before grouping. An aggregate there is
    // refused when it belongs to this query level: in a subquery, an aggregate over the outer
    // query's columns only is the outer query's (`HAVING EXISTS (… WHERE sum(outer.x) = …)`).
    let filter = matches!(clause, "WHERE" | "JOIN/ON");
    let window = (filter || clause == "HAVING") && crate::query::group::has_window(e);
    let mut outer = sc.parent;
    let mut nested = false;
    while let Some(p) = outer {
        nested |= !p.rels.is_empty();
        outer = p.parent;
    }
    let aggregate = filter
        && if nested {
            crate::query::group::has_local_aggregate(sc, e)
        } else {
            crate::query::group::has_aggregate(e)
        };
    if window || aggregate {
        let what = if window { "window" } else { "aggregate" };
        cx.error(
            cx.range(e),
            format!("{what} functions are not allowed in {clause}"),
            Some(if window {
                "compute the window function in a subquery, then filter its result".into()
            } else {
                "filter groups with HAVING, or aggregate in a subquery".into()
            }),
        );
        return Typed::error(cx.range(e));
    }
    let mut t = expr(cx, sc, e);
    if let Ty::Known(have) = &t.ty
        && !implicit(have, &builtin("bool"), cx.snap)
    {
        let msg = format!(
            "argument of {clause} must be type boolean, not type {}",
            display(have)
        );
        cx.error(
            t.range.clone(),
            msg,
            Some("write a comparison, e.g. `x = $1`".into()),
        );
        t.ty = Ty::Error;
        return t;
    }
    settle(cx, &mut t, &builtin("bool"));
    t
}

#[cfg(test)]
mod tests {
    use super::number_type;

    #[test]
    fn integer_literals_widen() {
        assert_eq!(number_type("42"), "int4");
        assert_eq!(number_type("2147483648"), "int8");
        assert_eq!(number_type("99999999999999999999"), "numeric");
        assert_eq!(number_type("1.5"), "numeric");
    }
}
