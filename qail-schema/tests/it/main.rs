//! Integration tests of qail-schema against a real PostgreSQL (`DATABASE_URL`, default
//! `postgres://postgres@127.0.0.1:5432/postgres`).

mod corpus;
mod postgres18;
mod util;
