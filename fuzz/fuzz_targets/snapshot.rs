//! Feeds arbitrary text to the snapshot loader (`qail.schema.json`). Every input must end in a
//! snapshot or an error; a loaded snapshot must save and load back equal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qail_schema::Snapshot;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(snapshot) = Snapshot::from_json(text) {
        let again = Snapshot::from_json(&snapshot.to_json()).expect("a saved snapshot loads");
        assert_eq!(again.to_json(), snapshot.to_json());
    }
});
