//! `qail-bench-qail-json-simd`: one driver's child runs (`--child DRIVER WORKLOAD --url URL
//! --sizes SIZES`), linked with that driver's code only (see bench/README.md).

fn main() {
    qail_bench::entry::qail_json_simd();
}
