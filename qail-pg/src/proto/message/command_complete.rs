//! CommandComplete (backend `C`).

use super::DecodeError;
use super::reader::Reader;

/// A statement finished; the tag names it and, for most DML, counts its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandComplete<'a> {
    /// The command tag, e.g. `INSERT 0 3`, `SELECT 2`, `CREATE TABLE`.
    pub tag: &'a str,
}

impl<'a> CommandComplete<'a> {
    /// Decodes the body of a `C` message.
    pub fn decode(body: &'a [u8]) -> Result<CommandComplete<'a>, DecodeError> {
        let mut r = Reader::new(body, "CommandComplete");
        let tag = r.cstr()?;
        r.finish()?;
        Ok(CommandComplete { tag })
    }

    /// The number of rows the command affected or returned, when its tag carries one
    /// (INSERT, UPDATE, DELETE, MERGE, SELECT, MOVE, FETCH, COPY).
    pub fn rows(&self) -> Option<u64> {
        // Note: read once per query in pipelines, so no split iterators: the command is up to
        // the first space, the count after the last one (`INSERT 0 3` carries an OID first).
        let (command, rest) = self.tag.split_once(' ')?;
        let counted = matches!(
            command,
            "INSERT" | "UPDATE" | "DELETE" | "MERGE" | "SELECT" | "MOVE" | "FETCH" | "COPY"
        );
        if !counted {
            return None;
        }
        let count = rest.rsplit_once(' ').map_or(rest, |(_, count)| count);
        if count.is_empty() {
            return None;
        }
        count.bytes().try_fold(0u64, |n, digit| {
            if !digit.is_ascii_digit() {
                return None;
            }
            n.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(tag: &[u8]) -> Option<u64> {
        CommandComplete::decode(tag).unwrap().rows()
    }

    #[test]
    fn parses_row_counts() {
        assert_eq!(rows(b"INSERT 0 3\0"), Some(3));
        assert_eq!(rows(b"UPDATE 12\0"), Some(12));
        assert_eq!(rows(b"SELECT 0\0"), Some(0));
        assert_eq!(rows(b"COPY 5\0"), Some(5));
        assert_eq!(rows(b"CREATE TABLE\0"), None);
        assert_eq!(rows(b"SELECT\0"), None);
        assert_eq!(rows(b"DELETE x\0"), None);
        assert_eq!(rows(b"SELECT \0"), None);
        assert_eq!(rows(b"UPDATE +1\0"), None);
        assert_eq!(rows(b"SELECT 18446744073709551615\0"), Some(u64::MAX));
        assert_eq!(rows(b"SELECT 18446744073709551616\0"), None);
    }

    #[test]
    fn refuses_malformed() {
        assert!(CommandComplete::decode(b"SELECT 1").is_err());
        assert!(CommandComplete::decode(b"SELECT 1\0x").is_err());
    }
}
