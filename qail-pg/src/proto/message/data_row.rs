//! DataRow (backend `D`): one row of a result.

use std::ops::Range;

use super::DecodeError;
use super::reader::Reader;

/// One result row: a column count, then each column as a length (-1: NULL) and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataRow<'a> {
    count: usize,
    body: &'a [u8],
}

impl<'a> DataRow<'a> {
    /// The message's tag.
    pub const TAG: u8 = b'D';

    /// Decodes the header of the body of a `D` message; columns are checked as they are read.
    #[inline]
    pub fn decode(body: &'a [u8]) -> Result<DataRow<'a>, DecodeError> {
        let count = Reader::new(body, "DataRow").count16()?;
        Ok(DataRow { count, body })
    }

    /// The number of columns.
    #[inline]
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The whole message body, which [`ranges`](DataRow::ranges) index into.
    #[inline]
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The columns in order: `None` for NULL.
    pub fn columns(&self) -> DataRowColumns<'a> {
        DataRowColumns {
            body: self.body,
            pos: 2,
            left: self.count,
        }
    }

    /// Checks every column and appends its byte range within [`body`](DataRow::body) (or
    /// `None` for NULL) to `out`. Fails on a bad length or trailing bytes.
    pub fn ranges(&self, out: &mut Vec<Option<Range<usize>>>) -> Result<(), DecodeError> {
        out.reserve(self.count);
        let mut columns = self.columns();
        while columns.left > 0 {
            out.push(columns.next_range()?);
        }
        if columns.pos != self.body.len() {
            return Err(DecodeError::new(
                "DataRow has trailing bytes after its columns",
            ));
        }
        Ok(())
    }
}

/// An iterator over the columns of a [`DataRow`].
#[derive(Debug, Clone)]
pub struct DataRowColumns<'a> {
    body: &'a [u8],
    pos: usize,
    left: usize,
}

impl DataRowColumns<'_> {
    fn next_range(&mut self) -> Result<Option<Range<usize>>, DecodeError> {
        self.left -= 1;
        let start = self.pos + 4;
        let len = self
            .body
            .get(self.pos..start)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(i32::from_be_bytes)
            .ok_or_else(truncated)?;
        if len == -1 {
            self.pos = start;
            return Ok(None);
        }
        let len = usize::try_from(len)
            .map_err(|_| DecodeError::new(format!("DataRow has a column of length {len}")))?;
        let end = start
            .checked_add(len)
            .filter(|&end| end <= self.body.len())
            .ok_or_else(truncated)?;
        self.pos = end;
        Ok(Some(start..end))
    }
}

fn truncated() -> DecodeError {
    DecodeError::new("DataRow is truncated")
}

impl<'a> Iterator for DataRowColumns<'a> {
    type Item = Result<Option<&'a [u8]>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let body = self.body;
        let item = self
            .next_range()
            .map(|range| range.and_then(|r| body.get(r)));
        if item.is_err() {
            self.left = 0;
        }
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterates_values_and_nulls() {
        let row = DataRow::decode(b"\0\x03\0\0\0\x02ab\xff\xff\xff\xff\0\0\0\0").unwrap();
        assert_eq!(row.len(), 3);
        let cols: Vec<_> = row.columns().collect::<Result<_, _>>().unwrap();
        assert_eq!(cols, [Some(&b"ab"[..]), None, Some(&b""[..])]);
        let mut ranges = Vec::new();
        row.ranges(&mut ranges).unwrap();
        assert_eq!(ranges, [Some(6..8), None, Some(16..16)]);
    }

    #[test]
    fn refuses_negative_lengths_other_than_minus_one() {
        let row = DataRow::decode(b"\0\x01\xff\xff\xff\xfe").unwrap();
        assert!(row.columns().next().unwrap().is_err());
        assert!(row.ranges(&mut Vec::new()).is_err());
    }

    #[test]
    fn refuses_lengths_past_the_end_and_trailing_bytes() {
        let row = DataRow::decode(b"\0\x01\0\0\0\x09ab").unwrap();
        assert!(row.ranges(&mut Vec::new()).is_err());
        let mut it = row.columns();
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
        let row = DataRow::decode(b"\0\x01\0\0\0\x01ab").unwrap();
        assert!(row.ranges(&mut Vec::new()).is_err());
        let row = DataRow::decode(b"\0\x02\0\0\0\x01a").unwrap();
        assert!(row.ranges(&mut Vec::new()).is_err());
        assert!(DataRow::decode(b"\xff\xff").is_err());
        assert!(DataRow::decode(b"\0").is_err());
    }
}
