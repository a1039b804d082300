//! `qail-bench`, the harness: runs the drivers' binaries once per workload and round and
//! prints the table (see bench/README.md).

fn main() {
    qail_bench::entry::harness();
}
