//! A bounds-checked reader over a backend message body: nothing is indexed unchecked.

use super::DecodeError;

/// Reads big-endian integers and C strings from a message body.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, the body of message `what` (named in errors).
    #[inline]
    pub(crate) fn new(buf: &'a [u8], what: &'static str) -> Reader<'a> {
        Reader { buf, what }
    }

    #[cold]
    fn short(&self) -> DecodeError {
        DecodeError::new(format!("{} is truncated", self.what))
    }

    /// Takes the next `n` bytes.
    #[inline]
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let (head, tail) = self.buf.split_at_checked(n).ok_or_else(|| self.short())?;
        self.buf = tail;
        Ok(head)
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let bytes = self.bytes(N)?;
        <[u8; N]>::try_from(bytes).map_err(|_| self.short())
    }

    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    #[inline]
    pub(crate) fn i16(&mut self) -> Result<i16, DecodeError> {
        self.array().map(i16::from_be_bytes)
    }

    pub(crate) fn i32(&mut self) -> Result<i32, DecodeError> {
        self.array().map(i32::from_be_bytes)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_be_bytes)
    }

    /// A non-negative 16-bit count.
    #[inline]
    pub(crate) fn count16(&mut self) -> Result<usize, DecodeError> {
        let n = self.i16()?;
        usize::try_from(n)
            .map_err(|_| DecodeError::new(format!("{} has a negative count {n}", self.what)))
    }

    /// A NUL-terminated byte string, without the NUL.
    pub(crate) fn cbytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let end = memchr::memchr(0, self.buf)
            .ok_or_else(|| DecodeError::new(format!("{} has an unterminated string", self.what)))?;
        let s = self.bytes(end)?;
        self.bytes(1)?;
        Ok(s)
    }

    /// A NUL-terminated UTF-8 string.
    pub(crate) fn cstr(&mut self) -> Result<&'a str, DecodeError> {
        let bytes = self.cbytes()?;
        std::str::from_utf8(bytes)
            .map_err(|_| DecodeError::new(format!("{} has a string that is not UTF-8", self.what)))
    }

    /// Everything left.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }

    /// Fails if bytes are left over.
    pub(crate) fn finish(&self) -> Result<(), DecodeError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::new(format!(
                "{} has {} unexpected trailing bytes",
                self.what,
                self.buf.len()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_in_bounds_and_refuses_past_the_end() {
        let mut r = Reader::new(b"\x00\x01ab\0\xff", "test");
        assert_eq!(r.i16().unwrap(), 1);
        assert_eq!(r.cstr().unwrap(), "ab");
        assert!(r.i16().is_err());
        assert_eq!(r.u8().unwrap(), 0xff);
        assert!(r.u8().is_err());
        r.finish().unwrap();
    }

    #[test]
    fn refuses_unterminated_and_negative_counts() {
        assert!(Reader::new(b"abc", "test").cstr().is_err());
        assert!(Reader::new(b"\xff\xff", "test").count16().is_err());
        assert!(Reader::new(b"\xff\0", "test").cstr().is_err());
        assert!(Reader::new(b"x", "test").finish().is_err());
    }
}
