//! The `nested` workload's array of records, decoded by hand for tokio-postgres, as its user
//! would write it: tokio-postgres has no decoder for `record` values, so this reads the binary
//! array (`array_send`: dimensions, then each element with its length) and each record in it
//! (`record_send`: the field count, then each field's type OID, length and bytes), and hands
//! every field to tokio-postgres's own `FromSql` for its type.

use std::error::Error;

use chrono::NaiveTime;
use rust_decimal::Decimal;
use tokio_postgres::types::{FromSql, Kind, Type};
use uuid::Uuid;

use crate::workload::Line;

type BoxError = Box<dyn Error + Sync + Send>;

/// `array_agg(ROW(c.id, c.name, c.departure_time, c.duration_minutes, c.price))`.
#[derive(Debug)]
pub(crate) struct Lines(pub(crate) Vec<Line>);

/// A reader over untrusted bytes: every read is checked.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], BoxError> {
        let (head, rest) = self
            .0
            .split_at_checked(n)
            .ok_or("a record array ends early: the server sent a different type")?;
        self.0 = rest;
        Ok(head)
    }

    fn i32(&mut self) -> Result<i32, BoxError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u32(&mut self) -> Result<u32, BoxError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A length-prefixed value: `None` for SQL NULL (length -1).
    fn value(&mut self) -> Result<Option<&'a [u8]>, BoxError> {
        match self.i32()? {
            -1 => Ok(None),
            n => Ok(Some(self.take(usize::try_from(n)?)?)),
        }
    }

    /// A record field of type `ty`: checks its OID, then decodes it with `T`'s `FromSql`.
    fn field<T: FromSql<'a>>(&mut self, ty: &Type) -> Result<T, BoxError> {
        let oid = self.u32()?;
        if oid != ty.oid() {
            return Err(format!("a record field has type OID {oid}, expected {ty}").into());
        }
        T::from_sql_nullable(ty, self.value()?)
    }
}

impl<'a> FromSql<'a> for Lines {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let mut c = Cursor(raw);
        let dims = c.i32()?;
        let _has_nulls = c.i32()?;
        let _element = c.u32()?;
        if dims == 0 {
            return Ok(Lines(Vec::new()));
        }
        if dims != 1 {
            return Err(format!("a record array has {dims} dimensions, expected 1").into());
        }
        let len = usize::try_from(c.i32()?)?;
        let _lower_bound = c.i32()?;
        let mut lines = Vec::with_capacity(len);
        for _ in 0..len {
            let record = c.value()?.ok_or("a NULL line in the array")?;
            let mut r = Cursor(record);
            let fields = r.i32()?;
            if fields != 5 {
                return Err(format!("a line record has {fields} fields, expected 5").into());
            }
            lines.push(Line {
                id: r.field::<Uuid>(&Type::UUID)?,
                name: r.field::<String>(&Type::TEXT)?,
                departure_time: r.field::<Option<NaiveTime>>(&Type::TIME)?,
                duration_minutes: r.field::<Option<i32>>(&Type::INT4)?,
                price: r.field::<Option<Decimal>>(&Type::NUMERIC)?,
            });
        }
        Ok(Lines(lines))
    }

    fn accepts(ty: &Type) -> bool {
        // Note: `record[]` is a pseudo-type; its kind is not `Array`.
        *ty == Type::RECORD_ARRAY
            || matches!(ty.kind(), Kind::Array(element) if *element == Type::RECORD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(out: &mut Vec<u8>, oid: u32, value: Option<&[u8]>) {
        out.extend(oid.to_be_bytes());
        match value {
            Some(v) => {
                out.extend(i32::try_from(v.len()).expect("small").to_be_bytes());
                out.extend(v);
            }
            None => out.extend((-1i32).to_be_bytes()),
        }
    }

    #[test]
    fn reads_a_record_array_and_refuses_a_short_one() {
        let mut record = 5i32.to_be_bytes().to_vec();
        field(&mut record, Type::UUID.oid(), Some(&[7; 16]));
        field(&mut record, Type::TEXT.oid(), Some(b"Route 1"));
        field(&mut record, Type::TIME.oid(), None);
        field(&mut record, Type::INT4.oid(), Some(&45i32.to_be_bytes()));
        field(&mut record, Type::NUMERIC.oid(), None);
        let mut array = Vec::new();
        for v in [1i32, 0] {
            array.extend(v.to_be_bytes());
        }
        array.extend(Type::RECORD.oid().to_be_bytes());
        for v in [1i32, 1, i32::try_from(record.len()).expect("small")] {
            array.extend(v.to_be_bytes());
        }
        array.extend(&record);
        let lines = Lines::from_sql(&Type::RECORD_ARRAY, &array)
            .expect("a valid array")
            .0;
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].name, "Route 1");
        assert_eq!(lines[0].duration_minutes, Some(45));
        assert_eq!(lines[0].departure_time, None);
        assert!(Lines::from_sql(&Type::RECORD_ARRAY, &array[..array.len() - 3]).is_err());
        assert!(Lines::accepts(&Type::RECORD_ARRAY));
        assert!(!Lines::accepts(&Type::TEXT_ARRAY));
    }
}
