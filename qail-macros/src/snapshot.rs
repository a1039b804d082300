//! Finding and loading the schema snapshot: env `QAIL_SCHEMA`, else the nearest
//! `qail.schema.json` walking up from `CARGO_MANIFEST_DIR` (the rule is
//! `qail_schema::snapshot::discover`, shared with `cargo qail analyze`). Loaded once per compiler process
//! and file version (a cache keyed by path and modification time).

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use proc_macro2::TokenStream;
use qail_schema::Snapshot;
use qail_schema::snapshot;
use quote::quote;

use crate::cache;

/// A loaded snapshot and the file it came from (emitted in `include_bytes!`).
#[derive(Clone)]
pub(crate) struct Loaded {
    pub(crate) path: PathBuf,
    pub(crate) snapshot: Arc<Snapshot>,
    /// The file's content hash ([`cache::content_hash`]): what the analyses on disk are
    /// keyed by (0 when nothing is cached, see [`cache::enabled`]).
    pub(crate) hash: u128,
}

type Cache = HashMap<PathBuf, (Option<SystemTime>, Arc<Snapshot>, u128)>;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

static TRACKED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

impl Loaded {
    /// `const _: &[u8] = include_bytes!("…/qail.schema.json");` the first time this file is
    /// used in this compiler process, nothing afterwards. One `include_bytes!` per crate is
    /// what makes cargo rebuild the crate when the snapshot changes; emitting it at every
    /// call site would only copy the file into the compiler's memory once per query.
    pub(crate) fn track(&self) -> Option<TokenStream> {
        let mut tracked = TRACKED.lock().unwrap_or_else(PoisonError::into_inner);
        if !tracked
            .get_or_insert_with(HashSet::new)
            .insert(self.path.clone())
        {
            return None;
        }
        let path = self.path.to_string_lossy();
        Some(quote!(
            const _: &[u8] = ::core::include_bytes!(#path);
        ))
    }
}

/// Where the first error about a snapshot was reported, per crate and message: the file,
/// line and column of the macro call.
type Reported = HashMap<(Option<String>, String), (String, usize, usize)>;

static REPORTED: Mutex<Option<Reported>> = Mutex::new(None);

/// [`load`], with its error in full at the first macro call of the crate that meets it and
/// a short one pointing there at every other call: a crate without its snapshot gets one
/// long message, not one per query. Each call still fails, so the build does.
///
/// Note: the proc-macro server of rust-analyzer lives across edits and expands a call again
/// and again, so the call that reported first is remembered by its place and keeps the full
/// error; where spans carry no place, every call keeps it.
pub(crate) fn load_once_reported() -> Result<Loaded, String> {
    load().map_err(|message| {
        if !proc_macro::is_available() {
            return message;
        }
        let here = proc_macro::Span::call_site();
        let place = (here.file(), here.line(), here.column());
        if place.0.is_empty() || place.1 == 0 {
            return message;
        }
        let krate = std::env::var("CARGO_MANIFEST_DIR").ok();
        let mut reported = REPORTED.lock().unwrap_or_else(PoisonError::into_inner);
        let first = reported
            .get_or_insert_with(HashMap::new)
            .entry((krate.clone(), message.clone()))
            .or_insert_with(|| place.clone());
        if *first == place {
            return message;
        }
        let file = krate
            .as_deref()
            .and_then(|dir| Path::new(&first.0).strip_prefix(dir).ok())
            .map_or_else(|| first.0.clone(), |p| p.display().to_string());
        format!(
            "the schema snapshot could not be loaded (the first error, at {file}:{}, says why): \
             run `cargo qail schema pull` to write it",
            first.1
        )
    })
}

/// Finds and loads the snapshot for the crate being compiled: [`snapshot::discover`] from
/// `CARGO_MANIFEST_DIR`.
pub(crate) fn load() -> Result<Loaded, String> {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let env = std::env::var_os(snapshot::ENV_VAR);
    let path = discover(env.as_deref(), manifest_dir.as_deref())?;
    load_path(&path)
}

/// Where the snapshot is, from `start` (the manifest directory). Without one, only
/// `QAIL_SCHEMA` can say, relative to the current directory.
fn discover(env: Option<&OsStr>, start: Option<&Path>) -> Result<PathBuf, String> {
    let start = match start {
        Some(dir) => dir,
        None if env.is_some_and(|e| !e.is_empty()) => Path::new(""),
        None => {
            return Err(
                "CARGO_MANIFEST_DIR is not set: build with cargo, or set QAIL_SCHEMA to \
                        the path of your qail.schema.json"
                    .into(),
            );
        }
    };
    snapshot::discover(env, start).map_err(|e| e.to_string())
}

/// Loads `path`, from the cache when the file has not changed since.
pub(crate) fn load_path(path: &Path) -> Result<Loaded, String> {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let mtime = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((at, snapshot, hash)) = cache.get(&path)
        && mtime.is_some()
        && *at == mtime
    {
        return Ok(Loaded {
            path,
            snapshot: Arc::clone(snapshot),
            hash: *hash,
        });
    }
    // Note: read here rather than by `Snapshot::load`, to hash the very bytes that are parsed;
    // on an error `Snapshot::load` runs again for its message.
    let parsed = std::fs::read_to_string(&path).ok().and_then(|text| {
        Some((
            Snapshot::from_json(&text).ok()?,
            if cache::enabled() {
                cache::content_hash(text.as_bytes())
            } else {
                0
            },
        ))
    });
    let (snapshot, hash) = match parsed {
        Some(parsed) => parsed,
        None => {
            let e = Snapshot::load(&path).err().map_or_else(
                || "the file changed while it was read".to_owned(),
                |e| e.to_string(),
            );
            return Err(format!(
                "the schema snapshot could not be read: {e}; run `cargo qail schema pull` to rewrite it"
            ));
        }
    };
    let snapshot = Arc::new(snapshot);
    cache.insert(path.clone(), (mtime, Arc::clone(&snapshot), hash));
    Ok(Loaded {
        path,
        snapshot,
        hash,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qail_schema::snapshot::FILE_NAME;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("qail-macros-{name}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        dir
    }

    #[test]
    fn the_manifest_dir_is_where_the_search_starts() {
        let dir = temp_dir("walk");
        std::fs::write(dir.join(FILE_NAME), "{}").unwrap();
        let found = discover(None, Some(&dir.join("a/b"))).unwrap();
        assert_eq!(found, dir.join(FILE_NAME));
        let found = discover(Some(OsStr::new("a/b/../../qail.schema.json")), Some(&dir)).unwrap();
        assert_eq!(found, dir.join("a/b/../../qail.schema.json"));
    }

    #[test]
    fn without_a_manifest_dir_only_the_env_var_can_say() {
        let err = discover(None, None).unwrap_err();
        assert!(err.contains("CARGO_MANIFEST_DIR is not set"), "{err}");
        let dir = temp_dir("no-manifest");
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, "{}").unwrap();
        assert_eq!(discover(Some(path.as_os_str()), None), Ok(path));
    }

    #[test]
    fn the_snapshot_is_included_once_per_process() {
        let loaded = Loaded {
            path: temp_dir("track").join(FILE_NAME),
            snapshot: Arc::new(Snapshot::default()),
            hash: 0,
        };
        let first = loaded
            .track()
            .expect("the first use includes the file")
            .to_string();
        assert!(first.contains("include_bytes"), "{first}");
        assert!(
            loaded.track().is_none(),
            "later uses do not include it again"
        );
    }

    #[test]
    fn missing_snapshot_says_to_pull() {
        let err = discover(Some(OsStr::new("missing.json")), Some(Path::new("/"))).unwrap_err();
        assert!(err.contains("cargo qail schema pull"), "{err}");
        assert!(err.contains("QAIL_SCHEMA"), "{err}");
    }

    #[test]
    fn loads_once_and_reloads_when_changed() {
        let dir = temp_dir("cache");
        let path = dir.join(FILE_NAME);
        let json = Snapshot::default()
            .to_json()
            .replace("\"format_version\": 0", "\"format_version\": 1");
        std::fs::write(&path, &json).unwrap();
        let a = load_path(&path).unwrap();
        let b = load_path(&path).unwrap();
        assert!(Arc::ptr_eq(&a.snapshot, &b.snapshot));
        std::fs::write(&path, "not json").unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        let err = load_path(&path).err().unwrap();
        assert!(err.contains("cargo qail schema pull"), "{err}");
    }
}
