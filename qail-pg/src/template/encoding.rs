//! The [`Template`]: a statement's Parse message, Bind prefix and expected result columns,
//! pre-encoded as one byte string, and the stable statement name.

use crate::proto::message::{EncodeError, Parse, bind_prefix};
use crate::types::Oid;

/// A compiled statement: what `qail!` emits as a `static`; also buildable at run time with
/// [`Template::leak`].
///
/// The Parse message, the Bind prefix and the expected result columns travel as one byte
/// string, [`encoded`](Self::encoded), written by [`Template::encode`] and read back by the
/// accessors: `qail!` emits one `static` with three literals per query, which keeps the code
/// rustc has to check for each query small.
pub struct Template {
    /// The prepared statement's name: `q` and 16 hex digits of [`statement_name`]'s hash.
    pub name: &'static str,
    /// Parameter type OIDs; 0 for a user type, resolved from the server's
    /// ParameterDescription at run time.
    pub param_oids: &'static [Oid],
    /// The Parse message, the Bind prefix and the expected columns, as [`Template::encode`]
    /// writes them. Bytes from anywhere else read as an empty statement.
    pub encoded: &'static [u8],
    /// Where the statement is written, `file:line` (of the `qail!` invocation, as `file!()`
    /// and `line!()` name it), named by the errors about it; empty for a template built at
    /// run time.
    pub source: &'static str,
    /// Whether running the statement may change session state that the pool's
    /// [`Reset::Session`](crate::pool::Reset::Session) undoes (a setting, a session advisory
    /// lock, `currval`…): a connection that ran such a statement is reset when it returns to
    /// the pool, one that ran none is not. `qail!` sets it from the analysis (see
    /// `qail_analyzer::Analysis::changes_session`); [`Template::leak`] sets it, since its SQL
    /// was not analyzed.
    pub changes_session: bool,
}

/// A result column as the snapshot describes it, checked against the server's RowDescription
/// the first time a connection prepares the statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpectedColumn {
    /// Column name.
    pub name: &'static str,
    /// Type OID; 0 for a user type (checked by `type_name`).
    pub type_oid: Oid,
    /// The type's name as the snapshot knows it (`int4`, `_text`, `mood`).
    pub type_name: &'static str,
}

/// A template's parts as [`Template::encode`] returns them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    /// The statement name ([`statement_name`]).
    pub name: String,
    /// The bytes for [`Template::encoded`].
    pub bytes: Vec<u8>,
}

/// Where the parts start in [`Template::encoded`]: a 4-byte Parse length and a 2-byte Bind
/// prefix length, then the Parse message, the Bind prefix and the columns (a 2-byte count,
/// then per column its type OID, and its name and type name each after a 2-byte length).
const HEADER: usize = 6;

impl Template {
    /// What `qail!` emits in place of a query's template when the compiler produces no code
    /// (`cargo check`): an empty statement. Nothing runs such a build, and the query's type
    /// is all its check needs. Not a public API.
    #[doc(hidden)]
    pub const NOT_BUILT: &'static Template = &Template {
        name: "",
        param_oids: &[],
        encoded: &[],
        source: "",
        changes_session: false,
    };

    /// Encodes a statement: its name, and the bytes of [`Template::encoded`] for `sql` with
    /// parameter types `param_oids` and the expected result `columns` (name, type OID, type
    /// name). An error for a NUL in the SQL or a name, or parts too long for the protocol.
    pub fn encode(
        sql: &str,
        param_oids: &[Oid],
        columns: &[(&str, Oid, &str)],
    ) -> Result<Encoded, EncodeError> {
        let name = statement_name(sql, param_oids);
        let parse = Template::encode_parse(sql, &name, param_oids)?;
        let bind = Template::encode_bind_prefix(&name, param_oids.len())?;
        let too_long = |field| EncodeError::TooLong { field };
        let mut bytes =
            Vec::with_capacity(HEADER + parse.len() + bind.len() + 2 + columns.len() * 24);
        let parse_len = u32::try_from(parse.len()).map_err(|_| too_long("the SQL text"))?;
        let bind_len = u16::try_from(bind.len()).map_err(|_| too_long("the statement name"))?;
        bytes.extend_from_slice(&parse_len.to_be_bytes());
        bytes.extend_from_slice(&bind_len.to_be_bytes());
        bytes.extend_from_slice(&parse);
        bytes.extend_from_slice(&bind);
        let count = u16::try_from(columns.len()).map_err(|_| too_long("the column list"))?;
        bytes.extend_from_slice(&count.to_be_bytes());
        for (column, oid, type_name) in columns {
            bytes.extend_from_slice(&oid.to_be_bytes());
            for text in [column, type_name] {
                let len = u16::try_from(text.len()).map_err(|_| too_long("a column name"))?;
                bytes.extend_from_slice(&len.to_be_bytes());
                bytes.extend_from_slice(text.as_bytes());
            }
        }
        Ok(Encoded { name, bytes })
    }

    /// A template built at run time, for statements built once per process: its name, OIDs
    /// and bytes are leaked so it can be `'static` like the ones `qail!` emits. Its SQL was
    /// not analyzed, so it counts as changing the session
    /// ([`changes_session`](Self::changes_session)).
    pub fn leak(
        sql: &str,
        param_oids: &[Oid],
        columns: &[(&str, Oid, &str)],
    ) -> Result<&'static Template, EncodeError> {
        Template::leak_at(sql, param_oids, columns, "")
    }

    /// [`Template::leak`] for a statement written at `source` (`file:line`).
    pub fn leak_at(
        sql: &str,
        param_oids: &[Oid],
        columns: &[(&str, Oid, &str)],
        source: &'static str,
    ) -> Result<&'static Template, EncodeError> {
        Template::leak_analyzed(sql, param_oids, columns, source, true)
    }

    /// [`Template::leak_at`] for SQL analyzed at compile time, whose analysis said whether
    /// it changes the session.
    pub(crate) fn leak_analyzed(
        sql: &str,
        param_oids: &[Oid],
        columns: &[(&str, Oid, &str)],
        source: &'static str,
        changes_session: bool,
    ) -> Result<&'static Template, EncodeError> {
        let encoded = Template::encode(sql, param_oids, columns)?;
        Ok(Box::leak(Box::new(Template {
            name: Box::leak(encoded.name.into_boxed_str()),
            param_oids: Box::leak(param_oids.to_vec().into_boxed_slice()),
            encoded: Box::leak(encoded.bytes.into_boxed_slice()),
            source,
            changes_session,
        })))
    }

    fn part(&self, at: usize, len: usize) -> &'static [u8] {
        let encoded = self.encoded;
        at.checked_add(len)
            .and_then(|end| encoded.get(at..end))
            .unwrap_or_default()
    }

    fn parse_len(&self) -> usize {
        let len = self.encoded.first_chunk::<4>().copied().unwrap_or_default();
        usize::try_from(u32::from_be_bytes(len)).unwrap_or(usize::MAX)
    }

    fn bind_len(&self) -> usize {
        let len = self
            .part(4, 2)
            .first_chunk::<2>()
            .copied()
            .unwrap_or_default();
        usize::from(u16::from_be_bytes(len))
    }

    /// The complete Parse message (named statement, parameter OIDs).
    pub fn parse(&self) -> &'static [u8] {
        self.part(HEADER, self.parse_len())
    }

    /// The Bind message after its length: portal `""`, the statement name and the parameter
    /// format codes (all binary). The parameter count and values follow at run time.
    #[inline]
    pub fn bind_prefix(&self) -> &'static [u8] {
        self.part(HEADER.saturating_add(self.parse_len()), self.bind_len())
    }

    /// The SQL text, with `$n` placeholders (read out of the Parse message).
    pub fn sql(&self) -> &'static str {
        // Note: 'P', the length, the name and its NUL; at the end, the SQL's NUL, the
        // parameter count and the OIDs.
        let parse = self.parse();
        let start = 5 + self.name.len() + 1;
        let tail = 1 + 2 + 4 * self.param_oids.len();
        let sql = parse
            .len()
            .checked_sub(tail)
            .and_then(|end| parse.get(start..end))
            .unwrap_or_default();
        std::str::from_utf8(sql).unwrap_or_default()
    }

    /// The result columns the statement is expected to return, in order.
    pub fn columns(&self) -> ExpectedColumns {
        let at = HEADER
            .saturating_add(self.parse_len())
            .saturating_add(self.bind_len());
        let rest = self.encoded.get(at..).unwrap_or_default();
        match rest.split_first_chunk::<2>() {
            Some((count, columns)) => ExpectedColumns {
                left: u16::from_be_bytes(*count),
                bytes: columns,
            },
            None => ExpectedColumns {
                left: 0,
                bytes: &[],
            },
        }
    }

    /// The complete Parse message for statement `name`: byte-identical to what
    /// [`Parse::encode`] writes at run time.
    pub fn encode_parse(sql: &str, name: &str, oids: &[Oid]) -> Result<Vec<u8>, EncodeError> {
        let mut buf = Vec::new();
        Parse {
            name,
            query: sql,
            param_types: oids,
        }
        .encode(&mut buf)?;
        Ok(buf)
    }

    /// The Bind message after its length, up to the parameter count, for statement `name`:
    /// the unnamed portal, the name and the parameter format codes, as
    /// [`proto::message::bind_prefix`](crate::proto::message::bind_prefix) encodes them.
    pub fn encode_bind_prefix(name: &str, param_count: usize) -> Result<Vec<u8>, EncodeError> {
        let mut buf = Vec::with_capacity(name.len() + 6);
        bind_prefix(&mut buf, "", name, param_count)?;
        Ok(buf)
    }
}

impl std::fmt::Debug for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Template")
            .field("name", &self.name)
            .field("sql", &self.sql())
            .field("param_oids", &self.param_oids)
            .field("columns", &self.columns().collect::<Vec<_>>())
            .field("source", &self.source)
            .finish()
    }
}

/// The expected columns of a [`Template`], in order.
#[derive(Debug, Clone)]
pub struct ExpectedColumns {
    left: u16,
    bytes: &'static [u8],
}

impl ExpectedColumns {
    fn text(&mut self) -> Option<&'static str> {
        let (len, rest) = self.bytes.split_first_chunk::<2>()?;
        let (text, rest) = rest.split_at_checked(usize::from(u16::from_be_bytes(*len)))?;
        self.bytes = rest;
        std::str::from_utf8(text).ok()
    }
}

impl Iterator for ExpectedColumns {
    type Item = ExpectedColumn;

    fn next(&mut self) -> Option<ExpectedColumn> {
        self.left = self.left.checked_sub(1)?;
        let (oid, rest) = self.bytes.split_first_chunk::<4>()?;
        self.bytes = rest;
        let type_oid = Oid::from_be_bytes(*oid);
        let name = self.text()?;
        let type_name = self.text()?;
        Some(ExpectedColumn {
            name,
            type_oid,
            type_name,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(usize::from(self.left)))
    }
}

/// The statement name of `sql` with parameter types `oids`: `q` followed by the 16 hex digits
/// of a 64-bit FNV-1a hash of the SQL bytes, a NUL, and the OIDs (big-endian). Stable across
/// builds and platforms, so the same query prepares under the same name everywhere.
pub fn statement_name(sql: &str, oids: &[Oid]) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let bytes = sql
        .as_bytes()
        .iter()
        .copied()
        .chain([0])
        .chain(oids.iter().flat_map(|oid| oid.to_be_bytes()));
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(PRIME);
    }
    format!("q{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::message::{Bind, Format};
    use crate::types::Encode;

    #[test]
    fn parse_bytes_are_the_run_time_encoding() {
        let sql = "SELECT name FROM harbors WHERE id = $1";
        let name = statement_name(sql, &[2950]);
        let parse = Template::encode_parse(sql, &name, &[2950]).unwrap();
        let mut runtime = Vec::new();
        Parse {
            name: &name,
            query: sql,
            param_types: &[2950],
        }
        .encode(&mut runtime)
        .unwrap();
        assert_eq!(parse, runtime);
        assert_eq!(parse[0], b'P');
    }

    #[test]
    fn bind_prefix_is_the_run_time_encoding() {
        for params in [&[][..], &[&42i32 as &(dyn Encode + Sync), &7i32][..]] {
            let name = "q0123456789abcdef";
            let prefix = Template::encode_bind_prefix(name, params.len()).unwrap();
            let mut runtime = Vec::new();
            Bind {
                portal: "",
                statement: name,
                params,
                param_types: &vec![23; params.len()],
                result_format: Format::Binary,
            }
            .encode(&mut runtime)
            .unwrap();
            assert_eq!(&runtime[5..5 + prefix.len()], &prefix[..]);
            let count = u16::try_from(params.len()).unwrap().to_be_bytes();
            assert_eq!(&runtime[5 + prefix.len()..7 + prefix.len()], &count);
        }
    }

    #[test]
    fn encoded_templates_read_back_their_parts() {
        let sql = "SELECT id, name FROM harbors WHERE country = $1 AND code = $2";
        let oids = [25, 1043];
        let columns = [("id", 2950, "uuid"), ("name", 0, "citext")];
        let t = Template::leak(sql, &oids, &columns).unwrap();
        assert_eq!(t.name, statement_name(sql, &oids));
        assert_eq!(t.sql(), sql);
        assert_eq!(t.param_oids, &oids);
        assert_eq!(
            t.parse(),
            Template::encode_parse(sql, t.name, &oids).unwrap()
        );
        assert_eq!(
            t.bind_prefix(),
            Template::encode_bind_prefix(t.name, 2).unwrap()
        );
        let read: Vec<_> = t
            .columns()
            .map(|c| (c.name, c.type_oid, c.type_name))
            .collect();
        assert_eq!(read, columns);
        let none = Template::leak("SELECT 1 WHERE false", &[], &[]).unwrap();
        assert_eq!(none.sql(), "SELECT 1 WHERE false");
        assert_eq!(none.columns().count(), 0);
    }

    #[test]
    fn hand_made_bytes_read_as_an_empty_statement() {
        for encoded in [
            &b""[..],
            b"\xff\xff\xff\xff\x00\x09P",
            b"\x00\x00\x00\x01\x00\x00P\x00\x05",
        ] {
            let t = Template {
                name: "q",
                param_oids: &[],
                encoded,
                source: "",
                changes_session: false,
            };
            assert!(t.bind_prefix().is_empty() || t.parse().is_empty());
            assert_eq!(t.sql(), "");
            assert!(t.columns().count() <= 5);
        }
    }

    #[test]
    fn encoders_refuse_nul() {
        assert!(Template::encode("SELECT '\0'", &[], &[]).is_err());
        assert!(Template::encode_parse("SELECT '\0'", "q", &[]).is_err());
        assert!(Template::encode_bind_prefix("q\0", 0).is_err());
    }

    #[test]
    fn statement_names_are_stable_and_depend_on_types() {
        let a = statement_name("SELECT $1", &[23]);
        assert_eq!(a, statement_name("SELECT $1", &[23]));
        assert_ne!(a, statement_name("SELECT $1", &[20]));
        assert_ne!(a, statement_name("SELECT $1 ", &[23]));
        assert_eq!(a.len(), 17);
        assert!(a.starts_with('q'));
        // FNV-1a of the empty input followed by the NUL separator.
        assert_eq!(statement_name("", &[]), "qaf63bd4c8601b7df");
    }
}
