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
        "regclass" => return regclass(text, snap),
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

/// Why `text` names no relation for `regclass` (which looks it up as it parses), when the
/// snapshot can tell: it knows the indexes (a pull records them) besides its tables, views,
/// materialized views, sequences and composite types, and every schema searched is one it
/// covers. Names of the system (`pg_…`), OIDs and other forms are left to the server.
fn regclass(text: &str, snap: &Snapshot) -> Option<(String, String)> {
    let indexes = snap.indexes.as_ref()?;
    let parts = name_parts(text)?;
    let (schema, name) = match parts.as_slice() {
        [name] => (None, name.as_str()),
        [schema, name] => (Some(schema.as_str()), name.as_str()),
        _ => return None,
    };
    if name.starts_with("pg_")
        || schema.is_some_and(|s| s.starts_with("pg_") || s == "information_schema")
    {
        return None;
    }
    let searched: Vec<&str> = match schema {
        Some(s) => vec![s],
        None => snap
            .effective_search_path()
            .filter(|s| *s != "pg_catalog")
            .collect(),
    };
    if searched.iter().any(|s| !snap.has_schema(s)) {
        return None;
    }
    let found = searched.iter().any(|&s| {
        snap.relations
            .iter()
            .any(|r| r.schema == s && r.name == name)
            || indexes.iter().any(|i| i.schema == s && i.name == name)
            || snap.types.iter().any(|t| {
                t.schema == s && t.name == name && matches!(t.kind, UserTypeKind::Composite { .. })
            })
    });
    (!found).then(|| {
        (
            format!("relation \"{text}\" does not exist"),
            "check the name (a table, view, sequence or index), or run `cargo qail schema pull` \
             if the relation is new"
                .to_owned(),
        )
    })
}

/// The parts of a possibly qualified name as PostgreSQL reads it (`a.b`, `"A".b`): unquoted
/// parts in lower case. `None` for anything else (an OID, an empty part, a name longer than
/// PostgreSQL keeps).
fn name_parts(text: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut rest = text.trim();
    loop {
        let part;
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted
                .char_indices()
                .try_fold(None::<usize>, |close, (i, c)| match (close, c) {
                    (Some(j), '"') if j + 1 == i => Ok(None),
                    (Some(j), _) => Err(j),
                    (None, '"') => Ok(Some(i)),
                    (None, _) => Ok(None),
                });
            let end = match end {
                Err(j) | Ok(Some(j)) => j,
                Ok(None) => return None,
            };
            part = quoted[..end].replace("\"\"", "\"");
            rest = quoted[end + 1..].trim_start();
        } else {
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(rest.len());
            let word = &rest[..len];
            if word.is_empty() || word.starts_with(|c: char| c.is_ascii_digit() || c == '$') {
                return None;
            }
            part = word.to_ascii_lowercase();
            rest = rest[len..].trim_start();
        }
        if part.is_empty() || part.len() > 63 {
            return None;
        }
        parts.push(part);
        match rest.strip_prefix('.') {
            Some(r) => rest = r.trim_start(),
            None if rest.is_empty() => return Some(parts),
            None => return None,
        }
    }
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
    fn names_read_as_postgres_reads_them() {
        let parts = |t: &str| name_parts(t);
        assert_eq!(parts("Foo"), Some(vec!["foo".to_owned()]));
        assert_eq!(
            parts(" app . \"My\"\"T\" "),
            Some(vec!["app".to_owned(), "My\"T".to_owned()])
        );
        for other in ["1234", "-", "", "a.", "\"a", "a b", "\"\"", "a(b)"] {
            assert_eq!(parts(other), None, "{other}");
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
