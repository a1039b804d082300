//! Expression typing: literals, parameters, column references, operators.
//! Function calls, CASE and the other special forms live in `exprs`.

use std::ops::Range;

use sqlparser::ast::{BinaryOperator, Expr, Ident, UnaryOperator, Value};

use super::ColumnSource;
use super::ctx::Ctx;
use super::exprs;
use super::literal;
use super::names::report_lookup;
use super::ops;
use super::scope::{LookupError, Scope, norm};
use super::types::{assignable, builtin, display, implicit, sql_name};
use crate::snapshot::TypeRef;

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
        Expr::Identifier(id) => column(cx, sc, &[], id),
        Expr::CompoundIdentifier(ids) => match ids.split_last() {
            Some((last, qual)) => column(cx, sc, qual, last),
            None => Typed::error(range),
        },
        Expr::Value(v) => value(cx, &v.value, range),
        Expr::Nested(inner) => expr(cx, sc, inner),
        Expr::BinaryOp { left, op, right } => binary(cx, sc, left, op, right, range),
        Expr::UnaryOp { op, expr: inner } => unary(cx, sc, *op, inner, range),
        _ => exprs::special(cx, sc, e, range),
    }
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
        Value::DollarQuotedString(_)
        | Value::UnicodeStringLiteral(_)
        | Value::NationalStringLiteral(_) => Typed::new(Ty::Unknown, range),
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
            t
        }
        Err(LookupError::NoColumn { .. }) if q.is_empty() && sc.has_rel(&name) => {
            // Note: a bare relation name is its whole row, a value of type record.
            let mut t = Typed::known(builtin("record"), whole);
            t.name = Some(name);
            t
        }
        Err(e) => {
            report_lookup(cx, &q, &name, qual, id, e);
            Typed::error(whole)
        }
    }
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
            .and_then(|l| literal::invalid(&l, to, cx.snap))
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
        && let Some(t) = super::callforms::row_into(cx, sc, e, target)
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

fn binary(
    cx: &mut Ctx,
    sc: &Scope,
    l: &Expr,
    op: &BinaryOperator,
    r: &Expr,
    range: Range<usize>,
) -> Typed {
    if matches!(op, BinaryOperator::And | BinaryOperator::Or) {
        let word = if *op == BinaryOperator::And {
            "AND"
        } else {
            "OR"
        };
        let a = condition(cx, sc, l, word);
        let b = condition(cx, sc, r, word);
        let mut t = Typed::known(builtin("bool"), range);
        if a.is_error() || b.is_error() {
            t.ty = Ty::Error;
        }
        t.absorb(&a);
        t.absorb(&b);
        return t;
    }
    if let (Expr::Tuple(ls), Expr::Tuple(rs)) = (l, r) {
        return exprs::row_compare(cx, sc, ls, &op.to_string(), rs, range);
    }
    let a = expr(cx, sc, l);
    let b = expr(cx, sc, r);
    apply(cx, &op.to_string(), a, b, range)
}

/// Resolves `a op b` on typed operands and fixes pending parameters.
pub(crate) fn apply(
    cx: &mut Ctx,
    op: &str,
    mut a: Typed,
    mut b: Typed,
    range: Range<usize>,
) -> Typed {
    if a.is_error() || b.is_error() {
        return Typed::error(range);
    }
    match ops::binary(op, a.arg(), b.arg(), cx.snap) {
        Ok(sig) => {
            settle(cx, &mut a, &sig.left);
            settle(cx, &mut b, &sig.right);
            let mut t = Typed::known(sig.result, range);
            t.absorb(&a);
            t.absorb(&b);
            if matches!(op, "->" | "->>" | "#>" | "#>>") {
                t.nullable = true;
                t.why
                    .push(format!("{op} yields NULL for a missing key or index"));
            }
            t
        }
        Err(ambiguous) => {
            operator_error(cx, op, &a, &b, range.clone(), ambiguous);
            Typed::error(range)
        }
    }
}

fn operator_error(
    cx: &mut Ctx,
    op: &str,
    a: &Typed,
    b: &Typed,
    range: Range<usize>,
    ambiguous: bool,
) {
    let show = |t: &Typed| t.arg().map_or_else(|| "unknown".to_string(), display);
    let reused = [a, b]
        .into_iter()
        .find(|t| t.param.is_some() && t.arg().is_some());
    let other = if reused.is_some_and(|r| std::ptr::eq(r, a)) {
        b
    } else {
        a
    };
    if let (Some(p), Some(want)) = (reused, other.arg()) {
        let n = p.param.unwrap_or(0);
        let msg = format!(
            "parameter ${n} is used as {} here but as {} elsewhere",
            display(want),
            show(p)
        );
        cx.error(
            p.range.clone(),
            msg,
            Some(format!(
                "use a separate parameter, or cast: ${n}::{}",
                sql_name(want)
            )),
        );
        return;
    }
    let (msg, hint) = if ambiguous {
        (
            format!("operator is not unique: {} {op} {}", show(a), show(b)),
            "add a cast to the unknown operand, e.g. $1::int4".to_string(),
        )
    } else {
        let hint = match (a.arg(), cx.sql.get(b.range.clone())) {
            (Some(l), Some(text)) if !text.is_empty() => {
                format!(
                    "add a cast so both sides have the same type, e.g. {text}::{}",
                    sql_name(l)
                )
            }
            _ => "add a cast so both sides have the same type".to_string(),
        };
        (
            format!("operator does not exist: {} {op} {}", show(a), show(b)),
            hint,
        )
    };
    cx.error(range, msg, Some(hint));
}

fn unary(cx: &mut Ctx, sc: &Scope, op: UnaryOperator, inner: &Expr, range: Range<usize>) -> Typed {
    if op == UnaryOperator::Not {
        let a = condition(cx, sc, inner, "NOT");
        let mut t = Typed::known(builtin("bool"), range);
        t.ty = if a.is_error() { Ty::Error } else { t.ty };
        t.absorb(&a);
        return t;
    }
    let a = expr(cx, sc, inner);
    let sym = op.to_string();
    let result = match &a.ty {
        Ty::Error => return Typed::error(range),
        Ty::Known(t) => ops::prefix(&sym, t),
        _ => None,
    };
    match result {
        Some(ty) => {
            let mut t = Typed::known(ty, range);
            t.absorb(&a);
            t
        }
        None => {
            let have = a.arg().map_or_else(|| "unknown".into(), display);
            cx.error(
                range.clone(),
                format!("operator does not exist: {sym} {have}"),
                Some("add a cast to a numeric type, e.g. -$1::int4".into()),
            );
            Typed::error(range)
        }
    }
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
