//! The three ways of reading a `jsonb` value into a `serde_json::Value` that the `wide`
//! workload compares (`qail`, `qail-json-serde`, `qail-json-simd`), alone, on the workload's
//! own documents (`jsonb_build_object('k', i, 'tag', 't' || i % 10, 'ok', i % 3 = 0)`, as
//! PostgreSQL prints them), each through the same `Decode` call a row decoder makes.
//!
//! ```text
//! cargo run --release --example json_parsers -- own|serde|simd [PASSES]
//! ```
//!
//! Prints the median time per document over `PASSES` passes of 1,000 documents (default 200).
//! For instruction counts, run it under `valgrind --tool=callgrind` with two pass counts and
//! divide the difference by the documents it adds: the setup cancels out.

use std::cell::RefCell;
use std::hint::black_box;
use std::time::Instant;

use qail::types::{Decode, Json, oid};
use serde_json::Value;

thread_local! {
    static SCRATCH: RefCell<(Vec<u8>, simd_json::Buffers)> =
        RefCell::new((Vec::new(), simd_json::Buffers::default()));
}

/// simd-json into `serde_json::Value`, reusing its buffers, as the `qail-json-simd` driver.
fn simd(raw: &[u8]) -> Value {
    SCRATCH.with_borrow_mut(|(scratch, buffers)| {
        scratch.clear();
        scratch.extend_from_slice(raw.get(1..).unwrap_or_default());
        simd_json::serde::from_slice_with_buffers(scratch, buffers).expect("valid JSON")
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parser = args.first().map_or("own", String::as_str);
    let passes: usize = args.get(1).and_then(|p| p.parse().ok()).unwrap_or(200);
    let docs: Vec<Vec<u8>> = (1..=1000)
        .map(|i| {
            let mut raw = vec![1u8];
            raw.extend(
                format!(
                    r#"{{"k": {i}, "ok": {}, "tag": "t{}"}}"#,
                    i % 3 == 0,
                    i % 10
                )
                .bytes(),
            );
            raw
        })
        .collect();
    let decode: fn(&[u8]) -> Value = match parser {
        "own" => |raw| Value::decode(oid::JSONB, raw).expect("valid JSON"),
        "serde" => |raw| {
            <Json<Value>>::decode(oid::JSONB, raw)
                .expect("valid JSON")
                .0
        },
        "simd" => simd,
        other => {
            eprintln!("unknown parser `{other}`: choose own, serde or simd");
            std::process::exit(2);
        }
    };
    let expected: Vec<Value> = docs
        .iter()
        .map(|d| serde_json::from_slice(&d[1..]).expect("valid JSON"))
        .collect();
    for (d, e) in docs.iter().zip(&expected) {
        assert_eq!(
            &decode(d),
            e,
            "{parser} reads the document as serde_json does"
        );
    }
    let mut per_doc: Vec<f64> = (0..passes)
        .map(|_| {
            let t = Instant::now();
            // Kept for the pass, then freed together, as a query's rows are.
            let values: Vec<Value> = docs.iter().map(|d| decode(d)).collect();
            black_box(&values);
            drop(values);
            t.elapsed().as_secs_f64() * 1e9 / docs.len() as f64
        })
        .collect();
    per_doc.sort_by(f64::total_cmp);
    println!(
        "{parser}: median {:.0} ns per document over {passes} passes of {}",
        per_doc[per_doc.len() / 2],
        docs.len()
    );
}
