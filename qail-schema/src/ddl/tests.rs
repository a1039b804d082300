use super::*;
use crate::snapshot::{Identity, RelationKind, TypeRef, UserTypeKind, Volatility};

fn import(sql: &str) -> (Snapshot, Vec<DdlWarning>) {
    from_sql(&[("test.sql".to_owned(), sql.to_owned())])
}

#[test]
fn create_table_with_column_constraints() {
    let (s, w) = import(
        "CREATE TABLE harbors (id serial PRIMARY KEY, name varchar(40) NOT NULL UNIQUE,
           country char(2) DEFAULT 'NO', depth double precision[], code int GENERATED ALWAYS AS IDENTITY,
           twice int GENERATED ALWAYS AS (code * 2) STORED);",
    );
    assert!(w.is_empty(), "{w:?}");
    let t = s.relation(None, "harbors").unwrap();
    assert_eq!(t.primary_key, ["id"]);
    assert_eq!(t.unique, [vec!["name".to_owned()]]);
    let id = t.column("id").unwrap();
    assert_eq!(id.ty, TypeRef::builtin("int4"));
    assert!(id.not_null);
    assert_eq!(
        id.default.as_deref(),
        Some("nextval('harbors_id_seq'::regclass)")
    );
    assert_eq!(t.column("name").unwrap().ty.name, "varchar");
    assert_eq!(t.column("country").unwrap().ty.name, "bpchar");
    assert_eq!(
        t.column("depth").unwrap().ty,
        TypeRef::builtin("float8").with_array_dims(1)
    );
    assert_eq!(t.column("code").unwrap().identity, Some(Identity::Always));
    assert_eq!(
        t.column("twice").unwrap().generated.as_deref(),
        Some("code * 2")
    );
}

#[test]
fn quoted_identifiers_keep_case_and_unquoted_fold() {
    let (s, _) =
        import(r#"CREATE TABLE "User" ("Id" int, Name text); CREATE TABLE "order" (x int);"#);
    let u = s.relation(None, "User").unwrap();
    assert_eq!(u.columns[0].name, "Id");
    assert_eq!(u.columns[1].name, "name");
    assert!(s.relation(None, "order").is_some());
}

#[test]
fn alter_table_operations() {
    let (s, w) = import(
        "CREATE TABLE t (a int, b text);
         ALTER TABLE t ADD COLUMN c bool NOT NULL, DROP COLUMN b;
         ALTER TABLE t RENAME COLUMN a TO aa;
         ALTER TABLE t ALTER COLUMN aa TYPE bigint, ALTER COLUMN aa SET NOT NULL;
         ALTER TABLE t ALTER COLUMN c DROP NOT NULL, ALTER COLUMN c SET DEFAULT true;
         ALTER TABLE t ADD CONSTRAINT t_pk PRIMARY KEY (aa);
         ALTER TABLE t RENAME TO u;",
    );
    assert!(w.is_empty(), "{w:?}");
    let u = s.relation(None, "u").unwrap();
    let names: Vec<_> = u.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["aa", "c"]);
    assert_eq!(u.columns[0].ty.name, "int8");
    assert!(u.columns[0].not_null);
    assert!(!u.columns[1].not_null);
    assert_eq!(u.columns[1].default.as_deref(), Some("true"));
    assert_eq!(u.primary_key, ["aa"]);
}

#[test]
fn foreign_keys_get_postgres_names_and_primary_key_targets() {
    let (s, w) = import(
        "CREATE TABLE a (id int PRIMARY KEY);
         CREATE TABLE b (id int, a_id int REFERENCES a, FOREIGN KEY (id) REFERENCES a (id));",
    );
    assert!(w.is_empty(), "{w:?}");
    let b = s.relation(None, "b").unwrap();
    assert_eq!(b.foreign_keys.len(), 2);
    assert_eq!(b.foreign_keys[0].name, "b_a_id_fkey");
    assert_eq!(b.foreign_keys[0].ref_columns, ["id"]);
    assert_eq!(b.foreign_keys[1].name, "b_id_fkey");
}

#[test]
fn enums_domains_ranges_composites() {
    let (s, w) = import(
        "CREATE TYPE mood AS ENUM ('sad', 'happy');
         ALTER TYPE mood ADD VALUE 'ok' BEFORE 'happy';
         ALTER TYPE mood ADD VALUE 'great' AFTER 'happy';
         CREATE DOMAIN posint AS integer NOT NULL CHECK (VALUE > 0);
         CREATE DOMAIN email AS text CHECK (VALUE IS NOT NULL);
         CREATE TYPE floatrange AS RANGE (subtype = float8);
         CREATE TYPE pair AS (a int, b mood);",
    );
    assert!(w.is_empty(), "{w:?}");
    let labels = match &s.user_type(None, "mood").unwrap().kind {
        UserTypeKind::Enum { labels } => labels.clone(),
        k => panic!("{k:?}"),
    };
    assert_eq!(labels, ["sad", "ok", "happy", "great"]);
    assert!(matches!(
        s.user_type(None, "posint").unwrap().kind,
        UserTypeKind::Domain { not_null: true, .. }
    ));
    assert!(matches!(
        s.user_type(None, "email").unwrap().kind,
        UserTypeKind::Domain { not_null: true, .. }
    ));
    assert!(matches!(
        s.user_type(None, "floatrange").unwrap().kind,
        UserTypeKind::Range { .. }
    ));
    match &s.user_type(None, "pair").unwrap().kind {
        UserTypeKind::Composite { fields } => assert_eq!(fields[1].ty.schema, "public"),
        k => panic!("{k:?}"),
    }
}

#[test]
fn functions() {
    let (s, w) = import(
        "CREATE FUNCTION add(a int, b int DEFAULT 1) RETURNS int LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT a + b $$;
         CREATE FUNCTION evens(n int) RETURNS SETOF int LANGUAGE sql AS $$ SELECT 2 $$;
         CREATE FUNCTION pairs() RETURNS TABLE (x int, y text) LANGUAGE sql STABLE AS $$ SELECT 1, 'a' $$;",
    );
    assert!(w.is_empty(), "{w:?}");
    let add = &s.functions_named(None, "add")[0];
    assert_eq!((add.args.len(), add.defaults, add.strict), (2, 1, true));
    assert_eq!(add.volatility, Volatility::Immutable);
    assert!(s.functions_named(None, "evens")[0].returns_set);
    let pairs = &s.functions_named(None, "pairs")[0];
    assert_eq!(pairs.returns.name, "record");
    assert_eq!(pairs.out_columns.len(), 2);
    assert!(pairs.returns_set);
}

#[test]
fn unparsable_statement_is_reported_with_line_and_import_goes_on() {
    let (s, w) = import(
        "CREATE TABLE a (x int);\n\nCREATE TABLE b (x int) WITH BROKEN STUFF (;\nCREATE TABLE c (y int);",
    );
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].line, 3);
    assert!(
        w[0].to_string()
            .starts_with("test.sql:3: statement skipped"),
        "{}",
        w[0]
    );
    assert!(s.relation(None, "c").is_some());
}

#[test]
fn views_are_recorded_with_a_warning() {
    let (s, w) = import("CREATE TABLE a (x int); CREATE VIEW v AS SELECT x FROM a;");
    assert_eq!(w.len(), 1);
    assert!(
        w[0].message.contains("recorded without columns"),
        "{}",
        w[0]
    );
    assert_eq!(s.relation(None, "v").unwrap().kind, RelationKind::View);
}

#[test]
fn schemas_search_path_partitions_and_inheritance() {
    let (s, w) = import(
        "CREATE SCHEMA app; SET search_path TO app, public;
         CREATE TABLE events (id int, at date NOT NULL, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
         CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
         CREATE TABLE base (a int NOT NULL DEFAULT 1);
         CREATE TABLE child (b int) INHERITS (base);
         DROP SCHEMA IF EXISTS nothing;",
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(s.schemas, ["app", "public"]);
    let p = s.relation(Some("app"), "events_2024").unwrap();
    assert_eq!(p.primary_key, ["id", "at"]);
    let c = s.relation(Some("app"), "child").unwrap();
    assert_eq!(
        c.columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert!(c.columns[0].not_null);
    assert_eq!(s.search_path, ["public"]);
}

#[test]
fn a_function_body_with_semicolons_is_one_statement() {
    let (s, w) = import(
        "CREATE TABLE a (x int);\nCREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; SELECT 2 $$;\nCREATE TABLE c (y int);",
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(s.functions_named(None, "f").len(), 1);
    assert!(s.relation(None, "c").is_some());
}

#[test]
fn sequences_of_serial_and_identity_columns_live_with_their_column() {
    let (s, w) = import(
        "CREATE SEQUENCE invoice_no;
         CREATE TABLE users (id serial PRIMARY KEY, n int GENERATED ALWAYS AS IDENTITY);
         ALTER TABLE users RENAME TO accounts;
         ALTER TABLE accounts ADD COLUMN k bigserial;
         ALTER TABLE accounts DROP COLUMN k;
         CREATE TABLE gone (id serial);
         DROP TABLE gone;",
    );
    assert!(w.is_empty(), "{w:?}");
    let seqs: Vec<&str> = s
        .relations
        .iter()
        .filter(|r| r.kind == crate::snapshot::RelationKind::Sequence)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(seqs, ["invoice_no", "users_id_seq", "users_n_seq"]);
    let seq = s.relation(None, "users_id_seq").unwrap();
    assert_eq!(seq.columns[0].name, "last_value");
    assert_eq!(seq.columns[0].ty.name, "int8");
}

#[test]
fn a_do_block_of_plain_statements_is_imported() {
    let (s, w) = import(
        "CREATE TABLE t (a int);
DO $$ BEGIN
  ALTER TABLE t ADD COLUMN b text;
  CREATE TYPE mood AS ENUM ('sad');
EXCEPTION
  WHEN duplicate_object THEN null;
END $$;
do $body$
begin
  alter table t add constraint t_b_key unique (b);
end
$body$ LANGUAGE plpgsql;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_type WHERE typname = 'x') THEN
    CREATE TYPE x AS ENUM ('a');
  END IF;
END $$;",
    );
    let t = s.relation(None, "t").unwrap();
    assert_eq!(t.columns.len(), 2);
    assert_eq!(t.unique, [vec!["b".to_owned()]]);
    assert!(s.user_type(None, "mood").is_some());
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].line, 13);
    assert!(
        w[0].message.contains("DO block skipped"),
        "{}",
        w[0].message
    );
}

#[test]
fn cost_and_rows_after_language_are_read() {
    let (s, w) = import(
        "CREATE FUNCTION f(a int) RETURNS SETOF int LANGUAGE sql STABLE COST 10 ROWS 5 AS $$ SELECT a $$;
         CREATE OR REPLACE FUNCTION g() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql COST 100;",
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(s.functions_named(None, "f").len(), 1);
    assert_eq!(s.functions_named(None, "g").len(), 1);
}

#[test]
fn reset_identity_kind_partitions_and_unfilled_materialized_views() {
    let (s, w) = import(
        "CREATE SCHEMA app;
         SET search_path TO app;
         CREATE TABLE a (id int GENERATED ALWAYS AS IDENTITY, at date NOT NULL) PARTITION BY RANGE (at);
         RESET search_path;
         CREATE TABLE b (x int);
         ALTER TABLE app.a ALTER COLUMN id SET GENERATED BY DEFAULT;
         CREATE TABLE app.a1 PARTITION OF app.a FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
         ALTER TABLE app.a DETACH PARTITION app.a1;
         CREATE MATERIALIZED VIEW m AS SELECT 1 AS one WITH NO DATA;",
    );
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].message.contains("materialized view public.m"),
        "{}",
        w[0]
    );
    assert!(s.relation(Some("public"), "b").is_some());
    let a = s.relation(Some("app"), "a").unwrap();
    assert_eq!(
        a.columns[0].identity,
        Some(crate::snapshot::Identity::ByDefault)
    );
    assert!(s.relation(Some("app"), "a1").is_some());
}

/// PostgreSQL 18's virtual generated columns, temporal keys and NOT ENFORCED constraints are
/// imported as a pull of the same table reads them.
#[test]
fn postgres_18_generated_columns_temporal_keys_and_enforcement() {
    let (s, w) = import(
        "CREATE TABLE rooms (id int, valid_at tstzrange, name text,
           PRIMARY KEY (id, valid_at WITHOUT OVERLAPS),
           CONSTRAINT named CHECK (name IS NOT NULL) ENFORCED);
         CREATE TABLE bookings (id int PRIMARY KEY, room int, valid_at tstzrange, note text,
           twice int GENERATED ALWAYS AS (id * 2) VIRTUAL,
           thrice int GENERATED ALWAYS AS (id * 3),
           four int GENERATED ALWAYS AS (id * 4) STORED,
           period int CHECK (period > 0) NOT ENFORCED,
           CONSTRAINT fk FOREIGN KEY (room, PERIOD valid_at)
             REFERENCES rooms (id, PERIOD valid_at) NOT ENFORCED,
           CONSTRAINT ck CHECK (note IS NOT NULL) NOT ENFORCED,
           UNIQUE (room, valid_at WITHOUT OVERLAPS));
         ALTER TABLE bookings ADD COLUMN five int GENERATED ALWAYS AS (id * 5) VIRTUAL,
           ADD CONSTRAINT not_enforced CHECK (room IS NOT NULL) NOT ENFORCED;",
    );
    // The two statements with virtual columns are flagged for targets before 18 only.
    assert_eq!(
        w.iter().map(|w| (w.line, w.since)).collect::<Vec<_>>(),
        [(4, Some(18)), (13, Some(18))],
        "{w:?}"
    );
    assert!(
        w[0].message
            .contains("write `GENERATED ALWAYS AS (…) STORED`")
    );
    let range = |r: &str| qail_catalog::Versions::parse(r).unwrap();
    assert!(w.iter().all(|w| w.applies_to(range("15..=18"))));
    assert!(w.iter().all(|w| w.applies_to(range("17"))));
    assert!(!w.iter().any(|w| w.applies_to(range("18"))));
    let (_, stored) =
        import("CREATE TABLE t (id int, twice int GENERATED ALWAYS AS (id * 2) STORED);");
    assert!(stored.is_empty(), "{stored:?}");
    let rooms = s.relation(None, "rooms").unwrap();
    assert_eq!(rooms.primary_key, ["id", "valid_at"]);
    assert!(rooms.column("name").unwrap().not_null, "an enforced CHECK");
    let b = s.relation(None, "bookings").unwrap();
    let generated: Vec<Option<&str>> = ["twice", "thrice", "four", "five", "period"]
        .iter()
        .map(|c| b.column(c).unwrap().generated.as_deref())
        .collect();
    assert_eq!(
        generated,
        [
            Some("id * 2"),
            Some("id * 3"),
            Some("id * 4"),
            Some("id * 5"),
            None
        ]
    );
    assert!(!b.column("note").unwrap().not_null, "a NOT ENFORCED CHECK");
    assert!(!b.column("room").unwrap().not_null, "a NOT ENFORCED CHECK");
    assert_eq!(b.unique, [vec!["room".to_owned(), "valid_at".to_owned()]]);
    let fk = &b.foreign_keys[0];
    assert_eq!(
        (fk.columns.clone(), fk.ref_columns.clone()),
        (
            vec!["room".to_owned(), "valid_at".to_owned()],
            vec!["id".to_owned(), "valid_at".to_owned()]
        )
    );
    // Columns named like the new words are columns.
    let (s, w) = import(
        "CREATE TABLE words (enforced bool NOT NULL, period int, without int, \
         PRIMARY KEY (period, enforced), UNIQUE (without))",
    );
    assert!(w.is_empty(), "{w:?}");
    let words = s.relation(None, "words").unwrap();
    let names: Vec<&str> = words.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["enforced", "period", "without"]);
    assert_eq!(words.primary_key, ["period", "enforced"]);
    let (_, w) = import("CREATE TABLE k (id int PRIMARY KEY NOT ENFORCED)");
    assert!(
        w[0].message
            .contains("primary key and unique constraints cannot be marked NOT ENFORCED"),
        "{w:?}"
    );
}
