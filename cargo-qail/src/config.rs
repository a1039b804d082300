//! Where a project keeps its migrations: `[package.metadata.qail]` (or
//! `[workspace.metadata.qail]`) in the Cargo.toml of the directory that holds
//! `qail.schema.json`:
//!
//! ```toml
//! [package.metadata.qail]
//! migrations = "migrations"
//! ```
//!
//! Cargo.toml rather than a file of our own: cargo already reads it, so a project carries no
//! extra file, and the manifest sits next to the snapshot, which the `qail!` macro finds by
//! walking up from each crate's directory. The path is relative to that Cargo.toml; the
//! snapshot is `qail.schema.json` beside it unless `snapshot = "…"` says otherwise.

use std::path::{Path, PathBuf};

/// A project whose snapshot is derived from its migrations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The Cargo.toml that configures it.
    pub manifest: PathBuf,
    /// The migrations directory.
    pub migrations: PathBuf,
    /// The snapshot file the migrations produce.
    pub snapshot: PathBuf,
}

impl Config {
    /// The configuration of the nearest Cargo.toml, from `start` upwards, that has
    /// `metadata.qail.migrations`; `Ok(None)` when none has.
    ///
    /// # Errors
    ///
    /// A Cargo.toml that cannot be read or parsed, or whose `metadata.qail` is malformed.
    pub fn find(start: &Path) -> Result<Option<Config>, String> {
        let start = start.canonicalize().unwrap_or_else(|_| start.to_owned());
        for dir in start.ancestors() {
            let manifest = dir.join("Cargo.toml");
            if !manifest.is_file() {
                continue;
            }
            if let Some(config) = Config::read(&manifest)? {
                return Ok(Some(config));
            }
        }
        Ok(None)
    }

    /// The configuration in `manifest`, if it has one.
    ///
    /// # Errors
    ///
    /// As [`Config::find`].
    pub fn read(manifest: &Path) -> Result<Option<Config>, String> {
        let text = std::fs::read_to_string(manifest)
            .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
        let doc: toml::Table = text
            .parse()
            .map_err(|e| format!("cannot parse {}: {e}", manifest.display()))?;
        let qail = ["package", "workspace"]
            .iter()
            .find_map(|section| doc.get(*section)?.get("metadata")?.get("qail"));
        let Some(qail) = qail else { return Ok(None) };
        let dir = manifest.parent().unwrap_or(Path::new("."));
        let path = |key: &str| -> Result<Option<PathBuf>, String> {
            match qail.get(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(dir.join(s))),
                Some(_) => Err(format!(
                    "{}: metadata.qail.{key} must be a path in a string, e.g. `{key} = \"{}\"`",
                    manifest.display(),
                    if key == "migrations" {
                        "migrations"
                    } else {
                        "qail.schema.json"
                    }
                )),
            }
        };
        let Some(migrations) = path("migrations")? else {
            return Ok(None);
        };
        let snapshot =
            path("snapshot")?.unwrap_or_else(|| dir.join(qail_schema::snapshot::FILE_NAME));
        Ok(Some(Config {
            manifest: manifest.to_owned(),
            migrations,
            snapshot,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::Config;

    #[test]
    fn package_and_workspace_metadata_are_read() {
        let dir = std::env::temp_dir().join(format!("qail-config-{}", std::process::id()));
        let sub = dir.join("crates/app");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = []\n[workspace.metadata.qail]\nmigrations = \"db/migrations\"\n",
        )
        .unwrap();
        std::fs::write(sub.join("Cargo.toml"), "[package]\nname = \"app\"\n").unwrap();
        let c = Config::find(&sub).unwrap().expect("configured");
        let dir = dir.canonicalize().unwrap();
        assert_eq!(c.migrations, dir.join("db/migrations"));
        assert_eq!(c.snapshot, dir.join("qail.schema.json"));
        std::fs::write(
            sub.join("Cargo.toml"),
            "[package]\nname = \"app\"\n[package.metadata.qail]\nmigrations = 3\n",
        )
        .unwrap();
        let e = Config::find(&sub).unwrap_err();
        assert!(e.contains("must be a path in a string"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
