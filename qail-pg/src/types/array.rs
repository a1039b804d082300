//! One-dimensional arrays ↔ `Vec<T>` (read) and `Vec<T>`, `&[T]` (sent), NULL elements
//! through `Vec<Option<T>>`.
//!
//! Binary form (`array_send` in `src/backend/utils/adt/arrayfuncs.c`): `int4` number of
//! dimensions, `int4` has-NULLs flag, `oid` element type, per dimension `int4` length and
//! `int4` lower bound, then per element an `int4` length (-1 for NULL) and its bytes.

use super::reader::Reader;
use super::{ArrayElement, BoxError, Decode, Encode, IsNull, Oid, encode_checked, oid, rust_name};

/// Whether `ty` is an array whose element type `T` accepts.
fn accepts_array(ty: Oid, elem_accepts: impl Fn(Oid) -> bool) -> bool {
    oid::element_of(ty).is_some_and(elem_accepts)
}

/// Writes `items` as a one-dimensional array of type `ty`.
fn encode_array<'a, T: Encode + 'a>(
    items: impl ExactSizeIterator<Item = &'a T>,
    ty: Oid,
    buf: &mut Vec<u8>,
) -> Result<IsNull, BoxError> {
    let elem = oid::element_of(ty)
        .filter(|&e| T::accepts(e))
        .ok_or_else(|| {
            format!(
                "cannot send Rust `{}` as PostgreSQL `{}`: send it as an array of the element's type",
                rust_name::<[T]>(),
                oid::describe(ty)
            )
        })?;
    let len = i32::try_from(items.len()).map_err(|_| {
        format!(
            "an array of {} elements is too long for PostgreSQL: send at most {} per array",
            items.len(),
            i32::MAX
        )
    })?;
    let empty = items.len() == 0;
    let flags_at = buf.len() + 4;
    buf.extend_from_slice(&i32::from(!empty).to_be_bytes());
    buf.extend_from_slice(&0i32.to_be_bytes());
    buf.extend_from_slice(&elem.to_be_bytes());
    if !empty {
        buf.extend_from_slice(&len.to_be_bytes());
        buf.extend_from_slice(&1i32.to_be_bytes());
    }
    let mut has_null = false;
    for item in items {
        let at = buf.len();
        buf.extend_from_slice(&[0; 4]);
        let size = match item.encode(elem, buf)? {
            IsNull::Yes => {
                has_null = true;
                -1
            }
            IsNull::No => i32::try_from(buf.len() - at - 4).map_err(
                |_| "an array element is longer than PostgreSQL's 1 GB limit: send it separately",
            )?,
        };
        buf[at..at + 4].copy_from_slice(&size.to_be_bytes());
    }
    if has_null {
        buf[flags_at..flags_at + 4].copy_from_slice(&1i32.to_be_bytes());
    }
    Ok(IsNull::No)
}

impl<T: Encode + ArrayElement> Encode for Vec<T> {
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        encode_array(self.iter(), ty, buf)
    }
    fn accepts(ty: Oid) -> bool {
        accepts_array(ty, T::accepts)
    }
    fn type_oid(&self) -> Oid {
        T::ARRAY_OID
    }
    encode_checked!();
}

impl<T: Encode + ArrayElement> Encode for &[T] {
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        encode_array(self.iter(), ty, buf)
    }
    fn accepts(ty: Oid) -> bool {
        accepts_array(ty, T::accepts)
    }
    fn type_oid(&self) -> Oid {
        T::ARRAY_OID
    }
    encode_checked!();
}

/// One field of each row of a slice, sent as an array without copying: the parameters of a
/// bulk insert (`INSERT … SELECT * FROM UNNEST($1::int8[], $2::text[])`), one per column.
pub struct FieldArray<'a, R, T> {
    rows: &'a [R],
    field: fn(&R) -> &T,
}

impl<'a, R, T> FieldArray<'a, R, T> {
    /// The array of `field` of each of `rows`.
    pub fn new(rows: &'a [R], field: fn(&R) -> &T) -> FieldArray<'a, R, T> {
        FieldArray { rows, field }
    }
}

impl<R, T> std::fmt::Debug for FieldArray<'_, R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldArray")
            .field("rows", &self.rows.len())
            .finish()
    }
}

impl<R, T: Encode + ArrayElement> Encode for FieldArray<'_, R, T> {
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        encode_array(self.rows.iter().map(self.field), ty, buf)
    }
    fn accepts(ty: Oid) -> bool {
        accepts_array(ty, T::accepts)
    }
    fn type_oid(&self) -> Oid {
        T::ARRAY_OID
    }
    encode_checked!();
}

impl<'r, T: Decode<'r> + ArrayElement> Decode<'r> for Vec<T> {
    fn accepts(ty: Oid) -> bool {
        // Note: an array of a composite type has a user OID this crate cannot map to its
        // element; a record struct accepts it, and the element OID in the array's header is
        // checked against the struct when the value is read.
        accepts_array(ty, T::accepts) || (ty >= oid::FIRST_USER_OID && T::accepts(oid::RECORD))
    }
    fn decode(ty: Oid, raw: &'r [u8]) -> Result<Self, BoxError> {
        let mut r = Reader::new(ty, raw);
        let ndim = r.i32()?;
        let _has_null = r.i32()?;
        let elem = r.u32()?;
        if !T::accepts(elem) {
            return Err(super::decode_mismatch::<T>(elem));
        }
        let len = match ndim {
            0 => 0,
            1 => {
                let len = r.i32()?;
                let _lower_bound = r.i32()?;
                usize::try_from(len)
                    .map_err(|_| format!("a PostgreSQL array claims {len} elements"))?
            }
            _ => {
                return Err(format!(
                    "a {ndim}-dimensional PostgreSQL `{}` cannot be read as `{}`, which holds one \
                     dimension: unnest it in SQL, or select one slice (`a[1]`)",
                    oid::describe(ty),
                    rust_name::<Self>()
                )
                .into());
            }
        };
        // Note: every element takes at least its 4-byte length, so this caps the allocation.
        let mut out = Vec::with_capacity(len.min(r.remaining() / 4));
        for _ in 0..len {
            let size = r.i32()?;
            let value = match usize::try_from(size) {
                Ok(n) => T::decode(elem, r.take(n)?)?,
                Err(_) if size == -1 => T::decode_null(elem)?,
                Err(_) => {
                    return Err(format!("a PostgreSQL array element claims length {size}").into());
                }
            };
            out.push(value);
        }
        r.finish()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::*;

    /// `'{1,NULL}'::int4[]` as the server sends it.
    const INT4_WITH_NULL: &[u8] = &[
        0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 23, // 1 dim, has NULL, int4
        0, 0, 0, 2, 0, 0, 0, 1, // length 2, lower bound 1
        0, 0, 0, 4, 0, 0, 0, 1, // 1
        0xff, 0xff, 0xff, 0xff, // NULL
    ];

    /// `'{}'::text[]`.
    const EMPTY_TEXT: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25];

    #[test]
    fn bytes_match_the_server() {
        assert_eq!(
            enc(&vec![Some(1i32), None], oid::INT4_ARRAY).as_deref(),
            Some(INT4_WITH_NULL)
        );
        assert_eq!(
            enc(&Vec::<String>::new(), oid::TEXT_ARRAY).as_deref(),
            Some(EMPTY_TEXT)
        );
        assert_eq!(
            dec::<Vec<Option<i32>>>(oid::INT4_ARRAY, INT4_WITH_NULL),
            Ok(vec![Some(1), None])
        );
        assert_eq!(dec::<Vec<String>>(oid::TEXT_ARRAY, EMPTY_TEXT), Ok(vec![]));
    }

    #[test]
    fn slices_and_element_types() {
        let words = ["a", "bc"];
        let raw = enc(&&words[..], oid::VARCHAR_ARRAY).expect("not null");
        assert_eq!(&raw[8..12], &oid::VARCHAR.to_be_bytes());
        assert_eq!(
            dec::<Vec<&str>>(oid::VARCHAR_ARRAY, &raw),
            Ok(vec!["a", "bc"])
        );
        assert_eq!(vec![1i64].type_oid(), oid::INT8_ARRAY);
        assert_eq!(Vec::<Option<bool>>::new().type_oid(), oid::BOOL_ARRAY);
        let blobs = vec![vec![0u8, 1], vec![]];
        let raw = enc(&blobs, oid::BYTEA_ARRAY).expect("not null");
        assert_eq!(dec::<Vec<Vec<u8>>>(oid::BYTEA_ARRAY, &raw), Ok(blobs));
    }

    #[test]
    fn null_elements_need_option() {
        let err = dec::<Vec<i32>>(oid::INT4_ARRAY, INT4_WITH_NULL).unwrap_err();
        assert!(err.contains("Option<i32>"), "{err}");
    }

    #[test]
    fn wrong_element_type_is_refused() {
        assert!(!<Vec<i32> as Decode>::accepts(oid::INT8_ARRAY));
        assert!(!<Vec<i32> as Encode>::accepts(oid::INT4));
        let mut lying = INT4_WITH_NULL.to_vec();
        lying[11] = 20; // the header claims int8 inside an int4[] column
        assert!(dec::<Vec<Option<i32>>>(oid::INT4_ARRAY, &lying).is_err());
    }

    #[test]
    fn two_dimensions_are_an_error() {
        let raw: &[u8] = &[
            0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0,
            0, 0, 4, 0, 0, 0, 7,
        ];
        let err = dec::<Vec<i32>>(oid::INT4_ARRAY, raw).unwrap_err();
        assert!(err.contains("2-dimensional"), "{err}");
    }

    #[test]
    fn hostile_lengths_are_errors() {
        let mut raw = INT4_WITH_NULL.to_vec();
        raw[12..16].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(dec::<Vec<Option<i32>>>(oid::INT4_ARRAY, &raw).is_err());
        let mut raw = INT4_WITH_NULL.to_vec();
        raw[20..24].copy_from_slice(&(-5i32).to_be_bytes());
        assert!(dec::<Vec<Option<i32>>>(oid::INT4_ARRAY, &raw).is_err());
        assert!(dec::<Vec<i32>>(oid::INT4_ARRAY, &[0, 0]).is_err());
    }

    #[test]
    fn a_field_array_is_the_array_of_that_field() {
        let rows = [(1_i64, Some("a")), (2, None)];
        let ids = FieldArray::new(&rows, |r| &r.0);
        let names = FieldArray::new(&rows, |r| &r.1);
        assert_eq!(
            enc(&ids, oid::INT8_ARRAY),
            enc(&vec![1_i64, 2], oid::INT8_ARRAY)
        );
        assert_eq!(
            enc(&names, oid::TEXT_ARRAY),
            enc(&vec![Some("a"), None], oid::TEXT_ARRAY)
        );
        let none: [(i64, i64); 0] = [];
        assert_eq!(
            enc(&FieldArray::new(&none, |r| &r.0), oid::INT8_ARRAY),
            enc(&Vec::<i64>::new(), oid::INT8_ARRAY)
        );
    }
}
