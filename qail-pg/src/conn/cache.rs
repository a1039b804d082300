//! The per-connection statement cache: SQL text → prepared statement, least recently used
//! evicted first.

use std::collections::HashMap;

use super::Statement;

/// The default number of statements kept per connection.
pub(crate) const DEFAULT_SIZE: usize = 256;

pub(crate) struct StatementCache {
    entries: HashMap<Box<str>, Entry>,
    capacity: usize,
    /// A counter that orders uses; the smallest `last_used` is the least recently used.
    clock: u64,
    /// The next statement name's number.
    next_id: u64,
}

struct Entry {
    statement: Statement,
    last_used: u64,
}

impl StatementCache {
    pub(crate) fn new(capacity: usize) -> StatementCache {
        StatementCache {
            entries: HashMap::new(),
            capacity,
            clock: 0,
            next_id: 0,
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
        let mut evicted = Vec::new();
        while self.entries.len() > self.capacity {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(sql, _)| sql.clone());
            let Some(sql) = oldest else { break };
            evicted.extend(self.remove(&sql));
        }
        evicted
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
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
    fn names_are_never_reused() {
        let mut cache = StatementCache::new(1);
        let a = cache.next_name();
        let b = cache.next_name();
        assert_ne!(a, b);
    }
}
