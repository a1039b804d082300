//! A direct reader of JSON text into `serde_json::Value`, for `json`/`jsonb` columns read as
//! `Value` (feature `json`).
//!
//! It builds the same `Value` that `serde_json::from_slice` would, without serde's visitor
//! machinery, for the documents PostgreSQL sends: objects, arrays, strings with the short
//! escapes, integers, literals. Whatever it does not handle itself (a `\u` escape, nesting
//! deeper than [`MAX_DEPTH`], any syntax error) makes it give up with `None`, and the caller
//! hands the whole text to `serde_json::from_slice`, whose result or error then stands. A
//! number other than a plain integer is parsed by serde_json alone (its token only), so
//! floats and huge integers come out exactly as serde_json makes them.

use serde_json::{Map, Number, Value};

/// Nesting deeper than this is left to serde_json (whose own limit is 128).
const MAX_DEPTH: usize = 100;

/// The value of the JSON text `text`, or `None` when serde_json must decide.
pub(crate) fn parse(text: &[u8]) -> Option<Value> {
    let mut parser = Parser { text, pos: 0 };
    let value = parser.value(0)?;
    parser.skip_whitespace();
    (parser.pos == text.len()).then_some(value)
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Skips whitespace, then takes `byte` if it comes next.
    fn eat(&mut self, byte: u8) -> bool {
        self.skip_whitespace();
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        self.skip_whitespace();
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(Value::String),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            b'-' | b'0'..=b'9' => self.number().map(Value::Number),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Option<Value> {
        let end = self.pos + word.len();
        if self.text.get(self.pos..end)? != word {
            return None;
        }
        self.pos = end;
        Some(value)
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        let mut map = Map::new();
        if self.eat(b'}') {
            return Some(Value::Object(map));
        }
        loop {
            self.skip_whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            let value = self.value(depth + 1)?;
            // Note: a repeated key (possible in `json`, not `jsonb`) keeps the last value,
            // as serde_json does.
            map.insert(key, value);
            if self.eat(b'}') {
                return Some(Value::Object(map));
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        let mut items = Vec::new();
        if self.eat(b']') {
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.eat(b']') {
                return Some(Value::Array(items));
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// A string starting at its opening quote. Control characters (refused by JSON) and
    /// `\u` escapes give up.
    fn string(&mut self) -> Option<String> {
        self.pos += 1;
        let mut owned: Option<Vec<u8>> = None;
        loop {
            let rest = self.text.get(self.pos..)?;
            let end = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
            let (chunk, tail) = rest.split_at_checked(end)?;
            let (&stop, tail) = tail.split_first()?;
            match stop {
                b'"' => {
                    self.pos += end + 1;
                    return match owned {
                        None => std::str::from_utf8(chunk).ok().map(str::to_owned),
                        Some(mut bytes) => {
                            bytes.extend_from_slice(chunk);
                            String::from_utf8(bytes).ok()
                        }
                    };
                }
                b'\\' => {
                    let unescaped = match tail.first()? {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        _ => return None,
                    };
                    let bytes = owned.get_or_insert_with(Vec::new);
                    bytes.extend_from_slice(chunk);
                    bytes.push(unescaped);
                    self.pos += end + 2;
                }
                _ => return None,
            }
        }
    }

    /// A number: integers of up to 18 digits here, everything else through serde_json.
    fn number(&mut self) -> Option<Number> {
        let start = self.pos;
        let token_len = self
            .text
            .get(start..)?
            .iter()
            .position(|&b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(self.text.len() - start);
        let token = self.text.get(start..start + token_len)?;
        self.pos = start + token_len;
        let (negative, digits) = match token.split_first()? {
            (b'-', digits) => (true, digits),
            _ => (false, token),
        };
        let plain = (1..=18).contains(&digits.len())
            && digits.iter().all(u8::is_ascii_digit)
            && (digits.len() == 1 || digits.first() != Some(&b'0'));
        if !plain || (negative && digits == b"0") {
            // Note: floats, long integers and `-0` exactly as serde_json reads them.
            return serde_json::from_slice(token).ok();
        }
        let magnitude = digits
            .iter()
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        if negative {
            // Note: 18 digits always fit an i64.
            i64::try_from(magnitude).ok().map(|n| Number::from(-n))
        } else {
            Some(Number::from(magnitude))
        }
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
    fn agrees_with_serde_json_on_mutated_documents() {
        let seeds: &[&[u8]] = &[
            br#"{"k": 12, "ok": true, "tag": "t\n1", "list": [1, -2, 3.5, null, {"x": "y"}]}"#,
            br#"[{"a": []}, "s\\t", -0, 1e2, false]"#,
        ];
        let alphabet = b" {}[]\":,\\-+.0123456789eEtrufalsn\x01\xc3\xa9u";
        // A fixed xorshift sequence: the same mutations on every run.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % u64::try_from(bound).unwrap()).unwrap()
        };
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
