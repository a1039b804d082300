//! Subscripts and field selection: `a[i]`, `a[i:j]`, `(composite).field`.

use std::ops::Range;

use sqlparser::ast::{AccessExpr, Expr, Subscript};

use crate::ctx::Ctx;
use crate::diag::did_you_mean;
use crate::expr::{Fit, Typed, expect, expr};
use crate::scope::{LookupError, Scope, norm};
use crate::types::{builtin, display, element_of, user_kind};
use qail_schema::snapshot::{TypeRef, UserTypeKind};

pub(crate) fn subscript(
    cx: &mut Ctx,
    sc: &Scope,
    root: &Expr,
    chain: &[AccessExpr],
    range: Range<usize>,
) -> Typed {
    // Note: `(t).col` over a relation `t` is its column, as PostgreSQL resolves it (the
    // whole-row reference is never built).
    let (base, chain) = match (whole_row_field(sc, root, chain), chain) {
        (Some(column), [_, rest @ ..]) => (expr(cx, sc, &column), rest),
        _ => (expr(cx, sc, root), chain),
    };
    let mut ty = match base.arg() {
        Some(t) => t.clone(),
        None => return Typed::error(range),
    };
    let mut out = Typed::known(builtin("bool"), range.clone());
    out.absorb(&base);
    out.name = base.name;
    // Note: consecutive subscripts are one subscript of as many dimensions, as in
    // PostgreSQL: `a[1][2]` is an element of any array, `a[1:2][2]` (a slice in any
    // position) an array of a's type.
    let mut i = 0;
    while let Some(access) = chain.get(i) {
        let next = match access {
            AccessExpr::Subscript(_) => {
                let run: Vec<&Subscript> = chain[i..]
                    .iter()
                    .map_while(|a| match a {
                        AccessExpr::Subscript(sub) => Some(sub),
                        AccessExpr::Dot(_) => None,
                    })
                    .collect();
                i += run.len();
                // Note: PostgreSQL's MAXDIM.
                if run.len() > 6 {
                    cx.error(
                        range.clone(),
                        format!(
                            "number of array dimensions ({}) exceeds the maximum allowed (6)",
                            run.len()
                        ),
                        Some("an array has at most 6 dimensions: use at most 6 subscripts".into()),
                    );
                    return Typed::error(range);
                }
                index(cx, sc, &run, &ty, &mut out)
            }
            AccessExpr::Dot(field) => {
                i += 1;
                field_of(cx, field, &ty, &mut out)
            }
        };
        match next {
            Some(t) => ty = t,
            None => return Typed::error(range),
        }
    }
    out.ty = crate::expr::Ty::Known(ty);
    out
}

/// `rel.field` when `root` is a bare relation name (not a column) and the chain starts with
/// a field.
fn whole_row_field(sc: &Scope, root: &Expr, chain: &[AccessExpr]) -> Option<Expr> {
    let mut root = root;
    while let Expr::Nested(inner) = root {
        root = inner;
    }
    let (Expr::Identifier(rel), Some(AccessExpr::Dot(Expr::Identifier(field)))) =
        (root, chain.first())
    else {
        return None;
    };
    let name = norm(rel);
    let not_column = matches!(sc.lookup(&[], &name), Err(LookupError::NoColumn { .. }));
    // Note: a function returning a scalar has a scalar whole row, which has no fields.
    (not_column && sc.has_fields(&name))
        .then(|| Expr::CompoundIdentifier(vec![rel.clone(), field.clone()]))
}

/// `a[i]…` (an element, NULL when out of range) or `a[i:j]…` (an array).
fn index(
    cx: &mut Ctx,
    sc: &Scope,
    subs: &[&Subscript],
    ty: &TypeRef,
    out: &mut Typed,
) -> Option<TypeRef> {
    if ty.array_dims == 0 && ty.schema == "pg_catalog" && ty.name == "jsonb" {
        return jsonb_index(cx, sc, subs, out);
    }
    let int4 = builtin("int4");
    let mut slice = false;
    for sub in subs {
        let bounds: Vec<&Expr> = match sub {
            Subscript::Index { index } => vec![index],
            Subscript::Slice {
                lower_bound,
                upper_bound,
                stride,
            } => {
                slice = true;
                [lower_bound, upper_bound, stride]
                    .into_iter()
                    .flatten()
                    .collect()
            }
        };
        for b in bounds {
            let t = expect(cx, sc, b, &int4, Fit::Implicit, "array subscript");
            if t.is_error() {
                return None;
            }
        }
    }
    if ty.array_dims == 0 {
        cx.error(
            out.range.clone(),
            format!("cannot subscript type {}", display(ty)),
            Some("subscript an array column".into()),
        );
        return None;
    }
    out.nullable = true;
    if slice {
        out.why
            .push("an array slice is NULL when the array is".into());
        return Some(ty.clone());
    }
    out.why
        .push("an array subscript is NULL when out of range".into());
    element_of(ty).map(|e| TypeRef { array_dims: 0, ..e })
}

/// `j['key'][0]`: jsonb subscripts are keys (text) or positions (int4); the result is jsonb,
/// NULL when the path is missing.
fn jsonb_index(cx: &mut Ctx, sc: &Scope, subs: &[&Subscript], out: &mut Typed) -> Option<TypeRef> {
    for sub in subs {
        let Subscript::Index { index } = sub else {
            cx.error(
                out.range.clone(),
                "jsonb subscript does not support slices",
                Some("subscript with one key or position: j['key'] or j[0]".into()),
            );
            return None;
        };
        let mut t = expr(cx, sc, index);
        let text = builtin("text");
        let fits = match t.arg() {
            None => !t.is_error(),
            Some(k) => k == &text || crate::types::implicit(k, &builtin("int4"), cx.snap),
        };
        if t.is_error() {
            return None;
        }
        if !fits {
            cx.error(
                t.range.clone(),
                "a jsonb subscript must be text or an integer",
                Some("cast the subscript: j[$1::text] or j[$1::int4]".into()),
            );
            return None;
        }
        crate::expr::settle(cx, &mut t, &text);
    }
    out.nullable = true;
    out.why
        .push("a jsonb subscript is NULL when the path is missing".into());
    Some(builtin("jsonb"))
}

/// `(composite).field`.
fn field_of(cx: &mut Ctx, field: &Expr, ty: &TypeRef, out: &mut Typed) -> Option<TypeRef> {
    let name = match field {
        Expr::Identifier(id) => norm(id),
        _ => String::new(),
    };
    let fields = match user_kind(ty, cx.snap) {
        Some(UserTypeKind::Composite { fields }) if ty.array_dims == 0 => fields,
        _ => {
            cx.error(
                out.range.clone(),
                format!("type {} is not composite", display(ty)),
                Some("select a field of a composite column: (column).field".into()),
            );
            return None;
        }
    };
    match fields.iter().find(|f| f.name == name) {
        Some(f) => {
            out.nullable = true;
            out.why
                .push(format!("field {name} of {} can be NULL", ty.name));
            out.name = Some(name);
            out.source = None;
            Some(f.ty.clone())
        }
        None => {
            let hint =
                did_you_mean(&name, fields.iter().map(|f| f.name.as_str())).unwrap_or_else(|| {
                    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                    format!("{} has the fields {}", ty.name, names.join(", "))
                });
            cx.error(
                out.range.clone(),
                format!("column \"{name}\" not found in data type {}", ty.name),
                Some(hint),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn more_subscripts_than_an_array_has_dimensions_are_refused() {
        let (snap, _) = qail_schema::ddl::from_sql(&[]);
        let message = match crate::analyze("SELECT ('{}'::int[])[1][2][3][4][5][6][7]", &snap) {
            Ok(_) => panic!("seven subscripts were accepted"),
            Err(d) => d[0].message.clone(),
        };
        assert_eq!(
            message,
            "number of array dimensions (7) exceeds the maximum allowed (6)"
        );
        assert!(crate::analyze("SELECT ('{}'::int[])[1][2][3][4][5][6]", &snap).is_ok());
    }
}
