//! Feeds arbitrary bytes to the backend message framer and every decoder, as a hostile server
//! would. Any panic or oversized allocation is a bug: the driver must answer with an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qail_pg::proto::message::{Backend, frame};

fuzz_target!(|data: &[u8]| {
    let mut buf = data;
    while let Ok(Some(f)) = frame(buf) {
        let Some(body) = buf.get(f.body_start..f.end) else {
            panic!("frame returned a range outside the buffer");
        };
        if let Ok(Backend::DataRow(row)) = Backend::decode(f.tag, body) {
            for column in row.columns() {
                if column.is_err() {
                    break;
                }
            }
        }
        buf = &buf[f.end..];
    }
});
