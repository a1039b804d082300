//! RowDescription (backend `T`): the columns of a result.

use super::DecodeError;
use super::reader::Reader;
use crate::types::Oid;

/// One column of a [`RowDescription`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// The column name.
    pub name: &'a str,
    /// The source table's OID, or 0.
    pub table_oid: Oid,
    /// The source column's attribute number, or 0.
    pub column_id: i16,
    /// The type OID.
    pub type_oid: Oid,
    /// The type size (`pg_type.typlen`); negative for variable width.
    pub type_size: i16,
    /// The type modifier (`pg_attribute.atttypmod`).
    pub type_modifier: i32,
    /// The format code: 0 text, 1 binary (0 after a Describe of a statement).
    pub format: i16,
}

/// The columns a statement or portal returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowDescription<'a> {
    /// One entry per column.
    pub fields: Vec<Field<'a>>,
}

impl<'a> RowDescription<'a> {
    /// Decodes the body of a `T` message.
    pub fn decode(body: &'a [u8]) -> Result<RowDescription<'a>, DecodeError> {
        let mut r = Reader::new(body, "RowDescription");
        let count = r.count16()?;
        // Note: each field takes at least 19 bytes; cap the allocation by what is there.
        let mut fields = Vec::with_capacity(count.min(body.len() / 19));
        for _ in 0..count {
            fields.push(Field {
                name: r.cstr()?,
                table_oid: r.u32()?,
                column_id: r.i16()?,
                type_oid: r.u32()?,
                type_size: r.i16()?,
                type_modifier: r.i32()?,
                format: r.i16()?,
            });
        }
        r.finish()?;
        Ok(RowDescription { fields })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &[u8] = b"\0\x01id\0\0\0\x40\0\0\x01\0\0\0\x17\0\x04\xff\xff\xff\xff\0\0";

    #[test]
    fn decodes() {
        let d = RowDescription::decode(ONE).unwrap();
        assert_eq!(
            d.fields,
            [Field {
                name: "id",
                table_oid: 0x4000,
                column_id: 1,
                type_oid: 23,
                type_size: 4,
                type_modifier: -1,
                format: 0,
            }]
        );
        assert!(RowDescription::decode(b"\0\0").unwrap().fields.is_empty());
    }

    #[test]
    fn refuses_malformed() {
        assert!(RowDescription::decode(&ONE[..ONE.len() - 1]).is_err());
        assert!(RowDescription::decode(b"\0\x02id\0").is_err());
        assert!(RowDescription::decode(b"\x80\0").is_err());
        let mut extra = ONE.to_vec();
        extra.push(0);
        assert!(RowDescription::decode(&extra).is_err());
    }
}
