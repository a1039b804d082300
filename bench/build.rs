//! Builds the libpq peer (`c/libpq_bench.c`) into an executable next to the harness's build
//! outputs and tells the harness where it is (`LIBPQ_BENCH`).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=c");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let exe = out.join("libpq_bench");
    let include = pg_config("--includedir");
    let libdir = pg_config("--libdir");
    let compiler = cc::Build::new().opt_level(2).get_compiler();
    let mut cmd: Command = compiler.to_command();
    cmd.arg("-std=c11")
        .arg("-D_POSIX_C_SOURCE=200809L")
        .arg("-Wall")
        .arg(format!("-I{include}"))
        .arg("c/libpq_bench.c")
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{libdir}"))
        .arg("-lpq")
        .arg("-lpthread");
    let status = cmd.status().unwrap_or_else(|e| {
        panic!("cannot run the C compiler ({e}): install one (apt-get install -y gcc)")
    });
    assert!(
        status.success(),
        "building c/libpq_bench.c failed: install libpq-dev (bench/setup.sh does) and retry"
    );
    println!("cargo::rustc-env=LIBPQ_BENCH={}", exe.display());
}

/// Asks `pg_config` for a directory; falls back to Debian's paths.
fn pg_config(flag: &str) -> String {
    Command::new("pg_config")
        .arg(flag)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| match flag {
            "--includedir" => "/usr/include/postgresql".to_owned(),
            _ => "/usr/lib/x86_64-linux-gnu".to_owned(),
        })
}
