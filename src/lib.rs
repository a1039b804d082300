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
//! # Dynamic queries
//!
//! Optional filters, sort choices, `IN` lists, bulk inserts and COPY are written in the SQL
//! of [`qail!`] (its documentation has the syntax), and every combination is checked:
//!
//! ```no_run
//! # use qail::{Connection, qail};
//! # async fn run(conn: &mut Connection) -> Result<(), qail::Error> {
//! enum Order { Soonest, Cheapest }
//! let (vessel, max_price, limit): (Option<i64>, Option<qail::rust_decimal::Decimal>, Option<i64>) =
//!     (Some(3), None, Some(20));
//! let order = Order::Cheapest;
//! let rows = qail!(
//!     "SELECT id, price FROM sailings WHERE seats_left > 0
//!      {? AND vessel_id = {vessel} } {? AND price <= {max_price} }
//!      ORDER BY {sort} {? LIMIT {limit} }",
//!     sort = match order { Order::Soonest => "departs_at, id", Order::Cheapest => "price, id" }
//! )
//! .fetch_all(&mut *conn)
//! .await?;
//! let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
//! let again = qail!("SELECT id FROM sailings WHERE id IN {ids}").fetch_all(&mut *conn).await?;
//! // Small arguments are owned by the query: a pipeline straight from an iterator.
//! let seats = conn
//!     .pipeline((1..=10_i64).map(|i| qail!("SELECT seats_left FROM sailings WHERE id = $1", i * 2)))
//!     .await?;
//! # let _ = (again, seats);
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
//! query in a `tracing` span with OpenTelemetry's database fields (README, "Observability").
//!
//! # Nested results
//!
//! A parent with its children in one query — `array_agg(ROW(…))`, `ARRAY(SELECT …)`, a
//! whole-row reference, a composite column — comes back as generated structs, decoded in
//! binary field by field (no JSON):
//!
//! ```no_run
//! # use qail::{Connection, qail};
//! # async fn run(conn: &mut Connection) -> Result<(), qail::Error> {
//! let harbors = qail!("SELECT h.name, ARRAY(SELECT x FROM (
//!                          SELECT c.name, d.name AS destination, c.duration_minutes
//!                          FROM odyssey_connections c JOIN harbors d ON d.id = c.destination_harbor_id
//!                          WHERE c.origin_harbor_id = h.id ORDER BY c.name) x) AS connections
//!                      FROM harbors h")
//!     .fetch_all(conn)
//!     .await?;
//! for c in &harbors[0].connections {          // Vec<RecordConnections>
//!     let minutes: Option<i32> = c.duration_minutes; // a nullable column stays an Option
//!     println!("{} → {} {minutes:?}", c.name, c.destination);
//! }
//! # Ok(()) }
//! ```
//!
//! The child struct is named after the row type and the column (`RecordConnections`; a record
//! inside it `RecordConnectionsOperator`). An array is `Vec<Child>`, `Option<Vec<Child>>`
//! when the array can be NULL (an aggregate over no rows, or whose `FILTER` left none —
//! `COALESCE(array_agg(…), '{}')` is never NULL), and `Vec<Option<Child>>` when an element can
//! be (the NULL-extended row of an outer join). Fields are named after the columns of a
//! whole-row reference or derived table, after a composite type's fields, and inside
//! `ROW(…)` after plain column references — any other `ROW` field is `f1`, `f2`, … by
//! position, as PostgreSQL names them; to choose names, select the fields with aliases in a
//! derived table and aggregate its rows, as above.
//!
//! To name the child type yourself, derive [`QailRow`] on it: a struct without generics whose
//! fields are plain columns is then also read from a record, field by field in order, and
//! can be a field of a `Type => "…"` row (`lines: Vec<Line>`) or an alias's type
//! (`AS "lines: Vec<Line>"`). Its fields are checked against the record's types when a row
//! is read (the generated structs are checked when the query compiles).
//!
//! JSON built from rows — `json_agg(t)`, `jsonb_agg(t.*)`, `json_agg(json_build_object('k',
//! v, …))`, `jsonb_build_object(…)`, `to_jsonb(t)`, `row_to_json(t)` — is decoded with serde
//! into generated structs named the same way, with a field per key (feature `json`):
//!
//! ```no_run
//! # use qail::{Connection, qail};
//! # async fn run(conn: &mut Connection) -> Result<(), qail::Error> {
//! let harbors = qail!("SELECT h.name, COALESCE(json_agg(json_build_object(
//!                          'name', c.name, 'minutes', c.duration_minutes) ORDER BY c.name)
//!                          FILTER (WHERE c.id IS NOT NULL), '[]') AS lines
//!                      FROM harbors h LEFT JOIN odyssey_connections c ON c.origin_harbor_id = h.id
//!                      GROUP BY h.id")
//!     .fetch_all(conn)
//!     .await?;
//! let lines = &harbors[0].lines;   // Vec<RecordLines>: COALESCE(…, '[]') is never NULL
//! let minutes: Option<i32> = lines[0].minutes;
//! # Ok(()) }
//! ```
//!
//! Only values that JSON gives back exactly are read from it: `bool`, integers, floats
//! (PostgreSQL writes NaN and the infinities as strings, read back as such), `numeric` (into
//! `Decimal` from the number's own digits, never through a float; a value `Decimal` cannot
//! hold is an error when the row is read), text, `uuid`, `json`, arrays of these and nested
//! objects. A `bytea` (a hex string), timestamp or date (which can be `"infinity"`), or
//! another type written in its text format is a compile error naming the fix: read those
//! children in binary with `array_agg(ROW(…))`, or cast the value in SQL (`::text`).

pub use qail_macros::{QailRow, QailType, qail};
#[doc(inline)]
pub use qail_pg::types;
// Note: what an application names — the types it writes down and every type a public method
// of these returns — is re-exported here and documented; tests/macros/facade.rs names each
// of them. The plumbing below (the wire protocol, compiled-query templates, by-index row
// decoding) stays nameable for the rare program that reaches for it, but out of the docs.
pub use qail_pg::{
    Atomic, AuthMethod, CancelToken, ChannelBinding, Client, ClientPool, Column, Config,
    Connection, CopyIn, DbError, Decode, Encode, Error, Executor, FromRow, Handle, Host,
    IsolationLevel, Listener, LoadBalanceHosts, NoRows, Notification, Oid, PerQuery, Pipeline,
    PipelineBuilder, PipelineResults, Pool, PoolBuilder, PoolReset, PoolStats, PooledConnection,
    Pooler, Query, RequireAuth, Row, Runner, SqlQueries, SslMode, Statement, TargetSessionAttrs,
    TcpOptions, Transaction, TransactionBuilder, TransactionStatus,
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

    pub use qail_pg::template::{
        Arg, Cache, Columns, CopyRows, CopyStatement, Decoder, ExpectedColumn, FromColumns,
        FromRow, NoRows, Params, Piece, Query, RawRow, Template, Variants,
    };
    /// The compile-time type assertions, under the name the code `qail!` and the derives
    /// emit (`::qail::__private::check::field`, …).
    pub use qail_pg::typed::assertions as check;
    pub use qail_pg::typed::{FromPg, IsOption, NotOption, NullableField, ToArg, ToPg, pg};
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
    #[doc = include_str!("../docs/src/observability.md")]
    mod observability {}
    #[doc = include_str!("../docs/src/editors.md")]
    mod editors {}
    #[doc = include_str!("../docs/src/accuracy.md")]
    mod accuracy {}
    #[doc = include_str!("../docs/src/performance.md")]
    mod performance {}
}
