//! Compiled queries: what `qail!` emits, and the row interface the connection decodes into.
//!
//! A [`Template`] is a `static` holding a statement's pre-encoded Parse message and Bind
//! prefix, built at compile time by the same encoder ([`crate::proto::message`]) the
//! connection uses at run time. A [`Query`] pairs a template with its parameters ([`Arg`]s:
//! small values held by value, others borrowed); its rows are decoded by a [`Decoder`] (every
//! [`FromRow`] type is one) from a [`RawRow`], one column after the other, by index.
//!
//! This module is sans-IO: it builds without the `runtime` feature.

mod arg;
#[cfg_attr(
    not(feature = "runtime"),
    allow(
        dead_code,
        reason = "the connection (feature `runtime`) runs these checks"
    )
)]
pub(crate) mod conformance;
mod copy_rows;
mod encoding;
mod query;
mod registry;
mod row;
mod variants;
#[cfg_attr(
    not(feature = "runtime"),
    allow(
        dead_code,
        reason = "the pool (feature `runtime`) verifies the statements"
    )
)]
pub(crate) mod verify;

pub use arg::Arg;
pub use copy_rows::{
    CopyRow, CopyRows, CopyStatement, HEADER as COPY_HEADER, TRAILER as COPY_TRAILER,
};
pub use encoding::{Encoded, ExpectedColumn, ExpectedColumns, Template, statement_name};
pub use query::{NoRows, Params, Query, ReturnsRows};
pub use registry::{
    Compiled, NotNull, SECTIONS, STATEMENTS, Sections, Statements, record as registry_record,
};
pub use row::{Columns, Decoder, FromColumns, FromRow, RawRow};
pub use variants::{Cache, Piece, Variants};
pub use verify::{Drift, Expectation, ExpectedResult, report};
