//! Positions: byte offsets ↔ LSP positions (lines and UTF-16 code units), and `file://` URIs
//! ↔ paths.

use std::ops::Range;
use std::path::{Path, PathBuf};

use lsp_types::{Position, Uri};

/// Line starts of a text, for converting offsets to positions and back.
pub(crate) struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { starts }
    }

    /// The LSP position of byte `offset` of `text`.
    pub(crate) fn position(&self, text: &str, offset: usize) -> Position {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let col: usize = text[start..offset].chars().map(char::len_utf16).sum();
        Position {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            character: u32::try_from(col).unwrap_or(u32::MAX),
        }
    }

    /// The LSP range of a byte range of `text`.
    pub(crate) fn range(&self, text: &str, range: &Range<usize>) -> lsp_types::Range {
        lsp_types::Range {
            start: self.position(text, range.start),
            end: self.position(text, range.end),
        }
    }

    /// The byte offset of an LSP position in `text` (clamped to its line's end).
    pub(crate) fn offset(&self, text: &str, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map_or(text.len(), |&n| n - 1);
        let mut units = pos.character as usize;
        for (i, c) in text[start..end].char_indices() {
            if units == 0 {
                return start + i;
            }
            units = units.saturating_sub(c.len_utf16());
        }
        end
    }
}

/// The path of a `file://` URI.
pub(crate) fn uri_path(uri: &Uri) -> Option<PathBuf> {
    let s = uri.as_str();
    let rest = s.strip_prefix("file://")?;
    // `file:///home/…` (empty host) or `file://localhost/home/…`.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = path
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out).into_owned()))
}

/// The `file://` URI of an absolute path.
pub(crate) fn path_uri(path: &Path) -> Option<Uri> {
    let mut s = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let text = "ab\n'é😀' x\n";
        let lines = Lines::new(text);
        let x = text.find('x').unwrap();
        let pos = lines.position(text, x);
        assert_eq!((pos.line, pos.character), (1, 6));
        assert_eq!(lines.offset(text, pos), x);
        assert_eq!(lines.offset(text, Position::new(0, 99)), 2);
        assert_eq!(lines.offset(text, Position::new(9, 0)), text.len());
    }

    #[test]
    fn uris_round_trip() {
        let path = Path::new("/tmp/a b/é.rs");
        let uri = path_uri(path).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%A9.rs");
        assert_eq!(uri_path(&uri).unwrap(), path);
    }
}
