//! SSLRequest (frontend, untagged): asks the server whether it will speak TLS.

/// Appends an SSLRequest to `buf`. The server answers with a single byte, `S` or `N`.
pub fn ssl_request(buf: &mut Vec<u8>) {
    buf.extend_from_slice(&8i32.to_be_bytes());
    buf.extend_from_slice(&80_877_103i32.to_be_bytes());
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_byte_exact() {
        const EXPECTED: &[u8] = b"\0\0\0\x08\x04\xd2\x16\x2f";
        let mut buf = Vec::new();
        super::ssl_request(&mut buf);
        assert_eq!(buf, EXPECTED);
    }
}
