//! qail: compile-time checked PostgreSQL for Rust, with its own driver.
//!
//! `qail!("SELECT …", args)` is checked against a committed schema snapshot
//! (`qail.schema.json`) while the crate compiles — no database is needed to build — and runs on
//! qail-pg, an async PostgreSQL driver that speaks the binary protocol.
//!
//! ```no_run
//! use qail::{Connection, qail};
//!
//! # async fn run() -> Result<(), qail::Error> {
//! let mut conn = Connection::connect("postgres://app@localhost/app").await?;
//! let country = "GR";
//! let rows = qail!("SELECT c.name, origin.name AS origin FROM odyssey_connections c
//!                   LEFT JOIN harbors origin ON origin.id = c.origin_harbor_id
//!                   WHERE origin.country = $1 OR c.is_enabled ORDER BY c.name LIMIT 50", country)
//!     .fetch_all(&mut conn)
//!     .await?;
//! let name: &String = &rows[0].name;
//! let origin: &Option<String> = &rows[0].origin; // the nullable side of the LEFT JOIN
//! println!("{name} from {origin:?}");
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! | feature   | default | PostgreSQL types it maps |
//! |-----------|---------|--------------------------|
//! | `uuid`    | yes     | `uuid` ↔ `uuid::Uuid` |
//! | `chrono`  | yes     | `timestamptz`, `timestamp`, `date`, `time` ↔ chrono types |
//! | `time`    | no      | the same ↔ `time` crate types (used when `chrono` is off) |
//! | `json`    | yes     | `json`, `jsonb` ↔ `serde_json::Value`, [`Json<T>`](types::Json) |
//! | `decimal` | yes     | `numeric` ↔ `rust_decimal::Decimal` |
//! | `net`     | no      | `inet`, `cidr`, `macaddr` |
//!
//! The `tls` feature (on by default) brings TLS on rustls; without it `sslmode=require` and
//! `verify-*` are refused and `prefer`/`allow` connect in plain text, as with a libpq built
//! without SSL.
//! A query that touches a type whose feature is off fails to compile with a message naming the
//! feature to enable. The `tracing` feature (off by default) runs every connection attempt and
//! query in a `tracing` span with OpenTelemetry's database fields (the guide's observability page).
//!
//! # The guide
//!
//! The guide (`docs/` in the repository, an mdBook whose examples are compiled as doctests of
//! this crate) walks through each part with examples; this rustdoc holds the API details.
//!
//! - [Getting started](https://github.com/qail-rs/qail/blob/main/docs/src/getting-started.md)
//! - [Queries and types](https://github.com/qail-rs/qail/blob/main/docs/src/queries.md):
//!   `fetch_*`, `execute`, `INSERT … RETURNING`, transactions, enums, your own row types
//! - [Dynamic queries](https://github.com/qail-rs/qail/blob/main/docs/src/dynamic.md):
//!   optional clauses, sort choices, `IN {list}`, bulk inserts, COPY — the syntax is also in
//!   [`qail!`]'s documentation
//! - [Nested results](https://github.com/qail-rs/qail/blob/main/docs/src/nested.md): a parent
//!   with its children in one query, in binary or from JSON
//! - [Pipelining](https://github.com/qail-rs/qail/blob/main/docs/src/pipelining.md),
//!   [connecting and TLS](https://github.com/qail-rs/qail/blob/main/docs/src/connecting.md),
//!   [scaling out](https://github.com/qail-rs/qail/blob/main/docs/src/scaling.md),
//!   [observability](https://github.com/qail-rs/qail/blob/main/docs/src/observability.md)

#[cfg(feature = "migrate")]
pub use qail_macros::migrate;
#[cfg(feature = "migrate")]
pub use qail_macros::test;
pub use qail_macros::{QailRow, QailType, qail};
/// Migrations (feature `migrate`, on by default): a directory of SQL files applied by a runner
/// that is safe with several instances at once and behind pgbouncer; [`migrate!`] embeds one.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let pool = qail::Pool::connect("postgres://app@localhost/app").await?;
/// qail::migrate::Migrator::from_dir("migrations")?.run(&pool).await?;
/// # Ok(()) }
/// ```
#[cfg(feature = "migrate")]
pub use qail_migrate as migrate;
#[doc(inline)]
pub use qail_pg::types;
// Note: what an application names — the types it writes down and every type a public method
// of these returns — is re-exported here and documented; tests/macros/facade.rs names each
// of them. The plumbing below (the wire protocol, compiled-query templates, by-index row
// decoding) stays nameable for the rare program that reaches for it, but out of the docs.
pub use qail_pg::{
    Acquire, Atomic, AuthMethod, CancelToken, ChannelBinding, Client, ClientPool, Column, Config,
    Connection, CopyIn, DbError, Decode, Encode, Error, Executor, FromRow, Handle, Host,
    IsolationLevel, Listener, LoadBalanceHosts, NoRows, Notification, Oid, PerQuery, Pipeline,
    PipelineBuilder, PipelineResults, Pool, PoolBuilder, PoolReset, PoolStats, PooledConnection,
    Pooler, ProtocolVersion, Query, QueryOutput, RequireAuth, Row, Runner, SqlQueries, SslMode,
    Statement, TargetSessionAttrs, TcpOptions, Transaction, TransactionBuilder, TransactionStatus,
};

/// The sans-IO PostgreSQL wire protocol qail-pg speaks. Not part of an application's API.
#[doc(hidden)]
pub use qail_pg::proto;
/// Compiled-query templates and their parameters, what `qail!` emits. Not part of an
/// application's API.
#[doc(hidden)]
pub use qail_pg::template;
/// The template of a [`Query`], its row decoder and the borrowed row it decodes from
/// (`Query::for_each` hands one to its closure). Not part of an application's API.
#[doc(hidden)]
pub use qail_pg::{Decoder, RawRow, RunTarget, Template};

/// PostgreSQL type markers, named here so compile errors print them briefly (`qail::pg::int4`).
#[doc(hidden)]
pub use qail_pg::typed::pg;

#[cfg(feature = "chrono")]
#[doc(no_inline)]
pub use qail_pg::typed::ext::chrono;
#[cfg(feature = "decimal")]
#[doc(no_inline)]
pub use qail_pg::typed::ext::rust_decimal;
#[cfg(feature = "json")]
#[doc(no_inline)]
pub use qail_pg::typed::ext::serde_json;
#[cfg(feature = "time")]
#[doc(no_inline)]
pub use qail_pg::typed::ext::time;
#[cfg(feature = "uuid")]
#[doc(no_inline)]
pub use qail_pg::typed::ext::uuid;

/// What the code generated by `qail!` and the derives refers to. Not a public API.
#[doc(hidden)]
pub mod __private {
    use std::marker::PhantomData;

    /// `#[qail::test]`'s run time: a database per test from a shared template.
    #[cfg(feature = "migrate")]
    pub use qail_migrate::test_db;

    /// The registry section's name for the target (`qail!` passes the three).
    pub use qail_pg::__registry_section as registry_section;
    pub use qail_pg::template::{
        Arg, Cache, Columns, Compiled, CopyRows, CopyStatement, Decoder, ExpectedColumn,
        FromColumns, FromRow, NoRows, NotNull, Params, Piece, Query, RawRow, Template, Variants,
    };
    /// The compile-time type assertions, under the name the code `qail!` and the derives
    /// emit (`::qail::__private::check::field`, …).
    pub use qail_pg::typed::assertions as check;
    pub use qail_pg::typed::{FromPg, IsOption, NotOption, ToArg, ToPg, pg};
    pub use qail_pg::types::oid::{FIRST_USER_OID, RECORD_ARRAY};
    pub use qail_pg::types::{ArrayElement, BoxError, FieldArray, IsNull, Text, record};
    pub use qail_pg::{Decode, Encode, Error, Oid};

    /// serde, for the structs `qail!` generates for JSON documents.
    #[cfg(feature = "json")]
    pub use qail_pg::typed::ext::serde;
    /// Number fields of those structs (floats with NaN and infinities as strings, exact
    /// numerics).
    #[cfg(feature = "json")]
    pub use qail_pg::types::json_number;

    /// Rust types of the PostgreSQL types whose mapping depends on a feature. `qail!` names
    /// one only when its feature is on; otherwise it reports which feature to enable.
    pub mod types {
        pub use qail_pg::types::Interval;
        #[cfg(feature = "json")]
        pub use qail_pg::types::Json;
        #[cfg(feature = "net")]
        pub use qail_pg::types::{Cidr, Inet, MacAddr};

        #[cfg(feature = "uuid")]
        pub use qail_pg::typed::ext::uuid::Uuid;

        #[cfg(feature = "json")]
        pub use qail_pg::typed::ext::serde_json::Value as JsonValue;

        #[cfg(feature = "decimal")]
        pub use qail_pg::typed::ext::rust_decimal::Decimal;

        #[cfg(feature = "chrono")]
        pub use qail_pg::typed::ext::chrono::{
            NaiveDate as Date, NaiveDateTime as Timestamp, NaiveTime as Time,
        };
        /// `timestamptz` with the `chrono` feature.
        #[cfg(feature = "chrono")]
        pub type Timestamptz =
            qail_pg::typed::ext::chrono::DateTime<qail_pg::typed::ext::chrono::Utc>;

        #[cfg(all(feature = "time", not(feature = "chrono")))]
        pub use qail_pg::typed::ext::time::{
            Date, OffsetDateTime as Timestamptz, PrimitiveDateTime as Timestamp, Time,
        };
    }

    /// Builds a query from the template block `qail!` emits and the checked parameters.
    #[inline]
    pub fn query<'a, D, const N: usize>(
        (template, _): (&'static Template, PhantomData<fn() -> D>),
        params: [Arg<'a>; N],
    ) -> Query<'a, D> {
        Query::new(template, Params::args(params))
    }
}

/// The guide's and the README's Rust code blocks, compiled as doctests (`no_run`: no server).
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../README.md")]
    mod readme {}
    #[doc = include_str!("../docs/src/getting-started.md")]
    mod getting_started {}
    #[doc = include_str!("../docs/src/queries.md")]
    mod queries {}
    #[doc = include_str!("../docs/src/dynamic.md")]
    mod dynamic {}
    #[doc = include_str!("../docs/src/nested.md")]
    mod nested {}
    #[doc = include_str!("../docs/src/pipelining.md")]
    mod pipelining {}
    #[doc = include_str!("../docs/src/connecting.md")]
    mod connecting {}
    #[doc = include_str!("../docs/src/scaling.md")]
    mod scaling {}
    #[doc = include_str!("../docs/src/migrations.md")]
    mod migrations {}
    #[doc = include_str!("../docs/src/testing.md")]
    mod testing {}
    #[doc = include_str!("../docs/src/verify.md")]
    mod verify {}
    #[doc = include_str!("../docs/src/observability.md")]
    mod observability {}
    #[doc = include_str!("../docs/src/editors.md")]
    mod editors {}
    #[doc = include_str!("../docs/src/accuracy.md")]
    mod accuracy {}
    #[doc = include_str!("../docs/src/performance.md")]
    mod performance {}
}
