//! The compiler this macro runs in, as its command line describes it: a proc macro runs
//! inside rustc, so the process's arguments are rustc's.

use std::ffi::OsString;
use std::sync::OnceLock;

/// rustc's `-C name=value` options (`-Cname=value`, `-C name=value`, `--codegen name=value`),
/// as `(name, value)` in the order given.
pub(crate) fn codegen_options() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut args = std::env::args_os();
    while let Some(arg) = args.next() {
        let option = match arg.to_str() {
            Some("-C" | "--codegen") => args.next(),
            Some(a) if a.starts_with("-C") => Some(OsString::from(&a[2..])),
            _ => None,
        };
        if let Some((name, value)) = option.as_ref().and_then(|o| o.to_str()?.split_once('=')) {
            out.push((name.to_owned(), value.to_owned()));
        }
    }
    out
}

/// Whether this compilation produces code (a library, a binary, an object file, LLVM IR…):
/// `false` when rustc was asked for nothing but metadata and dependency information
/// (`--emit=dep-info,metadata`), as `cargo check`, `cargo clippy` and editors ask, and then
/// what only a linked program reads (the registry's statics) need not be emitted. Without an
/// `--emit`, rustc links: `true`.
pub(crate) fn emits_code() -> bool {
    static EMITS: OnceLock<bool> = OnceLock::new();
    *EMITS.get_or_init(|| {
        let mut kinds = Vec::new();
        let mut args = std::env::args_os();
        while let Some(arg) = args.next() {
            let list = match arg.to_str() {
                Some("--emit") => args.next(),
                Some(a) => a.strip_prefix("--emit=").map(OsString::from),
                None => None,
            };
            if let Some(list) = list {
                kinds.extend(
                    list.to_string_lossy()
                        .split(',')
                        .map(|k| k.split('=').next().unwrap_or_default().to_owned()),
                );
            }
        }
        kinds.is_empty()
            || kinds
                .iter()
                .any(|kind| !matches!(kind.as_str(), "metadata" | "dep-info"))
    })
}
