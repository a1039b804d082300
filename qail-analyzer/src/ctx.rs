//! The analysis context: the snapshot, the parameters seen so far, collected diagnostics.

use std::ops::Range;

use sqlparser::ast::{Expr, Ident, Spanned};

use crate::diag::{Diagnostic, LineIndex};
use crate::types::{display, sql_name};
use crate::{Analysis, OutputColumn, Param, StatementKind};
use qail_schema::snapshot::{Snapshot, TypeRef};

/// What is known about one `$n`.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    pub(crate) ty: Option<TypeRef>,
    pub(crate) nullable: bool,
    /// Where it first appears.
    pub(crate) range: Option<Range<usize>>,
    /// The NOT NULL column it is the value of, in an INSERT or UPDATE.
    pub(crate) column: Option<String>,
}

/// A statement's result shape, produced by the statement analyzers.
pub(crate) struct Shape {
    pub(crate) kind: StatementKind,
    pub(crate) columns: Vec<OutputColumn>,
    pub(crate) returns_rows: bool,
}

pub(crate) struct Ctx<'a> {
    pub(crate) sql: &'a str,
    pub(crate) snap: &'a Snapshot,
    /// The PostgreSQL major versions the query must run on ([`Snapshot::target`]).
    pub(crate) target: qail_catalog::Versions,
    lines: LineIndex<'a>,
    pub(crate) params: Vec<Slot>,
    diags: Vec<Diagnostic>,
    /// Byte offsets of call arguments written after `VARIADIC`.
    pub(crate) variadic: Vec<usize>,
    /// Byte offsets of UPDATE SET targets written with a subscript: their values are elements.
    pub(crate) element_targets: Vec<usize>,
    /// Byte offsets of UPDATE SET targets subscripted by a string literal (a jsonb key).
    pub(crate) keyed_targets: Vec<usize>,
    /// Byte ranges of the `IS [NOT] JSON …` predicates, parsed as null tests.
    pub(crate) json_predicates: Vec<Range<usize>>,
    /// The index predicates of `ON CONFLICT (…) WHERE …` the pre-pass removed, in order; each
    /// INSERT's ON CONFLICT takes the next one.
    pub(crate) conflict_predicates: std::collections::VecDeque<Range<usize>>,
    /// The OVERRIDING clauses the pre-pass removed from INSERTs: where, and whether SYSTEM.
    pub(crate) overriding: Vec<(Range<usize>, bool)>,
    /// How many queries and statements enclose the one being read (0 at the statement's
    /// top: only there may WITH hold a data-modifying statement).
    pub(crate) depth: usize,
    /// Whether the data-modifying statement of a WITH query is being read (its rules are
    /// checked when it finishes, which clears the flag).
    pub(crate) in_with: bool,
    /// Whether a MERGE's RETURNING list is being read (`merge_action()` is valid there only).
    pub(crate) merge_returning: bool,
    /// The clauses blanked before parsing, read by the analyzer itself.
    pub(crate) aside: crate::set_aside::SetAside,
    /// Whether the statement may change session state ([`Analysis::changes_session`]).
    pub(crate) changes_session: bool,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(sql: &'a str, snap: &'a Snapshot, target: qail_catalog::Versions) -> Self {
        Self {
            sql,
            snap,
            target,
            lines: LineIndex::new(sql),
            params: Vec::new(),
            diags: Vec::new(),
            variadic: Vec::new(),
            element_targets: Vec::new(),
            keyed_targets: Vec::new(),
            json_predicates: Vec::new(),
            conflict_predicates: std::collections::VecDeque::new(),
            overriding: Vec::new(),
            depth: 0,
            in_with: false,
            merge_returning: false,
            aside: crate::set_aside::SetAside::default(),
            changes_session: false,
        }
    }

    /// Byte range of an AST node; the whole statement when sqlparser kept no span.
    pub(crate) fn range<T: Spanned + 'static>(&self, node: &T) -> Range<usize> {
        let range = self.lines.range(node.span()).unwrap_or(0..self.sql.len());
        let any: &dyn std::any::Any = node;
        match any
            .downcast_ref::<Expr>()
            .or_else(|| any.downcast_ref::<Box<Expr>>().map(AsRef::as_ref))
        {
            Some(e) => self.expr_range(e, range),
            None => range,
        }
    }

    /// Note: sqlparser's span of a row constructor `(a, b)` leaves its parentheses out, and
    /// that of `x::type` the type; both are taken in, so a caret covers the expression.
    fn expr_range(&self, e: &Expr, range: Range<usize>) -> Range<usize> {
        match e {
            Expr::Tuple(_) => self.parenthesized(range),
            Expr::Cast {
                kind: sqlparser::ast::CastKind::DoubleColon,
                expr: inner,
                ..
            } => {
                let inner = self.range(inner.as_ref());
                let start = inner.start.min(range.start);
                start..self.cast_type_end(inner.end.max(range.end))
            }
            _ => range,
        }
    }

    /// The end of `::type` written at `at` (whitespace allowed before it): a name, possibly
    /// qualified or quoted, with a modifier and array brackets; `at` when none is there.
    fn cast_type_end(&self, at: usize) -> usize {
        let b = self.sql.as_bytes();
        let mut j = at;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        if !self.sql[j..].starts_with("::") {
            return at;
        }
        j += 2;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        let start = j;
        while j < b.len()
            && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'.' | b'"') || b[j] >= 0x80)
        {
            j += 1;
        }
        if j == start {
            return at;
        }
        if b.get(j) == Some(&b'(')
            && let Some(close) = self.sql[j..].find(')')
        {
            j += close + 1;
        }
        while self.sql[j..].starts_with("[]") {
            j += 2;
        }
        j
    }

    /// The expression at `range` of the SQL, parsed with everything else blanked so its
    /// ranges stay true: a piece the pre-pass removed (a subscript of a SET target, a
    /// TABLESAMPLE argument, an ON CONFLICT index predicate).
    pub(crate) fn parse_aside(&self, range: &Range<usize>) -> Result<Expr, String> {
        crate::set_aside::parser_over(self.sql, range.clone())
            .and_then(|mut p| p.parse_expr())
            .map_err(|e| e.to_string())
    }

    /// `range` widened to the parentheses around it, when only whitespace separates them.
    pub(crate) fn parenthesized(&self, range: Range<usize>) -> Range<usize> {
        let b = self.sql.as_bytes();
        let before = self.sql[..range.start].trim_end().len();
        let after =
            range.end + (self.sql[range.end..].len() - self.sql[range.end..].trim_start().len());
        if before > 0 && b[before - 1] == b'(' && b.get(after) == Some(&b')') {
            before - 1..after + 1
        } else {
            range
        }
    }

    pub(crate) fn ident_range(&self, ident: &Ident) -> Range<usize> {
        self.lines.range(ident.span).unwrap_or(0..self.sql.len())
    }

    pub(crate) fn error(
        &mut self,
        range: Range<usize>,
        message: impl Into<String>,
        hint: Option<String>,
    ) {
        self.diags.push(Diagnostic {
            message: message.into(),
            range,
            hint,
        });
    }

    /// How many diagnostics have been reported so far.
    pub(crate) fn error_count(&self) -> usize {
        self.diags.len()
    }

    /// Records a use of `$n` (1-based); returns its type if already fixed.
    pub(crate) fn param_use(&mut self, n: usize, range: Range<usize>) -> Option<TypeRef> {
        if self.params.len() < n {
            self.params.resize_with(n, Slot::default);
        }
        let slot = &mut self.params[n - 1];
        slot.range.get_or_insert(range);
        slot.ty.clone()
    }

    /// Fixes the type of `$n` from its context; a second, different type is an error
    /// (PostgreSQL: "inconsistent types deduced for parameter").
    pub(crate) fn bind_param(&mut self, n: usize, ty: &TypeRef, at: Range<usize>) {
        let Some(slot) = self.params.get_mut(n - 1) else {
            return;
        };
        match &slot.ty {
            None => slot.ty = Some(ty.clone()),
            Some(have) if have == ty => {}
            Some(have) => {
                let msg = format!(
                    "parameter ${n} is used as {} here but as {} elsewhere",
                    display(ty),
                    display(have)
                );
                let hint = format!(
                    "use a separate parameter, or cast every use: ${n}::{}",
                    sql_name(have)
                );
                self.error(at, msg, Some(hint));
            }
        }
    }

    /// Marks `$n` as a place where NULL is meaningful.
    pub(crate) fn param_nullable(&mut self, n: usize) {
        if let Some(slot) = self.params.get_mut(n - 1) {
            slot.nullable = true;
        }
    }

    /// Records that `$n` is the value of the NOT NULL column `name` (INSERT, UPDATE … SET).
    pub(crate) fn param_fills(&mut self, n: usize, name: &str) {
        if let Some(slot) = self.params.get_mut(n - 1) {
            slot.column.get_or_insert_with(|| name.to_owned());
        }
    }

    /// Reports a type mismatch between an expression and the type its context requires.
    pub(crate) fn mismatch(
        &mut self,
        range: Range<usize>,
        what: &str,
        want: &TypeRef,
        got: &TypeRef,
    ) {
        self.error(
            range,
            format!(
                "{what} is of type {} but expression is of type {}",
                display(want),
                display(got)
            ),
            Some(format!("add a cast: ::{}", sql_name(want))),
        );
    }

    pub(crate) fn finish(mut self, shape: Option<Shape>) -> Result<Analysis, Vec<Diagnostic>> {
        let mut params = Vec::with_capacity(self.params.len());
        // Note: after another error, an untyped or unused parameter is usually its echo.
        let quiet = !self.diags.is_empty();
        for (i, slot) in std::mem::take(&mut self.params).into_iter().enumerate() {
            let n = i + 1;
            match (slot.ty, slot.range) {
                (Some(ty), _) => params.push(Param {
                    ty,
                    nullable: slot.nullable,
                    column: slot.column,
                }),
                _ if quiet => {}
                (None, Some(range)) => self.error(
                    range,
                    format!("could not determine the type of parameter ${n}"),
                    Some(format!("add a cast, e.g. ${n}::text or ${n}::int4")),
                ),
                (None, None) => self.error(
                    0..self.sql.len(),
                    format!("parameter ${n} is never used"),
                    Some(format!(
                        "number the parameters $1..${} without gaps",
                        self.params.len().max(n)
                    )),
                ),
            }
        }
        match shape {
            Some(shape) if self.diags.is_empty() => Ok(Analysis {
                params,
                columns: shape.columns,
                returns_rows: shape.returns_rows,
                kind: shape.kind,
                changes_session: self.changes_session,
            }),
            _ if self.diags.is_empty() => Err(vec![Diagnostic {
                message: "statement could not be analyzed".into(),
                range: 0..self.sql.len(),
                hint: Some("report this query to the qail project".into()),
            }]),
            _ => {
                self.diags.sort_by_key(|d| d.range.start);
                Err(self.diags)
            }
        }
    }
}
