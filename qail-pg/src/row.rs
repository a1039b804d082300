//! Result rows and their column descriptions.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::error::{Error, Kind};
use crate::proto::message::{DataRow, DecodeError, Field};
use crate::types::{Decode, Oid};

/// A result column: its name and PostgreSQL type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    name: String,
    type_oid: Oid,
    table_oid: Oid,
    column_id: i16,
}

impl Column {
    pub(crate) fn from_field(field: &Field<'_>) -> Column {
        Column {
            name: field.name.to_owned(),
            type_oid: field.type_oid,
            table_oid: field.table_oid,
            column_id: field.column_id,
        }
    }

    /// The column name (its alias, if the query gave one).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The PostgreSQL type OID.
    pub fn type_oid(&self) -> Oid {
        self.type_oid
    }

    /// The OID of the table the column comes from, when it is a plain table column.
    pub fn table_oid(&self) -> Option<Oid> {
        (self.table_oid != 0).then_some(self.table_oid)
    }

    /// The attribute number of the table column, when it is a plain table column.
    pub fn column_id(&self) -> Option<i16> {
        (self.column_id != 0).then_some(self.column_id)
    }
}

/// One result row, in binary format. The row's bytes are stored once; values are decoded
/// on demand with [`Row::get`] / [`Row::try_get`].
pub struct Row {
    columns: Arc<[Column]>,
    body: Vec<u8>,
    ranges: Vec<Option<Range<usize>>>,
}

impl Row {
    /// Copies a DataRow, checking its columns against the description.
    pub(crate) fn new(columns: Arc<[Column]>, data: DataRow<'_>) -> Result<Row, DecodeError> {
        if data.len() != columns.len() {
            return Err(DecodeError::new(format!(
                "DataRow has {} columns but the RowDescription {}",
                data.len(),
                columns.len()
            )));
        }
        let mut ranges = Vec::new();
        data.ranges(&mut ranges)?;
        Ok(Row {
            columns,
            body: data.body().to_vec(),
            ranges,
        })
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// The column descriptions.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The raw binary value of column `idx`, `None` for NULL or an index out of range.
    pub fn raw(&self, idx: usize) -> Option<&[u8]> {
        let range = self.ranges.get(idx)?.clone()?;
        self.body.get(range)
    }

    /// Decodes column `idx` as `T`.
    ///
    /// # Panics
    ///
    /// When the index is out of range, the column's type cannot be read as `T`, or the
    /// value is invalid; use [`Row::try_get`] to get an error instead.
    #[track_caller]
    pub fn get<'r, T: Decode<'r>>(&'r self, idx: usize) -> T {
        match self.try_get(idx) {
            Ok(value) => value,
            Err(e) => panic!("Row::get({idx}) failed: {e}"),
        }
    }

    /// Decodes column `idx` as `T`, or says why it cannot.
    pub fn try_get<'r, T: Decode<'r>>(&'r self, idx: usize) -> Result<T, Error> {
        let Some(column) = self.columns.get(idx) else {
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "column index {idx} is out of range: the row has {} columns",
                    self.columns.len()
                ),
            ));
        };
        let ty = column.type_oid;
        let rust = std::any::type_name::<T>();
        if !T::accepts(ty) {
            return Err(Error::new(
                Kind::Decode,
                format!(
                    "column {idx} (\"{}\") has PostgreSQL type OID {ty}, which cannot be read \
                     as {rust}; read it as a matching Rust type or cast the column in SQL",
                    column.name
                ),
            ));
        }
        let raw = self
            .ranges
            .get(idx)
            .cloned()
            .flatten()
            .and_then(|r| self.body.get(r));
        T::decode_nullable(ty, raw).map_err(|e| {
            Error::with_source(
                Kind::Decode,
                format!(
                    "column {idx} (\"{}\", type OID {ty}) could not be read as {rust}",
                    column.name
                ),
                e,
            )
        })
    }

    /// Decodes the column named `name` as `T`.
    ///
    /// # Panics
    ///
    /// Like [`Row::get`], and when no column has that name.
    #[track_caller]
    pub fn get_by_name<'r, T: Decode<'r>>(&'r self, name: &str) -> T {
        match self.try_get_by_name(name) {
            Ok(value) => value,
            Err(e) => panic!("Row::get_by_name({name:?}) failed: {e}"),
        }
    }

    /// Decodes the first column named `name` as `T`, or says why it cannot.
    pub fn try_get_by_name<'r, T: Decode<'r>>(&'r self, name: &str) -> Result<T, Error> {
        let idx = self.index_of(name).ok_or_else(|| {
            let names: Vec<&str> = self.columns.iter().map(Column::name).collect();
            Error::new(
                Kind::Usage,
                format!("no column is named \"{name}\"; the columns are {names:?}"),
            )
        })?;
        self.try_get(idx)
    }

    /// The index of the first column named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_map();
        for (i, column) in self.columns.iter().enumerate() {
            list.entry(&column.name, &self.raw(i));
        }
        list.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::BoxError;

    /// A column reader for these tests only: int4 as i32.
    #[derive(Debug)]
    struct Int(i32);

    impl Decode<'_> for Int {
        fn accepts(ty: Oid) -> bool {
            ty == 23
        }
        fn decode(_: Oid, raw: &[u8]) -> Result<Self, BoxError> {
            let bytes: [u8; 4] = raw.try_into().map_err(|_| "int4 needs 4 bytes")?;
            Ok(Int(i32::from_be_bytes(bytes)))
        }
    }

    fn row() -> Row {
        let columns: Arc<[Column]> = vec![
            Column {
                name: "a".into(),
                type_oid: 23,
                table_oid: 0,
                column_id: 0,
            },
            Column {
                name: "b".into(),
                type_oid: 25,
                table_oid: 0,
                column_id: 0,
            },
        ]
        .into();
        let data = DataRow::decode(b"\0\x02\0\0\0\x04\0\0\0\x07\xff\xff\xff\xff").unwrap();
        Row::new(columns, data).unwrap()
    }

    #[test]
    fn gets_by_index_and_name() {
        let row = row();
        assert_eq!(row.get::<Int>(0).0, 7);
        assert_eq!(row.get_by_name::<Int>("a").0, 7);
        assert_eq!(row.raw(1), None);
    }

    #[test]
    fn errors_name_column_type_and_rust_type() {
        let row = row();
        let msg = row.try_get::<Int>(1).unwrap_err().to_string();
        assert!(
            msg.contains("\"b\"") && msg.contains("25") && msg.contains("Int"),
            "{msg}"
        );
        assert!(row.try_get::<Int>(5).is_err());
        assert!(row.try_get_by_name::<Int>("zz").is_err());
    }

    #[test]
    #[should_panic(expected = "Row::get(1) failed")]
    fn get_panics_with_a_clear_message() {
        row().get::<Int>(1);
    }

    #[test]
    fn refuses_a_column_count_mismatch() {
        let columns: Arc<[Column]> = Vec::new().into();
        let data = DataRow::decode(b"\0\x01\xff\xff\xff\xff").unwrap();
        assert!(Row::new(columns, data).is_err());
    }
}
