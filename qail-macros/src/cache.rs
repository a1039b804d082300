//! The analyzer's results kept on disk between compiler runs, beside rustc's own incremental
//! state, so that the edit loop (`cargo check` after a change elsewhere in the crate) does not
//! parse and analyze every unchanged query again: the proc macro runs unoptimised in a default
//! build and the compiler repeats every expansion on every run.
//!
//! Only when rustc compiles incrementally (`-C incremental=DIR`, cargo's default for the dev
//! profile): the file is `DIR/qail-analysis-<crate>-<metadata>`, removed with the rest by
//! `cargo clean`. An entry is found by the snapshot's content and the SQL; the file is valid
//! for one build of this proc macro only (its library's path, size and modification time,
//! which change whenever it or anything linked into it, such as the analyzer, is rebuilt).
//! Only successful analyses are kept; a diagnostic is always computed afresh. Anything
//! unexpected (no such file, another build's file, a damaged record) reads as a miss.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::hash::Hasher;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use qail_analyzer::{
    Analysis, ColumnSource, Diagnostic, OutputColumn, Param, Shape, ShapeField, StatementKind,
};
use qail_schema::Snapshot;
use qail_schema::snapshot::TypeRef;

/// `qail_analyzer::check`, from the cache when this SQL was analyzed against the same
/// snapshot (`snapshot_hash`, see [`content_hash`]) by this build of the macro.
pub(crate) fn check(
    sql: &str,
    snapshot: &Snapshot,
    snapshot_hash: u128,
) -> Result<Analysis, Vec<Diagnostic>> {
    let mut key = snapshot_hash.to_le_bytes().to_vec();
    key.extend_from_slice(sql.as_bytes());
    let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = state.get_or_insert_with(State::open);
    if let Some(analysis) = state.entries.get(&key).and_then(|v| decode(v)) {
        return Ok(analysis);
    }
    let analysis = qail_analyzer::analyze(sql, snapshot)?;
    if state.path.is_some() {
        state.store(key, encode(&analysis));
    }
    Ok(analysis)
}

/// A 128-bit hash of a snapshot file's content.
pub(crate) fn content_hash(bytes: &[u8]) -> u128 {
    let mut low = Fnv::new();
    low.write(bytes);
    let mut high = std::hash::DefaultHasher::new();
    high.write(bytes);
    (u128::from(high.finish()) << 64) | u128::from(low.finish())
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The cache file of this compiler process and what it held when first read.
struct State {
    /// The file; `None` when rustc does not compile incrementally or this build of the macro
    /// cannot be identified (nothing is cached then).
    path: Option<PathBuf>,
    /// This build of the macro, the file's header.
    header: Vec<u8>,
    /// Whether the file starts with `header` (else the first store rewrites it).
    current: bool,
    entries: HashMap<Vec<u8>, Vec<u8>>,
}

/// The file is started over beyond this size (entries of queries since edited away).
const MAX_FILE: u64 = 8 << 20;

impl State {
    fn open() -> State {
        let identified = file().and_then(|path| Some((path.clone(), header(&identity()?))));
        let (path, header) = identified.unzip();
        let header = header.unwrap_or_default();
        let mut state = State {
            path,
            header,
            current: false,
            entries: HashMap::new(),
        };
        if let Some(path) = &state.path
            && std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_FILE)
            && let Ok(bytes) = std::fs::read(path)
            && let Some(records) = bytes.strip_prefix(state.header.as_slice())
        {
            state.current = true;
            state.entries = read_records(records);
        }
        state
    }

    /// Adds an entry to the file: appended as one write, or the file rewritten (to a temporary
    /// name, then renamed) when it belonged to another build.
    fn store(&mut self, key: Vec<u8>, value: Vec<u8>) {
        let Some(path) = &self.path else {
            return;
        };
        let record = record(&key, &value);
        let written = if self.current {
            OpenOptions::new()
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(&record))
                .is_ok()
        } else {
            let mut temp = path.clone().into_os_string();
            temp.push(format!(".{}", std::process::id()));
            let mut bytes = self.header.clone();
            bytes.extend_from_slice(&record);
            std::fs::write(&temp, &bytes)
                .and_then(|()| std::fs::rename(&temp, path))
                .is_ok()
        };
        if written {
            self.current = true;
        } else {
            self.path = None;
        }
        self.entries.insert(key, value);
    }
}

/// Whether analyses are cached: rustc compiles incrementally. Without, the snapshot need not
/// be hashed.
pub(crate) fn enabled() -> bool {
    file().is_some()
}

/// The cache file of this compiler process, if any.
fn file() -> Option<&'static PathBuf> {
    static FILE: OnceLock<Option<PathBuf>> = OnceLock::new();
    FILE.get_or_init(file_path).as_ref()
}

/// `DIR/qail-analysis-<crate>-<metadata>` from rustc's `-C incremental=DIR` and
/// `-C metadata=…` (the proc macro runs inside rustc, so these are its arguments).
fn file_path() -> Option<PathBuf> {
    let mut incremental = None;
    let mut metadata = String::new();
    for (name, value) in crate::compiler::codegen_options() {
        match name.as_str() {
            "incremental" => incremental = Some(PathBuf::from(value)),
            "metadata" => metadata = value,
            _ => {}
        }
    }
    let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_default();
    Some(incremental?.join(format!("qail-analysis-{krate}-{metadata}")))
}

/// This build of the macro: the path, size and modification time of the library holding this
/// function, found in `/proc/self/maps`. `None` elsewhere than on Linux or when it cannot be
/// told, and then nothing is cached.
fn identity() -> Option<String> {
    let here = identity as fn() -> Option<String> as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let path = maps.lines().find_map(|line| {
        let (range, rest) = line.split_once(' ')?;
        let (start, end) = range.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        if !(start..end).contains(&here) {
            return None;
        }
        // perms, offset, device, inode, then the path (which may contain spaces).
        let mut fields = rest.splitn(5, ' ');
        let path = fields.nth(4)?.trim_start();
        Some(Path::new(path).to_owned())
    })?;
    let meta = std::fs::metadata(&path).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!(
        "{} {} {} {}",
        path.display(),
        meta.len(),
        modified.as_nanos(),
        env!("CARGO_PKG_VERSION")
    ))
}

fn header(identity: &str) -> Vec<u8> {
    let mut out = b"qail-analysis 1\n".to_vec();
    put_str(&mut out, identity);
    out
}

/// One record: its length, a checksum, the key and the value.
fn record(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(key.len() + value.len() + 8);
    put_bytes(&mut payload, key);
    put_bytes(&mut payload, value);
    let mut out = Vec::with_capacity(payload.len() + 12);
    put_len(&mut out, payload.len());
    out.extend_from_slice(&checksum(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// The records of a file after its header, up to the first damaged one.
fn read_records(mut bytes: &[u8]) -> HashMap<Vec<u8>, Vec<u8>> {
    let mut entries = HashMap::new();
    while !bytes.is_empty() {
        let mut r = Reader(bytes);
        let Some((len, sum)) = r.len().zip(r.u64()) else {
            break;
        };
        let Some((payload, rest)) = r.0.split_at_checked(len) else {
            break;
        };
        if checksum(payload) != sum {
            break;
        }
        let mut p = Reader(payload);
        if let Some((key, value)) = p.bytes().zip(p.bytes()) {
            entries.insert(key.to_vec(), value.to_vec());
        }
        bytes = rest;
    }
    entries
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut h = Fnv::new();
    h.write(bytes);
    h.finish()
}

/// FNV-1a, 64 bits: cheap in an unoptimised build.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_len(out, bytes.len());
    out.extend_from_slice(bytes);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_bytes(out, s.as_bytes());
}

fn put_bool(out: &mut Vec<u8>, b: bool) {
    out.push(u8::from(b));
}

fn put_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    put_bool(out, s.is_some());
    if let Some(s) = s {
        put_str(out, s);
    }
}

/// An analysis as bytes. Every struct is destructured in full, so a field added to the
/// analyzer's output is a compile error here until it is written too.
fn encode(analysis: &Analysis) -> Vec<u8> {
    let Analysis {
        params,
        columns,
        returns_rows,
        kind,
        changes_session,
    } = analysis;
    let mut out = Vec::new();
    put_len(&mut out, params.len());
    for Param {
        ty,
        nullable,
        column,
    } in params
    {
        put_type(&mut out, ty);
        put_bool(&mut out, *nullable);
        put_opt_str(&mut out, column.as_deref());
    }
    put_len(&mut out, columns.len());
    for column in columns {
        let OutputColumn {
            name,
            ty,
            nullable,
            source,
            rust_type,
            why,
            range,
            shape,
        } = column;
        put_str(&mut out, name);
        put_type(&mut out, ty);
        put_bool(&mut out, *nullable);
        put_bool(&mut out, source.is_some());
        if let Some(ColumnSource {
            schema,
            table,
            column,
        }) = source
        {
            put_str(&mut out, schema);
            put_str(&mut out, table);
            put_str(&mut out, column);
        }
        put_opt_str(&mut out, rust_type.as_deref());
        put_len(&mut out, why.len());
        for w in why {
            put_str(&mut out, w);
        }
        put_len(&mut out, range.start);
        put_len(&mut out, range.end);
        put_opt_shape(&mut out, shape.as_ref());
    }
    put_bool(&mut out, *returns_rows);
    out.push(match kind {
        StatementKind::Select => 0,
        StatementKind::Insert => 1,
        StatementKind::Update => 2,
        StatementKind::Delete => 3,
        StatementKind::Merge => 4,
    });
    put_bool(&mut out, *changes_session);
    out
}

fn put_type(out: &mut Vec<u8>, ty: &TypeRef) {
    let TypeRef {
        schema,
        name,
        oid,
        array_dims,
    } = ty;
    put_str(out, schema);
    put_str(out, name);
    put_bool(out, oid.is_some());
    out.extend_from_slice(&oid.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&array_dims.to_le_bytes());
}

fn put_opt_shape(out: &mut Vec<u8>, shape: Option<&Shape>) {
    match shape {
        None => out.push(0),
        Some(Shape::Record(fields)) => {
            out.push(1);
            put_len(out, fields.len());
            for ShapeField {
                name,
                server_name,
                ty,
                nullable,
                shape,
            } in fields
            {
                put_str(out, name);
                put_str(out, server_name);
                put_type(out, ty);
                put_bool(out, *nullable);
                put_opt_shape(out, shape.as_ref());
            }
        }
        Some(Shape::Array {
            element,
            nullable_elements,
        }) => {
            out.push(2);
            put_opt_shape(out, Some(element));
            put_bool(out, *nullable_elements);
        }
    }
}

/// The analysis [`encode`] wrote, or `None` for bytes it did not write.
fn decode(bytes: &[u8]) -> Option<Analysis> {
    let mut r = Reader(bytes);
    let params = (0..r.len()?)
        .map(|_| {
            Some(Param {
                ty: r.ty()?,
                nullable: r.bool()?,
                column: match r.bool()? {
                    true => Some(r.string()?),
                    false => None,
                },
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let columns = (0..r.len()?)
        .map(|_| {
            Some(OutputColumn {
                name: r.string()?,
                ty: r.ty()?,
                nullable: r.bool()?,
                source: match r.bool()? {
                    true => Some(ColumnSource {
                        schema: r.string()?,
                        table: r.string()?,
                        column: r.string()?,
                    }),
                    false => None,
                },
                rust_type: match r.bool()? {
                    true => Some(r.string()?),
                    false => None,
                },
                why: (0..r.len()?).map(|_| r.string()).collect::<Option<_>>()?,
                range: Range {
                    start: r.len()?,
                    end: r.len()?,
                },
                shape: r.shape(0)?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let returns_rows = r.bool()?;
    let kind = match r.byte()? {
        0 => StatementKind::Select,
        1 => StatementKind::Insert,
        2 => StatementKind::Update,
        3 => StatementKind::Delete,
        4 => StatementKind::Merge,
        _ => return None,
    };
    let changes_session = r.bool()?;
    r.0.is_empty().then_some(Analysis {
        params,
        columns,
        returns_rows,
        kind,
        changes_session,
    })
}

/// Reads what the `put_*` functions wrote; `None` at the end of the bytes.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn byte(&mut self) -> Option<u8> {
        self.take::<1>().map(|[b]| b)
    }
    fn bool(&mut self) -> Option<bool> {
        match self.byte()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    fn len(&mut self) -> Option<usize> {
        self.u32().and_then(|n| usize::try_from(n).ok())
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
    fn string(&mut self) -> Option<String> {
        self.bytes()
            .and_then(|b| std::str::from_utf8(b).ok())
            .map(str::to_owned)
    }
    fn ty(&mut self) -> Option<TypeRef> {
        let schema = self.string()?;
        let name = self.string()?;
        let has_oid = self.bool()?;
        let oid = self.u32()?;
        Some(TypeRef {
            schema,
            name,
            oid: has_oid.then_some(oid),
            array_dims: self.u32()?,
        })
    }
    /// `Some(None)` for no shape; `depth` bounds the nesting of damaged input.
    fn shape(&mut self, depth: usize) -> Option<Option<Shape>> {
        if depth > 64 {
            return None;
        }
        match self.byte()? {
            0 => Some(None),
            1 => {
                let fields = (0..self.len()?)
                    .map(|_| {
                        Some(ShapeField {
                            name: self.string()?,
                            server_name: self.string()?,
                            ty: self.ty()?,
                            nullable: self.bool()?,
                            shape: self.shape(depth + 1)?,
                        })
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(Some(Shape::Record(fields)))
            }
            2 => {
                let element = self.shape(depth + 1)??;
                Some(Some(Shape::Array {
                    element: Box::new(element),
                    nullable_elements: self.bool()?,
                }))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../qail.schema.json");
        Snapshot::load(path).expect("the workspace snapshot")
    }

    #[test]
    fn an_analysis_reads_back_as_written() {
        let snapshot = snapshot();
        for sql in [
            "SELECT id, name, country FROM harbors WHERE id = $1",
            "SELECT h.name, o.name AS operator FROM harbors h LEFT JOIN operators o ON o.name = h.name",
            "SELECT h, array_agg(o) AS ops FROM harbors h LEFT JOIN operators o ON o.name = h.name GROUP BY h.id",
            "UPDATE harbors SET timezone = $1 WHERE id = $2",
            "SELECT count(*) AS \"n!\", max(code) AS \"c: String\" FROM harbors",
        ] {
            let analysis = qail_analyzer::analyze(sql, &snapshot).expect(sql);
            assert_eq!(decode(&encode(&analysis)), Some(analysis), "{sql}");
        }
    }

    /// Every statement of the analyzer's corpus (joins, nested shapes, JSON aggregates,
    /// writes, enums, arrays) comes back from the cache as the analyzer produced it.
    #[test]
    fn every_corpus_analysis_reads_back_as_written() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../qail-analyzer/tests");
        let snapshot = Snapshot::load(format!("{dir}/fixtures/app.schema.json"))
            .expect("the analyzer's fixture snapshot");
        let corpus =
            std::fs::read_to_string(format!("{dir}/it/corpus.txt")).expect("the analyzer's corpus");
        let mut checked = 0;
        for case in corpus.split("\n\n") {
            let sql: Vec<&str> = case
                .lines()
                .filter(|l| {
                    let l = l.trim_start();
                    !(l.is_empty()
                        || l.starts_with('#')
                        || l.starts_with("params:")
                        || l.starts_with("cols:"))
                })
                .collect();
            if sql.is_empty() {
                continue;
            }
            let sql = sql.join("\n");
            if let Ok(analysis) = qail_analyzer::analyze(&sql, &snapshot) {
                assert_eq!(decode(&encode(&analysis)), Some(analysis), "{sql}");
                checked += 1;
            }
        }
        assert!(checked > 600, "only {checked} corpus statements analyzed");
    }

    #[test]
    fn damaged_records_read_as_missing() {
        let a = record(b"k1", b"v1");
        let b = record(b"k2", b"v2");
        let mut bytes = [a.clone(), b.clone()].concat();
        assert_eq!(read_records(&bytes).len(), 2);
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let entries = read_records(&bytes);
        assert_eq!(entries.len(), 1);
        assert_eq!(
            entries.get(b"k1".as_slice()).map(Vec::as_slice),
            Some(b"v1".as_slice())
        );
        assert_eq!(read_records(&a[..a.len() - 1]).len(), 0);
        assert_eq!(decode(b"\x01\x00\x00\x00"), None);
    }

    #[test]
    fn this_build_is_identified() {
        if cfg!(target_os = "linux") {
            let id = identity().expect("the test binary is found in /proc/self/maps");
            assert!(id.ends_with(env!("CARGO_PKG_VERSION")), "{id}");
        }
    }
}
