//! The deployed version, read from git without a checkout: its migration versions
//! (`git ls-tree`) and its Rust sources that hold `qail!` (`git grep`, `git show`).

use std::path::Path;
use std::process::Command;

fn git(root: &Path, args: &[&str]) -> Result<std::process::Output, String> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}; install git or drop --deployed"))
}

fn stdout(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = git(root, args)?;
    if !out.status.success() {
        return Err(format!(
            "`git {}` failed: {}; check that --deployed names a commit, tag or branch of this \
             repository",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The repository's top directory holding `dir`.
pub(crate) fn toplevel(dir: &Path) -> Result<std::path::PathBuf, String> {
    let top = stdout(dir, &["rev-parse", "--show-toplevel"])?;
    Ok(std::path::PathBuf::from(top.trim()))
}

/// The file names in `dir` (relative to the repository's top) at `rev`.
pub(crate) fn files_at(top: &Path, rev: &str, dir: &str) -> Result<Vec<String>, String> {
    let spec = format!("{rev}:{dir}");
    let out = git(top, &["ls-tree", "--name-only", &spec])?;
    if !out.status.success() {
        // The directory did not exist yet: nothing was migrated by that version.
        stdout(
            top,
            &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
        )?;
        return Ok(Vec::new());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
}

/// The `.rs` files under `prefix` (relative to the top, empty for all) at `rev` that mention
/// `qail!`, with their text.
pub(crate) fn sources_at(
    top: &Path,
    rev: &str,
    prefix: &str,
) -> Result<Vec<(String, String)>, String> {
    let pathspec = if prefix.is_empty() {
        "*.rs".to_owned()
    } else {
        format!("{prefix}/*.rs")
    };
    let out = git(top, &["grep", "-l", "-F", "qail!", rev, "--", &pathspec])?;
    // Note: git grep exits 1 when nothing matches.
    if !out.status.success() && !out.stderr.is_empty() {
        return Err(format!(
            "`git grep` at {rev} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let mut files = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let path = line.strip_prefix(&format!("{rev}:")).unwrap_or(line);
        let text = stdout(top, &["show", &format!("{rev}:{path}")])?;
        files.push((path.to_owned(), text));
    }
    Ok(files)
}
