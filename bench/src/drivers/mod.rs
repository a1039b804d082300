//! The drivers under test. Each module implements one function per workload; `run` connects
//! (outside the measurement), starts a [`Meter`](crate::measure::Meter) and calls it, inside
//! a child process of the harness (libpq: inside the C program).

use std::fmt;
use std::str::FromStr;

use crate::measure::{Result, Sample};
use crate::workload::{Sizes, Workload};

pub(crate) mod libpq;
pub(crate) mod nested_records;
pub(crate) mod pools;
pub(crate) mod qail;
pub(crate) mod qail302;
pub(crate) mod qail_json;
pub(crate) mod qail_sql;
pub(crate) mod sqlx_pg;
pub(crate) mod tokio_pg;

/// What every driver's run needs to know.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// URL of the `qail_bench` database.
    pub(crate) url: String,
    /// How much work one run does.
    pub(crate) sizes: Sizes,
}

/// A driver under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Driver {
    /// This repository's qail-pg, compiled queries (what `qail!` emits).
    Qail,
    /// This repository's qail-pg, run-time SQL (`Connection::query`).
    QailSql,
    /// tokio-postgres 0.7.
    TokioPostgres,
    /// sqlx 0.8 (PgConnection / PgPool, run-time `query_as`).
    Sqlx,
    /// qail-pg 3.0.2 from crates.io, the original Qail driver.
    Qail302,
    /// libpq from C (pipeline mode, binary results), run as a subprocess.
    Libpq,
    /// `qail` with the jsonb column read through `serde_json::from_slice` (`Json<Value>`)
    /// instead of qail-pg's own JSON reader: `wide` only.
    QailJsonSerde,
    /// `qail` with the jsonb column read through simd-json into `serde_json::Value`: `wide`
    /// only.
    QailJsonSimd,
    /// `qail` with its connections managed by deadpool instead of qail-pg's pool: the pool
    /// workloads only.
    QailDeadpool,
    /// `qail-deadpool` resetting the session on every acquire, as qail-pg's pool does on
    /// release: the pool workloads only.
    QailDeadpoolClean,
    /// `qail` with its connections managed by bb8: the pool workloads only.
    QailBb8,
    /// `qail` with qail-pg's pool resetting only the transaction (`PoolReset::Transaction`)
    /// instead of the session: the pool workloads only.
    QailResetTx,
}

impl Driver {
    /// Every driver, in report order (qail first).
    pub(crate) const ALL: [Driver; 12] = [
        Driver::Qail,
        Driver::QailSql,
        Driver::TokioPostgres,
        Driver::Sqlx,
        Driver::Qail302,
        Driver::Libpq,
        Driver::QailJsonSerde,
        Driver::QailJsonSimd,
        Driver::QailDeadpool,
        Driver::QailDeadpoolClean,
        Driver::QailBb8,
        Driver::QailResetTx,
    ];

    /// The name used on the command line and in the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Driver::Qail => "qail",
            Driver::QailSql => "qail-sql",
            Driver::TokioPostgres => "tokio-postgres",
            Driver::Sqlx => "sqlx",
            Driver::Qail302 => "qail-pg-3.0.2",
            Driver::Libpq => "libpq",
            Driver::QailJsonSerde => "qail-json-serde",
            Driver::QailJsonSimd => "qail-json-simd",
            Driver::QailDeadpool => "qail-deadpool",
            Driver::QailDeadpoolClean => "qail-deadpool-clean",
            Driver::QailBb8 => "qail-bb8",
            Driver::QailResetTx => "qail-reset-tx",
        }
    }

    /// Runs `workload` once in this process and measures it; `None` when this driver has no
    /// way to run it. libpq runs in the C program instead ([`libpq::run`]).
    pub(crate) async fn run(self, workload: Workload, ctx: &Ctx) -> Result<Option<Sample>> {
        if !self.has(workload) {
            return Ok(None);
        }
        match self {
            Driver::Qail => qail::run(workload, ctx).await.map(Some),
            Driver::QailSql => qail_sql::run(workload, ctx).await.map(Some),
            Driver::TokioPostgres => tokio_pg::run(workload, ctx).await.map(Some),
            Driver::Sqlx => sqlx_pg::run(workload, ctx).await.map(Some),
            Driver::Qail302 => qail302::run(workload, ctx).await,
            Driver::Libpq => Err("libpq runs in the C program, not in the harness".into()),
            Driver::QailJsonSerde | Driver::QailJsonSimd => {
                qail_json::run(self, ctx).await.map(Some)
            }
            Driver::QailDeadpool
            | Driver::QailDeadpoolClean
            | Driver::QailBb8
            | Driver::QailResetTx => pools::run(self, workload, ctx).await.map(Some),
        }
    }
}

impl Driver {
    /// Whether this driver runs `workload`: the dynamic workloads only where the driver has
    /// the form they measure (a search builder or SQL built by hand, a bulk form), see the
    /// README's table.
    pub(crate) fn has(self, workload: Workload) -> bool {
        match self {
            Driver::QailJsonSerde | Driver::QailJsonSimd => return workload == Workload::Wide,
            Driver::QailDeadpool
            | Driver::QailDeadpoolClean
            | Driver::QailBb8
            | Driver::QailResetTx => {
                return workload.pool_size().is_some();
            }
            _ => {}
        }
        match workload {
            Workload::Search => !matches!(self, Driver::QailSql | Driver::Libpq),
            Workload::BulkUnnest => {
                matches!(self, Driver::Qail | Driver::TokioPostgres | Driver::Sqlx)
            }
            Workload::BulkCopy => {
                matches!(self, Driver::Qail | Driver::TokioPostgres | Driver::Libpq)
            }
            Workload::Nested | Workload::NestedJoin | Workload::NestedN1 => {
                matches!(self, Driver::Qail | Driver::TokioPostgres)
            }
            Workload::Pool4 => self == Driver::Qail,
            _ => true,
        }
    }
}

impl fmt::Display for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Driver {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Driver::ALL
            .into_iter()
            .find(|d| d.name() == s || (s == "tokio_postgres" && *d == Driver::TokioPostgres))
            .ok_or_else(|| {
                let names: Vec<_> = Driver::ALL.iter().map(|d| d.name()).collect();
                format!("unknown driver `{s}`: choose from {}", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_names_round_trip() {
        for d in Driver::ALL {
            assert_eq!(d.name().parse::<Driver>(), Ok(d));
        }
        assert!("pgx".parse::<Driver>().is_err());
    }
}
