//! `cargo qail analyze` end to end: the binary over SQL files, against the analyzer's fixture
//! snapshot. No server is needed.

mod corpus;
mod golden;
mod status;
#[path = "../../../qail-analyzer/tests/it/support.rs"]
#[allow(
    dead_code,
    unreachable_pub,
    reason = "shared with the analyzer's tests; only the corpus reader is used here"
)]
mod support;
mod util;
