//! Records and composite values, read field by field into a Rust struct.
//!
//! Binary form (`record_send` in `src/backend/utils/adt/rowtypes.c`): `int4` number of
//! fields, then per field its type `oid`, an `int4` length (-1 for NULL) and its bytes. An
//! anonymous record (`ROW(…)`, `record` and `record[]` columns) and a composite type share it.
//!
//! The fields are read in order, each with the type OID the value itself carries, through the
//! field type's own [`Decode`]: nothing is allocated beyond the field values, and no text or
//! JSON form is involved. `qail!` generates a struct and its [`Decode`] implementation over
//! [`Fields`] for every record-valued column; arrays of records are `Vec<T>` of that struct.

use super::reader::Reader;
use super::{BoxError, Decode, Oid, oid, rust_name};

/// Whether a value of type `ty` can be read as a record struct: an anonymous `record` or a
/// user-defined (composite) type.
pub fn accepts(ty: Oid) -> bool {
    ty == oid::RECORD || ty >= oid::FIRST_USER_OID
}

/// A reader over the fields of one record value.
pub struct Fields<'r> {
    ty: Oid,
    r: Reader<'r>,
    count: usize,
    next: usize,
}

impl std::fmt::Debug for Fields<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fields")
            .field("ty", &self.ty)
            .field("count", &self.count)
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl<'r> Fields<'r> {
    /// Starts reading a record of type `ty` that must have `count` fields.
    pub fn new(ty: Oid, raw: &'r [u8], count: usize) -> Result<Self, BoxError> {
        let mut r = Reader::new(ty, raw);
        let n = r.i32()?;
        if usize::try_from(n).ok() != Some(count) {
            return Err(format!(
                "a PostgreSQL `{}` value has {n} fields where {count} were expected: the \
                 query's record no longer matches the compiled one; rebuild after `cargo qail \
                 schema pull`",
                oid::describe(ty)
            )
            .into());
        }
        Ok(Fields {
            ty,
            r,
            count,
            next: 0,
        })
    }

    /// Decodes the next field as `T`; `name` names it in errors.
    pub fn next<T: Decode<'r>>(&mut self, name: &str) -> Result<T, BoxError> {
        self.next_of(name, 0)
    }

    /// Decodes the next field as `T`, known at compile time to be of the built-in type `base`
    /// (0 when not known). A field a record reports with a user type `T` does not accept is a
    /// domain over `base` — `ROW(d)` and a table's whole row carry a domain column's own OID —
    /// and is read as `base`, the domain's binary form.
    pub fn next_of<T: Decode<'r>>(&mut self, name: &str, base: Oid) -> Result<T, BoxError> {
        let at = self.next;
        if at >= self.count {
            return Err(format!("a record was read past its {} fields", self.count).into());
        }
        self.next += 1;
        let mut field_ty = self.r.u32()?;
        let len = self.r.i32()?;
        if base != 0 && field_ty >= oid::FIRST_USER_OID && !T::accepts(field_ty) {
            field_ty = base;
        }
        if !T::accepts(field_ty) {
            return Err(format!(
                "field {} (`{name}`) of a PostgreSQL `{}` value is `{}`, which cannot be read \
                 as Rust `{}`: cast the field in SQL to the type the query was compiled with",
                at + 1,
                oid::describe(self.ty),
                oid::describe(field_ty),
                rust_name::<T>()
            )
            .into());
        }
        let value = match usize::try_from(len) {
            Ok(n) => T::decode(field_ty, self.r.take(n)?),
            Err(_) if len == -1 => T::decode_null(field_ty),
            Err(_) => return Err(format!("a record field claims length {len}").into()),
        };
        value.map_err(|e| format!("field {} (`{name}`): {e}", at + 1).into())
    }

    /// Ends the record: every field was read and no byte is left.
    pub fn finish(self) -> Result<(), BoxError> {
        if self.next != self.count {
            return Err(format!(
                "a record was read up to field {} of {}",
                self.next, self.count
            )
            .into());
        }
        self.r.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ROW(7, NULL::text, 'ab')` as the server sends it.
    const ROW: &[u8] = &[
        0, 0, 0, 3, // 3 fields
        0, 0, 0, 23, 0, 0, 0, 4, 0, 0, 0, 7, // int4 7
        0, 0, 0, 25, 0xff, 0xff, 0xff, 0xff, // text NULL
        0, 0, 0, 25, 0, 0, 0, 2, b'a', b'b', // text 'ab'
    ];

    fn read(raw: &[u8]) -> Result<(i32, Option<String>, &str), BoxError> {
        let mut f = Fields::new(oid::RECORD, raw, 3)?;
        let v = (f.next("a")?, f.next("b")?, f.next("c")?);
        f.finish()?;
        Ok(v)
    }

    #[test]
    fn fields_are_read_in_order_with_their_own_types() {
        assert_eq!(read(ROW).unwrap(), (7, None, "ab"));
        assert!(accepts(oid::RECORD) && accepts(oid::FIRST_USER_OID));
        assert!(!accepts(oid::INT4) && !accepts(oid::RECORD_ARRAY));
    }

    #[test]
    fn mismatches_name_the_field_and_the_fix() {
        let mut f = Fields::new(oid::RECORD, ROW, 3).unwrap();
        let e = f.next::<i64>("id").unwrap_err().to_string();
        assert!(e.contains("field 1 (`id`)") && e.contains("int4"), "{e}");
        let mut f = Fields::new(oid::RECORD, ROW, 3).unwrap();
        let _: i32 = f.next("a").unwrap();
        let e = f.next::<String>("b").unwrap_err().to_string();
        assert!(e.contains("field 2 (`b`)") && e.contains("Option"), "{e}");
        let e = Fields::new(oid::RECORD, ROW, 2).unwrap_err().to_string();
        assert!(e.contains("3 fields where 2"), "{e}");
    }

    #[test]
    fn a_domain_field_is_read_as_its_base_type() {
        let mut domain = ROW.to_vec();
        domain[24..28].copy_from_slice(&(oid::FIRST_USER_OID + 5).to_be_bytes());
        let mut f = Fields::new(oid::RECORD, &domain, 3).unwrap();
        let _: i32 = f.next("a").unwrap();
        let _: Option<String> = f.next("b").unwrap();
        assert!(
            f.next::<String>("c").is_err(),
            "without the base type: refused"
        );
        let mut f = Fields::new(oid::RECORD, &domain, 3).unwrap();
        let _: (i32, Option<String>) = (f.next("a").unwrap(), f.next("b").unwrap());
        assert_eq!(f.next_of::<String>("c", oid::TEXT).unwrap(), "ab");
    }

    #[test]
    fn hostile_bytes_are_errors() {
        for cut in 0..ROW.len() {
            assert!(read(&ROW[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = ROW.to_vec();
        long.push(0);
        assert!(read(&long).is_err());
        let mut negative = ROW.to_vec();
        negative[8..12].copy_from_slice(&(-7i32).to_be_bytes());
        assert!(read(&negative).is_err());
    }
}
