//! The DDL corpus: every script in tests/ddl is applied to a scratch database, pulled, and
//! compared with the DDL import of the same script.
//!
//! Documented normalizations before comparing (see `qail_schema::ddl`):
//! - defaults and generation expressions through `diff::loose_expr` (DDL text vs pg_get_expr);
//! - view and materialized view columns dropped (the DDL import needs the analyzer for them);
//! - extension versions and server_version cleared (a script does not know them);
//! - sequences and extensions' functions, base types, operators and casts dropped from the
//!   pull (the DDL import does not create them).

use std::path::{Path, PathBuf};

use qail_schema::Snapshot;
use qail_schema::diff::{self, DiffOptions, loose_expr};
use qail_schema::snapshot::RelationKind;

use crate::util;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ddl")
}

fn normalize(mut s: Snapshot) -> Snapshot {
    s.server_version = None;
    // A pulled snapshot records no sources (`check_script` checks the import's).
    s.sources.clear();
    // A snapshot built from DDL does not know index names or rules (a pull does).
    s.indexes = None;
    s.rules = None;
    for r in &mut s.relations {
        if r.kind != RelationKind::Table {
            r.columns.clear();
        }
        for c in &mut r.columns {
            c.default = c.default.as_deref().map(loose_expr);
            c.generated = c.generated.as_deref().map(loose_expr);
        }
    }
    for e in &mut s.extensions {
        e.version.clear();
    }
    // An extension's types, operators and casts come with CREATE EXTENSION, which the DDL
    // import records only by name.
    s.base_types.clear();
    s.operators.clear();
    s.casts.clear();
    s.sort();
    s
}

/// How many warnings the import of each script must give.
fn expected_warnings(file: &str) -> usize {
    match file {
        "14-views.sql" => 3,
        "16-drops.sql" => 1,
        "18-unparsable.sql" => 2,
        _ => 0,
    }
}

async fn check_script(n: u32, file: &str) {
    let text = std::fs::read_to_string(corpus_dir().join(file)).expect("read script");
    let (ddl, warnings) = qail_schema::ddl::from_sql(&[(file.to_owned(), text.clone())]);
    assert_eq!(
        warnings.len(),
        expected_warnings(file),
        "{file}: warnings {warnings:#?}"
    );
    for w in &warnings {
        assert!(w.line > 0 && w.file == file, "{w}");
    }
    let lines = text.lines().count() as u64;
    for r in &ddl.relations {
        let columns = r.columns.iter().map(|c| Some(c.name.as_str()));
        for column in std::iter::once(None).chain(columns) {
            let s = ddl.source(&r.schema, &r.name, column).unwrap_or_else(|| {
                panic!("{file}: no source for {}.{} {column:?}", r.schema, r.name)
            });
            assert!(s.file == file && (1..=lines).contains(&s.line), "{s:?}");
        }
    }

    let db = format!("qail_ddl_{n}");
    let mut conn = util::scratch_db(&db).await;
    conn.batch_execute(&text)
        .await
        .unwrap_or_else(|e| panic!("{file}: PostgreSQL refused it: {e}"));
    // A fresh session: the script's SET search_path must not leak into the pull.
    let mut conn = util::connect(&util::url_for(&db)).await;
    let pulled = qail_schema::introspect::pull(&mut conn, &ddl.schemas)
        .await
        .expect("pull");
    let again = qail_schema::introspect::pull(&mut conn, &ddl.schemas)
        .await
        .expect("pull");
    drop(conn);
    util::drop_db(&db).await;

    assert_eq!(
        pulled.to_json(),
        again.to_json(),
        "{file}: two pulls differ"
    );
    let mut pulled = pulled;
    pulled.functions.retain(|f| f.extension.is_none());
    let opts = DiffOptions {
        lenient_view_columns: true,
        ..DiffOptions::default()
    };
    let changes = diff::diff(&ddl, &pulled, &opts);
    assert!(
        changes.is_empty(),
        "{file}: DDL import → pulled:\n{}",
        diff::render(&changes)
    );
    let (a, b) = (normalize(ddl), normalize(pulled));
    assert_eq!(a, b, "{file}: snapshots differ field by field");
    assert_eq!(
        Snapshot::from_json(&b.to_json()).expect("reload"),
        b,
        "{file}: round trip"
    );
}

macro_rules! corpus {
    ($($test:ident => $n:literal, $file:literal;)*) => {
        $(
            #[tokio::test]
            async fn $test() {
                check_script($n, $file).await;
            }
        )*

        #[test]
        fn every_script_has_a_test() {
            let mut on_disk: Vec<String> = std::fs::read_dir(corpus_dir())
                .expect("tests/ddl")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".sql"))
                .collect();
            on_disk.sort();
            let tested: Vec<String> = vec![$($file.to_owned()),*];
            assert_eq!(on_disk, tested);
            assert!(tested.len() >= 15);
        }
    };
}

corpus! {
    builtin_types => 1, "01-builtin-types.sql";
    constraints => 2, "02-constraints.sql";
    foreign_keys => 3, "03-foreign-keys.sql";
    serial_identity_generated => 4, "04-serial-identity-generated.sql";
    arrays => 5, "05-arrays.sql";
    quoted_reserved => 6, "06-quoted-reserved.sql";
    schemas => 7, "07-schemas.sql";
    partitioned => 8, "08-partitioned.sql";
    inheritance => 9, "09-inheritance.sql";
    alter_table => 10, "10-alter-table.sql";
    enums => 11, "11-enums.sql";
    composite_range_domain => 12, "12-composite-range-domain.sql";
    functions => 13, "13-functions.sql";
    views => 14, "14-views.sql";
    indexes_and_noise => 15, "15-indexes-and-noise.sql";
    drops => 16, "16-drops.sql";
    extension => 17, "17-extension.sql";
    unparsable => 18, "18-unparsable.sql";
}

#[tokio::test]
async fn whole_corpus_imports_as_one_directory() {
    let (snap, warnings) = qail_schema::ddl::from_paths(&[corpus_dir()]).expect("read corpus");
    assert!(snap.relation(Some("app"), "accounts").is_some());
    assert!(
        warnings
            .iter()
            .any(|w| w.file.ends_with("18-unparsable.sql") && w.line == 3),
        "{warnings:#?}"
    );
}
