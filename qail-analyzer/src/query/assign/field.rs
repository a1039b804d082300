//! `SET col.field = v`: assigning one field of a composite column (`col.a.b` for nested ones).

use sqlparser::ast::{Expr, Ident};

use crate::ctx::Ctx;
use crate::expr::{Fit, expect};
use crate::scope::{Rel, Scope, norm};
use crate::types::user_kind;
use qail_schema::snapshot::UserTypeKind;

/// Types `value` against the field `fields` names inside the composite column `column`.
/// `false` when `column` is not a composite column of the target.
pub(super) fn assign(
    cx: &mut Ctx,
    sc: &Scope,
    target: &Rel,
    column: &Ident,
    fields: &[&Ident],
    value: &Expr,
) -> bool {
    let name = norm(column);
    let Some(col) = target.cols.iter().find(|c| c.name == name) else {
        return false;
    };
    let mut ty = col.ty.clone();
    if ty.array_dims > 0
        || !matches!(
            user_kind(&ty, cx.snap),
            Some(UserTypeKind::Composite { .. })
        )
    {
        return false;
    }
    let mut path = name.clone();
    for f in fields {
        let field = norm(f);
        let found = match user_kind(&ty, cx.snap) {
            Some(UserTypeKind::Composite { fields }) if ty.array_dims == 0 => fields
                .iter()
                .find(|x| x.name == field)
                .map(|x| x.ty.clone()),
            _ => None,
        };
        let Some(next) = found else {
            cx.error(
                cx.ident_range(f),
                format!(
                    "cannot assign to field \"{field}\" of column \"{path}\" because there is no such column in data type {}",
                    ty.name
                ),
                Some("check the field name against the composite type".into()),
            );
            return true;
        };
        path = format!("{path}.{field}");
        ty = next;
    }
    let t = expect(
        cx,
        sc,
        value,
        &ty,
        Fit::Assign,
        &format!("field \"{path}\""),
    );
    // Note: a composite's fields have no NOT NULL: NULL is always a valid value.
    if let Some(n) = t.param {
        cx.param_nullable(n);
    }
    true
}
