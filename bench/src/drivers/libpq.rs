//! libpq from C: `c/libpq_bench.c`, built by `build.rs`, run as a subprocess that connects,
//! measures its own wall time, CPU time and minor faults (`getrusage(RUSAGE_SELF)`) around
//! the workload and prints one report line with its peak RSS. Sequential workloads use `PQexecPrepared`; pipelined ones use
//! pipeline mode; all use binary parameters and results.

use std::process::Command;

use crate::child;
use crate::drivers::Ctx;
use crate::measure::{Result, Sample};
use crate::workload::{POOL_BATCH, POOL_TASKS, Workload};

/// The C program, built next to the harness by `build.rs`.
pub(crate) const PROGRAM: &str = env!("LIBPQ_BENCH");

/// The command that runs `workload` with `n` queries (or batches) and `batch` per batch.
fn command(url: &str, workload: Workload, n: usize, batch: usize) -> Command {
    let mut cmd = Command::new(PROGRAM);
    cmd.arg(url)
        .arg(c_name(workload))
        .arg(n.to_string())
        .arg(batch.to_string());
    cmd
}

/// The C program's name of `workload`: its atomic pipeline already reads every row in place
/// (`PQgetvalue`), so `pipeline_in_place` runs it.
fn c_name(workload: Workload) -> &'static str {
    match workload {
        Workload::PipelineInPlace => Workload::PipelineAtomic.name(),
        other => other.name(),
    }
}

/// Runs one workload with libpq, in a fresh process.
pub(crate) fn run(workload: Workload, ctx: &Ctx) -> Result<Option<Sample>> {
    let s = &ctx.sizes;
    if !crate::drivers::Driver::Libpq.has(workload) {
        return Ok(None);
    }
    let (n, batch) = match workload {
        Workload::Point => (s.point, 1),
        Workload::Pipeline | Workload::PipelineAtomic | Workload::PipelineInPlace => {
            (s.pipeline, s.pipeline_batch)
        }
        Workload::Join => (s.join, 1),
        Workload::Wide => (s.wide, 1),
        Workload::Params16 => (s.params16, 1),
        Workload::Pool10 => (s.pool.div_ceil(POOL_TASKS * POOL_BATCH), POOL_BATCH),
        Workload::Insert | Workload::Copy => (s.insert_batches, crate::workload::INSERT_BATCH),
        Workload::BulkCopy => (s.bulk_rows, 1),
        Workload::Search
        | Workload::BulkUnnest
        | Workload::Nested
        | Workload::NestedJoin
        | Workload::NestedN1
        | Workload::Pool4
        | Workload::Tasks1000
        | Workload::Tasks1000Shared => return Ok(None),
    };
    child::run(command(&ctx.url, workload, n, batch))
}
