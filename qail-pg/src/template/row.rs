//! Row decoding: [`RawRow`], the by-index cursor over a DataRow, and the traits row types
//! implement ([`FromRow`], [`Columns`], [`Decoder`]).

use crate::error::{Error, Kind};
use crate::proto::message::{DataRow, DecodeError};
use crate::types::{BoxError, Decode, Oid};

/// A DataRow borrowed from the read buffer, decoded by index with a cursor: columns are read
/// in order, each exactly once.
///
/// Note: the cursor is read inline by the row decoders (`get`, `get_next` and `take` are
/// `#[inline(always)]` in optimized builds, the error paths kept out of line), since every
/// column of every row goes through it. With `#[inline]` alone the compiler kept `get` a call
/// per column: its prologue and the `Result` moved through memory cost ~28 instructions a
/// column, 10% of a 50-row, 8-column result's client instructions (the `join` benchmark).
/// Builds with debug assertions keep `#[inline]`: forcing the inlining there made every
/// generated decoder larger for no use (a crate of 100 `qail!` queries built ~10% slower).
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
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
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

/// A row type built from the tuple of its columns' values: what `qail!` implements for the
/// row types it generates, so that each query adds a constructor and no decoding code of its
/// own (the tuple is decoded by [`Columns`], shared by every query with the same column types).
/// Every `FromColumns` type is a [`FromRow`].
pub trait FromColumns: Sized {
    /// The columns' values, in order.
    type Columns: Columns;
    /// Builds the row from its columns' values.
    fn from_columns(columns: Self::Columns) -> Self;
}

impl<R: FromColumns> FromRow for R {
    #[inline]
    fn from_row(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<R, Error> {
        // Note: a `match`, not `.map(R::from_columns)`: one function less per row type.
        match R::Columns::decode(row, columns) {
            Ok(values) => Ok(R::from_columns(values)),
            Err(e) => Err(e),
        }
    }
}

/// Consecutive columns decoded into a tuple of owned values, in order: what the row types
/// `qail!` generates are decoded with (through [`FromColumns`]), so the user's crate holds no
/// decoding code per query for the compiler to check: these generic impls are checked once,
/// here. Implemented for tuples of 1 to 16 values.
pub trait Columns: Sized {
    /// Decodes the next `N` columns of `row`; `columns` are the result column type OIDs.
    fn decode(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error>;
}

macro_rules! tuple_columns {
    ($($t:ident)+) => {
        impl<$($t: for<'r> Decode<'r>),+> Columns for ($($t,)+) {
            #[inline]
            #[allow(non_snake_case, reason = "each value is named after its type parameter")]
            fn decode(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error> {
                // Note: `match`, not `?`: these impls are compiled for every tuple of column
                // types, and `?` would add a `Try::branch` per column type and a
                // `FromResidual::from_residual` per tuple.
                $(
                    let $t = match row.get_next::<$t>(columns) {
                        Ok(value) => value,
                        Err(e) => return Err(e),
                    };
                )+
                Ok(($($t,)+))
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

/// How a [`Query`](super::Query)'s rows are decoded. Every [`FromRow`] type decodes itself; `qail!(Type =>
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_row_reads_in_order_and_skips() {
        let body = b"\0\x03\0\0\0\x04\0\0\0\x2a\xff\xff\xff\xff\0\0\0\x02hi";
        let mut row = RawRow::new(DataRow::decode(body).unwrap());
        assert_eq!(row.len(), 3);
        assert_eq!(row.get::<i32>(0, 23).unwrap(), 42);
        assert_eq!(row.get::<String>(2, 25).unwrap(), "hi");
        assert!(row.get::<i32>(1, 23).is_err(), "going back is refused");
    }

    #[test]
    fn raw_row_reports_null_and_bad_type_and_missing_column() {
        let body = b"\0\x02\xff\xff\xff\xff\0\0\0\x04\0\0\0\x2a";
        let mut row = RawRow::new(DataRow::decode(body).unwrap());
        let err = row.get::<i32>(0, 23).unwrap_err();
        assert!(err.to_string().contains("NULL"), "{err}");
        let err = row.get::<String>(1, 23).unwrap_err();
        assert!(err.to_string().contains("column 1"), "{err}");
        let mut row = RawRow::new(DataRow::decode(body).unwrap());
        assert_eq!(row.get::<Option<i32>>(0, 23).unwrap(), None);
        assert!(row.get::<i32>(5, 23).is_err());
    }

    #[test]
    fn raw_row_refuses_malformed_columns() {
        // A column claiming 9 bytes where 2 follow.
        let body = b"\0\x01\0\0\0\x09ab";
        let err = RawRow::new(DataRow::decode(body).unwrap())
            .get::<String>(0, 25)
            .unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
        // A negative length other than -1 (NULL).
        let body = b"\0\x01\xff\xff\xff\xfe";
        let err = RawRow::new(DataRow::decode(body).unwrap())
            .get::<Option<i32>>(0, 23)
            .unwrap_err();
        assert!(err.to_string().contains("negative length"), "{err}");
        // A count larger than the columns present.
        let body = b"\0\x02\0\0\0\x01a";
        let mut row = RawRow::new(DataRow::decode(body).unwrap());
        assert_eq!(row.get_next::<String>(&[25, 25]).unwrap(), "a");
        assert!(row.get_next::<String>(&[25, 25]).is_err());
        // More fields than the statement's columns.
        let body = b"\0\x01\0\0\0\x01a";
        let mut row = RawRow::new(DataRow::decode(body).unwrap());
        assert_eq!(row.get_next::<String>(&[25]).unwrap(), "a");
        let err = row.get_next::<String>(&[25]).unwrap_err();
        assert!(err.to_string().contains("more columns"), "{err}");
    }
}
