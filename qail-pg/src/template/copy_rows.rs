//! [`CopyRows`]: a slice of rows sent with `COPY … FROM STDIN (FORMAT binary)`, what
//! `qail!("COPY table (columns…) FROM {rows}")` builds; the binary COPY format is written here
//! (sans-IO), the connection sends it.
//!
//! See <https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4> (binary format):
//! a signature, flags and header extension, then per row a 16-bit field count and each field
//! as a 32-bit length (-1 for NULL) and its binary value, and a 16-bit -1 at the end.

use crate::types::{BoxError, Encode, IsNull, Oid};

/// The signature, flags (none) and header extension length (0) of a binary COPY.
pub const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// The trailer of a binary COPY: a field count of -1.
pub const TRAILER: &[u8] = b"\xff\xff";

/// A checked COPY statement: `COPY table (columns…) FROM STDIN (FORMAT binary)` and the type
/// OID of each column (0 for a user type, sent in its value's own binary form).
#[derive(Debug)]
pub struct CopyStatement {
    /// The COPY statement.
    pub sql: &'static str,
    /// Each column's type OID, in order.
    pub column_oids: &'static [Oid],
}

/// Rows to COPY: the statement, the rows, and the function writing a row's fields.
pub struct CopyRows<'a, R> {
    statement: &'static CopyStatement,
    rows: &'a [R],
    write: fn(&R, &mut CopyRow<'_>) -> Result<(), BoxError>,
}

impl<'a, R> CopyRows<'a, R> {
    /// Pairs a statement with its rows; `write` calls [`CopyRow::field`] once per column, in
    /// order (`qail!` checks the types at compile time).
    pub fn new(
        statement: &'static CopyStatement,
        rows: &'a [R],
        write: fn(&R, &mut CopyRow<'_>) -> Result<(), BoxError>,
    ) -> CopyRows<'a, R> {
        CopyRows {
            statement,
            rows,
            write,
        }
    }

    /// The COPY statement.
    pub fn statement(&self) -> &'static CopyStatement {
        self.statement
    }

    /// The rows.
    pub fn rows(&self) -> &'a [R] {
        self.rows
    }

    /// Appends row `row` in the binary COPY format.
    pub fn encode_row(&self, row: &R, buf: &mut Vec<u8>) -> Result<(), BoxError> {
        let count = u16::try_from(self.statement.column_oids.len())
            .map_err(|_| "a COPY of more than 65,535 columns: PostgreSQL allows 1,600")?;
        buf.extend_from_slice(&count.to_be_bytes());
        let mut out = CopyRow {
            buf,
            oids: self.statement.column_oids,
            next: 0,
        };
        (self.write)(row, &mut out)?;
        if out.next != self.statement.column_oids.len() {
            return Err(format!(
                "a COPY row wrote {} fields for {} columns",
                out.next,
                self.statement.column_oids.len()
            )
            .into());
        }
        Ok(())
    }
}

impl<R> std::fmt::Debug for CopyRows<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyRows")
            .field("sql", &self.statement.sql)
            .field("rows", &self.rows.len())
            .finish()
    }
}

/// One row being written: [`CopyRow::field`] per column.
#[derive(Debug)]
pub struct CopyRow<'b> {
    buf: &'b mut Vec<u8>,
    oids: &'static [Oid],
    next: usize,
}

impl CopyRow<'_> {
    /// Writes the next column's value.
    pub fn field<T: Encode + ?Sized>(&mut self, value: &T) -> Result<(), BoxError> {
        let ty = self.oids.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        let at = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        let len = match value.encode(ty, self.buf)? {
            IsNull::Yes => -1,
            IsNull::No => i32::try_from(self.buf.len() - at - 4)
                .map_err(|_| "a COPY field is longer than PostgreSQL's 1 GB limit")?,
        };
        self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static STATEMENT: CopyStatement = CopyStatement {
        sql: "COPY t (a, b) FROM STDIN (FORMAT binary)",
        column_oids: &[23, 25],
    };

    #[test]
    fn rows_are_written_in_the_binary_format() {
        let rows = [(7_i32, Some("x")), (-1, None)];
        let copy = CopyRows::new(&STATEMENT, &rows, |r, out| {
            out.field(&r.0)?;
            out.field(&r.1)
        });
        let mut buf = Vec::new();
        for row in copy.rows() {
            copy.encode_row(row, &mut buf).unwrap();
        }
        assert_eq!(
            buf,
            b"\0\x02\0\0\0\x04\0\0\0\x07\0\0\0\x01x\0\x02\0\0\0\x04\xff\xff\xff\xff\xff\xff\xff\xff"
        );
        assert_eq!(HEADER.len(), 19);
        let short = CopyRows::new(&STATEMENT, &rows, |r, out| out.field(&r.0));
        assert!(short.encode_row(&rows[0], &mut buf).is_err());
    }
}
