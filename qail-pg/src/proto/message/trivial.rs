//! Messages without a body: Sync (`S`), Flush (`H`), Terminate (`X`).

/// Appends Sync: ends an extended-query cycle; the server answers ReadyForQuery.
pub fn sync(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"S\0\0\0\x04");
}

/// Appends Flush: asks the server to send what it has produced so far.
pub fn flush(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"H\0\0\0\x04");
}

/// Appends Terminate: ends the session.
pub fn terminate(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"X\0\0\0\x04");
}

#[cfg(test)]
mod tests {
    #[test]
    fn encode_byte_exact() {
        let mut buf = Vec::new();
        super::sync(&mut buf);
        super::flush(&mut buf);
        super::terminate(&mut buf);
        const EXPECTED: &[u8] = b"S\0\0\0\x04H\0\0\0\x04X\0\0\0\x04";
        assert_eq!(buf, EXPECTED);
    }
}
