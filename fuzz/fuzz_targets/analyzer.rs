//! Feeds arbitrary SQL to the offline analyzer, against the test snapshot. Every input must
//! end in an analysis or diagnostics whose ranges lie inside the SQL: never a panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use qail_schema::Snapshot;

fn snapshot() -> &'static Snapshot {
    static SNAPSHOT: OnceLock<Snapshot> = OnceLock::new();
    SNAPSHOT.get_or_init(|| {
        Snapshot::from_json(include_str!("../../qail-analyzer/tests/fixtures/app.schema.json"))
            .expect("the test snapshot loads")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(diagnostics) = qail_analyzer::analyze(sql, snapshot()) {
        for d in &diagnostics {
            assert!(d.range.start <= d.range.end && d.range.end <= sql.len(), "{d:?}");
            let _ = qail_analyzer::render(sql, d);
        }
    }
});
