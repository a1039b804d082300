//! Running the binary.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The crate directory; the binary runs there so file names in its output are relative.
pub(crate) fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The analyzer's fixture snapshot, relative to [`crate_dir`].
pub(crate) const SNAPSHOT: &str = "../qail-analyzer/tests/fixtures/app.schema.json";

/// Runs `cargo-qail` with `args` in the crate directory, with `stdin` as standard input.
pub(crate) fn qail(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cargo-qail"))
        .args(args)
        .current_dir(crate_dir())
        .env_remove("QAIL_SCHEMA")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cargo-qail");
    let written = child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(stdin.as_bytes());
    // Note: the binary may exit (a usage error) before it reads its input.
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait for cargo-qail")
}

/// `cargo-qail analyze --snapshot <fixture> args…`.
pub(crate) fn analyze(args: &[&str]) -> Output {
    let mut all = vec!["analyze", "--snapshot", SNAPSHOT];
    all.extend_from_slice(args);
    qail(&all, "")
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh temporary directory for this test process.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qail-analyze-it-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a temp dir");
    dir
}
