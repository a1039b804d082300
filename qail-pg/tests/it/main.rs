//! Integration tests of qail-pg against a real PostgreSQL server (`DATABASE_URL`).
