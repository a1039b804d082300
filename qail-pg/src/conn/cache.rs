//! The per-connection statement cache: SQL text (run-time queries) or template name (compiled
//! queries) → prepared statement, least recently used evicted first. Both kinds share one
//! capacity, so the server never holds more than `capacity` statements of this connection.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::Statement;

/// The default number of statements kept per connection.
pub(crate) const DEFAULT_SIZE: usize = 256;

pub(crate) struct StatementCache {
    entries: HashMap<Box<str>, Entry>,
    /// Compiled templates prepared under their own statement name.
    templates: HashMap<&'static str, Entry, BuildHasherDefault<NameHasher>>,
    capacity: usize,
    /// A counter that orders uses; the smallest `last_used` is the least recently used.
    clock: u64,
    /// The next statement name's number.
    next_id: u64,
    /// The template found last: a connection running one compiled query after another
    /// finds it again without hashing its name.
    last: Option<Last>,
}

/// [`StatementCache::last`]: a template's name and statement, and its uses since it was
/// found in the map, which are written back to its entry ([`StatementCache::settle`])
/// before anything else reads or changes the entries.
struct Last {
    name: &'static str,
    statement: Statement,
    /// The clock when it was found in the map, and at its last use.
    found_at: u64,
    last_used: u64,
}

/// The hasher of template names: FxHash's multiply-rotate over 8-byte words.
///
/// Note: the keys are the names compiled into the program (`q` and the hex digits of a hash
/// of the SQL), never data from the peer, so a fast unkeyed hash is enough; SipHash cost as
/// much as the rest of the cache lookup on every compiled query.
#[derive(Default)]
pub(crate) struct NameHasher(u64);

impl NameHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for NameHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // Note: the length keeps `q` and `q\0` (zero-padded alike) apart.
        self.add(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

struct Entry {
    statement: Statement,
    last_used: u64,
}

impl StatementCache {
    pub(crate) fn new(capacity: usize) -> StatementCache {
        StatementCache {
            entries: HashMap::new(),
            templates: HashMap::default(),
            capacity,
            clock: 0,
            next_id: 0,
            last: None,
        }
    }

    /// The cached statement for `sql`, marked as just used.
    pub(crate) fn get(&mut self, sql: &str) -> Option<Statement> {
        self.clock += 1;
        let entry = self.entries.get_mut(sql)?;
        entry.last_used = self.clock;
        Some(entry.statement.clone())
    }

    /// A statement name never used before on this connection.
    pub(crate) fn next_name(&mut self) -> String {
        self.next_id += 1;
        format!("qail_s{}", self.next_id)
    }

    /// Whether the cache keeps statements at all.
    pub(crate) fn is_enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Adds a statement; returns the names of statements evicted to make room.
    pub(crate) fn insert(&mut self, sql: &str, statement: Statement) -> Vec<String> {
        self.clock += 1;
        let entry = Entry {
            statement,
            last_used: self.clock,
        };
        let mut evicted = Vec::new();
        if let Some(old) = self.entries.insert(sql.into(), entry) {
            evicted.push(old.statement.name().to_owned());
        }
        evicted.extend(self.shrink());
        evicted
    }

    /// The prepared statement of the template named `name`, marked as just used.
    pub(crate) fn get_template(&mut self, name: &'static str) -> Option<Statement> {
        self.clock += 1;
        // Note: the same name at the same address is the same template name: no hashing.
        if let Some(last) = &mut self.last
            && std::ptr::eq(last.name, name)
        {
            last.last_used = self.clock;
            return Some(last.statement.clone());
        }
        self.settle();
        let entry = self.templates.get_mut(name)?;
        entry.last_used = self.clock;
        self.last = Some(Last {
            name,
            statement: entry.statement.clone(),
            found_at: self.clock,
            last_used: self.clock,
        });
        Some(entry.statement.clone())
    }

    /// Forgets [`StatementCache::last`], writing its last use back to its entry when it was
    /// used since it was found (so templates that alternate cost no extra lookup).
    fn settle(&mut self) {
        if let Some(last) = self.last.take()
            && last.last_used != last.found_at
            && let Some(entry) = self.templates.get_mut(last.name)
        {
            entry.last_used = last.last_used;
        }
    }

    /// Adds a prepared template; returns the names of statements evicted to make room.
    pub(crate) fn insert_template(
        &mut self,
        name: &'static str,
        statement: Statement,
    ) -> Vec<String> {
        self.settle();
        self.clock += 1;
        let entry = Entry {
            statement,
            last_used: self.clock,
        };
        // Note: a template's statement keeps its name, so replacing it closes nothing.
        self.templates.insert(name, entry);
        self.shrink()
    }

    /// Forgets the template named `name`; whether it was cached.
    pub(crate) fn remove_template(&mut self, name: &str) -> bool {
        self.settle();
        self.templates.remove(name).is_some()
    }

    /// Forgets every statement (after `DISCARD ALL` or `DEALLOCATE ALL` closed them on the
    /// server); returns nothing to close.
    pub(crate) fn clear(&mut self) {
        self.last = None;
        self.entries.clear();
        self.templates.clear();
    }

    /// The number of statements kept.
    pub(crate) fn len(&self) -> usize {
        self.entries.len() + self.templates.len()
    }

    /// Forgets the statement for `sql`; returns its name.
    pub(crate) fn remove(&mut self, sql: &str) -> Option<String> {
        self.entries
            .remove(sql)
            .map(|e| e.statement.name().to_owned())
    }

    /// Changes the capacity; returns the names of statements evicted.
    pub(crate) fn resize(&mut self, capacity: usize) -> Vec<String> {
        self.capacity = capacity;
        self.shrink()
    }

    fn shrink(&mut self) -> Vec<String> {
        self.settle();
        let mut evicted = Vec::new();
        while self.len() > self.capacity {
            let oldest_sql = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(sql, e)| (sql.clone(), e.last_used));
            let oldest_template = self
                .templates
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(name, e)| (*name, e.last_used));
            match (oldest_sql, oldest_template) {
                (Some((_, a)), Some((name, b))) if b < a => {
                    self.templates.remove(name);
                    evicted.push(name.to_owned());
                }
                (Some((sql, _)), _) => evicted.extend(self.remove(&sql)),
                (None, Some((name, _))) => {
                    self.templates.remove(name);
                    evicted.push(name.to_owned());
                }
                (None, None) => break,
            }
        }
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmt(name: &str) -> Statement {
        Statement::new(name.to_owned(), Vec::new(), Vec::new())
    }

    #[test]
    fn evicts_the_least_recently_used() {
        let mut cache = StatementCache::new(2);
        assert!(cache.insert("a", stmt("sa")).is_empty());
        assert!(cache.insert("b", stmt("sb")).is_empty());
        assert!(cache.get("a").is_some());
        assert_eq!(cache.insert("c", stmt("sc")), ["sb"]);
        assert!(cache.get("b").is_none());
        assert_eq!(cache.get("a").unwrap().name(), "sa");
        assert_eq!(cache.resize(0).len(), 2);
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn templates_share_the_capacity() {
        let mut cache = StatementCache::new(2);
        assert!(cache.insert("a", stmt("sa")).is_empty());
        assert!(cache.insert_template("q1", stmt("q1")).is_empty());
        assert_eq!(cache.insert_template("q2", stmt("q2")), ["sa"]);
        assert!(cache.get_template("q1").is_some());
        assert_eq!(cache.insert("b", stmt("sb")), ["q2"]);
        assert_eq!(cache.len(), 2);
        assert!(cache.remove_template("q1"));
        cache.clear();
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn repeated_template_uses_count_for_eviction() {
        const Q: &str = "q1";
        let mut cache = StatementCache::new(2);
        assert!(cache.insert_template(Q, stmt(Q)).is_empty());
        assert!(cache.get_template(Q).is_some());
        assert!(cache.insert("a", stmt("sa")).is_empty());
        // Found again without a lookup: still its most recent use.
        assert_eq!(cache.get_template(Q).unwrap().name(), Q);
        assert_eq!(cache.insert("b", stmt("sb")), ["sa"]);
        assert!(cache.remove_template(Q));
        assert!(cache.get_template(Q).is_none());
        assert!(cache.insert_template(Q, stmt("q1 again")).is_empty());
        assert_eq!(cache.get_template(Q).unwrap().name(), "q1 again");
        assert_eq!(cache.get_template(Q).unwrap().name(), "q1 again");
    }

    #[test]
    fn template_names_hash_apart() {
        use std::hash::BuildHasher;
        let build = BuildHasherDefault::<NameHasher>::default();
        let names = ["q0123456789abcdef", "q0123456789abcdee", "q", "", "q\0"];
        let hashes: std::collections::HashSet<u64> =
            names.iter().map(|n| build.hash_one(n)).collect();
        assert_eq!(hashes.len(), names.len());
        let mut cache = StatementCache::new(8);
        for name in names {
            assert!(cache.insert_template(name, stmt(name)).is_empty());
        }
        for name in names {
            assert_eq!(cache.get_template(name).unwrap().name(), name);
        }
    }

    #[test]
    fn names_are_never_reused() {
        let mut cache = StatementCache::new(1);
        let a = cache.next_name();
        let b = cache.next_name();
        assert_ne!(a, b);
    }
}
