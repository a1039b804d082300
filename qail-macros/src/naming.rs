//! Names: Rust field identifiers from column names, `rename_all` rules, "did you mean".

use proc_macro2::{Ident, Span};

/// A Rust field identifier for column `name`: lower snake case, with anything that is not a
/// letter, digit or underscore turned into `_`; a keyword becomes a raw identifier.
/// `None` when nothing usable is left (`?column?`, `"!!"`, a leading digit).
pub(crate) fn field_ident(name: &str, span: Span) -> Option<Ident> {
    let snake = to_snake(name);
    let trimmed = snake.trim_matches('_');
    if trimmed.is_empty() || trimmed == "column" && name.contains('?') {
        return None;
    }
    if snake.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if matches!(snake.as_str(), "self" | "super" | "crate" | "_") {
        return None;
    }
    // Note: a keyword test, not `syn::parse_str`: inside the compiler, parsing a string
    // registers it as one more source file, once per column of every query.
    if KEYWORDS.contains(&snake.as_str()) {
        Some(Ident::new_raw(&snake, span))
    } else {
        Some(Ident::new(&snake, span))
    }
}

/// Rust's strict and reserved keywords (edition 2024) that a snake-case name can spell; they
/// need the raw form `r#…`.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];

/// `CamelCase`, `Mixed Case`, `kebab-case` → `snake_case`.
pub(crate) fn to_snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower_or_digit = false;
    for c in name.chars() {
        if c.is_uppercase() {
            if prev_lower_or_digit {
                out.push('_');
            }
            out.extend(c.to_lowercase());
            prev_lower_or_digit = false;
        } else if c.is_alphanumeric() && c.is_ascii() || c == '_' {
            out.push(c);
            prev_lower_or_digit = c != '_';
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            prev_lower_or_digit = false;
        }
    }
    out
}

/// Words of a Rust identifier (`HappyDays` → `happy`, `days`; `happy_days` likewise).
fn words(ident: &str) -> Vec<String> {
    to_snake(ident)
        .split('_')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The `rename_all` rules serde users know.
pub(crate) const RENAME_RULES: &[&str] = &[
    "lowercase",
    "UPPERCASE",
    "PascalCase",
    "camelCase",
    "snake_case",
    "SCREAMING_SNAKE_CASE",
    "kebab-case",
    "SCREAMING-KEBAB-CASE",
];

/// Applies a `rename_all` rule to a variant or field name; `None` for an unknown rule.
pub(crate) fn rename(rule: &str, ident: &str) -> Option<String> {
    let w = words(ident);
    Some(match rule {
        "lowercase" => ident.to_lowercase(),
        "UPPERCASE" => ident.to_uppercase(),
        "PascalCase" => w.iter().map(|s| capitalize(s)).collect(),
        "camelCase" => {
            let pascal: String = w.iter().map(|s| capitalize(s)).collect();
            let mut chars = pascal.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_lowercase().chain(chars).collect()
            })
        }
        "snake_case" => w.join("_"),
        "SCREAMING_SNAKE_CASE" => w.join("_").to_uppercase(),
        "kebab-case" => w.join("-"),
        "SCREAMING-KEBAB-CASE" => w.join("-").to_uppercase(),
        _ => return None,
    })
}

/// The candidate closest to `name` if it is a plausible typo.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = name.chars().count() / 3 + 1;
    candidates
        .into_iter()
        .map(|c| (distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = if ca == *cb {
                diag
            } else {
                1 + diag.min(up).min(row[j])
            };
            diag = up;
        }
    }
    row[b.len()]
}

/// `origin_harbor` → `OriginHarbor`; characters that cannot be in an identifier are dropped.
pub(crate) fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        if c.is_alphanumeric() {
            if upper {
                out.extend(c.to_uppercase());
            } else {
                out.push(c);
            }
            upper = false;
        } else {
            upper = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ident(name: &str) -> Option<String> {
        field_ident(name, Span::call_site()).map(|i| i.to_string())
    }

    #[test]
    fn column_names_become_snake_case_identifiers() {
        assert_eq!(ident("name").as_deref(), Some("name"));
        assert_eq!(ident("Id").as_deref(), Some("id"));
        assert_eq!(ident("createdAt").as_deref(), Some("created_at"));
        assert_eq!(ident("Audit Event").as_deref(), Some("audit_event"));
        assert_eq!(ident("type").as_deref(), Some("r#type"));
        assert_eq!(
            ident("gen").as_deref(),
            Some("r#gen"),
            "reserved in edition 2024"
        );
        assert_eq!(
            ident("union").as_deref(),
            Some("union"),
            "a weak keyword is a plain name"
        );
        assert_eq!(ident("seats-left").as_deref(), Some("seats_left"));
    }

    #[test]
    fn unusable_names_are_refused() {
        assert_eq!(ident("?column?"), None);
        assert_eq!(ident("1st"), None);
        assert_eq!(ident("!!"), None);
        assert_eq!(ident("self"), None);
    }

    #[test]
    fn rename_rules() {
        assert_eq!(rename("snake_case", "HappyDays").unwrap(), "happy_days");
        assert_eq!(rename("lowercase", "HappyDays").unwrap(), "happydays");
        assert_eq!(
            rename("SCREAMING_SNAKE_CASE", "HappyDays").unwrap(),
            "HAPPY_DAYS"
        );
        assert_eq!(rename("kebab-case", "HappyDays").unwrap(), "happy-days");
        assert_eq!(rename("camelCase", "HappyDays").unwrap(), "happyDays");
        assert_eq!(rename("PascalCase", "happy_days").unwrap(), "HappyDays");
        assert_eq!(rename("Title Case", "X"), None);
    }

    #[test]
    fn suggestions_are_close() {
        assert_eq!(closest("nme", ["id", "name"]), Some("name"));
        assert_eq!(closest("zzzz", ["id", "name"]), None);
    }
}
