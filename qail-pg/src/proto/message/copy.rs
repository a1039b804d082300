//! CopyData (`d`, both directions), CopyDone (`c`, both directions), CopyFail (`f`, frontend).

use super::EncodeError;
use super::write::{cstr, tagged};

/// A chunk of COPY data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyData<'a> {
    /// The bytes.
    pub data: &'a [u8],
}

impl<'a> CopyData<'a> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        tagged(buf, b'd', |buf| {
            buf.extend_from_slice(self.data);
            Ok(())
        })
    }

    /// Decodes the body of a backend CopyData: every byte is data.
    pub fn decode(body: &'a [u8]) -> CopyData<'a> {
        CopyData { data: body }
    }
}

/// Appends CopyDone: the end of the COPY data.
pub fn copy_done(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"c\0\0\0\x04");
}

/// Aborts a COPY FROM STDIN with an error message.
#[derive(Debug, Clone, Copy)]
pub struct CopyFail<'a> {
    /// Why the copy is aborted; the server reports it in its error.
    pub message: &'a str,
}

impl CopyFail<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        tagged(buf, b'f', |buf| {
            cstr(buf, self.message, "the COPY failure message")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_byte_exact() {
        const EXPECTED: &[u8] = b"d\0\0\0\x07a\tbc\0\0\0\x04f\0\0\0\x09oops\0";
        let mut buf = Vec::new();
        CopyData { data: b"a\tb" }.encode(&mut buf).unwrap();
        copy_done(&mut buf);
        CopyFail { message: "oops" }.encode(&mut buf).unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn decode_keeps_every_byte() {
        assert_eq!(CopyData::decode(b"\0x\n").data, b"\0x\n");
    }
}
