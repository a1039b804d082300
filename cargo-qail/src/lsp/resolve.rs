//! What a name under the cursor stands for: a relation, a column of one of the statement's
//! relations (through its alias), a function or a type, found from the tolerant reading in
//! [`super::scan`].

use super::scan::{self, Kind, RelRef, Token};
use qail_schema::Snapshot;
use qail_schema::snapshot::{Column, Relation};

/// A statement read tolerantly: its tokens and relations.
pub(crate) struct Read<'s> {
    pub(crate) sql: &'s str,
    pub(crate) tokens: Vec<Token>,
    pub(crate) rels: Vec<RelRef>,
}

impl<'s> Read<'s> {
    pub(crate) fn new(sql: &'s str) -> Read<'s> {
        let tokens = scan::tokens(sql);
        let rels = scan::relations(sql, &tokens);
        Read { sql, tokens, rels }
    }

    /// The index of the token at byte `at` (a token ending at `at` counts, for the word just
    /// typed).
    pub(crate) fn token_at(&self, at: usize) -> Option<usize> {
        let i = self.tokens.partition_point(|t| t.range.end <= at);
        if self.tokens.get(i).is_some_and(|t| t.range.start <= at) {
            return Some(i);
        }
        i.checked_sub(1)
            .filter(|&k| self.tokens[k].range.end == at && self.tokens[k].kind != Kind::Dot)
    }

    /// The relation the statement calls `name` (alias, else name).
    pub(crate) fn visible(&self, name: &str) -> Option<&RelRef> {
        self.rels
            .iter()
            .find(|r| r.alias.as_deref() == Some(name))
            .or_else(|| {
                self.rels
                    .iter()
                    .find(|r| r.alias.is_none() && r.name.as_deref() == Some(name))
            })
    }

    /// The word before the `.` before token `i`, if token `i` is qualified (`o.name`).
    pub(crate) fn qualifier(&self, i: usize) -> Option<String> {
        let dot = i.checked_sub(1).map(|k| &self.tokens[k])?;
        let word = i.checked_sub(2).map(|k| &self.tokens[k])?;
        (dot.kind == Kind::Dot && matches!(word.kind, Kind::Word { .. }))
            .then(|| word.name(self.sql))
    }
}

/// The snapshot relation a reference names.
pub(crate) fn relation<'a>(snap: &'a Snapshot, r: &RelRef) -> Option<&'a Relation> {
    snap.relation(r.schema.as_deref(), r.name.as_deref()?)
}

/// What a name stands for.
pub(crate) enum Target<'a> {
    /// A relation.
    Relation(&'a Relation),
    /// A column of a relation, through the statement's reference to it.
    Column(&'a Relation, &'a Column, Option<&'a RelRef>),
}

/// What token `i` of `read` names: a column (qualified by an alias or relation, or the first
/// relation of the statement that has it), a relation, or an alias.
pub(crate) fn target<'a>(snap: &'a Snapshot, read: &'a Read<'_>, i: usize) -> Option<Target<'a>> {
    let tok = &read.tokens[i];
    if !matches!(tok.kind, Kind::Word { .. }) {
        return None;
    }
    let name = tok.name(read.sql);
    // A relation's name where it is written in FROM/JOIN.
    if let Some(r) = read
        .rels
        .iter()
        .find(|r| r.range.start <= tok.range.start && tok.range.end <= r.range.end)
    {
        return relation(snap, r).map(Target::Relation);
    }
    if let Some(q) = read.qualifier(i) {
        if let Some(r) = read.visible(&q) {
            let rel = relation(snap, r)?;
            return rel.column(&name).map(|c| Target::Column(rel, c, Some(r)));
        }
        // `schema.table` outside FROM.
        let rel = snap.relation(Some(&q), &name)?;
        return Some(Target::Relation(rel));
    }
    // An alias, or a relation's own name.
    if let Some(r) = read.visible(&name)
        && read.tokens.get(i + 1).is_some_and(|t| t.kind == Kind::Dot)
    {
        return relation(snap, r).map(Target::Relation);
    }
    for r in &read.rels {
        if let Some(rel) = relation(snap, r)
            && let Some(c) = rel.column(&name)
        {
            return Some(Target::Column(rel, c, Some(r)));
        }
    }
    if let Some(r) = read.visible(&name) {
        return relation(snap, r).map(Target::Relation);
    }
    snap.relation(None, &name).map(Target::Relation)
}
