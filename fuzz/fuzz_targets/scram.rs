//! Feeds arbitrary server-first and server-final messages to the SCRAM-SHA-256 client, as a
//! hostile server would. Every input must end in `Ok` or an error: never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qail_pg::proto::auth::scram::{Gs2Binding, ScramSha256};

const NONCE: &str = "rOprNGfwEbeRWgbNEkqO";

fuzz_target!(|data: &[u8]| {
    // The input is server-first, a NUL, then server-final. An input whose first byte is even
    // gets the client's nonce spliced in after `r=`, so most of them reach the later checks.
    let (first, last) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let mut server_first = Vec::with_capacity(first.len() + NONCE.len() + 2);
    match first.split_first() {
        Some((mode, rest)) if mode % 2 == 0 => {
            server_first.extend_from_slice(b"r=");
            server_first.extend_from_slice(NONCE.as_bytes());
            server_first.extend_from_slice(rest);
        }
        _ => server_first.extend_from_slice(first),
    }
    // Large iteration counts are valid and only slow (each is bounded by MAX_ITERATIONS);
    // keep the fuzzer fast by leaving them out.
    if server_first
        .windows(7)
        .any(|w| w.starts_with(b"i=") && w[2..].iter().all(u8::is_ascii_digit))
    {
        return;
    }
    let binding = match data.first().map(|b| b % 3) {
        Some(0) => Gs2Binding::Unsupported,
        Some(1) => Gs2Binding::Unrequested,
        _ => Gs2Binding::TlsServerEndPoint(vec![7; 32]),
    };
    let mut scram = ScramSha256::with_nonce(b"pencil", binding, NONCE)
        .expect("the fixed nonce is valid");
    let _ = scram.message();
    if scram.update(&server_first).is_ok() {
        let _ = scram.message();
        let _ = scram.finish(last);
    }
    // Out of order after any outcome: an error, never a panic.
    let _ = scram.update(&server_first);
    let _ = scram.finish(last);
});
