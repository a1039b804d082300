//! Feeds arbitrary bytes to the backend message framer and every decoder, as a hostile server
//! would. Any panic or oversized allocation is a bug: the driver must answer with an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qail_pg::proto::message::{Backend, Phase, frame};

fuzz_target!(|data: &[u8]| {
    // The first byte picks the limits: those of the startup handshake or of a session.
    let Some((&first, mut buf)) = data.split_first() else {
        return;
    };
    let phase = if first & 1 == 0 {
        Phase::Startup
    } else {
        Phase::Session
    };
    while let Ok(Some(f)) = frame(buf, phase) {
        if f.end - f.body_start > qail_pg::proto::message::max_body_len(f.tag, phase) {
            panic!("frame accepted a message over its type's limit");
        }
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
