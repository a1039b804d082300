//! qail-bench: qail-pg and its peers measured side by side, each run in a process of its own.
//!
//! ```text
//! cargo build --release --bins && cargo run --release -- [WORKLOAD ...] [--rounds N]
//!     [--drivers a,b] [--full] [--scale F]
//! ```
//!
//! Every driver runs every workload in a fresh process, once per round; rounds are
//! interleaved (every driver runs a workload before any runs it again) and the table reports
//! medians. The harness (`qail-bench`) and each driver (`qail-bench-DRIVER`) are executables
//! of their own, whose `main` is one function of [`entry`]; this library holds the drivers
//! and the shared measurement. See bench/README.md.

mod child;
mod cli;
mod drivers;
pub mod entry;
mod harness;
mod measure;
mod report;
mod workload;
