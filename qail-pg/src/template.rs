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

/// A compiled statement: what `qail!` emits as a `static`; also constructible by hand.
#[derive(Debug)]
pub struct Template {
    /// The prepared statement's name: `q` and 16 hex digits of [`statement_name`]'s hash.
    pub name: &'static str,
    /// The SQL text, with `$n` placeholders.
    pub sql: &'static str,
    /// The complete Parse message (named statement, parameter OIDs).
    pub parse: &'static [u8],
    /// The Bind message after its length: portal `""`, the statement name and the parameter
    /// format codes (all binary). The parameter count and values follow at run time.
    pub bind_prefix: &'static [u8],
    /// Parameter type OIDs; 0 for a user type, resolved from the server's
    /// ParameterDescription at run time.
    pub param_oids: &'static [Oid],
    /// The result columns the statement is expected to return, in order.
    pub columns: &'static [ExpectedColumn],
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

impl Template {
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
            .field("sql", &self.template.sql)
            .field("params", &self.params.len)
            .finish()
    }
}

#[cfg(test)]
mod tests;
