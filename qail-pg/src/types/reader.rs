//! A bounds-checked reader over a value's bytes: peer data is never indexed unchecked.

use super::{BoxError, Oid, oid};

/// Reads big-endian integers and byte runs from a value of PostgreSQL type `ty`.
pub(crate) struct Reader<'r> {
    ty: Oid,
    rest: &'r [u8],
}

impl<'r> Reader<'r> {
    pub(crate) fn new(ty: Oid, raw: &'r [u8]) -> Self {
        Reader { ty, rest: raw }
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'r [u8], BoxError> {
        let Some((head, tail)) = self.rest.split_at_checked(n) else {
            return Err(format!(
                "a PostgreSQL `{}` value ends early ({} bytes left, {n} needed): the value is \
                 not in binary format or the server sent a different type than announced",
                oid::describe(self.ty),
                self.rest.len()
            )
            .into());
        };
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], BoxError> {
        let bytes = self.take(N)?;
        let mut out = [0; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    #[cfg_attr(
        not(feature = "net"),
        allow(dead_code, reason = "read by the net feature")
    )]
    pub(crate) fn u8(&mut self) -> Result<u8, BoxError> {
        Ok(self.array::<1>()?[0])
    }

    #[cfg_attr(
        not(feature = "decimal"),
        allow(dead_code, reason = "read by the decimal feature")
    )]
    pub(crate) fn i16(&mut self) -> Result<i16, BoxError> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    #[cfg_attr(
        not(feature = "decimal"),
        allow(dead_code, reason = "read by the decimal feature")
    )]
    pub(crate) fn u16(&mut self) -> Result<u16, BoxError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub(crate) fn i32(&mut self) -> Result<i32, BoxError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, BoxError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    pub(crate) fn i64(&mut self) -> Result<i64, BoxError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Fails if bytes are left over.
    pub(crate) fn finish(self) -> Result<(), BoxError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "a PostgreSQL `{}` value has {} unexpected trailing bytes: the server sent a \
                 different type than announced",
                oid::describe(self.ty),
                self.rest.len()
            )
            .into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_in_order_and_checks_bounds() {
        let mut r = Reader::new(oid::INT4, &[0, 1, 0xff, 0xff, 0xff, 0xfe, 9]);
        assert_eq!(r.u16().unwrap(), 1);
        assert_eq!(r.i32().unwrap(), -2);
        assert_eq!(r.remaining(), 1);
        let err = r.i16().unwrap_err().to_string();
        assert!(err.contains("1 bytes left, 2 needed"), "{err}");
        assert_eq!(r.u8().unwrap(), 9);
        r.finish().unwrap();
        let r = Reader::new(oid::INT4, &[1]);
        assert!(r.finish().is_err());
    }
}
