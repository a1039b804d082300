//! Where the snapshot file is: the one rule the `qail!` macro (from the crate's manifest
//! directory) and `cargo qail analyze` (from the current directory) both follow.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// The snapshot's file name, looked for by [`discover`].
pub const FILE_NAME: &str = "qail.schema.json";

/// The environment variable that names the snapshot file, read by [`discover`]'s callers.
pub const ENV_VAR: &str = "QAIL_SCHEMA";

/// Why [`discover`] found no snapshot. Its message says what to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiscoverError {
    /// `QAIL_SCHEMA` is set, but no file is at the path it names (resolved against the start
    /// directory).
    EnvNotAFile(PathBuf),
    /// `QAIL_SCHEMA` is unset and there is no [`FILE_NAME`] in the start directory or any of
    /// its parents.
    NotFound(PathBuf),
}

impl fmt::Display for DiscoverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiscoverError::EnvNotAFile(path) => write!(
                f,
                "{ENV_VAR} is set to {}, but there is no file there: run `cargo qail schema \
                 pull` to write it, or point {ENV_VAR} at your {FILE_NAME}",
                path.display()
            ),
            DiscoverError::NotFound(start) => write!(
                f,
                "no schema snapshot: there is no {FILE_NAME} in {} or any parent directory; \
                 run `cargo qail schema pull` (with DATABASE_URL set) to create it, or set \
                 {ENV_VAR} to its path",
                start.display()
            ),
        }
    }
}

impl std::error::Error for DiscoverError {}

/// Finds the schema snapshot.
///
/// `qail_schema` is the value of the `QAIL_SCHEMA` environment variable ([`ENV_VAR`]), passed
/// in by the caller so that this function reads no process state. When it is set and not
/// empty, it names the file: a relative path is taken relative to `start`, and the file must
/// exist. Otherwise the snapshot is the nearest [`FILE_NAME`] in `start` or one of its
/// parents.
///
/// The `qail!` macro starts from the crate's `CARGO_MANIFEST_DIR`; `cargo qail analyze`
/// starts from the current directory (and lets `--snapshot` override both).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use qail_schema::snapshot::{ENV_VAR, discover};
/// let start = std::env::current_dir()?;
/// match discover(std::env::var_os(ENV_VAR).as_deref(), &start) {
///     Ok(path) => println!("using {}", path.display()),
///     Err(e) => println!("{e}"),
/// }
/// # Ok(())
/// # }
/// ```
pub fn discover(qail_schema: Option<&OsStr>, start: &Path) -> Result<PathBuf, DiscoverError> {
    if let Some(named) = qail_schema.filter(|p| !p.is_empty()) {
        let path = start.join(named);
        if path.is_file() {
            return Ok(path);
        }
        return Err(DiscoverError::EnvNotAFile(path));
    }
    start
        .ancestors()
        .map(|dir| dir.join(FILE_NAME))
        .find(|p| p.is_file())
        .ok_or_else(|| DiscoverError::NotFound(start.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory `root` with `root/a/b` inside, removed when dropped.
    struct TempTree(PathBuf);

    impl TempTree {
        fn new(name: &str) -> TempTree {
            let root = std::env::temp_dir().join(format!(
                "qail-schema-discover-{name}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(root.join("a/b")).expect("create the temporary directories");
            TempTree(root)
        }

        fn file(&self, rel: &str) -> PathBuf {
            let path = self.0.join(rel);
            std::fs::write(&path, "{}").expect("write a temporary file");
            path
        }
    }

    impl Drop for TempTree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_nearest_file_walking_up_wins() {
        let t = TempTree::new("walk");
        let top = t.file(FILE_NAME);
        let deep = t.0.join("a/b");
        assert_eq!(discover(None, &deep), Ok(top));
        let nearer = t.file(&format!("a/{FILE_NAME}"));
        assert_eq!(discover(None, &deep), Ok(nearer.clone()));
        assert_eq!(discover(None, &t.0.join("a")), Ok(nearer));
    }

    #[test]
    fn the_env_var_wins_and_is_relative_to_the_start() {
        let t = TempTree::new("env");
        t.file(FILE_NAME);
        let custom = t.file("a/custom.json");
        let start = t.0.join("a");
        assert_eq!(
            discover(Some(OsStr::new("custom.json")), &start),
            Ok(custom.clone())
        );
        assert_eq!(discover(Some(custom.as_os_str()), &t.0), Ok(custom));
    }

    #[test]
    fn an_empty_env_var_counts_as_unset() {
        let t = TempTree::new("empty");
        let top = t.file(FILE_NAME);
        assert_eq!(discover(Some(OsStr::new("")), &t.0.join("a/b")), Ok(top));
    }

    #[test]
    fn an_env_var_naming_no_file_is_an_error_even_with_a_file_above() {
        let t = TempTree::new("missing-env");
        t.file(FILE_NAME);
        let err = discover(Some(OsStr::new("nope.json")), &t.0).unwrap_err();
        assert_eq!(err, DiscoverError::EnvNotAFile(t.0.join("nope.json")));
        let text = err.to_string();
        assert!(
            text.contains("QAIL_SCHEMA is set to") && text.contains("cargo qail schema pull"),
            "{text}"
        );
        // A directory is not a snapshot file.
        assert_eq!(
            discover(Some(OsStr::new("a")), &t.0),
            Err(DiscoverError::EnvNotAFile(t.0.join("a")))
        );
    }

    #[test]
    fn no_file_anywhere_says_to_pull() {
        let t = TempTree::new("none");
        let deep = t.0.join("a/b");
        // Note: a qail.schema.json above the temporary directory would be found; there is
        // none in a clean temporary directory, and the error names where the search began.
        match discover(None, &deep) {
            Err(err) => {
                assert_eq!(err, DiscoverError::NotFound(deep.clone()));
                let text = err.to_string();
                assert!(text.contains("cargo qail schema pull"), "{text}");
                assert!(text.contains("QAIL_SCHEMA"), "{text}");
                assert!(text.contains(&deep.display().to_string()), "{text}");
            }
            Ok(found) => assert!(!found.starts_with(&t.0), "found {}", found.display()),
        }
    }
}
