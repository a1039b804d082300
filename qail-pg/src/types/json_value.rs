//! A direct reader of JSON text into `serde_json::Value`, for `json`/`jsonb` columns read as
//! `Value` (feature `json`).
//!
//! It builds the same `Value` that `serde_json::from_slice` would, without serde's visitor
//! machinery, for the documents PostgreSQL sends: objects, arrays, strings with the short
//! escapes, integers, literals. Whatever it does not handle itself (a `\u` escape, nesting
//! deeper than [`MAX_DEPTH`], text that is not UTF-8, any syntax error) makes it give up with
//! `None`, and the caller hands the whole text to `serde_json::from_slice`, whose result or
//! error then stands. A number other than a plain integer is parsed by serde_json alone (its
//! token only), so floats and huge integers come out exactly as serde_json makes them.
//!
//! The text is checked as UTF-8 once, as a whole (a word at a time when it is ASCII, as most
//! documents are: [`super::utf8`]): every string is then a slice of it between
//! ASCII bytes (quotes, escapes), so it is valid UTF-8 too and is copied without a second check.

use serde_json::{Map, Number, Value};

/// Nesting deeper than this is left to serde_json (whose own limit is 128).
const MAX_DEPTH: usize = 100;

/// The value of the JSON text `text`, or `None` when serde_json must decide.
#[inline]
pub(crate) fn parse(text: &[u8]) -> Option<Value> {
    let text = super::utf8::str_from(text).ok()?;
    let mut parser = Parser { text, pos: 0 };
    let value = parser.value(0)?;
    // Note: `next` is `None` exactly at the end of the text.
    parser.next().is_none().then_some(value)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    #[inline]
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skips whitespace and returns the byte that follows, without taking it.
    #[inline]
    fn next(&mut self) -> Option<u8> {
        loop {
            let b = *self.bytes().get(self.pos)?;
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
            self.pos += 1;
        }
    }

    /// The value at the current position, nested `depth` levels deep.
    ///
    /// Note: a scalar (string, number, literal) is read inline here, so the members and
    /// elements of an object or array, mostly scalars, cost no call each; only a nested
    /// object or array recurses.
    #[inline(always)]
    fn value(&mut self, depth: usize) -> Option<Value> {
        match self.next()? {
            b'"' => self.string().map(Value::String),
            b'-' | b'0'..=b'9' => self.number().map(Value::Number),
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            _ => None,
        }
    }

    /// `true`, `false` or `null`: compared as a fixed-size array, a few integer comparisons.
    #[inline(always)]
    fn literal<const N: usize>(&mut self, word: &[u8; N], value: Value) -> Option<Value> {
        if self.bytes().get(self.pos..)?.first_chunk::<N>()? != word {
            return None;
        }
        self.pos += N;
        Some(value)
    }

    /// An object starting at its `{`.
    ///
    /// Note: out of line, the recursion's one call per level; `value` is inlined into it.
    #[inline(never)]
    fn object(&mut self, depth: usize) -> Option<Value> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        let mut map = Map::new();
        match self.next()? {
            b'"' => {}
            b'}' => {
                self.pos += 1;
                return Some(Value::Object(map));
            }
            _ => return None,
        }
        loop {
            let key = self.string()?;
            if self.next()? != b':' {
                return None;
            }
            self.pos += 1;
            let value = self.value(depth + 1)?;
            // Note: a repeated key (possible in `json`, not `jsonb`) keeps the last value,
            // as serde_json does.
            map.insert(key, value);
            match self.next()? {
                b',' => {
                    self.pos += 1;
                    if self.next()? != b'"' {
                        return None;
                    }
                }
                b'}' => {
                    self.pos += 1;
                    return Some(Value::Object(map));
                }
                _ => return None,
            }
        }
    }

    /// An array starting at its `[`.
    ///
    /// Note: out of line, the recursion's one call per level; `value` is inlined into it.
    #[inline(never)]
    fn array(&mut self, depth: usize) -> Option<Value> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        let mut items = Vec::new();
        if self.next()? == b']' {
            self.pos += 1;
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            match self.next()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Some(Value::Array(items));
                }
                _ => return None,
            }
        }
    }

    /// A string starting at its opening quote. Control characters (refused by JSON) and
    /// `\u` escapes give up.
    #[inline(always)]
    fn string(&mut self) -> Option<String> {
        let start = self.pos + 1;
        let bytes = self.bytes();
        let mut end = start;
        loop {
            match *bytes.get(end)? {
                b'"' => {
                    self.pos = end + 1;
                    // Note: both ends are next to ASCII bytes, so `get` finds char boundaries.
                    return self.text.get(start..end).map(super::owned::string);
                }
                b'\\' | 0..0x20 => return self.escaped(start, end),
                _ => end += 1,
            }
        }
    }

    /// The rest of a string from its first backslash or control character at `stop`;
    /// `start` is where its text begins.
    #[cold]
    fn escaped(&mut self, start: usize, mut stop: usize) -> Option<String> {
        let bytes = self.bytes();
        let mut out = String::from(self.text.get(start..stop)?);
        loop {
            match *bytes.get(stop)? {
                b'"' => {
                    self.pos = stop + 1;
                    return Some(out);
                }
                b'\\' => {
                    out.push(match *bytes.get(stop + 1)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        _ => return None,
                    });
                    stop += 2;
                }
                0..0x20 => return None,
                _ => {
                    let run = bytes
                        .get(stop..)?
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
                    out.push_str(self.text.get(stop..stop + run)?);
                    stop += run;
                }
            }
        }
    }

    /// A number: integers of up to 18 digits here, everything else through serde_json.
    #[inline]
    fn number(&mut self) -> Option<Number> {
        let bytes = self.bytes();
        let start = self.pos;
        let negative = bytes.get(start) == Some(&b'-');
        let first = start + usize::from(negative);
        let mut end = first;
        let mut magnitude: u64 = 0;
        while let Some(&d @ b'0'..=b'9') = bytes.get(end) {
            // Note: wraps only past 19 digits, which are sent to serde_json below.
            magnitude = magnitude.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            end += 1;
        }
        let digits = end - first;
        let plain = (1..=18).contains(&digits)
            && (digits == 1 || bytes.get(first) != Some(&b'0'))
            && !matches!(bytes.get(end), Some(b'.' | b'e' | b'E'))
            && !(negative && magnitude == 0);
        if !plain {
            return self.other_number();
        }
        self.pos = end;
        if negative {
            // Note: 18 digits always fit an i64.
            i64::try_from(magnitude).ok().map(|n| Number::from(-n))
        } else {
            Some(Number::from(magnitude))
        }
    }

    /// A number that is not a plain integer of up to 18 digits: floats, long integers and
    /// `-0` exactly as serde_json reads them (its token only).
    #[cold]
    fn other_number(&mut self) -> Option<Number> {
        let start = self.pos;
        let token_len = self
            .bytes()
            .get(start..)?
            .iter()
            .position(|&b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(self.text.len() - start);
        let token = self.bytes().get(start..start + token_len)?;
        self.pos = start + token_len;
        serde_json::from_slice(token).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parse` must agree with serde_json: the same value, or give up.
    fn agrees(text: &[u8]) -> bool {
        let ours = parse(text);
        let theirs = serde_json::from_slice::<Value>(text).ok();
        match (&ours, &theirs) {
            (Some(a), Some(b)) => a == b,
            (Some(_), None) => false,
            (None, _) => true,
        }
    }

    #[test]
    fn reads_what_postgres_sends() {
        let cases: &[&[u8]] = &[
            br#"{"k": 1, "ok": false, "tag": "t1"}"#,
            br#"{"a": [1, -2, null, true, "x"], "b": {"c": {}}, "d": []}"#,
            br#"  [ ]  "#,
            br#""caf\u00e9 \"quoted\" \\ \/ \b\f\n\r\t""#,
            br#""plain \"esc\" and \n""#,
            "\"ünïcödé ✓\"".as_bytes(),
            b"0",
            b"-7",
            b"123456789012345678",
            b"-123456789012345678",
            b"1234567890123456789012",
            b"18446744073709551615",
            b"-9223372036854775808",
            b"1.5",
            b"-0",
            b"-0.0",
            b"1e3",
            b"2.5E-3",
            br#"{"a": 1, "a": 2}"#,
            br#"{"": "", "e": [""], "x": "y"}"#,
        ];
        for text in cases {
            assert!(agrees(text), "{}", String::from_utf8_lossy(text));
        }
        assert_eq!(
            parse(br#"{"k": 1, "ok": false, "tag": "t1"}"#),
            Some(serde_json::json!({"k": 1, "ok": false, "tag": "t1"}))
        );
        assert_eq!(
            parse(br#""a\"b\nc""#),
            Some(Value::String("a\"b\nc".into()))
        );
        assert_eq!(parse(b"1.5"), Some(serde_json::json!(1.5)));
        // Empty keys and strings are empty `String`s, equal to any other.
        assert_eq!(
            parse(br#"{"": "", "e": [""]}"#),
            Some(serde_json::json!({"": "", "e": [""]}))
        );
    }

    #[test]
    fn gives_up_where_serde_json_must_decide() {
        let cases: &[&[u8]] = &[
            b"",
            b"{",
            b"[1,]",
            b"{\"a\":1,}",
            b"01",
            b"-",
            b"1.",
            b"--1",
            b"1e",
            b"tru",
            b"truex",
            b"nul",
            b"[1 2]",
            b"{\"a\" 1}",
            b"{1: 2}",
            b"\"unterminated",
            b"\"bad \\x escape\"",
            b"\"control \x01 char\"",
            b"\"\xff\xfe\"",
            b"\"\\ud800\"",
            b"1 2",
            b"[1] x",
        ];
        for text in cases {
            assert!(agrees(text), "{}", String::from_utf8_lossy(text));
        }
        assert_eq!(parse(b"\"\\u0041\""), None);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(parse(deep.as_bytes()), None);
        let shallow = format!("{}{}", "[".repeat(50), "]".repeat(50));
        assert!(parse(shallow.as_bytes()).is_some());
    }

    #[test]
    fn literals_are_read_whole_and_prefixes_refused() {
        for text in [
            &b"true"[..],
            b"false",
            b"null",
            b"[true,false,null]",
            b"{\"t\":true,\"f\":false,\"n\":null}",
            b" [ null , true ] ",
        ] {
            reads_like_serde_json(text);
        }
        for text in [
            &b"t"[..],
            b"tr",
            b"fals",
            b"nul",
            b"[tru]",
            b"[true",
            b"{\"a\":fals}",
            b"{\"a\":nulL}",
            b"True",
            b"nulll",
            b"[falsee]",
        ] {
            assert_eq!(parse(text), None, "{}", String::from_utf8_lossy(text));
            assert!(serde_json::from_slice::<Value>(text).is_err());
        }
    }

    #[test]
    fn non_ascii_text_is_read_and_invalid_utf8_refused() {
        // Non-ASCII bytes past the first machine word, in keys and values.
        reads_like_serde_json(
            "{\"abcdefghijk\": \"ünïcödé\", \"clé\": [\"✓\", \"😀\"]}".as_bytes(),
        );
        for text in [
            &b"{\"abcdefghijklmnop\": \"\xff\"}"[..],
            b"[\"abcdefghijklmnopqrstuvwxyz\", \"\xc3\"]",
            b"{\"\xe2\x9c\": 1}",
            b"\"\xed\xa0\x80\"",
        ] {
            assert_eq!(parse(text), None, "{}", String::from_utf8_lossy(text));
            assert!(serde_json::from_slice::<Value>(text).is_err());
        }
    }

    /// `parse` reads `text` itself, to exactly serde_json's value.
    fn reads_like_serde_json(text: &[u8]) {
        let theirs: Value = serde_json::from_slice(text).expect("valid JSON");
        assert_eq!(
            parse(text),
            Some(theirs),
            "{}",
            String::from_utf8_lossy(text)
        );
    }

    #[test]
    fn the_fast_paths_equal_serde_json() {
        let cases: &[&[u8]] = &[
            // integers up to 18 digits, signs, zero
            b"0",
            b"7",
            b"-1",
            b"10",
            b"-10",
            b"999999999999999999",
            b"-999999999999999999",
            b"100000000000000000",
            b"[0, -0, 1, 12, 123, -123, 1234567890]",
            // 19 and 20 digits, floats, exponents: serde_json's own reading of the token
            b"1000000000000000000",
            b"-1000000000000000000",
            b"9223372036854775807",
            b"-9223372036854775809",
            b"[0.5, -0.0, 1e2, 1E-2, 12.5e+3, 18446744073709551616]",
            // escapes
            br#""\"\\\/\b\f\n\r\t""#,
            br#""a\nb""#,
            br#""\\""#,
            br#"{"k\"ey": "v\\al", "x\ty": ["\/"]}"#,
            // non-ASCII text, in keys too
            "{\"clé\": \"ünïcödé ✓ 😀\", \"k\": \"a\\nü\"}".as_bytes(),
            // nested objects and arrays, empty ones, whitespace of every kind
            br#"{"a": {"b": {"c": [1, {"d": []}, {}]}}, "e": [[[]]]}"#,
            b" \t\r\n{ \"a\" :\n[ 1 ,2\t] , \"b\" : { } }\r\n ",
            br#"{"k": 1, "ok": false, "tag": "t1"}"#,
            br#"[true, false, null, "", {"": ""}]"#,
            // duplicate keys: the last value wins, as in serde_json
            br#"{"a": 1, "a": 2}"#,
            br#"{"a": {"x": 1}, "b": 0, "a": [2]}"#,
            br#"{"b": 1, "a": 2, "b": 3, "c": 4, "b": 5}"#,
        ];
        for text in cases {
            reads_like_serde_json(text);
        }
    }

    #[test]
    fn agrees_with_serde_json_on_generated_documents() {
        // A fixed xorshift sequence: the same documents on every run.
        let mut next64 = crate::types::tests::xorshift(0x853c_49e6_748f_ea9b);
        let mut next =
            |bound: usize| usize::try_from(next64(u64::try_from(bound).unwrap())).unwrap();
        fn space(next: &mut impl FnMut(usize) -> usize, out: &mut Vec<u8>) {
            for _ in 0..next(3).saturating_sub(1) {
                out.push(b" \t\n\r"[next(4)]);
            }
        }
        fn string(next: &mut impl FnMut(usize) -> usize, out: &mut Vec<u8>) {
            const PIECES: &[&str] = &[
                "a", "tag", "t1", "k", "ok", "é", "✓", "😀", "\\n", "\\\"", "\\\\", "\\/", "\\t",
                "\\b", "\\f", "\\r", " ", "0",
            ];
            out.push(b'"');
            for _ in 0..next(5) {
                out.extend_from_slice(PIECES[next(PIECES.len())].as_bytes());
            }
            out.push(b'"');
        }
        fn value(next: &mut impl FnMut(usize) -> usize, out: &mut Vec<u8>, depth: usize) {
            space(next, out);
            match next(if depth > 3 { 4 } else { 6 }) {
                0 => string(next, out),
                1 => {
                    let digits = 1 + next(20);
                    if next(2) == 0 {
                        out.push(b'-');
                    }
                    out.push(b"123456789"[next(9)]);
                    for _ in 1..digits {
                        out.push(b'0' + u8::try_from(next(10)).unwrap());
                    }
                }
                2 => out.extend_from_slice([&b"0"[..], b"-0", b"true", b"false", b"null"][next(5)]),
                3 => out.extend_from_slice([&b"1.5"[..], b"-2e3", b"0.25", b"7E-1"][next(4)]),
                4 => {
                    out.push(b'[');
                    for i in 0..next(4) {
                        if i > 0 {
                            out.push(b',');
                        }
                        value(next, out, depth + 1);
                    }
                    space(next, out);
                    out.push(b']');
                }
                _ => {
                    out.push(b'{');
                    for i in 0..next(5) {
                        if i > 0 {
                            out.push(b',');
                        }
                        space(next, out);
                        // Few distinct keys, so that some repeat.
                        out.extend_from_slice(
                            [&b"\"a\""[..], b"\"b\"", b"\"tag\"", b"\"\""][next(4)],
                        );
                        space(next, out);
                        out.push(b':');
                        value(next, out, depth + 1);
                    }
                    space(next, out);
                    out.push(b'}');
                }
            }
            space(next, out);
        }
        for _ in 0..20_000 {
            let mut text = Vec::new();
            value(&mut next, &mut text, 0);
            let theirs: Value = serde_json::from_slice(&text).expect("generated JSON is valid");
            // Every generated document is read here; only floats, `-0` and long integers
            // are parsed by serde_json, token by token.
            assert_eq!(
                parse(&text),
                Some(theirs),
                "{}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    #[test]
    fn agrees_with_serde_json_on_mutated_documents() {
        let seeds: &[&[u8]] = &[
            br#"{"k": 12, "ok": true, "tag": "t\n1", "list": [1, -2, 3.5, null, {"x": "y"}]}"#,
            br#"[{"a": []}, "s\\t", -0, 1e2, false]"#,
        ];
        let alphabet = b" {}[]\":,\\-+.0123456789eEtrufalsn\x01\xc3\xa9u";
        // A fixed xorshift sequence: the same mutations on every run.
        let mut next64 = crate::types::tests::xorshift(0x2545_f491_4f6c_dd1d);
        let mut next =
            |bound: usize| usize::try_from(next64(u64::try_from(bound).unwrap())).unwrap();
        for seed in seeds {
            assert!(parse(seed).is_some());
            for _ in 0..20_000 {
                let mut text = seed.to_vec();
                for _ in 0..1 + next(3) {
                    let at = next(text.len());
                    match next(3) {
                        0 => text[at] = alphabet[next(alphabet.len())],
                        1 => text.insert(at, alphabet[next(alphabet.len())]),
                        _ => {
                            text.remove(at);
                        }
                    }
                    if text.is_empty() {
                        break;
                    }
                }
                assert!(agrees(&text), "{}", String::from_utf8_lossy(&text));
            }
        }
    }
}
