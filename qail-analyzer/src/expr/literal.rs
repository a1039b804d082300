//! Validation of string literals against the type they resolve to: PostgreSQL converts
//! `'…'` when it parses the statement, so `uuid_col = 'abc'` or an unknown enum label fails
//! before any row is read. The analyzer reports the same mistakes at compile time.

mod array;

use crate::diag::did_you_mean;
use crate::types::scalar_name;
use qail_catalog::Versions;
use qail_schema::snapshot::{Snapshot, TypeRef, UserTypeKind};

/// Why `text` is not a valid literal of type `ty` (message, hint), if it is not, on every
/// version of `target`.
pub(crate) fn invalid(
    text: &str,
    ty: &TypeRef,
    snap: &Snapshot,
    target: Versions,
) -> Option<(String, String)> {
    if ty.array_dims > 0 {
        let delimiter = if ty.name == "box" { ';' } else { ',' };
        let strict = target.first().is_some_and(|v| v >= 17);
        let t = text.trim_start();
        return array::malformed(text, delimiter, strict).map(|why| {
            let hint = if t.starts_with('{') || t.starts_with('[') {
                format!(
                    "{why}: double-quote elements that hold braces, commas, quotes or spaces, or use ARRAY[…]"
                )
            } else {
                "write an array literal as '{a,b}', or use ARRAY[…]".to_string()
            };
            (format!("malformed array literal: \"{text}\""), hint)
        });
    }
    if let Some(UserTypeKind::Enum { labels }) = snap
        .types
        .iter()
        .find(|u| u.schema == ty.schema && u.name == ty.name)
        .map(|u| &u.kind)
    {
        if labels.iter().any(|l| l == text) {
            return None;
        }
        let hint = did_you_mean(text, labels.iter().map(String::as_str))
            .unwrap_or_else(|| format!("use one of: {}", labels.join(", ")));
        return Some((
            format!("invalid input value for enum {}: \"{text}\"", ty.name),
            hint,
        ));
    }
    let ok = match scalar_name(ty)? {
        "int2" => text.trim().parse::<i16>().is_ok(),
        "int4" => text.trim().parse::<i32>().is_ok(),
        "int8" => text.trim().parse::<i64>().is_ok(),
        "float4" | "float8" | "numeric" => numeric(text.trim()),
        "bool" => matches!(
            text.trim().to_ascii_lowercase().as_str(),
            "t" | "f" | "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0" | "y" | "n"
        ),
        "uuid" => uuid(text.trim()),
        "json" | "jsonb" => json(text),
        "bytea" => bytea(text),
        _ => true,
    };
    (!ok).then(|| {
        let name = crate::types::display(ty);
        (
            format!("invalid input syntax for type {name}: \"{text}\""),
            format!("write a valid {name} literal, or pass it as a parameter"),
        )
    })
}

fn numeric(s: &str) -> bool {
    s.parse::<f64>().is_ok()
        || matches!(
            s.to_ascii_lowercase().as_str(),
            "nan" | "infinity" | "-infinity"
        )
}

/// JSON text as PostgreSQL's parser takes it (a syntax check; numbers of any size). Nesting
/// deeper than the checker's own limit is given the benefit of the doubt.
fn json(s: &str) -> bool {
    match serde_json::from_str::<serde::de::IgnoredAny>(s) {
        Ok(_) => true,
        Err(e) => e.to_string().contains("recursion limit"),
    }
}

/// `\x` and pairs of hex digits (space between pairs), or the escape form: any text in which
/// a backslash starts `\\` or three octal digits.
fn bytea(s: &str) -> bool {
    if let Some(hex) = s.strip_prefix("\\x") {
        let digits: Vec<char> = hex.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        return digits.len().is_multiple_of(2)
            && digits.iter().all(char::is_ascii_hexdigit)
            && hex
                .split_ascii_whitespace()
                .all(|run| run.len().is_multiple_of(2));
    }
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            match b.get(i + 1..i + 4) {
                _ if b.get(i + 1) == Some(&b'\\') => i += 1,
                Some([b'0'..=b'3', b'0'..=b'7', b'0'..=b'7']) => i += 3,
                _ => return false,
            }
        }
        i += 1;
    }
    true
}

/// 32 hex digits, optionally in braces and with hyphens after any group of four.
fn uuid(s: &str) -> bool {
    let s = s
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(s);
    let digits: Vec<char> = s.chars().filter(|c| *c != '-').collect();
    digits.len() == 32
        && digits.iter().all(char::is_ascii_hexdigit)
        && !s.starts_with('-')
        && !s.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_literals_are_checked_like_the_server_does() {
        for ok in [
            "1e1000",
            " {\"a\": [1, 2.5, -0, null, true]} ",
            "\"\\u00e9\"",
            &"[".repeat(200)
                .chars()
                .chain("]".repeat(200).chars())
                .collect::<String>(),
        ] {
            assert!(json(ok), "{ok} is valid JSON");
        }
        for bad in [
            "",
            "01",
            "[1,2,]",
            "{\"abc\"}",
            "'x'",
            "true, false",
            "\"abc",
        ] {
            assert!(!json(bad), "{bad} is not JSON");
        }
    }
    use crate::types::builtin;

    #[test]
    fn builtin_literals() {
        let s = Snapshot::default();
        let invalid = |text: &str, ty: &TypeRef, s: &Snapshot| {
            invalid(text, ty, s, qail_schema::snapshot::DEFAULT_TARGET)
        };
        assert!(invalid("abc", &builtin("uuid"), &s).is_some());
        assert!(invalid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", &builtin("uuid"), &s).is_none());
        assert!(invalid("12", &builtin("int4"), &s).is_none());
        assert!(invalid("1.5", &builtin("int4"), &s).is_some());
        assert!(invalid("yes", &builtin("bool"), &s).is_none());
        assert!(invalid("anything", &builtin("text"), &s).is_none());
        assert!(invalid("2024-01-01", &builtin("date"), &s).is_none());
        for ok in ["\\xDeAdBeEf", "\\x de ad", "abc", "a\\\\b", "\\000\\377"] {
            assert!(invalid(ok, &builtin("bytea"), &s).is_none(), "{ok}");
        }
        for bad in [
            "\\xDeAdBeE",
            "\\xDeAdBeEx",
            "\\x d e",
            "De\\678dBeEf",
            "a\\b",
        ] {
            assert!(invalid(bad, &builtin("bytea"), &s).is_some(), "{bad}");
        }
    }

    #[test]
    fn malformed_literals_are_refused_with_the_servers_message() {
        let (mut snap, _) = qail_schema::ddl::from_sql(&[]);
        let refused = |sql: &str, snap: &Snapshot| match crate::analyze(sql, snap) {
            Ok(_) => None,
            Err(d) => Some(d[0].message.clone()),
        };
        assert_eq!(
            refused("SELECT '{1,{2}}'::int4[]", &snap).as_deref(),
            Some("malformed array literal: \"{1,{2}}\"")
        );
        assert_eq!(
            refused("SELECT $$''$$::jsonb", &snap).as_deref(),
            Some("invalid input syntax for type jsonb: \"''\"")
        );
        assert_eq!(
            refused("SELECT '\\x0'::bytea", &snap).as_deref(),
            Some("invalid input syntax for type bytea: \"\\x0\"")
        );
        // PostgreSQL 17 made the parser strict: refused on 17 and newer only.
        assert_eq!(refused("SELECT '{1,}'::text[]", &snap), None);
        snap.postgres = Some("17..".into());
        assert_eq!(
            refused("SELECT '{1,}'::text[]", &snap).as_deref(),
            Some("malformed array literal: \"{1,}\"")
        );
    }
}
