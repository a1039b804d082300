//! The text form of an array (`'{1,2}'`, `'{{a,"b c"},{NULL,d}}'`, `'[0:1]={x,y}'`), checked
//! for the mistakes the server's `array_in` refuses before it reads an element.
//!
//! PostgreSQL 17 rewrote that parser and made it strict: a quoted element followed by more
//! text (`{"a"b}`), a quote inside an unquoted element (`{a"b"}`), an empty element
//! (`{a,,b}`, `{1,}`) and dimension decorations that do not match the contents are errors
//! there, and empty sub-arrays of equal depth (`{{},{}}`) became an empty array. Those rules
//! apply when every target version is 17 or newer; for older targets only the structure both
//! parsers refuse is checked (unbalanced braces, text after the last brace, sub-arrays and
//! elements mixed at one level, sub-arrays of different depths or lengths, and empty
//! sub-arrays, which the older parser refuses).

/// Why `text` is not an array literal the server's input function takes, if it is not
/// (`strict`: PostgreSQL 17's parser). `delimiter` separates elements (`,`; `;` for `box`).
pub(super) fn malformed(text: &str, delimiter: char, strict: bool) -> Option<String> {
    let mut p = Parser {
        chars: text.chars().collect(),
        at: 0,
        delimiter,
        strict,
    };
    p.literal().err()
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    delimiter: char,
    strict: bool,
}

/// The lengths of an array's levels, outermost first: `{{1,2},{3,4}}` is `[2, 2]`.
type Shape = Vec<usize>;

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn literal(&mut self) -> Result<(), String> {
        self.skip_space();
        let dims = match self.peek() {
            // Note: the older parser's rules for dimensions are not modelled.
            Some('[') if !self.strict => return Ok(()),
            Some('[') => Some(self.dimensions()?),
            _ => None,
        };
        if self.peek() != Some('{') {
            return Err("an array value must start with \"{\" or dimension information".into());
        }
        let shape = self.array()?;
        self.skip_space();
        if self.at < self.chars.len() {
            return Err("junk after the closing right brace".into());
        }
        if let Some(dims) = dims {
            let matches = dims.len() == shape.len()
                && dims
                    .iter()
                    .zip(&shape)
                    .all(|(&(lo, hi), &n)| usize::try_from(hi - lo + 1).is_ok_and(|len| len == n));
            if !matches {
                return Err(
                    "the specified array dimensions do not match the array contents".into(),
                );
            }
        }
        Ok(())
    }

    /// `[lo:hi][…]=` (or `[hi]`, lower bound 1): the bounds of each dimension.
    fn dimensions(&mut self) -> Result<Vec<(i64, i64)>, String> {
        let mut dims = Vec::new();
        while self.peek() == Some('[') {
            self.at += 1;
            let first = self.bound()?;
            let (lo, hi) = if self.peek() == Some(':') {
                self.at += 1;
                (first, self.bound()?)
            } else {
                (1, first)
            };
            if self.peek() != Some(']') {
                return Err("missing \"]\" in the array dimensions".into());
            }
            self.at += 1;
            if hi < lo {
                return Err("the upper bound cannot be less than the lower bound".into());
            }
            if hi >= i64::from(i32::MAX) {
                return Err(format!("the array upper bound {hi} is too large"));
            }
            dims.push((lo, hi));
            self.skip_space();
        }
        if self.peek() != Some('=') {
            return Err("missing \"=\" after the array dimensions".into());
        }
        self.at += 1;
        self.skip_space();
        Ok(dims)
    }

    fn bound(&mut self) -> Result<i64, String> {
        let start = self.at;
        if matches!(self.peek(), Some('+' | '-')) {
            self.at += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let digits: String = self.chars[start..self.at].iter().collect();
        match digits.parse::<i32>() {
            Ok(n) => Ok(i64::from(n)),
            Err(_) if digits.trim_start_matches(['+', '-']).is_empty() => {
                Err("an array dimension needs a number".into())
            }
            Err(_) => Err(format!("the array bound {digits} is out of range")),
        }
    }

    /// `{…}` at the cursor: its shape.
    fn array(&mut self) -> Result<Shape, String> {
        self.at += 1; // the opening brace
        let mut items = 0usize;
        let mut sub: Option<Shape> = None;
        let mut elements = false;
        loop {
            self.skip_space();
            match self.peek() {
                None => return Err("unexpected end of input".into()),
                Some('}') if items == 0 => {
                    self.at += 1;
                    return Ok(vec![0]);
                }
                Some('{') => {
                    if elements {
                        return Err("unexpected \"{\" among the elements".into());
                    }
                    let shape = self.array()?;
                    if !self.strict && shape.contains(&0) {
                        return Err("an empty sub-array".into());
                    }
                    match &sub {
                        Some(first) if *first != shape => {
                            return Err(
                                "multidimensional arrays must have sub-arrays with matching dimensions"
                                    .into(),
                            );
                        }
                        _ => sub = Some(shape),
                    }
                }
                Some(c) if self.strict && (c == '}' || c == self.delimiter) => {
                    return Err(format!("an empty element before \"{c}\""));
                }
                // Note: the older parser takes an empty element as an empty string.
                Some(c) if c == '}' || c == self.delimiter => elements = true,
                Some(_) => {
                    if sub.is_some() {
                        return Err("an element among the sub-arrays".into());
                    }
                    elements = true;
                    self.element()?;
                }
            }
            items += 1;
            self.skip_space();
            match self.peek() {
                Some('}') => {
                    self.at += 1;
                    let mut shape = vec![items];
                    shape.extend(sub.unwrap_or_default());
                    return Ok(shape);
                }
                Some(c) if c == self.delimiter => self.at += 1,
                None => return Err("unexpected end of input".into()),
                Some(c) => return Err(format!("unexpected \"{c}\"")),
            }
        }
    }

    /// One element at the cursor (quoted, or unquoted up to a delimiter or brace), leaving
    /// the cursor after it and any space.
    fn element(&mut self) -> Result<(), String> {
        let mut quoted = false;
        let mut after_quote = false;
        loop {
            let Some(c) = self.peek() else {
                return Err("unexpected end of input".into());
            };
            if quoted {
                self.at += 1;
                match c {
                    '\\' => self.at += 1,
                    '"' => {
                        quoted = false;
                        after_quote = true;
                    }
                    _ => {}
                }
                continue;
            }
            if c == self.delimiter || c == '}' {
                return Ok(());
            }
            if self.strict && after_quote && !c.is_whitespace() {
                return Err("text after a quoted element".into());
            }
            match c {
                '{' => return Err("unexpected \"{\" inside an element".into()),
                '"' if self.strict && self.at > 0 && !self.starts_element() => {
                    return Err("a quote inside an unquoted element".into());
                }
                '"' => quoted = true,
                '\\' => self.at += 1,
                _ => {}
            }
            self.at += 1;
        }
    }

    /// Whether the cursor is at the first character of an element (after `{`, a delimiter
    /// and space).
    fn starts_element(&self) -> bool {
        let mut i = self.at;
        while i > 0 && self.chars[i - 1].is_whitespace() {
            i -= 1;
        }
        i == 0 || self.chars[i - 1] == '{' || self.chars[i - 1] == self.delimiter
    }
}

#[cfg(test)]
mod tests {
    use super::malformed;

    #[test]
    fn array_literals_are_checked_like_the_server_does() {
        for ok in [
            "{}",
            " { } ",
            "{1,2,3}",
            "{{1,2},{3,4}}",
            "{ \"a b\" , NULL, c\\,d, \"\\\"q\\\"\" }",
            "{{{1}},{{2}}}",
            "[0:1]={a,b}",
            "[1:2][1:1]={{1},{2}}",
            "{a b,c}",
        ] {
            assert_eq!(malformed(ok, ',', true), None, "{ok} (17)");
            assert_eq!(malformed(ok, ',', false), None, "{ok} (older)");
        }
        for bad in [
            "{{1,{2}},{2,3}}",
            "{{1,2},\\{2,3}}",
            "{}}",
            "{ }}",
            "}{",
            "{foo{}}",
            "{{1},{{2}}}",
            "{{1,2},{3}}",
            "{{1},{}}",
            "{",
            "{1,2",
        ] {
            assert!(malformed(bad, ',', true).is_some(), "{bad} (17)");
            assert!(malformed(bad, ',', false).is_some(), "{bad} (older)");
        }
        // PostgreSQL 17's parser only.
        for bad in [
            "{\"a\"b}",
            "{a\"b\"}",
            "{\"a\"\"b\"}",
            "{foo,,bar}",
            "{1,}",
            "{{1,},{1}}",
            "{{1,},{1},}",
            "[1:0]={}",
            "[1:-1]={}",
            "[2]={1}",
            "[1:]={1}",
            "[:1]={1}",
            "[2147483646:2147483647]={1,2}",
            "[21474836488:21474836489]={1,2}",
        ] {
            assert!(malformed(bad, ',', true).is_some(), "{bad} (17)");
        }
        assert_eq!(malformed("{{},{}}", ',', true), None);
        assert!(malformed("{{},{}}", ',', false).is_some());
    }
}
