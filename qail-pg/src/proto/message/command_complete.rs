//! CommandComplete (backend `C`).

use super::DecodeError;

/// A statement finished; the tag names it and, for most DML, counts its rows.
///
/// Every query ends with one, so decoding checks only the framing (a tag ending in NUL);
/// the tag's text is checked when it is read ([`tag`](CommandComplete::tag)), and the row
/// count is read from its bytes ([`rows`](CommandComplete::rows)), as a [`DataRow`]'s
/// columns are checked as they are read.
///
/// [`DataRow`]: super::DataRow
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandComplete<'a> {
    /// The tag's bytes, without the NUL.
    tag: &'a [u8],
}

impl<'a> CommandComplete<'a> {
    /// Decodes the body of a `C` message.
    #[inline]
    pub fn decode(body: &'a [u8]) -> Result<CommandComplete<'a>, DecodeError> {
        match body.split_last() {
            Some((0, tag)) => Ok(CommandComplete { tag }),
            _ => Err(DecodeError::new(
                "CommandComplete does not end its tag with NUL",
            )),
        }
    }

    /// The command tag, e.g. `INSERT 0 3`, `SELECT 2`, `CREATE TABLE`; an error when it is
    /// not UTF-8 or holds a NUL.
    pub fn tag(&self) -> Result<&'a str, DecodeError> {
        if self.tag.contains(&0) {
            return Err(DecodeError::new(
                "CommandComplete has trailing bytes after its tag",
            ));
        }
        std::str::from_utf8(self.tag)
            .map_err(|_| DecodeError::new("CommandComplete has a tag that is not UTF-8"))
    }

    /// The number of rows the command affected or returned, when its tag carries one
    /// (INSERT, UPDATE, DELETE, MERGE, SELECT, MOVE, FETCH, COPY).
    pub fn rows(&self) -> Option<u64> {
        // Note: read once per query in pipelines, so no split iterators: the command is up to
        // the first space, the count after the last one (`INSERT 0 3` carries an OID first).
        let space = self.tag.iter().position(|&b| b == b' ')?;
        let (command, rest) = (self.tag.get(..space)?, self.tag.get(space + 1..)?);
        let counted = matches!(
            command,
            b"INSERT" | b"UPDATE" | b"DELETE" | b"MERGE" | b"SELECT" | b"MOVE" | b"FETCH" | b"COPY"
        );
        if !counted {
            return None;
        }
        let count = match rest.iter().rposition(|&b| b == b' ') {
            Some(last) => rest.get(last + 1..)?,
            None => rest,
        };
        if count.is_empty() {
            return None;
        }
        count.iter().try_fold(0u64, |n, &digit| {
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
        assert!(CommandComplete::decode(b"").is_err());
        assert!(CommandComplete::decode(b"SELECT 1\0x").is_err());
        let interior_nul = CommandComplete::decode(b"SELECT 1\0x\0").unwrap();
        assert!(interior_nul.tag().is_err());
        assert_eq!(interior_nul.rows(), None);
        assert!(
            CommandComplete::decode(b"SELECT \xff\0")
                .unwrap()
                .tag()
                .is_err()
        );
    }

    #[test]
    fn reads_the_tag() {
        let done = CommandComplete::decode(b"INSERT 0 3\0").unwrap();
        assert_eq!(done.tag().unwrap(), "INSERT 0 3");
        assert_eq!(CommandComplete::decode(b"\0").unwrap().tag().unwrap(), "");
    }
}
