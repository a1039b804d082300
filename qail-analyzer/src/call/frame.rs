//! A window's frame clause (`ROWS`/`RANGE`/`GROUPS BETWEEN … AND …`), checked like the
//! server's parse analysis: `GROUPS` needs an ORDER BY, a `RANGE` offset needs exactly one
//! ORDER BY column and an `in_range` support function for that column's type and the offset's
//! type (`date` with `interval`, `numeric` with `numeric`, not `numeric` with `float8`).

use std::ops::Range;

use sqlparser::ast::{Expr, WindowFrameBound, WindowFrameUnits, WindowSpec};
use sqlparser::parser::Parser;

use crate::ctx::Ctx;
use crate::expr::{Fit, Typed, expect, expr, settle};
use crate::scope::Scope;
use crate::types::{base, builtin, display, implicit, written};
use qail_schema::snapshot::TypeRef;

/// Checks `spec`'s frame; `order` is its ORDER BY, typed. A window that names another one
/// (`OVER (w ROWS …)`) and has no ORDER BY of its own takes that window's: left unchecked.
pub(crate) fn check(
    cx: &mut Ctx,
    sc: &Scope,
    spec: &WindowSpec,
    order: &[Typed],
    range: Range<usize>,
) {
    let Some(frame) = &spec.window_frame else {
        return;
    };
    if spec.window_name.is_some() && order.is_empty() {
        return;
    }
    let offsets: Vec<&Expr> = std::iter::once(&frame.start_bound)
        .chain(frame.end_bound.as_ref())
        .filter_map(|b| match b {
            WindowFrameBound::Preceding(Some(e)) | WindowFrameBound::Following(Some(e)) => {
                Some(e.as_ref())
            }
            _ => None,
        })
        .collect();
    match frame.units {
        WindowFrameUnits::Groups if order.is_empty() => cx.error(
            range,
            "GROUPS mode requires an ORDER BY clause",
            Some("add ORDER BY to the window".into()),
        ),
        WindowFrameUnits::Range if !offsets.is_empty() && order.len() != 1 => cx.error(
            range,
            "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
            Some("order the window by one column, or use ROWS or GROUPS".into()),
        ),
        WindowFrameUnits::Range => {
            let Some(sort) = order.first().and_then(Typed::arg) else {
                return;
            };
            let sort = base(sort, cx.snap);
            for offset in offsets {
                let (range, by) = match quoted(cx, offset) {
                    Some(Some(cast)) => (cx.range(offset), cast),
                    // Note: an untyped offset ('1 day', $1) takes the support function's type.
                    Some(None) => continue,
                    None => {
                        let mut t = expr(cx, sc, offset);
                        match t.arg() {
                            Some(by) => (t.range.clone(), by.clone()),
                            None => {
                                if let Some(step) = step_type(&sort) {
                                    settle(cx, &mut t, &step);
                                }
                                continue;
                            }
                        }
                    }
                };
                let by = &by;
                if !supported(cx, &sort, by) {
                    cx.error(
                        range,
                        format!(
                            "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {} and offset type {}",
                            display(&sort),
                            display(by)
                        ),
                        Some(
                            "give the offset the type the ORDER BY column steps by (an interval for dates and times, the column's own type for numbers)"
                                .into(),
                        ),
                    );
                }
            }
        }
        // Note: a ROWS or GROUPS offset counts rows or peer groups: a bigint.
        WindowFrameUnits::Rows | WindowFrameUnits::Groups => {
            for offset in offsets {
                expect(
                    cx,
                    sc,
                    offset,
                    &builtin("int8"),
                    Fit::Implicit,
                    "a window frame offset",
                );
            }
        }
    }
}

/// The type an untyped RANGE offset (`$1 PRECEDING`) takes for a sort key of type `sort`:
/// the offset type of its `in_range` support (the key's own type for integers and numeric,
/// `double precision` for floats, `interval` for dates and times).
fn step_type(sort: &TypeRef) -> Option<TypeRef> {
    if sort.array_dims > 0 || sort.schema != "pg_catalog" {
        return None;
    }
    match sort.name.as_str() {
        "int2" | "int4" | "int8" | "numeric" => Some(sort.clone()),
        "float4" | "float8" => Some(builtin("float8")),
        "date" | "time" | "timetz" | "timestamp" | "timestamptz" => Some(builtin("interval")),
        _ => None,
    }
}

/// A quoted offset (`'1 day'`, `'inf'`, `'1 year'::interval`), which the SQL parser reads as an
/// interval literal (the cast removed before parsing): `Some` of the type of its cast, if it
/// has one; `None` when the offset is not quoted.
fn quoted(cx: &mut Ctx, offset: &Expr) -> Option<Option<TypeRef>> {
    let Expr::Interval(i) = offset else {
        return None;
    };
    if i.leading_field.is_some() || !matches!(i.value.as_ref(), Expr::Value(_)) {
        return None;
    }
    let after = cx.sql.get(cx.range(offset).end..)?.trim_start();
    let Some(cast) = after.strip_prefix("::") else {
        return Some(None);
    };
    let upper = cast.to_ascii_uppercase();
    let end = ["PRECEDING", "FOLLOWING"]
        .iter()
        .filter_map(|w| upper.find(w))
        .min()
        .unwrap_or(cast.len());
    let written = Parser::new(&crate::dialect::Postgres::default())
        .try_with_sql(&cast[..end])
        .and_then(|mut p| p.parse_data_type())
        .ok()?;
    Some(written::resolve(cx, &written))
}

/// Whether an `in_range(sort, sort, offset-type, bool, bool)` support function takes an
/// offset of type `by`.
fn supported(cx: &Ctx, sort: &TypeRef, by: &TypeRef) -> bool {
    if sort.schema != "pg_catalog" || sort.array_dims > 0 {
        return false;
    }
    qail_catalog::functions("in_range")
        .iter()
        .filter(|f| f.args.first() == Some(&sort.name.as_str()))
        .any(|f| {
            f.args
                .get(2)
                .is_some_and(|o| implicit(by, &builtin(o), cx.snap))
        })
}

#[cfg(test)]
mod tests {
    fn refused(sql: &str) -> Option<String> {
        let ddl = "CREATE TABLE e (n numeric, d date, i int4, s text);".to_owned();
        let (snap, _) = qail_schema::ddl::from_sql(&[("e.sql".to_owned(), ddl)]);
        match crate::analyze(sql, &snap) {
            Ok(_) => None,
            Err(d) => Some(d[0].message.clone()),
        }
    }

    #[test]
    fn window_frames_postgresql_refuses_are_refused() {
        let cases = [
            (
                "SELECT sum(i) OVER (PARTITION BY i RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM e",
                "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
            ),
            (
                "SELECT sum(i) OVER (ORDER BY d, i RANGE BETWEEN '1 year'::interval PRECEDING AND CURRENT ROW) FROM e",
                "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
            ),
            (
                "SELECT sum(i) OVER (ORDER BY d RANGE BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM e",
                "RANGE with offset PRECEDING/FOLLOWING is not supported for column type date and offset type integer",
            ),
            (
                "SELECT sum(i) OVER w FROM e WINDOW w AS (ORDER BY n RANGE BETWEEN 1 PRECEDING AND 1.1::float8 FOLLOWING)",
                "RANGE with offset PRECEDING/FOLLOWING is not supported for column type numeric and offset type double precision",
            ),
            (
                "SELECT sum(i) OVER (ORDER BY s RANGE BETWEEN '1 year'::interval PRECEDING AND CURRENT ROW) FROM e",
                "RANGE with offset PRECEDING/FOLLOWING is not supported for column type text and offset type interval",
            ),
            (
                "SELECT sum(i) OVER (PARTITION BY i GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM e",
                "GROUPS mode requires an ORDER BY clause",
            ),
            (
                "SELECT count(*) OVER w FROM e WINDOW w AS (ORDER BY i), w AS (ORDER BY i)",
                "window \"w\" is already defined",
            ),
            (
                "SELECT count() OVER () FROM e",
                "count(*) must be used to call a parameterless aggregate function",
            ),
            (
                "DELETE FROM e RETURNING rank() OVER (ORDER BY i)",
                "window functions are not allowed in RETURNING",
            ),
            (
                "SELECT rank() OVER (ORDER BY 1), count(*) FROM e GROUP BY 1",
                "window functions are not allowed in GROUP BY",
            ),
        ];
        for (sql, message) in cases {
            assert_eq!(refused(sql).as_deref(), Some(message), "{sql}");
        }
        for sql in [
            "SELECT sum(i) OVER (ORDER BY d RANGE BETWEEN '1 year' PRECEDING AND '2 years'::interval FOLLOWING) FROM e",
            "SELECT sum(i) OVER (ORDER BY i RANGE BETWEEN 1 PRECEDING AND 2::int8 FOLLOWING) FROM e",
            "SELECT sum(i) OVER (ORDER BY n RANGE BETWEEN 1 PRECEDING AND 1.5 FOLLOWING) FROM e",
            "SELECT sum(i) OVER (PARTITION BY i ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM e",
            "SELECT sum(i) OVER (ORDER BY n RANGE BETWEEN 'inf' PRECEDING AND 'NaN' FOLLOWING) FROM e",
            "SELECT sum(i) OVER (PARTITION BY i RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM e",
            "SELECT sum(i) OVER (w ROWS 1 PRECEDING) FROM e WINDOW w AS (ORDER BY i)",
        ] {
            assert_eq!(refused(sql), None, "{sql}");
        }
    }
}
