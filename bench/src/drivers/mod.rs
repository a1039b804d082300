//! The drivers under test. Each module implements one function per workload; its `run`
//! connects (outside the measurement), starts a [`Meter`](crate::measure::Meter) and calls
//! it, inside a child process: the driver's own binary (`qail-bench-DRIVER`, whose `main` is
//! in [`crate::entry`] and reaches this driver's module only), or the C program for libpq.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::measure::Result;
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

    /// The name of the driver's own executable, built next to the harness's: the child runs
    /// of a Rust driver are this binary, which links that driver's code and the shared
    /// measurement only. `None` for libpq, which runs in the C program.
    pub(crate) fn binary(self) -> Option<&'static str> {
        Some(match self {
            Driver::Qail => "qail-bench-qail",
            Driver::QailSql => "qail-bench-qail-sql",
            Driver::TokioPostgres => "qail-bench-tokio-postgres",
            Driver::Sqlx => "qail-bench-sqlx",
            Driver::Qail302 => "qail-bench-qail-pg-302",
            Driver::Libpq => return None,
            Driver::QailJsonSerde => "qail-bench-qail-json-serde",
            Driver::QailJsonSimd => "qail-bench-qail-json-simd",
            Driver::QailDeadpool => "qail-bench-qail-deadpool",
            Driver::QailDeadpoolClean => "qail-bench-qail-deadpool-clean",
            Driver::QailBb8 => "qail-bench-qail-bb8",
            Driver::QailResetTx => "qail-bench-qail-reset-tx",
        })
    }

    /// The path of the driver's binary: next to the running executable, where cargo builds
    /// every binary of this package.
    pub(crate) fn program(self) -> Result<PathBuf> {
        let binary = self.binary().ok_or_else(|| {
            format!(
                "{self} runs in the C program, not in a Rust binary: \
                 `{} URL WORKLOAD N BATCH` (see bench/README.md)",
                libpq::PROGRAM
            )
        })?;
        Ok(std::env::current_exe()?.with_file_name(binary))
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
            Workload::Pool4 | Workload::Tasks1000 | Workload::Tasks1000Shared => {
                self == Driver::Qail
            }
            Workload::PipelineInPlace => matches!(self, Driver::Qail | Driver::Libpq),
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

    #[test]
    fn every_rust_driver_has_a_binary_of_its_own() {
        let mut names: Vec<&str> = Driver::ALL.iter().filter_map(|d| d.binary()).collect();
        assert_eq!(names.len(), Driver::ALL.len() - 1, "all but libpq");
        assert!(names.iter().all(|n| n.starts_with("qail-bench-")));
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            Driver::ALL.len() - 1,
            "no two drivers share one"
        );
        let manifest = include_str!("../../Cargo.toml");
        for name in &names {
            assert!(
                manifest.contains(&format!("name = \"{name}\"")),
                "{name} is a [[bin]] of bench/Cargo.toml"
            );
        }
        let err = Driver::Libpq.program().expect_err("libpq is the C program");
        assert!(err.to_string().contains("C program"), "{err}");
    }
}
