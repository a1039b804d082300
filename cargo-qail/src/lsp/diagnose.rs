//! Diagnostics: the analyzer's errors (and unreadable captures) at their exact place in the
//! document, with the mechanical fixes as quick fixes: a did-you-mean name replaces the
//! offending bytes, a missing cast is appended after them.

use std::ops::Range;

use super::document::Region;

/// One error, in document offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The offending bytes of the document.
    pub(crate) range: Range<usize>,
    /// The message with its hint (`column "nme" does not exist …; did you mean "name"?`).
    pub(crate) message: String,
    /// The quick fix, if the hint is mechanical.
    pub(crate) fix: Option<Fix>,
}

/// A mechanical fix: replace `range` (document offsets) with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fix {
    pub(crate) title: String,
    pub(crate) range: Range<usize>,
    pub(crate) text: String,
}

/// The problems of a region.
pub(crate) fn problems(region: &Region) -> Vec<Problem> {
    let rewritten = match &region.rewritten {
        Ok(r) => r,
        Err(e) => {
            return vec![Problem {
                range: region.doc_range(&e.range),
                message: e.message.clone(),
                fix: None,
            }];
        }
    };
    let Some(Err(diagnostics)) = &region.analysis else {
        return Vec::new();
    };
    diagnostics
        .iter()
        .map(|d| {
            let original = rewritten.original_range(&d.range);
            let range = region.doc_range(&original);
            let fix = d
                .hint
                .as_deref()
                .and_then(|h| fix(h, &region.sql[original.clone()], &range));
            Problem {
                range,
                message: d.to_string(),
                fix,
            }
        })
        .collect()
}

/// The fix a hint describes: `did you mean "name"?` or `add a cast: ::int4`.
fn fix(hint: &str, written: &str, range: &Range<usize>) -> Option<Fix> {
    if let Some(name) = hint
        .strip_prefix("did you mean \"")
        .and_then(|r| r.strip_suffix("\"?"))
    {
        // Keep a qualifier that was written: `h.nme` → `h.name`.
        let keep = written.rfind('.').map_or(0, |i| i + 1);
        return Some(Fix {
            title: format!("replace with {name}"),
            range: range.start + keep..range.end,
            text: name.to_owned(),
        });
    }
    if let Some(cast) = hint.strip_prefix("add a cast: ::") {
        return Some(Fix {
            title: format!("add a cast to {cast}"),
            range: range.end..range.end,
            text: format!("::{cast}"),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::document::{Document, FileKind};

    #[test]
    fn ranges_and_fixes_land_in_the_literal() {
        let snap = qail_schema::ddl::from_sql(&[(
            "t.sql".to_owned(),
            "CREATE TABLE harbors (id int PRIMARY KEY, name text NOT NULL);".to_owned(),
        )])
        .0;
        let text = "let q = qail!(\"SELECT h.nme,\\n \\\"id\\\" FROM harbors h WHERE id = {x}\");";
        let mut doc = Document::new(FileKind::Rust, text.to_owned());
        doc.analyze(&snap);
        let p = problems(&doc.regions[0]);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(&text[p[0].range.clone()], "nme");
        let fix = p[0].fix.as_ref().unwrap();
        assert_eq!(&text[fix.range.clone()], "nme");
        assert_eq!(fix.text, "name");
    }
}
