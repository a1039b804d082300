//! Checking a `qail!` invocation: captures, the analyzer, argument counts. Diagnostics are
//! rendered against the SQL as the user wrote it (capture offsets mapped back).

use qail_analyzer::{Analysis, Diagnostic, OutputColumn, render};
use syn::LitStr;
use syn::spanned::Spanned;

use qail_analyzer::capture::bulk_columns;

use crate::ast::{ChoiceSpec, QueryInput, QuerySql, rewrite};
use crate::cache;
use crate::snapshot::Loaded;

/// A checked invocation.
pub(crate) struct Checked {
    /// The analysis; its columns' ranges are mapped back to the SQL as written, so that
    /// [`column_error`] can show them.
    pub(crate) analysis: Analysis,
    pub(crate) rewritten: QuerySql,
}

/// Rewrites captures, analyzes the SQL and checks the argument count.
pub(crate) fn analyze(input: &QueryInput, loaded: &Loaded) -> syn::Result<Checked> {
    let snapshot = &*loaded.snapshot;
    let span = input.sql.span();
    let original = input.sql.value();
    let specs = choice_specs(input);
    let selected = vec![0; specs.len()];
    let bulk = |before: &str| bulk_columns(before, snapshot);
    let rewritten = rewrite(&original, input.args.len(), span, &specs, &selected, &bulk)
        .map_err(|m| syn::Error::new(span, m))?;
    for (spec, choice) in specs.iter().zip(&input.choices) {
        if !rewritten
            .pieces
            .iter()
            .any(|p| matches!(p, crate::ast::Piece::Choice(c) if specs[*c].name == spec.name))
        {
            return Err(syn::Error::new(
                choice.name.span(),
                format!(
                    "the sort choice `{}` is not used in the SQL: write `{{{}}}` where its SQL goes, e.g. `ORDER BY {{{}}}`",
                    spec.name, spec.name, spec.name
                ),
            ));
        }
    }
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
    let mut analysis = cache::check(&rewritten.sql, snapshot, loaded.hash)
        .map_err(|diagnostics| diagnostics_error(input, &original, &rewritten, &diagnostics))?;
    for col in &mut analysis.columns {
        col.range = rewritten.original_range(&col.range);
    }
    check_count(input, &rewritten, &analysis)?;
    check_variants(input, &original, &rewritten, &specs, loaded, &mut analysis)?;
    Ok(Checked {
        analysis,
        rewritten,
    })
}

/// The sort choices' names and alternatives.
fn choice_specs(input: &QueryInput) -> Vec<ChoiceSpec> {
    input
        .choices
        .iter()
        .map(|c| ChoiceSpec {
            name: c.name.to_string(),
            texts: c.texts.iter().map(LitStr::value).collect(),
        })
        .collect()
}

/// Up to this many optional clauses every combination is analyzed; beyond, the full query,
/// each clause left out alone, and all of them left out (see [`check_variants`]).
const EXHAUSTIVE: usize = 4;

/// A combination other than the full query: the clauses left out and the alternative
/// selected for each choice.
struct Variant {
    left_out: Vec<usize>,
    selected: Vec<usize>,
}

/// Analyzes the other combinations of optional clauses and sort choices; each must be valid
/// and return the same columns (names and types) as the full query, whose columns become
/// nullable when any combination makes them so.
///
/// Cost: with up to [`EXHAUSTIVE`] clauses, every combination; beyond that, n + 1 analyses
/// (each clause left out alone, then all of them), plus one per extra alternative of each
/// choice. This covers every combination when the clauses are independent, as filters are:
/// a clause only adds a conjunct (or a LIMIT, an OFFSET), so leaving it out cannot change the
/// result columns or the type of another clause's parameters (every parameter is typed once,
/// in the full query, and bound with that type in every combination); what leaving out one
/// clause could break (a dangling `AND`, a `WHERE` with no condition) shows in its own
/// analysis, and leaving out all of them checks the base query.
fn check_variants(
    input: &QueryInput,
    original: &str,
    full: &QuerySql,
    specs: &[ChoiceSpec],
    loaded: &Loaded,
    analysis: &mut Analysis,
) -> syn::Result<()> {
    let (snapshot, snapshot_hash) = (&*loaded.snapshot, loaded.hash);
    let n = full.clauses.len();
    let base = vec![0; specs.len()];
    let mut variants: Vec<Variant> = Vec::new();
    if n <= EXHAUSTIVE {
        for mask in 1..(1usize << n) {
            let left_out = (0..n).filter(|i| mask & (1 << i) != 0).collect();
            variants.push(Variant {
                left_out,
                selected: base.clone(),
            });
        }
    } else {
        for i in 0..n {
            variants.push(Variant {
                left_out: vec![i],
                selected: base.clone(),
            });
        }
        variants.push(Variant {
            left_out: (0..n).collect(),
            selected: base.clone(),
        });
    }
    for (c, spec) in specs.iter().enumerate() {
        for alternative in 1..spec.texts.len() {
            let mut selected = base.clone();
            selected[c] = alternative;
            variants.push(Variant {
                left_out: Vec::new(),
                selected,
            });
        }
    }
    let span = input.sql.span();
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    for variant in &variants {
        let mut text = original.to_owned();
        for &i in variant.left_out.iter().rev() {
            text.replace_range(full.clauses[i].original.clone(), "");
        }
        let what = describe(input, original, full, variant);
        let bulk = |before: &str| bulk_columns(before, snapshot);
        let rewritten = rewrite(
            &text,
            input.args.len(),
            span,
            specs,
            &variant.selected,
            &bulk,
        )
        .map_err(|m| syn::Error::new(span, format!("{what}: {m}")))?;
        match cache::check(&rewritten.sql, snapshot, snapshot_hash) {
            Err(diagnostics) => {
                for d in &diagnostics {
                    let mapped = Diagnostic {
                        range: rewritten.original_range(&d.range),
                        message: format!("{what}: {}", d.message),
                        ..d.clone()
                    };
                    push(rendered(input, &text, &mapped));
                }
            }
            Ok(other) => {
                // Note: every sort choice's alternatives are analyzed here, the full query
                // holding only the first.
                analysis.changes_session |= other.changes_session;
                let same = other.columns.len() == analysis.columns.len()
                    && other
                        .columns
                        .iter()
                        .zip(&analysis.columns)
                        .all(|(a, b)| a.name == b.name && a.ty == b.ty);
                if !same {
                    let list = |cols: &[OutputColumn]| {
                        cols.iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    push(syn::Error::new(
                        span,
                        format!(
                            "{what}, the query returns other columns ({}) than with every clause ({}): optional clauses and sort choices may change the filter and the order, not the columns",
                            list(&other.columns),
                            list(&analysis.columns)
                        ),
                    ));
                    continue;
                }
                for (col, other) in analysis.columns.iter_mut().zip(&other.columns) {
                    if other.nullable && !col.nullable {
                        col.nullable = true;
                        col.why.push(format!("{what}: {}", other.why.join(", ")));
                    }
                }
            }
        }
    }
    errors.map_or(Ok(()), Err)
}

/// Names a combination for an error: the clauses left out (as written) and the choices made.
fn describe(input: &QueryInput, original: &str, full: &QuerySql, variant: &Variant) -> String {
    let mut parts = Vec::new();
    if !variant.left_out.is_empty() {
        let clauses: Vec<String> = variant
            .left_out
            .iter()
            .map(|&i| format!("`{}`", original[full.clauses[i].original.clone()].trim()))
            .collect();
        parts.push(format!(
            "with optional clause{} {} left out",
            if clauses.len() == 1 { "" } else { "s" },
            clauses.join(", ")
        ));
    }
    for (choice, &selected) in input.choices.iter().zip(&variant.selected) {
        if selected > 0 {
            let arm = &choice.matched.arms[selected];
            let pat = &arm.pat;
            parts.push(format!(
                "with sort choice `{}` = `{}`",
                choice.name,
                quote::quote!(#pat)
            ));
        }
    }
    parts.join(" and ")
}

/// One error per diagnostic, each showing the original SQL with a caret line.
fn diagnostics_error(
    input: &QueryInput,
    original: &str,
    rewritten: &QuerySql,
    diagnostics: &[Diagnostic],
) -> syn::Error {
    let mut errors = diagnostics.iter().map(|d| {
        let range = rewritten.original_range(&d.range);
        // Note: an error inside a sort choice's slot comes from its first arm, the one the
        // full query is analyzed with.
        let slot = rewritten
            .choice_slots
            .iter()
            .find(|(_, slot)| range.start >= slot.start && range.start < slot.end);
        let message = match slot.and_then(|(c, _)| input.choices.get(*c)) {
            Some(choice) => {
                let pat = &choice.matched.arms[0].pat;
                format!(
                    "with sort choice `{}` = `{}`: {}",
                    choice.name,
                    quote::quote!(#pat),
                    d.message
                )
            }
            None => d.message.clone(),
        };
        let mapped = Diagnostic {
            range,
            message,
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

fn check_count(input: &QueryInput, rewritten: &QuerySql, analysis: &Analysis) -> syn::Result<()> {
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
