//! Checking a `qail!` invocation: captures, the analyzer, argument counts. Diagnostics are
//! rendered against the SQL as the user wrote it (capture offsets mapped back).

use qail_schema::Snapshot;
use qail_schema::check::{Analysis, Diagnostic, OutputColumn, render};
use syn::spanned::Spanned;

use crate::ast::{QueryInput, Rewritten, rewrite_captures};

/// A checked invocation.
pub(crate) struct Checked {
    /// The analysis; its columns' ranges are mapped back to the SQL as written, so that
    /// [`column_error`] can show them.
    pub(crate) analysis: Analysis,
    pub(crate) rewritten: Rewritten,
}

/// Rewrites captures, analyzes the SQL and checks the argument count.
pub(crate) fn analyze(input: &QueryInput, snapshot: &Snapshot) -> syn::Result<Checked> {
    let span = input.sql.span();
    let original = input.sql.value();
    let rewritten = rewrite_captures(&original, input.args.len(), span)
        .map_err(|m| syn::Error::new(span, m))?;
    if !rewritten.captures.is_empty() && rewritten.max_positional > input.args.len() {
        return Err(syn::Error::new(
            span,
            format!(
                "the SQL uses ${} but only {} argument(s) follow it, and `{{name}}` captures are numbered after the arguments: pass every positional argument, or use captures only",
                rewritten.max_positional,
                input.args.len()
            ),
        ));
    }
    let mut analysis = qail_schema::check::check(&rewritten.sql, snapshot)
        .map_err(|diagnostics| diagnostics_error(input, &original, &rewritten, &diagnostics))?;
    for col in &mut analysis.columns {
        col.range = rewritten.original_range(&col.range);
    }
    check_count(input, &rewritten, &analysis)?;
    Ok(Checked {
        analysis,
        rewritten,
    })
}

/// One error per diagnostic, each showing the original SQL with a caret line.
fn diagnostics_error(
    input: &QueryInput,
    original: &str,
    rewritten: &Rewritten,
    diagnostics: &[Diagnostic],
) -> syn::Error {
    let mut errors = diagnostics.iter().map(|d| {
        let mapped = Diagnostic {
            range: rewritten.original_range(&d.range),
            ..d.clone()
        };
        rendered(input, original, &mapped)
    });
    let mut first = errors.next().unwrap_or_else(|| {
        syn::Error::new(
            input.sql.span(),
            "the SQL was rejected without a reason: report this as a qail bug",
        )
    });
    for e in errors {
        first.combine(e);
    }
    first
}

/// An error about a result column: `message`, then the SQL as written with a caret line under
/// the column's item and `fix` after it.
pub(crate) fn column_error(
    input: &QueryInput,
    col: &OutputColumn,
    message: impl Into<String>,
    fix: impl Into<String>,
) -> syn::Error {
    let diagnostic = Diagnostic {
        message: message.into(),
        range: col.range.clone(),
        hint: Some(fix.into()),
    };
    rendered(input, &input.sql.value(), &diagnostic)
}

/// A diagnostic rendered against `sql` (the SQL as written), as an error at the literal.
fn rendered(input: &QueryInput, sql: &str, diagnostic: &Diagnostic) -> syn::Error {
    let text = render(sql, diagnostic);
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    syn::Error::new(input.sql.span(), text)
}

fn check_count(input: &QueryInput, rewritten: &Rewritten, analysis: &Analysis) -> syn::Result<()> {
    let given = input.args.len();
    let wanted = analysis.params.len() - rewritten.captures.len().min(analysis.params.len());
    if given > wanted {
        let extra = &input.args[wanted];
        let message = if wanted == 0 {
            "this argument has no `$n` placeholder: the SQL takes no positional parameters; remove it, or use it as `$1` in the SQL".to_owned()
        } else {
            format!(
                "too many arguments: the SQL uses ${wanted} as its last placeholder, so it takes {wanted} argument(s); remove this one, or use it as ${} in the SQL",
                wanted + 1
            )
        };
        return Err(syn::Error::new(extra.span(), message));
    }
    if given < wanted {
        return Err(syn::Error::new(
            input.sql.span(),
            format!(
                "the SQL uses $1…${wanted} but {given} argument(s) were given: pass one argument per placeholder after the SQL, e.g. qail!(\"…\", {})",
                (1..=wanted)
                    .map(|n| format!("arg{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(())
}
