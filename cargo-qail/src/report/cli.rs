//! Running `cargo qail analyze`: reading the files, finding the snapshot, printing, and the
//! exit status.

use std::io::{Read as _, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{Statement, analyze_file, to_json, to_text, why_text};
use qail_schema::Snapshot;
use qail_schema::snapshot;

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// For people (see the [module docs](super)).
    #[default]
    Text,
    /// For tools (documented in the [module docs](super)).
    Json,
}

/// What `cargo qail analyze` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--snapshot PATH`; when `None`, [`snapshot::discover`] looks for it from the current
    /// directory.
    pub snapshot: Option<PathBuf>,
    /// `--format`.
    pub format: Format,
    /// `--why NAME`: explain only the result columns called NAME (text format).
    pub why: Option<String>,
    /// `--timings`: print how long each phase took to standard error.
    pub timings: bool,
    /// The SQL files; `-` is standard input.
    pub files: Vec<PathBuf>,
}

/// Runs the command, printing the report to `out` and problems to `err`. Returns the exit
/// status: 0 when every statement checks, 1 when any fails, 2 on a usage error.
pub fn run(options: &Options, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match run_checked(options, out, err) {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            2
        }
    }
}

fn run_checked(options: &Options, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, String> {
    if options.files.is_empty() {
        return Err("no SQL file given: name one or more files, or `-` for standard input".into());
    }
    if options.why.is_some() && options.format == Format::Json {
        return Err(
            "--why explains columns in the text format; drop --format json (the JSON \
                    output already holds every column's reasons)"
                .into(),
        );
    }
    let started = Instant::now();
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let path = match &options.snapshot {
        Some(path) => path.clone(),
        None => snapshot::discover(std::env::var_os(snapshot::ENV_VAR).as_deref(), &cwd)
            .map_err(|e| format!("{e}; or pass --snapshot PATH"))?,
    };
    let snapshot = Snapshot::load(&path).map_err(|e| e.to_string())?;
    let loaded = started.elapsed();
    let sources = read_files(&options.files)?;
    let read = started.elapsed();
    let statements: Vec<Statement> = sources
        .iter()
        .flat_map(|(file, text)| analyze_file(file, text, &snapshot))
        .collect();
    let analyzed = started.elapsed();
    out.write_all(report(options, &statements, &snapshot, err).as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write the report: {e}"))?;
    if options.timings {
        let phases = [
            ("load snapshot", loaded),
            ("read files", read - loaded),
            ("split and analyze", analyzed - read),
            ("format and print", started.elapsed() - analyzed),
        ];
        let n = statements.len();
        let _ = writeln!(err, "{n} statements in {}", ms(started.elapsed()));
        for (what, d) in phases {
            let _ = writeln!(err, "  {what}: {}", ms(d));
        }
    }
    Ok(u8::from(statements.iter().any(|s| s.result.is_err())))
}

/// The report in the requested format.
fn report(
    options: &Options,
    statements: &[Statement],
    snapshot: &Snapshot,
    err: &mut dyn Write,
) -> String {
    match (&options.why, options.format) {
        (Some(name), _) => {
            let (text, found) = why_text(statements, name, snapshot);
            if !found {
                let _ = writeln!(
                    err,
                    "note: no statement has a result column named {name:?}; check the spelling \
                     (names are compared exactly, as PostgreSQL reports them)"
                );
            }
            text
        }
        (None, Format::Text) => to_text(statements, snapshot),
        (None, Format::Json) => to_json(statements, snapshot),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Reads every file (`-` is standard input), as (display name, text).
fn read_files(files: &[PathBuf]) -> Result<Vec<(String, String)>, String> {
    files
        .iter()
        .map(|f| {
            if f.as_os_str() == "-" {
                let mut text = String::new();
                std::io::stdin().read_to_string(&mut text).map_err(|e| {
                    format!("cannot read standard input: {e}; pipe UTF-8 SQL text into it")
                })?;
                Ok(("<stdin>".to_owned(), text))
            } else {
                let text = std::fs::read_to_string(f).map_err(|e| {
                    format!(
                        "cannot read {}: {e}; check the path (and that the file is UTF-8 text)",
                        f.display()
                    )
                })?;
                Ok((f.display().to_string(), text))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_exit_2() {
        let mut out = Vec::new();
        let mut err = Vec::new();
        assert_eq!(run(&Options::default(), &mut out, &mut err), 2);
        assert!(String::from_utf8_lossy(&err).contains("no SQL file"));
        let opts = Options {
            why: Some("x".into()),
            format: Format::Json,
            files: vec!["a.sql".into()],
            ..Options::default()
        };
        err.clear();
        assert_eq!(run(&opts, &mut out, &mut err), 2);
        assert!(String::from_utf8_lossy(&err).contains("--why"));
        assert!(out.is_empty());
    }
}
