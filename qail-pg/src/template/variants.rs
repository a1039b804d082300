//! [`Variants`]: a compiled query with optional clauses or sort choices, one [`Template`] per
//! combination, each built once on first use from pieces checked at compile time.

use std::sync::RwLock;

use super::Template;
use crate::types::Oid;

/// A piece of a dynamic query's SQL, as `qail!` emits it.
#[derive(Debug, Clone, Copy)]
pub enum Piece {
    /// Text every combination has.
    Text(&'static str),
    /// An optional clause: included when bit `bit` of the combination key is set.
    Clause {
        /// The bit of the key.
        bit: u32,
        /// The clause's text, parameters numbered as in the full query.
        text: &'static str,
    },
    /// A choice among alternatives (a sort order): `texts[(key >> shift) & mask]`.
    Choice {
        /// Where the choice's index starts in the key.
        shift: u32,
        /// The index's bits, after the shift.
        mask: u64,
        /// The alternatives.
        texts: &'static [&'static str],
    },
}

/// A dynamic query: its pieces, the parameter types of the full query (every parameter is
/// bound in every combination; the clauses left out receive NULL and are not referenced),
/// the expected columns, and the templates built so far.
#[derive(Debug)]
pub struct Variants {
    /// The SQL, piece by piece.
    pub pieces: &'static [Piece],
    /// Parameter type OIDs of every `$n` (0 for a user type).
    pub param_oids: &'static [Oid],
    /// Expected result columns: name, type OID, type name.
    pub columns: &'static [(&'static str, Oid, &'static str)],
    /// The templates built so far.
    pub cache: Cache,
    /// Where the query is written, `file:line` ([`Template::source`]).
    pub source: &'static str,
    /// Whether some combination may change session state
    /// ([`Template::changes_session`]), for every template built.
    pub changes_session: bool,
}

/// The templates of a [`Variants`] built so far, by combination key; a `static` can hold it
/// ([`Cache::new`] is `const`).
#[derive(Debug)]
pub struct Cache(RwLock<Vec<(u64, &'static Template)>>);

impl Cache {
    /// An empty cache.
    pub const fn new() -> Cache {
        Cache(RwLock::new(Vec::new()))
    }
}

impl Default for Cache {
    fn default() -> Cache {
        Cache::new()
    }
}

impl Variants {
    /// The template of combination `key` (clause bits and choice indices, as `qail!` computes
    /// them): a lookup after its first use, which encodes and leaks it (once per combination
    /// and process).
    pub fn template(&'static self, key: u64) -> &'static Template {
        if let Some(t) = self.cached(key) {
            return t;
        }
        let mut cache = self.cache.0.write().unwrap_or_else(|e| e.into_inner());
        match cache.binary_search_by_key(&key, |(k, _)| *k) {
            Ok(i) => cache[i].1,
            Err(i) => {
                let template = Template::leak_analyzed(
                    &self.sql(key),
                    self.param_oids,
                    self.columns,
                    self.source,
                    self.changes_session,
                )
                .expect("the pieces were encoded as one statement at compile time");
                cache.insert(i, (key, template));
                template
            }
        }
    }

    fn cached(&self, key: u64) -> Option<&'static Template> {
        let cache = self.cache.0.read().unwrap_or_else(|e| e.into_inner());
        cache
            .binary_search_by_key(&key, |(k, _)| *k)
            .ok()
            .map(|i| cache[i].1)
    }

    /// The SQL of combination `key`.
    pub fn sql(&self, key: u64) -> String {
        let mut sql = String::new();
        for piece in self.pieces {
            match *piece {
                Piece::Text(text) => sql.push_str(text),
                Piece::Clause { bit, text } => {
                    if key.checked_shr(bit).unwrap_or(0) & 1 == 1 {
                        sql.push_str(text);
                    }
                }
                Piece::Choice { shift, mask, texts } => {
                    let index = key.checked_shr(shift).unwrap_or(0) & mask;
                    let index = usize::try_from(index).unwrap_or(usize::MAX);
                    sql.push_str(texts.get(index).copied().unwrap_or_default());
                }
            }
        }
        sql
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static PIECES: &[Piece] = &[
        Piece::Text("SELECT id FROM t WHERE true"),
        Piece::Clause {
            bit: 0,
            text: " AND a = $1",
        },
        Piece::Clause {
            bit: 1,
            text: " AND b = $2",
        },
        Piece::Text(" ORDER BY "),
        Piece::Choice {
            shift: 2,
            mask: 1,
            texts: &["id", "a DESC"],
        },
    ];
    static VARIANTS: Variants = Variants {
        pieces: PIECES,
        param_oids: &[23, 25],
        columns: &[("id", 23, "int4")],
        cache: Cache::new(),
        source: "src/t.rs:1",
        changes_session: false,
    };

    #[test]
    fn combinations_are_built_once_and_looked_up() {
        assert_eq!(
            VARIANTS.sql(0b011),
            "SELECT id FROM t WHERE true AND a = $1 AND b = $2 ORDER BY id"
        );
        assert_eq!(
            VARIANTS.sql(0b110),
            "SELECT id FROM t WHERE true AND b = $2 ORDER BY a DESC"
        );
        let a = VARIANTS.template(0b010);
        assert_eq!(
            a.sql(),
            "SELECT id FROM t WHERE true AND b = $2 ORDER BY id"
        );
        assert_eq!(a.param_oids, &[23, 25]);
        assert!(std::ptr::eq(a, VARIANTS.template(0b010)));
        assert!(!std::ptr::eq(a, VARIANTS.template(0b000)));
        assert_eq!(a.columns().next().map(|c| c.name), Some("id"));
    }
}
