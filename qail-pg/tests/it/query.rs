//! Simple and extended queries, errors, the statement cache.
