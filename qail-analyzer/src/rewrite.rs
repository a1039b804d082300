//! Syntax the SQL parser lacks, rewritten before parsing without moving a byte (keywords are
//! replaced by spaces, so every range still points into the user's SQL):
//! - `BETWEEN SYMMETRIC` / `BETWEEN ASYMMETRIC`: typed like `BETWEEN`;
//! - `VARIADIC` before a call argument: the keyword goes, the argument's offset is kept so the
//!   call passes that array as the variadic parameter itself;
//! - `SET col[i] = v` in UPDATE (and ON CONFLICT DO UPDATE), `col[i][j]`, `col[lo:hi]`: the
//!   subscripts go, the column's offset is kept so `v` is typed as an element (as the array
//!   for a slice); each subscript's text is kept aside to be typed as an `integer` (it may
//!   hold parameters, `SET scores[$1] = $2`), but a string literal, a jsonb key
//!   (`SET doc['a'][0] = v`), whose target is noted;
//! - `ONLY` before a table in FROM, JOIN, UPDATE and DELETE (inheritance does not change the
//!   columns);
//! - `SUBSTRING(x SIMILAR p ESCAPE e)`: the keywords become commas, the call
//!   `substring(text, text, text)` it stands for;
//! - `USING op` after an ORDER BY key (the sort order does not change a type);
//! - numeric literals with underscores (`1_000_000`) or a `0x`/`0o`/`0b` prefix (PostgreSQL
//!   16): written in decimal, padded with spaces (a placeholder of the same type when the
//!   decimal is longer), and kept aside so a target before 16 refuses them;
//! - `IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT] [WITH | WITHOUT UNIQUE [KEYS]]`
//!   (PostgreSQL 16): read as `IS [NOT] NULL`, and kept aside so the null test is typed as
//!   the JSON predicate;
//! - locking clauses (`FOR [NO KEY] UPDATE | [KEY] SHARE [OF t, …] [NOWAIT | SKIP LOCKED]`,
//!   several, before or after LIMIT/OFFSET): removed, as they change no type (sqlparser
//!   reads neither `NO KEY`/`KEY` nor a lock before LIMIT); a lock between OFFSET and LIMIT,
//!   which PostgreSQL refuses, is left for the parser to refuse;
//! - `TABLESAMPLE method (args…) [REPEATABLE (seed)]`: removed and kept aside, the method
//!   and each argument's text, to be typed as the method's parameters (sqlparser reads
//!   other dialects' forms and drops the seed);
//! - the index predicate of `ON CONFLICT (cols) WHERE …`: removed and kept aside, to be
//!   typed as a condition on the target table;
//! - a window frame's exclusion (`EXCLUDE CURRENT ROW | GROUP | TIES | NO OTHERS`), and the
//!   cast of a string offset (`'1 day'::interval PRECEDING`): neither changes a type;
//! - INSERT's `OVERRIDING SYSTEM VALUE` / `OVERRIDING USER VALUE`: removed and kept aside, as
//!   they decide whether a `GENERATED ALWAYS AS IDENTITY` column may be given a value.

use qail_schema::script::lex::{block_comment_end, dollar_quote_end, is_ident_start, quoted_end};

/// The SQL to parse and what the rewrite removed.
pub(crate) struct ParserInput {
    pub(crate) sql: String,
    /// Byte offsets of arguments written after `VARIADIC`.
    pub(crate) variadic: Vec<usize>,
    /// Byte offsets of SET targets written with a subscript (`SET col[1] = …`), not a slice.
    pub(crate) element_targets: Vec<usize>,
    /// Byte ranges of the subscripts (and slice bounds) removed from SET targets, but for
    /// string literals (keys).
    pub(crate) subscripts: Vec<std::ops::Range<usize>>,
    /// Byte offsets of SET targets with a string literal among their subscripts
    /// (`SET doc['key'] = …`, a jsonb key).
    pub(crate) keyed_targets: Vec<usize>,
    /// Numeric literals in PostgreSQL 16's forms, rewritten in decimal: where, and what the
    /// form is called in a message.
    pub(crate) numbers: Vec<(std::ops::Range<usize>, &'static str)>,
    /// Where each `IS [NOT] JSON …` predicate starts (its `IS`) and ends.
    pub(crate) json_predicates: Vec<std::ops::Range<usize>>,
    /// The TABLESAMPLE clauses removed.
    pub(crate) samples: Vec<Sample>,
    /// The index predicates removed from `ON CONFLICT (cols) WHERE …` (after the WHERE).
    pub(crate) conflict_predicates: Vec<std::ops::Range<usize>>,
    /// The `OVERRIDING SYSTEM VALUE` (`true`) and `OVERRIDING USER VALUE` (`false`) clauses
    /// removed from INSERTs.
    pub(crate) overriding: Vec<(std::ops::Range<usize>, bool)>,
}

/// A `TABLESAMPLE method (args…) [REPEATABLE (seed)]` clause, by byte ranges into the SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sample {
    /// The whole clause, from `TABLESAMPLE`.
    pub(crate) range: std::ops::Range<usize>,
    /// The method's name as written.
    pub(crate) method: std::ops::Range<usize>,
    /// Each argument's text.
    pub(crate) args: Vec<std::ops::Range<usize>>,
    /// The seed's text after REPEATABLE.
    pub(crate) seed: Option<std::ops::Range<usize>>,
}

/// The previous token outside strings and comments.
#[derive(PartialEq)]
enum Prev {
    None,
    Word(String),
    Punct(u8),
}

pub(crate) fn rewrite(sql: &str) -> ParserInput {
    let b = sql.as_bytes();
    let mut out = b.to_vec();
    let mut variadic = Vec::new();
    let mut element_targets = Vec::new();
    let mut subscripts = Vec::new();
    let mut keyed_targets = Vec::new();
    let mut numbers = Vec::new();
    let mut json_predicates = Vec::new();
    let mut samples = Vec::new();
    let mut conflict_predicates = Vec::new();
    let mut overriding = Vec::new();
    let mut prev = Prev::None;
    // The depth at which LIMIT, OFFSET or FETCH was read in the current query.
    let mut limit_at: Option<usize> = None;
    // Parenthesis depth, and the depth of the SET list being read (after UPDATE … SET).
    let mut depth = 0_usize;
    let mut update_at: Option<usize> = None;
    let mut set_at: Option<usize> = None;
    // The `::type` after a string literal just read, while nothing else followed it.
    let mut string_cast: Option<(usize, usize)> = None;
    let mut cast_after_string: Option<usize> = None;
    // The depth inside `SUBSTRING(`, while reading its arguments.
    let mut substring_at: Option<usize> = None;
    // The depth of the ORDER BY list being read: only there is `USING op` a sort operator.
    let mut order_by_at: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let pending_cast = if c.is_ascii_whitespace() {
            string_cast
        } else {
            string_cast.take()
        };
        match c {
            b'\'' => {
                let escapes = i > 0 && matches!(b[i - 1], b'e' | b'E');
                i = quoted_end(b, i, b'\'', escapes);
                prev = Prev::Punct(b'\'');
            }
            b'"' => {
                i = quoted_end(b, i, b'"', false);
                prev = Prev::Word(String::new());
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_comment_end(b, i),
            b'$' => match dollar_quote_end(sql, i) {
                Some(end) => {
                    i = end;
                    prev = Prev::Punct(b'$');
                }
                None => {
                    i += 1;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    prev = Prev::Word(String::new());
                }
            },
            c if is_ident_start(c) => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                let word = sql[start..i].to_ascii_uppercase();
                if let Some(colons) = cast_after_string.take()
                    && prev == Prev::Punct(b':')
                {
                    string_cast = Some((colons, i));
                }
                if matches!(word.as_str(), "PRECEDING" | "FOLLOWING")
                    && let Some((from, to)) = pending_cast
                {
                    out[from..to].fill(b' ');
                }
                let table_start = matches!(prev, Prev::Word(ref w)
                    if matches!(w.as_str(), "FROM" | "JOIN" | "UPDATE"))
                    || prev == Prev::Punct(b',');
                if word == "JSON"
                    && let Some(is_at) = is_before(sql, start)
                {
                    out[start..i].copy_from_slice(b"NULL");
                    let end = json_predicate_end(sql, i);
                    out[i..end].fill(b' ');
                    json_predicates.push(is_at..end);
                    prev = Prev::Word("NULL".into());
                    i = end;
                    continue;
                }
                if word == "CONFLICT"
                    && prev == Prev::Word("ON".into())
                    && let Some((where_at, predicate)) = conflict_predicate(sql, i)
                {
                    out[where_at..predicate.end].fill(b' ');
                    i = predicate.end;
                    conflict_predicates.push(predicate);
                    prev = Prev::Punct(b')');
                    continue;
                }
                if word == "OVERRIDING"
                    && let (which_end, which) = next_word(sql, i)
                    && matches!(which.as_str(), "SYSTEM" | "USER")
                    && let (end, value) = next_word(sql, which_end)
                    && value == "VALUE"
                {
                    out[start..end].fill(b' ');
                    overriding.push((start..end, which == "SYSTEM"));
                    i = end;
                    continue;
                }
                if word == "TABLESAMPLE"
                    && let Some(sample) = sample_clause(sql, start, i)
                {
                    out[sample.range.clone()].fill(b' ');
                    i = sample.range.end;
                    samples.push(sample);
                    prev = Prev::Punct(b')');
                    continue;
                }
                if matches!(word.as_str(), "LIMIT" | "OFFSET" | "FETCH") {
                    limit_at = Some(depth);
                }
                if word == "FOR"
                    && let Some((end, keys)) = lock_clauses(sql, start)
                {
                    let limit_follows =
                        matches!(next_word(sql, end).1.as_str(), "LIMIT" | "OFFSET" | "FETCH");
                    if !limit_follows {
                        for k in keys {
                            out[k].fill(b' ');
                        }
                    } else if limit_at != Some(depth) {
                        out[start..end].fill(b' ');
                        i = end;
                        continue;
                    }
                }
                if word == "ONLY" && table_start {
                    out[start..i].fill(b' ');
                    continue;
                }
                if substring_at == Some(depth) && (word == "SIMILAR" || word == "ESCAPE") {
                    out[start..i].fill(b' ');
                    out[start] = b',';
                    prev = Prev::Punct(b',');
                    continue;
                }
                if word == "BY" && prev == Prev::Word("ORDER".into()) {
                    order_by_at = Some(depth);
                } else if matches!(
                    word.as_str(),
                    "LIMIT" | "OFFSET" | "FETCH" | "FOR" | "ROWS" | "RANGE" | "GROUPS"
                ) && order_by_at == Some(depth)
                {
                    order_by_at = None;
                }
                if word == "USING"
                    && order_by_at == Some(depth)
                    && let Some(end) = sort_operator_end(b, i)
                {
                    out[start..end].fill(b' ');
                    i = end;
                    continue;
                }
                let frame_end = matches!(prev, Prev::Word(ref w)
                    if matches!(w.as_str(), "PRECEDING" | "FOLLOWING" | "ROW"));
                if word == "EXCLUDE"
                    && frame_end
                    && let Some(end) = frame_exclusion_end(sql, i)
                {
                    out[start..end].fill(b' ');
                    i = end;
                    continue;
                }
                let after_between = prev == Prev::Word("BETWEEN".into());
                let argument_start = matches!(prev, Prev::Punct(b'(' | b','));
                if after_between && (word == "SYMMETRIC" || word == "ASYMMETRIC") {
                    out[start..i].fill(b' ');
                    // Note: the rewritten SQL still reads BETWEEN next.
                    continue;
                }
                match word.as_str() {
                    "UPDATE" => update_at = Some(depth),
                    "SET" if update_at == Some(depth) => set_at = Some(depth),
                    "WHERE" | "FROM" | "RETURNING" if set_at == Some(depth) => {
                        set_at = None;
                        update_at = None;
                    }
                    _ => {}
                }
                let target_start =
                    matches!(prev, Prev::Word(ref w) if w == "SET") || prev == Prev::Punct(b',');
                if set_at == Some(depth)
                    && target_start
                    && let Some((end, bounds, slice)) = set_subscripts(b, i)
                {
                    out[i..end].fill(b' ');
                    if !slice {
                        element_targets.push(start);
                    }
                    let (keys, bounds): (Vec<_>, Vec<_>) = bounds
                        .into_iter()
                        .partition(|r| is_string_literal(&sql[r.clone()]));
                    if !keys.is_empty() {
                        keyed_targets.push(start);
                    }
                    subscripts.extend(bounds);
                    prev = Prev::Word(word);
                    i = end;
                    continue;
                }
                let argument_follows = b[i..]
                    .iter()
                    .find(|c| !c.is_ascii_whitespace())
                    .is_some_and(|c| !matches!(c, b')' | b','));
                if argument_start && word == "VARIADIC" && argument_follows {
                    out[start..i].fill(b' ');
                    let mut next = i;
                    while next < b.len() && b[next].is_ascii_whitespace() {
                        next += 1;
                    }
                    variadic.push(next);
                    continue;
                }
                prev = Prev::Word(word);
            }
            c if c.is_ascii_whitespace() => i += 1,
            c if c.is_ascii_digit() => {
                let end = number_end(b, i);
                if let Some((text, form)) =
                    number_rewrite(&sql[i..end]).filter(|(text, _)| text.len() <= end - i)
                {
                    out[i..end].fill(b' ');
                    out[i..i + text.len()].copy_from_slice(text.as_bytes());
                    numbers.push((i..end, form));
                }
                prev = Prev::Punct(b'0');
                i = end;
            }
            b':' if b.get(i + 1) == Some(&b':') && prev == Prev::Punct(b'\'') => {
                cast_after_string = Some(i);
                prev = Prev::Punct(b':');
                i += 2;
            }
            c => {
                match c {
                    b'(' => {
                        depth += 1;
                        if prev == Prev::Word("SUBSTRING".into()) {
                            substring_at = Some(depth);
                        }
                    }
                    b')' => {
                        if substring_at == Some(depth) {
                            substring_at = None;
                        }
                        if set_at == Some(depth) {
                            set_at = None;
                        }
                        if order_by_at == Some(depth) {
                            order_by_at = None;
                        }
                        if limit_at == Some(depth) {
                            limit_at = None;
                        }
                        depth = depth.saturating_sub(1);
                    }
                    b';' => {
                        limit_at = None;
                        order_by_at = None;
                        set_at = None;
                        update_at = None;
                    }
                    _ => {}
                }
                prev = Prev::Punct(c);
                i += 1;
            }
        }
    }
    let sql = String::from_utf8(out).expect("only ASCII letters were replaced by spaces");
    ParserInput {
        sql,
        variadic,
        element_targets,
        subscripts,
        keyed_targets,
        numbers,
        json_predicates,
        samples,
        conflict_predicates,
        overriding,
    }
}

/// After `ON CONFLICT` (ending at `i`): a parenthesized target followed by `WHERE`, the
/// WHERE's offset and the predicate's range, up to the `DO` at the same depth.
fn conflict_predicate(sql: &str, i: usize) -> Option<(usize, std::ops::Range<usize>)> {
    let b = sql.as_bytes();
    let open = i + (sql[i..].len() - sql[i..].trim_start().len());
    if b.get(open) != Some(&b'(') {
        return None;
    }
    let (close, _) = parenthesized(b, open)?;
    let (where_end, w) = next_word(sql, close);
    if w != "WHERE" {
        return None;
    }
    let where_at = where_end - w.len();
    // Note: the predicate ends at the first `DO` outside parentheses, quotes and comments.
    let (mut j, mut nest) = (where_end, 0_usize);
    while j < b.len() {
        match b[j] {
            b'\'' => {
                j = quoted_end(b, j, b'\'', false);
                continue;
            }
            b'"' => {
                j = quoted_end(b, j, b'"', false);
                continue;
            }
            b'(' => nest += 1,
            b')' => nest = nest.checked_sub(1)?,
            b';' => return None,
            c if is_ident_start(c) => {
                let (end, word) = next_word(sql, j);
                if nest == 0 && word == "DO" {
                    let predicate = sql[where_end..j].trim();
                    let start = where_end + sql[where_end..j].find(predicate)?;
                    return Some((where_at, start..start + predicate.len()));
                }
                j = end.max(j + 1);
                continue;
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// The word after `from` (whitespace skipped): where it ends and its upper-case text
/// (empty when no letter follows).
fn next_word(sql: &str, from: usize) -> (usize, String) {
    let rest = &sql[from..];
    let start = from + (rest.len() - rest.trim_start().len());
    let len = sql[start..]
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    (start + len, sql[start..start + len].to_ascii_uppercase())
}

/// The locking clauses starting at the `FOR` at `start`: where the last one ends, and the
/// `NO KEY` / `KEY` words sqlparser does not read. `None` when `FOR` starts no lock.
fn lock_clauses(sql: &str, start: usize) -> Option<(usize, Vec<std::ops::Range<usize>>)> {
    let (mut end, mut keys) = (start, Vec::new());
    loop {
        let (after_for, w) = next_word(sql, end);
        if w != "FOR" {
            break;
        }
        let (after, strength) = next_word(sql, after_for);
        let at = after - strength.len();
        let after = match strength.as_str() {
            "UPDATE" | "SHARE" => after,
            "NO" => {
                let (k_end, k) = next_word(sql, after);
                let (u_end, u) = next_word(sql, k_end);
                if k != "KEY" || u != "UPDATE" {
                    break;
                }
                keys.push(at..k_end);
                u_end
            }
            "KEY" => {
                let (s_end, s) = next_word(sql, after);
                if s != "SHARE" {
                    break;
                }
                keys.push(at..after);
                s_end
            }
            _ => break,
        };
        end = after;
        let (of_end, of) = next_word(sql, end);
        if of == "OF" {
            // Note: the names after OF, each possibly qualified or quoted, comma separated.
            let b = sql.as_bytes();
            let mut j = of_end;
            loop {
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                match b.get(j) {
                    Some(b'"') => j = quoted_end(b, j, b'"', false),
                    Some(c) if is_ident_start(*c) => j = next_word(sql, j).0,
                    _ => break,
                }
                match b.get(j) {
                    Some(b'.' | b',') => j += 1,
                    _ => {
                        let rest = &sql[j..];
                        let k = j + (rest.len() - rest.trim_start().len());
                        if b.get(k) == Some(&b',') {
                            j = k + 1;
                        } else {
                            break;
                        }
                    }
                }
            }
            end = j;
        }
        let (wait_end, wait) = next_word(sql, end);
        if wait == "NOWAIT" {
            end = wait_end;
        } else if wait == "SKIP" {
            let (locked_end, locked) = next_word(sql, wait_end);
            if locked == "LOCKED" {
                end = locked_end;
            }
        }
    }
    (end > start).then_some((end, keys))
}

/// The end of a parenthesized list at `open` (a `(`) and its top-level items' ranges
/// (trimmed); `None` when it is not closed.
fn parenthesized(b: &[u8], open: usize) -> Option<(usize, Vec<std::ops::Range<usize>>)> {
    let (mut j, mut nest, mut from, mut items) = (open + 1, 0_usize, open + 1, Vec::new());
    let trimmed = |r: std::ops::Range<usize>| {
        let (mut s, mut e) = (r.start, r.end);
        while s < e && b[s].is_ascii_whitespace() {
            s += 1;
        }
        while e > s && b[e - 1].is_ascii_whitespace() {
            e -= 1;
        }
        s..e
    };
    loop {
        match *b.get(j)? {
            b'\'' => {
                j = quoted_end(b, j, b'\'', false);
                continue;
            }
            b'"' => {
                j = quoted_end(b, j, b'"', false);
                continue;
            }
            b'(' | b'[' => nest += 1,
            b']' => nest = nest.checked_sub(1)?,
            b')' if nest > 0 => nest -= 1,
            b')' => {
                items.push(trimmed(from..j));
                return Some((j + 1, items));
            }
            b',' if nest == 0 => {
                items.push(trimmed(from..j));
                from = j + 1;
            }
            b';' => return None,
            _ => {}
        }
        j += 1;
    }
}

/// The TABLESAMPLE clause whose keyword spans `start..i`: `method (args…)` and an optional
/// `REPEATABLE (seed)`. `None` when it is not of that form (left to the parser).
fn sample_clause(sql: &str, start: usize, i: usize) -> Option<Sample> {
    let b = sql.as_bytes();
    let (method_end, method) = next_word(sql, i);
    if method.is_empty() {
        return None;
    }
    let method_range = method_end - method.len()..method_end;
    let open = method_end + (sql[method_end..].len() - sql[method_end..].trim_start().len());
    if b.get(open) != Some(&b'(') {
        return None;
    }
    let (mut end, args) = parenthesized(b, open)?;
    let mut seed = None;
    let (rep_end, rep) = next_word(sql, end);
    if rep == "REPEATABLE" {
        let open = rep_end + (sql[rep_end..].len() - sql[rep_end..].trim_start().len());
        if b.get(open) != Some(&b'(') {
            return None;
        }
        let (seed_end, mut items) = parenthesized(b, open)?;
        if items.len() != 1 {
            return None;
        }
        seed = items.pop();
        end = seed_end;
    }
    Some(Sample {
        range: start..end,
        method: method_range,
        args,
        seed,
    })
}

/// Where `IS` or `IS NOT` ends right before `at` (whitespace between): the `IS`'s offset.
fn is_before(sql: &str, at: usize) -> Option<usize> {
    let word_before = |end: usize| -> Option<(usize, String)> {
        let head = sql[..end].trim_end();
        // Note: counted in ASCII letters from the end, so `start` is a char boundary
        // whatever precedes the word.
        let start = head.len()
            - head
                .bytes()
                .rev()
                .take_while(u8::is_ascii_alphabetic)
                .count();
        (start < head.len()).then(|| (start, head[start..].to_ascii_uppercase()))
    };
    match word_before(at)? {
        (start, w) if w == "IS" => Some(start),
        (start, w) if w == "NOT" => match word_before(start)? {
            (is_at, w) if w == "IS" => Some(is_at),
            _ => None,
        },
        _ => None,
    }
}

/// The end of a JSON predicate's optional words after `JSON` (which ends at `i`): the item
/// kind and the unique-keys clause.
fn json_predicate_end(sql: &str, i: usize) -> usize {
    let mut end = i;
    let next = |from: usize| -> (usize, String) {
        let rest = &sql[from..];
        let start = from + (rest.len() - rest.trim_start().len());
        let len = sql[start..]
            .bytes()
            .take_while(u8::is_ascii_alphabetic)
            .count();
        (start + len, sql[start..start + len].to_ascii_uppercase())
    };
    let (after, w) = next(end);
    if matches!(w.as_str(), "VALUE" | "SCALAR" | "ARRAY" | "OBJECT") {
        end = after;
    }
    let (after, w) = next(end);
    if w == "WITH" || w == "WITHOUT" {
        let (after_unique, u) = next(after);
        if u == "UNIQUE" {
            end = after_unique;
            let (after_keys, k) = next(end);
            if k == "KEYS" {
                end = after_keys;
            }
        }
    }
    end
}

/// The end of the numeric literal starting at `i` (a digit): digits, underscores, a
/// fraction, an exponent; or a `0x`/`0o`/`0b` integer.
fn number_end(b: &[u8], i: usize) -> usize {
    let radix = match (b[i], b.get(i + 1).map(u8::to_ascii_lowercase)) {
        (b'0', Some(b'x')) => Some(16),
        (b'0', Some(b'o')) => Some(8),
        (b'0', Some(b'b')) => Some(2),
        _ => None,
    };
    if let Some(radix) = radix {
        let digits = b[i + 2..]
            .iter()
            .take_while(|c| **c == b'_' || char::from(**c).is_digit(radix))
            .count();
        if digits > 0 {
            return i + 2 + digits;
        }
    }
    let run = |from: usize| {
        from + b[from..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b'_')
            .count()
    };
    let mut end = run(i);
    if b.get(end) == Some(&b'.') && b.get(end + 1) != Some(&b'.') {
        end = run(end + 1);
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
        if b.get(end + 1 + sign).is_some_and(u8::is_ascii_digit) {
            end = run(end + 1 + sign);
        }
    }
    end
}

/// A numeric literal in one of PostgreSQL 16's forms as a decimal of the same type that is
/// no longer than it, and the form's name; `None` for a plain literal.
fn number_rewrite(text: &str) -> Option<(String, &'static str)> {
    let lower = text.to_ascii_lowercase();
    let prefixed = [
        ("0x", 16, "a hexadecimal integer literal"),
        ("0o", 8, "an octal integer literal"),
        ("0b", 2, "a binary integer literal"),
    ]
    .into_iter()
    .find_map(|(p, radix, form)| {
        lower
            .strip_prefix(p)
            .map(|d| (d.replace('_', ""), radix, form))
    });
    let Some((digits, radix, form)) = prefixed else {
        return text
            .contains('_')
            .then(|| (text.replace('_', ""), "an underscore in a numeric literal"));
    };
    // Note: `0x` or `0x_` has no digits: left as written (before PostgreSQL 16, `0` and an
    // alias; from 16, an error the parser reports).
    if digits.is_empty() {
        return None;
    }
    let decimal = match u128::from_str_radix(&digits, radix) {
        Ok(v) => v.to_string(),
        Err(_) => "1e19".to_owned(),
    };
    if decimal.len() <= text.len() {
        return Some((decimal, form));
    }
    // Note: a placeholder of the type PostgreSQL gives the value (int4, int8, numeric).
    let value = u128::from_str_radix(&digits, radix).unwrap_or(u128::MAX);
    let placeholder = if value <= 2_147_483_647 {
        "1"
    } else if value <= 9_223_372_036_854_775_807 {
        "2147483648"
    } else {
        "1e19"
    };
    Some((placeholder.to_owned(), form))
}

/// The end of the operator after `ORDER BY x USING` (ending at `i`): `USING >`. JOIN's and
/// DELETE's `USING` are followed by `(` or a name instead.
fn sort_operator_end(b: &[u8], i: usize) -> Option<usize> {
    let start = i + b[i..]
        .iter()
        .take_while(|c| c.is_ascii_whitespace())
        .count();
    let len = b[start..]
        .iter()
        .take_while(|c| b"<>=!~+-*/%^&|#@?".contains(c))
        .count();
    (len > 0).then_some(start + len)
}

/// The end of `CURRENT ROW`, `GROUP`, `TIES` or `NO OTHERS` after `EXCLUDE` (ending at `i`).
fn frame_exclusion_end(sql: &str, i: usize) -> Option<usize> {
    let words = |from: usize, n: usize| -> (String, usize) {
        let mut at = from;
        let mut got = Vec::new();
        for _ in 0..n {
            let rest = &sql[at..];
            let skip = rest.len() - rest.trim_start().len();
            let start = at + skip;
            let len = sql[start..]
                .bytes()
                .take_while(u8::is_ascii_alphabetic)
                .count();
            got.push(sql[start..start + len].to_ascii_uppercase());
            at = start + len;
        }
        (got.join(" "), at)
    };
    let (one, end1) = words(i, 1);
    let (two, end2) = words(i, 2);
    match (one.as_str(), two.as_str()) {
        ("GROUP" | "TIES", _) => Some(end1),
        (_, "CURRENT ROW" | "NO OTHERS") => Some(end2),
        _ => None,
    }
}

/// Whether `text` is one string literal (`'key'`), blanks aside.
fn is_string_literal(text: &str) -> bool {
    let t = text.trim();
    t.len() >= 2 && t.starts_with('\'') && quoted_end(t.as_bytes(), 0, b'\'', false) == t.len()
}

/// The subscripts directly at `i` (`[e]`, `[e][f]`, `[lo:hi]`) when an `=` (not `=>`)
/// follows them: the index after them, the ranges of their bounds, and whether one is a slice.
fn set_subscripts(b: &[u8], i: usize) -> Option<(usize, Vec<std::ops::Range<usize>>, bool)> {
    let (mut j, mut bounds, mut slice) = (i, Vec::new(), false);
    while b.get(j) == Some(&b'[') {
        let (mut k, mut nest, mut from) = (j + 1, 0_usize, j + 1);
        loop {
            match *b.get(k)? {
                b'[' | b'(' => nest += 1,
                b')' => nest = nest.checked_sub(1)?,
                b']' if nest > 0 => nest -= 1,
                b']' => break,
                b':' if nest == 0
                    && b.get(k + 1) != Some(&b':')
                    && b.get(k.wrapping_sub(1)) != Some(&b':') =>
                {
                    slice = true;
                    bounds.push(from..k);
                    from = k + 1;
                }
                // Note: a string is a key (`doc['key']`), skipped whole; comments and
                // statement ends are not subscripts to rewrite.
                b'\'' => {
                    k = quoted_end(b, k, b'\'', false);
                    continue;
                }
                b'"' | b';' => return None,
                b'-' if b.get(k + 1) == Some(&b'-') => return None,
                b'/' if b.get(k + 1) == Some(&b'*') => return None,
                _ => {}
            }
            k += 1;
        }
        bounds.push(from..k);
        j = k + 1;
    }
    if j == i {
        return None;
    }
    let mut k = j;
    while k < b.len() && b[k].is_ascii_whitespace() {
        k += 1;
    }
    let bounds = bounds
        .into_iter()
        .filter(|r| b[r.clone()].iter().any(|c| !c.is_ascii_whitespace()))
        .collect();
    (b.get(k) == Some(&b'=') && b.get(k + 1) != Some(&b'>')).then_some((j, bounds, slice))
}

/// `$tag$` or `$$` at `i`.
#[cfg(test)]
mod tests {
    #[test]
    fn json_predicates_read_as_null_tests() {
        let sql =
            "SELECT a IS JSON, b IS NOT JSON OBJECT WITH UNIQUE KEYS, c is json array, d IS NULL";
        let r = super::rewrite(sql);
        assert_eq!(
            r.sql,
            "SELECT a IS NULL, b IS NOT NULL                        , c is NULL      , d IS NULL"
        );
        assert_eq!(r.json_predicates, [9..16, 20..55, 59..72]);
    }

    /// A word before `JSON` that follows a multi-byte character is read from a char boundary.
    #[test]
    fn a_multibyte_character_before_a_json_predicate() {
        let sql = "SELECT a FROM t WHERE \u{55b}R IS JSON";
        assert!(super::rewrite(sql).sql.starts_with("SELECT a FROM t WHERE"));
        super::rewrite(
            "WITH [[/NSO-R\u{b}JS[\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}\u{1a}/OON/-R-R\u{b}JSON/\u{b}JSOJS[/OON/R\u{b}JSON/R\u{b}JS[/OON/ON/R\u{b}JS[/OON/R\u{b}JSON/\u{b}JSO\u{55b}R\u{b}JSON/\u{b}JSON/(++++vT",
        );
    }

    /// A prefix without digits is left as written, never rewritten past its own length.
    #[test]
    fn a_prefix_without_digits_is_left_alone() {
        for sql in ["0x_", "0x", "0b", "SELECT 0o_ FROM t"] {
            assert_eq!(super::rewrite(sql).sql, sql);
        }
    }

    #[test]
    fn postgres_16_numbers_become_decimals_of_the_same_length() {
        let r = super::rewrite(
            "SELECT 1_000_000, 0x1F, 0o17, 0B101, 1_0.5e1_0, 0xFFFFFFFFFF, a1_2, '1_0'",
        );
        assert_eq!(
            r.sql,
            "SELECT 1000000  , 31  , 15  , 5    , 10.5e10  , 2147483648  , a1_2, '1_0'"
        );
        let forms: Vec<&str> = r.numbers.iter().map(|n| n.1).collect();
        assert_eq!(
            forms,
            [
                "an underscore in a numeric literal",
                "a hexadecimal integer literal",
                "an octal integer literal",
                "a binary integer literal",
                "an underscore in a numeric literal",
                "a hexadecimal integer literal",
            ]
        );
        assert_eq!(r.numbers[1].0, 18..22);
        assert!(super::rewrite("SELECT 12, 1.5e3, 0").numbers.is_empty());
    }

    use super::*;

    #[test]
    fn keywords_are_blanked_in_place() {
        let sql = "SELECT x BETWEEN symmetric 1 AND 2, f(a, VARIADIC b) FROM t";
        let r = rewrite(sql);
        assert_eq!(r.sql.len(), sql.len());
        assert_eq!(
            r.sql,
            "SELECT x BETWEEN           1 AND 2, f(a,          b) FROM t"
        );
        assert_eq!(r.variadic, [sql.find(" b)").unwrap() + 1]);
    }

    #[test]
    fn constant_subscripts_of_set_targets_are_blanked() {
        let sql = "UPDATE t SET a[1] = 2, b = c[1] WHERE d[2] = 3";
        let r = rewrite(sql);
        assert_eq!(r.sql, "UPDATE t SET a    = 2, b = c[1] WHERE d[2] = 3");
        assert_eq!(r.element_targets, [13]);
        let texts: Vec<&str> = r.subscripts.iter().map(|s| &sql[s.clone()]).collect();
        assert_eq!((texts, r.subscripts[0].start), (vec!["1"], 15));
    }

    #[test]
    fn parameter_and_slice_subscripts_are_set_aside() {
        let sql = "UPDATE t SET a[$1] = $2, b[2:$3] = $4, c[f(x)][1] = 0";
        let r = rewrite(sql);
        assert_eq!(r.sql.len(), sql.len());
        assert_eq!(
            r.sql,
            "UPDATE t SET a     = $2, b       = $4, c          = 0"
        );
        let c = sql.find("c[").unwrap();
        assert_eq!(r.element_targets, [13, c], "a slice's value is the array");
        let texts: Vec<&str> = r.subscripts.iter().map(|s| &sql[s.clone()]).collect();
        assert_eq!(texts, ["$1", "2", "$3", "f(x)", "1"]);
    }

    #[test]
    fn only_frame_exclusions_and_string_offset_casts_are_blanked() {
        let sql = "SELECT * FROM ONLY t, only u JOIN ONLY v ON true FETCH FIRST 1 ROW ONLY";
        assert_eq!(
            rewrite(sql).sql,
            "SELECT * FROM      t,      u JOIN      v ON true FETCH FIRST 1 ROW ONLY"
        );
        let sql = "SELECT sum(x) OVER (ROWS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE NO OTHERS), \
                   sum(x) OVER (ORDER BY d RANGE '1 day'::interval PRECEDING EXCLUDE TIES) FROM t";
        let out = rewrite(sql).sql;
        assert_eq!(out.len(), sql.len());
        assert!(!out.contains("EXCLUDE") && !out.contains("OTHERS") && !out.contains("TIES"));
        assert!(out.contains("RANGE '1 day'           PRECEDING"));
        assert_eq!(
            rewrite("SELECT a FROM t ORDER BY a USING >, b USING <= LIMIT 1").sql,
            "SELECT a FROM t ORDER BY a        , b          LIMIT 1"
        );
        assert_eq!(
            rewrite("DELETE FROM t USING u WHERE t.a = u.a").sql,
            "DELETE FROM t USING u WHERE t.a = u.a"
        );
        assert_eq!(
            rewrite("SELECT SUBSTRING(a SIMILAR 'x#\"y#\"' ESCAPE '#'), a SIMILAR TO 'b' FROM t")
                .sql,
            "SELECT SUBSTRING(a ,       'x#\"y#\"' ,      '#'), a SIMILAR TO 'b' FROM t"
        );
        // A cast not followed by PRECEDING or FOLLOWING stays.
        assert_eq!(rewrite("SELECT '1'::int4 + 1").sql, "SELECT '1'::int4 + 1");
    }

    #[test]
    fn locks_samples_and_conflict_predicates_are_taken_out_in_place() {
        let sql = "SELECT a FROM t FOR NO KEY UPDATE OF t SKIP LOCKED LIMIT $1";
        let r = rewrite(sql);
        assert_eq!(
            r.sql.trim_end(),
            "SELECT a FROM t                                    LIMIT $1"
        );
        assert_eq!(
            rewrite("SELECT a FROM t FOR KEY SHARE NOWAIT").sql,
            "SELECT a FROM t FOR     SHARE NOWAIT"
        );
        // Note: OFFSET, a lock, then LIMIT is PostgreSQL's syntax error: left for the parser.
        let sql = "SELECT a FROM t OFFSET 1 FOR UPDATE LIMIT 2";
        assert_eq!(rewrite(sql).sql, sql);
        let sql = "SELECT a FROM t AS x TABLESAMPLE BERNOULLI ($1 * 2) REPEATABLE ($2) WHERE b";
        let r = rewrite(sql);
        assert_eq!(r.sql.len(), sql.len());
        assert_eq!(
            r.sql.split_whitespace().collect::<Vec<_>>(),
            ["SELECT", "a", "FROM", "t", "AS", "x", "WHERE", "b"]
        );
        let s = &r.samples[0];
        let text = |range: &std::ops::Range<usize>| &sql[range.clone()];
        assert_eq!(text(&s.method), "BERNOULLI");
        assert_eq!(s.args.iter().map(text).collect::<Vec<_>>(), ["$1 * 2"]);
        assert_eq!(s.seed.as_ref().map(text), Some("$2"));
        let sql = "INSERT INTO t (a) VALUES ($1) ON CONFLICT (a) WHERE (b = $2) DO NOTHING";
        let r = rewrite(sql);
        assert_eq!(r.sql.len(), sql.len());
        assert!(
            r.sql
                .split_whitespace()
                .collect::<Vec<_>>()
                .ends_with(&["CONFLICT", "(a)", "DO", "NOTHING"])
        );
        assert_eq!(&sql[r.conflict_predicates[0].clone()], "(b = $2)");
        let sql = "INSERT INTO t (a) OVERRIDING SYSTEM VALUE VALUES ($1)";
        let r = rewrite(sql);
        assert_eq!(
            r.sql,
            sql.replace("OVERRIDING SYSTEM VALUE", &" ".repeat(23))
        );
        assert_eq!(&sql[r.overriding[0].0.clone()], "OVERRIDING SYSTEM VALUE");
        assert!(r.overriding[0].1);
        let r = rewrite("INSERT INTO t overriding user value SELECT 1");
        assert_eq!(r.overriding.len(), 1);
        assert!(!r.overriding[0].1);
    }

    #[test]
    fn strings_comments_and_identifiers_are_left_alone() {
        let sql = "SELECT 'BETWEEN SYMMETRIC', $$ (VARIADIC x) $$, \"variadic\" -- f(VARIADIC y)\n/* BETWEEN SYMMETRIC */ FROM t WHERE a = $1";
        let r = rewrite(sql);
        assert_eq!(r.sql, sql);
        assert!(r.variadic.is_empty());
    }
}
