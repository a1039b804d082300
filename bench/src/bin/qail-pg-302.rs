//! `qail-bench-qail-pg-302`: one driver's child runs (`--child DRIVER WORKLOAD --url URL
//! --sizes SIZES`), linked with that driver's code only (see bench/README.md).

fn main() {
    qail_bench::entry::qail_pg_302();
}
