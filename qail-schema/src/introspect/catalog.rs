//! The catalog queries of `pull`. Each takes `$1`, a JSON array of schema names as text (`[]`:
//! every user schema, system schemas excluded), and returns one row with one text column: a
//! JSON value that `raw.rs` reads under the query's key.
//!
//! Note: separate statements, not one: PostgreSQL 15 spends several times more CPU on one
//! statement computing all of them (measured on 1,000 tables) than on the parts one by one.

/// The schemas to read.
macro_rules! sel {
    () => {
        r"WITH sel AS (
    SELECT n.oid, n.nspname
    FROM pg_namespace n
    WHERE CASE WHEN $1::text = '[]'
            -- Note: `pg_` names are reserved for system schemas (pg_toast, pg_temp_N, …).
            THEN n.nspname !~ '^pg_'
            ELSE n.nspname IN (SELECT json_array_elements_text($1::text::json)) END
      AND n.nspname NOT IN ('pg_catalog', 'information_schema'))
"
    };
}

/// The relations of those schemas (follows `sel!()`).
macro_rules! rels {
    () => {
        r", rels AS (
    SELECT c.oid, c.relname, c.relkind, sel.nspname
    FROM pg_class c JOIN sel ON sel.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
)
"
    };
}

/// `(key, SQL)` of every catalog query, in the order `pull` runs them.
pub(crate) const QUERIES: &[(&str, &str)] = &[
    (
        "meta",
        concat!(
            sel!(),
            r"
SELECT (json_build_object(
  'server_version', current_setting('server_version'),
  'search_path', (SELECT coalesce(json_agg(s ORDER BY o), '[]')
                  FROM unnest(current_schemas(false)) WITH ORDINALITY AS x(s, o)
                  WHERE s NOT IN ('pg_catalog', 'information_schema')),
  'schemas', (SELECT coalesce(json_agg(nspname ORDER BY nspname), '[]') FROM sel)))::text"
        ),
    ),
    (
        "types",
        concat!(
            sel!(),
            r"
SELECT ((SELECT json_agg(json_build_array(t.oid, n.nspname, t.typname, t.typelem, t.typcategory))
            FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace))::text"
        ),
    ),
    (
        "relations",
        concat!(
            sel!(),
            rels!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(oid, nspname, relname, relkind)), '[]') FROM rels))::text"
        ),
    ),
    (
        "columns",
        concat!(
            sel!(),
            rels!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(
                  a.attrelid, a.attname, a.atttypid, a.attndims, a.attnotnull,
                  CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid) END,
                  a.attidentity,
                  CASE WHEN a.attgenerated <> '' THEN pg_get_expr(d.adbin, d.adrelid) END)
                ORDER BY a.attrelid, a.attnum), '[]')
              FROM pg_attribute a
              JOIN rels r ON r.oid = a.attrelid
              LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
              WHERE a.attnum > 0 AND NOT a.attisdropped))::text"
        ),
    ),
    (
        "constraints",
        concat!(
            sel!(),
            rels!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(
                    k.conrelid, k.contype, k.conname,
                    ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY AS u(n, i)
                          JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i),
                    fn.nspname, fc.relname,
                    ARRAY(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY AS u(n, i)
                          JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i),
                    CASE WHEN k.contype = 'c' AND k.convalidated THEN pg_get_constraintdef(k.oid) END)
                  ORDER BY k.conrelid, k.conname), '[]')
                  FROM pg_constraint k
                  JOIN rels r ON r.oid = k.conrelid
                  LEFT JOIN pg_class fc ON fc.oid = k.confrelid
                  LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
                  WHERE k.contype IN ('p', 'u', 'f', 'c')))::text"
        ),
    ),
    (
        "unique_indexes",
        concat!(
            sel!(),
            rels!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(i.indrelid,
                       ARRAY(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS u(n, o)
                             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = u.n
                             WHERE u.o <= i.indnkeyatts ORDER BY u.o))), '[]')
                     FROM pg_index i JOIN rels r ON r.oid = i.indrelid
                     WHERE i.indisunique AND NOT i.indisprimary AND i.indpred IS NULL
                       AND i.indexprs IS NULL))::text"
        ),
    ),
    (
        "indexes",
        concat!(
            sel!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(sel.nspname, ic.relname, tc.relname)), '[]')
                     FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                     JOIN pg_class tc ON tc.oid = i.indrelid
                     JOIN sel ON sel.oid = ic.relnamespace))::text"
        ),
    ),
    (
        "rules",
        concat!(
            sel!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(sel.nspname, c.relname, r.rulename, r.ev_type,
                       r.is_instead, r.ev_qual::text <> '<>', r.ev_action::text)), '[]')
                     FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
                     JOIN sel ON sel.oid = c.relnamespace
                     WHERE r.rulename <> '_RETURN'))::text"
        ),
    ),
    (
        "session_trees",
        concat!(
            // Note: `sel` goes unread here; it types `$1`, which every catalog query takes.
            sel!(),
            r"
, trees AS (
    SELECT w.ev_class AS rel, w.ev_action::text AS tree
    FROM pg_rewrite w JOIN pg_class c ON c.oid = w.ev_class
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE w.rulename = '_RETURN' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
    UNION ALL
    SELECT p.polrelid, concat(p.polqual::text, ' ', p.polwithcheck::text)
    FROM pg_policy p
)
-- Per view and per policy: the functions its tree calls (oid, name) and the relations it
-- reads, from the node tree's text (`:funcid`, `:opfuncid`, `:aggfnoid`, `:winfnoid`, `:relid`).
-- Every schema's, not only the pulled ones: a pulled view may read a view of another schema.
SELECT ((SELECT coalesce(json_agg(json_build_array(t.rel,
                  (SELECT coalesce(json_agg(DISTINCT jsonb_build_array(f.oid, f.proname)), '[]')
                     FROM regexp_matches(t.tree, ':(?:funcid|opfuncid|aggfnoid|winfnoid) (\d+)', 'g') AS m
                     JOIN pg_proc f ON f.oid = m[1]::oid),
                  (SELECT coalesce(json_agg(DISTINCT m[1]::oid), '[]')
                     FROM regexp_matches(t.tree, ':relid (\d+)', 'g') AS m))), '[]')
                FROM trees t))::text"
        ),
    ),
    (
        "user_types",
        concat!(
            sel!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(
                   sel.nspname, t.typname, t.typtype, t.typbasetype, t.typndims, t.typnotnull,
                   (SELECT json_agg(e.enumlabel ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid),
                   (SELECT json_agg(json_build_array(a.attname, a.atttypid, a.attndims) ORDER BY a.attnum)
                      FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped),
                   (SELECT rngsubtype FROM pg_range WHERE rngtypid = t.oid),
                   (SELECT json_agg(pg_get_constraintdef(k.oid)) FROM pg_constraint k
                      WHERE k.contypid = t.oid AND k.contype = 'c' AND k.convalidated))), '[]')
                 FROM pg_type t JOIN sel ON sel.oid = t.typnamespace
                 WHERE (t.typtype IN ('e', 'd', 'r')
                        OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
                   -- Not a member of an extension.
                   -- Not a member of an extension ('e') nor made along with another object,
                  -- such as a range type's constructors ('i').
                  AND NOT EXISTS (SELECT 1 FROM pg_depend m
                                   WHERE m.classid = 'pg_type'::regclass AND m.objid = t.oid
                                     AND m.deptype = 'e')))::text"
        ),
    ),
    (
        "functions",
        concat!(
            sel!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(
                  sel.nspname, p.proname, p.proargtypes::oid[], p.pronargdefaults, p.provariadic <> 0,
                  p.prorettype, p.proretset, p.proisstrict, p.provolatile,
                  p.proallargtypes, p.proargmodes, p.proargnames,
                  (SELECT e.extname FROM pg_depend m JOIN pg_extension e ON e.oid = m.refobjid
                   WHERE m.classid = 'pg_proc'::regclass AND m.objid = p.oid
                     AND m.refclassid = 'pg_extension'::regclass AND m.deptype = 'e'),
                  p.prokind = 'a')), '[]')
                FROM pg_proc p JOIN sel ON sel.oid = p.pronamespace
                -- Functions, and the aggregates of extensions (citext's min and max, which
                -- the server prefers to the built-in ones over text).
                WHERE (p.prokind = 'f'
                       OR (p.prokind = 'a'
                           AND EXISTS (SELECT 1 FROM pg_depend m
                                       WHERE m.classid = 'pg_proc'::regclass AND m.objid = p.oid
                                         AND m.deptype = 'e')))
                  -- Not made along with another object, such as a range type's
                  -- constructors ('i').
                  AND NOT EXISTS (SELECT 1 FROM pg_depend m
                                  WHERE m.classid = 'pg_proc'::regclass AND m.objid = p.oid
                                    AND m.deptype = 'i')
                  -- An extension's functions (citext's, pg_trgm's similarity, uuid-ossp's)
                  -- are callable, but not its I/O and index support functions, which take or
                  -- return internal or cstring values SQL cannot call them with.
                  AND NOT (EXISTS (SELECT 1 FROM pg_depend m
                                   WHERE m.classid = 'pg_proc'::regclass AND m.objid = p.oid
                                     AND m.deptype = 'e')
                           AND ('internal'::regtype = ANY (p.proargtypes::oid[] || p.prorettype)
                                OR 'cstring'::regtype = ANY (p.proargtypes::oid[] || p.prorettype)))))::text"
        ),
    ),
    (
        "base_types",
        concat!(
            sel!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(
                  sel.nspname, t.typname, t.oid, t.typarray, t.typcategory, t.typispreferred,
                  (SELECT e.extname FROM pg_depend m JOIN pg_extension e ON e.oid = m.refobjid
                   WHERE m.classid = 'pg_type'::regclass AND m.objid = t.oid
                     AND m.refclassid = 'pg_extension'::regclass AND m.deptype = 'e'))), '[]')
                FROM pg_type t JOIN sel ON sel.oid = t.typnamespace
                WHERE t.typtype = 'b'
                  -- Not an array type (its element is the base type).
                  AND NOT EXISTS (SELECT 1 FROM pg_type x WHERE x.typarray = t.oid)))::text"
        ),
    ),
    (
        "operators",
        concat!(
            sel!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(
                  sel.nspname, o.oprname, o.oprleft, o.oprright, o.oprresult, o.oprcode::regproc::text,
                  (SELECT e.extname FROM pg_depend m JOIN pg_extension e ON e.oid = m.refobjid
                   WHERE m.classid = 'pg_operator'::regclass AND m.objid = o.oid
                     AND m.refclassid = 'pg_extension'::regclass AND m.deptype = 'e'))), '[]')
                FROM pg_operator o JOIN sel ON sel.oid = o.oprnamespace
                -- Not those over internal values, which SQL cannot write.
                WHERE 'internal'::regtype <> ALL (ARRAY[o.oprleft, o.oprright, o.oprresult])))::text"
        ),
    ),
    (
        "casts",
        concat!(
            sel!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(c.castsource, c.casttarget, c.castcontext)), '[]')
                FROM pg_cast c
                WHERE EXISTS (SELECT 1 FROM pg_type t JOIN sel ON sel.oid = t.typnamespace
                              WHERE t.oid IN (c.castsource, c.casttarget))))::text"
        ),
    ),
    (
        "extensions",
        concat!(
            sel!(),
            r"
SELECT ((SELECT coalesce(json_agg(json_build_array(e.extname, sel.nspname, e.extversion)), '[]')
                 FROM pg_extension e JOIN sel ON sel.oid = e.extnamespace))::text"
        ),
    ),
];
