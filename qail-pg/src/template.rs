//! Compiled queries: what `qail!` emits, and the row interface the connection decodes into.
//!
//! A [`Template`] is a `static` holding a statement's pre-encoded Parse message and Bind
//! prefix, built at compile time by the same encoder ([`crate::proto::message`]) the
//! connection uses at run time. A [`Query`] pairs a template with borrowed parameters; its
//! rows are decoded by a [`Decoder`] (every [`FromRow`] type is one) from a [`RawRow`], one
//! column after the other, by index.
//!
//! This module is sans-IO: it builds without the `runtime` feature.

use std::marker::PhantomData;

use crate::error::{Error, Kind};
use crate::proto::message::{DataRow, DecodeError, EncodeError, Parse};
use crate::types::{BoxError, Decode, Encode, IsNull, Oid};

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
    /// and bytes are leaked so it can be `'static` like the ones `qail!` emits.
    pub fn leak(
        sql: &str,
        param_oids: &[Oid],
        columns: &[(&str, Oid, &str)],
    ) -> Result<&'static Template, EncodeError> {
        let encoded = Template::encode(sql, param_oids, columns)?;
        Ok(Box::leak(Box::new(Template {
            name: Box::leak(encoded.name.into_boxed_str()),
            param_oids: Box::leak(param_oids.to_vec().into_boxed_slice()),
            encoded: Box::leak(encoded.bytes.into_boxed_slice()),
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

    /// The Bind message after its length, up to the parameter count: the unnamed portal,
    /// statement `name` and the parameter format codes (one code, binary, when there are
    /// parameters; none otherwise) — the bytes the run-time Bind encoder writes there.
    pub fn encode_bind_prefix(name: &str, param_count: usize) -> Result<Vec<u8>, EncodeError> {
        if name.contains('\0') {
            return Err(EncodeError::Nul {
                field: "the statement name",
            });
        }
        let mut buf = Vec::with_capacity(name.len() + 6);
        buf.push(0);
        buf.extend_from_slice(name.as_bytes());
        buf.push(0);
        if param_count == 0 {
            buf.extend_from_slice(&[0, 0]);
        } else {
            buf.extend_from_slice(&[0, 1, 0, 1]);
        }
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

/// A DataRow borrowed from the read buffer, decoded by index with a cursor: columns are read
/// in order, each exactly once.
///
/// Note: the cursor is read inline by the row decoders (`#[inline]` on the hot methods, the
/// error paths kept out of line), since every column of every row goes through it.
#[derive(Debug, Clone)]
pub struct RawRow<'r> {
    /// The DataRow body: the column count, then each column's length and bytes.
    body: &'r [u8],
    /// Where the next column's length starts in `body`.
    pos: usize,
    len: usize,
    next: usize,
}

impl<'r> RawRow<'r> {
    /// Wraps a decoded DataRow.
    #[inline]
    pub fn new(row: DataRow<'r>) -> RawRow<'r> {
        RawRow {
            body: row.body(),
            pos: 2,
            len: row.len(),
            next: 0,
        }
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Decodes column `idx` of type `oid`. Columns must be read in increasing order; a skipped
    /// column is stepped over.
    #[inline]
    pub fn get<T: Decode<'r>>(&mut self, idx: usize, oid: Oid) -> Result<T, Error> {
        if idx != self.next {
            self.skip_to(idx)?;
        }
        let raw = self.take()?;
        if !T::accepts(oid) {
            return Err(wrong_type(idx, oid, std::any::type_name::<T>()));
        }
        T::decode_nullable(oid, raw).map_err(|e| decode_error(idx, e))
    }

    /// Steps over the columns before `idx`; an error when `idx` was already read.
    #[cold]
    fn skip_to(&mut self, idx: usize) -> Result<(), Error> {
        if idx < self.next {
            return Err(Error::new(
                Kind::Usage,
                format!("column {idx} was already read: read the columns of a row in order"),
            ));
        }
        while self.next < idx {
            self.take()?;
        }
        Ok(())
    }

    /// The bytes of the next column (`None` for NULL); checks its length against the body.
    #[inline]
    fn take(&mut self) -> Result<Option<&'r [u8]>, Error> {
        let idx = self.next;
        if idx >= self.len {
            return Err(missing_column(idx, self.len));
        }
        let Some((len, rest)) = self
            .body
            .get(self.pos..)
            .and_then(<[u8]>::split_first_chunk::<4>)
        else {
            return Err(malformed(idx, "is truncated"));
        };
        let len = i32::from_be_bytes(*len);
        self.next += 1;
        let Ok(n) = usize::try_from(len) else {
            if len == -1 {
                self.pos += 4;
                return Ok(None);
            }
            return Err(malformed(idx, "has a negative length"));
        };
        let Some(value) = rest.get(..n) else {
            return Err(malformed(idx, "is truncated"));
        };
        self.pos += 4 + n;
        Ok(Some(value))
    }

    /// The index of the next column to read.
    pub fn position(&self) -> usize {
        self.next
    }

    /// Decodes the next column, with its type OID taken from `columns` (the server's).
    #[inline]
    pub fn get_next<T: Decode<'r>>(&mut self, columns: &[Oid]) -> Result<T, Error> {
        let idx = self.next;
        let Some(&oid) = columns.get(idx) else {
            return Err(too_many_fields(columns.len()));
        };
        self.get(idx, oid)
    }

    /// Decodes the next column as `T`, then converts it with `TryFrom` (`#[qail(try_from)]`).
    pub fn get_next_as<T: Decode<'r>, U: TryFrom<T>>(&mut self, columns: &[Oid]) -> Result<U, Error>
    where
        U::Error: Into<BoxError>,
    {
        let idx = self.next;
        let value = self.get_next::<T>(columns)?;
        U::try_from(value).map_err(|e| decode_error(idx, e.into()))
    }
}

#[cold]
fn missing_column(idx: usize, len: usize) -> Error {
    Error::new(
        Kind::Usage,
        format!(
            "the row has {len} columns, column {idx} was asked for: check the query's column list"
        ),
    )
}

#[cold]
fn too_many_fields(len: usize) -> Error {
    Error::new(
        Kind::Usage,
        format!(
            "the row type reads more columns than the statement's {len}: add the missing column to the query, or mark the field #[qail(default)]"
        ),
    )
}

#[cold]
fn malformed(idx: usize, what: &str) -> Error {
    decode_error(
        idx,
        DecodeError::new(format!("DataRow column {idx} {what}")).into(),
    )
}

#[cold]
fn wrong_type(idx: usize, oid: Oid, rust: &str) -> Error {
    Error::new(
        Kind::Decode,
        format!(
            "column {idx} has type OID {oid}, which `{rust}` cannot be read from: change the field's type"
        ),
    )
}

#[cold]
fn decode_error(idx: usize, source: BoxError) -> Error {
    Error::with_source(
        Kind::Decode,
        format!("column {idx} could not be decoded: {source}"),
        source,
    )
}

/// A type built from one result row, column by column in order. Implemented by the row
/// struct `qail!` generates and by `#[derive(QailRow)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be built from a result row",
    note = "derive `QailRow` for it, or let `qail!` generate the row type"
)]
pub trait FromRow: Sized {
    /// Decodes the row; `columns` are the result column type OIDs the server reported.
    fn from_row(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error>;
}

/// Consecutive columns decoded into a tuple of owned values, in order: the body of the row
/// decoder `qail!` generates is one call to this (`let (id, name) = <(Uuid, String) as
/// Columns>::decode(row, columns)?;`), so each query adds one `?` and one trait lookup to
/// the user's crate rather than one per column. Implemented for tuples of 1 to 16 values.
pub trait Columns: Sized {
    /// Decodes the next `N` columns of `row`; `columns` are the result column type OIDs.
    fn decode(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error>;
}

macro_rules! tuple_columns {
    ($($t:ident)+) => {
        impl<$($t: for<'r> Decode<'r>),+> Columns for ($($t,)+) {
            #[inline]
            fn decode(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error> {
                Ok(($(row.get_next::<$t>(columns)?,)+))
            }
        }
    };
}

tuple_columns!(A);
tuple_columns!(A B);
tuple_columns!(A B C);
tuple_columns!(A B C D);
tuple_columns!(A B C D E);
tuple_columns!(A B C D E F);
tuple_columns!(A B C D E F G);
tuple_columns!(A B C D E F G H);
tuple_columns!(A B C D E F G H I);
tuple_columns!(A B C D E F G H I J);
tuple_columns!(A B C D E F G H I J K);
tuple_columns!(A B C D E F G H I J K L);
tuple_columns!(A B C D E F G H I J K L M);
tuple_columns!(A B C D E F G H I J K L M N);
tuple_columns!(A B C D E F G H I J K L M N O);
tuple_columns!(A B C D E F G H I J K L M N O P);

/// How a [`Query`]'s rows are decoded. Every [`FromRow`] type decodes itself; `qail!(Type =>
/// …)` generates a decoder building the user's struct by column name.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not decode result rows",
    note = "derive `QailRow` for a row struct, or let `qail!` generate the row type"
)]
pub trait Decoder {
    /// The row type produced.
    type Row;
    /// Decodes one row; `columns` are the result column type OIDs the server reported.
    fn decode(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self::Row, Error>;
}

impl<R: FromRow> Decoder for R {
    type Row = R;
    fn decode(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<R, Error> {
        R::from_row(row, columns)
    }
}

/// The row type of a statement that returns no rows (INSERT/UPDATE/DELETE without RETURNING).
/// It is no [`Decoder`]: fetching is a compile error ([`ReturnsRows`]); run it with `execute`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRows {}

/// Never implemented: the bound that makes fetching from a [`NoRows`] query a compile error
/// with this message (the inherent `fetch_*` methods of `Query<'_, NoRows>` require it).
#[diagnostic::on_unimplemented(
    message = "this statement returns no rows, so its rows cannot be fetched",
    label = "use `.execute(…)`, which returns the number of rows affected",
    note = "add a RETURNING clause to get rows back from INSERT, UPDATE or DELETE"
)]
pub trait ReturnsRows {}

/// Fetching from a statement without rows: each method fails to compile, saying to use
/// `execute` (or RETURNING).
impl Query<'_, NoRows> {
    /// Does not compile: the statement returns no rows.
    pub fn fetch_all<E: ?Sized + ReturnsRows>(
        self,
        _: &mut E,
    ) -> std::future::Pending<Result<Vec<NoRows>, Error>> {
        std::future::pending()
    }

    /// Does not compile: the statement returns no rows.
    pub fn fetch_one<E: ?Sized + ReturnsRows>(
        self,
        _: &mut E,
    ) -> std::future::Pending<Result<NoRows, Error>> {
        std::future::pending()
    }

    /// Does not compile: the statement returns no rows.
    pub fn fetch_optional<E: ?Sized + ReturnsRows>(
        self,
        _: &mut E,
    ) -> std::future::Pending<Result<Option<NoRows>, Error>> {
        std::future::pending()
    }

    /// Does not compile: the statement returns no rows.
    pub fn fetch<E: ?Sized + ReturnsRows>(self, _: &mut E) -> std::iter::Empty<NoRows> {
        std::iter::empty()
    }
}

/// The parameters of a [`Query`], in `$n` order.
pub struct Params<'a> {
    inline: [&'a (dyn Encode + Sync); INLINE],
    len: usize,
    heap: Vec<&'a (dyn Encode + Sync)>,
}

const INLINE: usize = 16;

/// Fills unused inline slots; never encoded.
struct Unused;

impl Encode for Unused {
    fn encode(&self, _: Oid, _: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        Ok(IsNull::Yes)
    }
    fn accepts(_: Oid) -> bool {
        true
    }
    fn type_oid(&self) -> Oid {
        0
    }
    fn encode_checked(&self, _: Oid, _: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        Ok(IsNull::Yes)
    }
}

impl<'a> Params<'a> {
    /// Collects the parameters; up to 16 are kept inline without allocating.
    pub fn new<const N: usize>(params: [&'a (dyn Encode + Sync); N]) -> Params<'a> {
        if N > INLINE {
            return Params {
                inline: [&Unused; INLINE],
                len: N,
                heap: params.to_vec(),
            };
        }
        let mut inline: [&'a (dyn Encode + Sync); INLINE] = [&Unused; INLINE];
        inline[..N].copy_from_slice(&params);
        Params {
            inline,
            len: N,
            heap: Vec::new(),
        }
    }

    /// The parameters as a slice, ready for the Bind encoder.
    pub fn as_slice(&self) -> &[&'a (dyn Encode + Sync)] {
        if self.len > INLINE {
            &self.heap
        } else {
            &self.inline[..self.len]
        }
    }
}

impl std::fmt::Debug for Params<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Params").field("len", &self.len).finish()
    }
}

/// A compiled statement with its parameters; `D` decodes its rows (see [`Decoder`]), or is
/// [`NoRows`]. Built by `qail!`; run it on a connection.
pub struct Query<'a, D> {
    template: &'static Template,
    params: Params<'a>,
    _rows: PhantomData<fn() -> D>,
}

impl<'a, D> Query<'a, D> {
    /// Pairs a template with its parameters. The caller guarantees the parameters match the
    /// template's types and count (`qail!` checks both at compile time); the connection checks
    /// the count again before sending.
    pub fn new(template: &'static Template, params: Params<'a>) -> Query<'a, D> {
        Query {
            template,
            params,
            _rows: PhantomData,
        }
    }

    /// The compiled statement.
    pub fn template(&self) -> &'static Template {
        self.template
    }

    /// The parameters, in `$n` order.
    pub fn params(&self) -> &[&'a (dyn Encode + Sync)] {
        self.params.as_slice()
    }
}

impl<D> std::fmt::Debug for Query<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("statement", &self.template.name)
            .field("sql", &self.template.sql())
            .field("params", &self.params.len)
            .finish()
    }
}

#[cfg(test)]
mod tests;
