//! Loose comparison of SQL expressions printed by different tools.

/// Type names that continue with more words after `::` (`::character varying`).
const MULTIWORD: &[(&str, &[&str])] = &[
    ("character", &["varying"]),
    ("double", &["precision"]),
    ("bit", &["varying"]),
    ("timestamp", &["with", "without", "time", "zone"]),
    ("time", &["with", "without", "time", "zone"]),
];

/// Normalizes an expression so that PostgreSQL's `pg_get_expr` output and the text written in
/// a DDL script compare equal when they mean the same: outside quoted literals and identifiers
/// it lower-cases, drops whitespace, parentheses and `::type` casts, and it unquotes string
/// literals that hold a plain number (`'-1'::integer` → `-1`).
///
/// ```
/// use qail_schema::diff::loose_expr;
/// assert_eq!(loose_expr("'NO'::bpchar"), loose_expr("'NO'"));
/// assert_eq!(loose_expr("'-1'::integer"), loose_expr("-1"));
/// assert_eq!(loose_expr("(k * 2)"), loose_expr("k*2"));
/// assert_ne!(loose_expr("'a'"), loose_expr("'A'"));
/// ```
pub fn loose_expr(expr: &str) -> String {
    let chars: Vec<char> = expr.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '\'' | '"' => {
                let end = quoted_end(&chars, i, c);
                let lit: String = chars[i..end].iter().collect();
                let inner = lit.get(1..lit.len().saturating_sub(1)).unwrap_or("");
                if c == '\'' && !inner.is_empty() && inner.parse::<f64>().is_ok() {
                    out.push_str(inner);
                } else {
                    out.push_str(&lit);
                }
                i = end;
            }
            ':' if chars.get(i + 1) == Some(&':') => i = skip_cast(&chars, i + 2),
            '(' | ')' => i += 1,
            c if c.is_whitespace() => i += 1,
            c => {
                out.extend(c.to_lowercase());
                i += 1;
            }
        }
    }
    out
}

/// Index just past the literal starting at `start` with quote `q` (doubled quotes escape).
fn quoted_end(chars: &[char], start: usize, q: char) -> usize {
    let mut i = start + 1;
    while i < chars.len() {
        if chars[i] == q {
            if chars.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    chars.len()
}

/// Index past a type name after `::` (words, a schema, quotes, `[]`, a modifier list).
fn skip_cast(chars: &[char], mut i: usize) -> usize {
    let word = |i: &mut usize| -> String {
        while chars.get(*i).is_some_and(|c| c.is_whitespace()) {
            *i += 1;
        }
        let start = *i;
        while chars
            .get(*i)
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '"'))
        {
            *i += 1;
        }
        chars[start..*i].iter().collect::<String>().to_lowercase()
    };
    let first = word(&mut i);
    if let Some((_, more)) = MULTIWORD.iter().find(|(w, _)| *w == first) {
        loop {
            let save = i;
            let w = word(&mut i);
            if w.is_empty() || !more.contains(&w.as_str()) {
                i = save;
                break;
            }
        }
    }
    // Array suffixes `[]` and `[3]`; a lone `]` closes the expression's own brackets
    // (`ARRAY['read'::text]`).
    while chars.get(i) == Some(&'[') {
        let mut j = i + 1;
        while chars.get(j).is_some_and(char::is_ascii_digit) {
            j += 1;
        }
        if chars.get(j) != Some(&']') {
            break;
        }
        i = j + 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_and_spacing_are_ignored() {
        assert_eq!(loose_expr("'x'::character varying"), "'x'");
        assert_eq!(loose_expr("now()::timestamp with time zone"), "now");
        assert_eq!(
            loose_expr("nextval('a_id_seq'::regclass)"),
            "nextval'a_id_seq'"
        );
        assert_eq!(loose_expr("nextval('a_id_seq')"), "nextval'a_id_seq'");
        assert_eq!(loose_expr("ARRAY[]::text[]"), "array[]");
        assert_eq!(loose_expr("'{}'::integer[]"), "'{}'");
        assert_eq!(
            loose_expr("ARRAY['read'::text]"),
            loose_expr("ARRAY['read']")
        );
    }

    #[test]
    fn literal_content_is_kept() {
        assert_eq!(loose_expr("'It''s'"), "'It''s'");
        assert_ne!(loose_expr("'a b'"), loose_expr("'ab'"));
        assert_ne!(loose_expr("1"), loose_expr("2"));
    }
}
