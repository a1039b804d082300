//! qail-pg: the PostgreSQL driver behind qail.
//!
//! - [`proto`]: the sans-IO wire protocol (message encoding and decoding, authentication
//!   state machines). Builds without tokio (`--no-default-features`).
//! - [`types`]: binary-format [`Encode`]/[`Decode`] between Rust and PostgreSQL values.
//! - [`template`]: compiled queries ([`Template`], [`Query`]) and by-index row decoding
//!   ([`RawRow`], [`FromRow`]); sans-IO, what `qail!` emits.
//! - [`typed`]: compile-time checks of Rust types against PostgreSQL types for `qail!`.
//! - `config`: connection options ([`Config`]) parsed like libpq — URLs, `key=value`
//!   strings, `PG*` variables, the password and service files; sans-IO.
//! - `conn` (feature `runtime`): the async connection over TCP, Unix sockets and TLS; a
//!   [`Client`] shares one connection among many tasks (their queries written together).
//! - `pool` (feature `runtime`): [`Pool`] lends connections one caller at a time;
//!   [`ClientPool`] spreads callers over a fixed number of shared clients.
//!
//! # Features
//!
//! | feature   | default | what it adds |
//! |-----------|---------|--------------|
//! | `runtime` | yes     | tokio connection, pool |
//! | `tls`     | yes     | TLS on rustls (ring); without it `sslmode=require` and `verify-*` are refused, `prefer` and `allow` connect in plain text |
//! | `uuid`    | no      | `uuid::Uuid` ↔ `uuid` |
//! | `chrono`  | no      | chrono types ↔ `timestamptz`, `timestamp`, `date`, `time` |
//! | `time`    | no      | `time` crate types ↔ the same |
//! | `json`    | no      | `serde_json::Value` and `Json<T>` ↔ `json`, `jsonb` |
//! | `decimal` | no      | `rust_decimal::Decimal` ↔ `numeric` |
//! | `net`     | no      | `inet`, `cidr`, `macaddr` |
//! | `tracing` | no      | spans for connect and queries, with OpenTelemetry's database fields (`db.system.name`, `db.query.text`, `server.address`, the SQLSTATE on errors, …) |

#[cfg(feature = "runtime")]
mod acquire;
#[cfg_attr(
    not(feature = "runtime"),
    allow(
        dead_code,
        reason = "the connection (feature `runtime`) reads the password file and the host list"
    )
)]
mod config;
#[cfg(feature = "runtime")]
mod conn;
mod error;
#[cfg(feature = "runtime")]
mod pool;
pub mod proto;
#[cfg(feature = "runtime")]
mod row;
pub mod template;
pub mod typed;
pub mod types;

#[cfg(feature = "runtime")]
pub use acquire::Acquire;
pub use config::{
    AuthMethod, ChannelBinding, Config, Host, LoadBalanceHosts, Pooler, RequireAuth, SslMode,
    TargetSessionAttrs, TcpOptions,
};
#[cfg(feature = "runtime")]
#[doc(hidden)]
pub use conn::RunTarget;
#[cfg(feature = "runtime")]
pub use conn::{
    Atomic, CancelToken, Client, Connection, CopyIn, Executor, Handle, IsolationLevel, Listener,
    Notification, PerQuery, Pipeline, PipelineBuilder, PipelineResults, QueryOutput, Runner,
    SqlQueries, Statement, Transaction, TransactionBuilder,
};
pub use error::{DbError, Error};
#[cfg(feature = "runtime")]
pub use pool::{
    Builder as PoolBuilder, ClientPool, Pool, PooledConnection, Reset as PoolReset,
    Stats as PoolStats,
};
pub use proto::ProtocolVersion;
pub use proto::message::TransactionStatus;
#[cfg(feature = "runtime")]
pub use row::{Column, Row};
pub use template::{Decoder, FromRow, NoRows, Query, RawRow, Template};
pub use types::{Decode, Encode, Oid};
