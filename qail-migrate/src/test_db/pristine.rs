//! What a fresh clone of a template looks like, recorded once when the template is built and
//! compared with a passed test's database before it is recycled.
//!
//! The record is the template's comment (`COMMENT ON DATABASE`, in the shared catalog
//! `pg_shdescription`): every process can read it with `shobj_description`, and the template
//! itself, which accepts no connections, need not be opened. It holds:
//! - `xid` and `counts`: the template's newest transaction and an md5 of its catalogs' row
//!   counts, for a quick check that no catalog row changed ([`untouched`]);
//! - `catalogs`: an md5 over the rows of every database-local catalog of `pg_catalog`, the
//!   query generated from the catalogs' own column lists. Left out: `pg_statistic`,
//!   `pg_statistic_ext_data` and `pg_largeobject` (planner statistics and large objects'
//!   pages; a large object's existence is in `pg_largeobject_metadata`, which is kept); the
//!   columns of `pg_class` that `VACUUM`, `ANALYZE` and `TRUNCATE` change without DDL
//!   (`relpages`, `reltuples`, `relallvisible`, `relfilenode`, `relfrozenxid`, `relminmxid`,
//!   and the flags `relhasindex`, `relhasrules`, `relhastriggers`, `relhassubclass`, which
//!   `VACUUM` only clears and whose sources `pg_index`, `pg_rewrite`, `pg_trigger` and
//!   `pg_inherits` are hashed themselves); the rows of temporary namespaces, and those
//!   namespaces (`pg_temp_N`, `pg_toast_temp_N` stay in `pg_namespace` after their session).
//!   `regproc` columns are hashed as oids, which is also faster.
//! - `database`: an md5 of the database's own `pg_database` fields a test can change (owner,
//!   ACL, connection limit, `ALLOW_CONNECTIONS`, `IS_TEMPLATE`) and its settings
//!   (`pg_db_role_setting`).
//! - `sequence <oid> <last_value> <is_called>`: each sequence's state.
//! - `seeded <oid> <md5>`: each table holding rows (and each populated materialized view),
//!   with an md5 of its rows.
//! - `recyclable`: false when a table has a `TRUNCATE` trigger, which emptying the tables
//!   would fire.
//!
//! Oids are the same in every clone: `CREATE DATABASE … TEMPLATE` copies the catalogs.

use std::sync::Mutex;

use qail_pg::{Connection, Error};

/// The first line of a record; another first line is not a record this code reads. Part of
/// the template's hash.
pub(crate) const HEADER: &str = "qail-test pristine v3";

/// A query whose text values are the catalog fingerprint query of this server and its quick
/// check (see [`untouched`]).
const GENERATE: &str = r#"
SELECT 'SELECT md5(concat_ws(''|'', ' || string_agg(part, ', ' ORDER BY relname) || '))',
  'SELECT md5(concat_ws('','', '
    || string_agg(format('(SELECT count(*) FROM pg_catalog.%I)', relname), ', ' ORDER BY relname)
    || ')), '
    || string_agg(format('EXISTS (SELECT FROM pg_catalog.%I WHERE age(xmin) < age(%s))',
                         relname, '($1::text::bigint % 4294967296)::text::xid'),
                  ' OR ' ORDER BY relname)
    || ' OR pg_snapshot_xmax(pg_current_snapshot())::text::bigint - $1::text::bigint'
    || ' > 1000000000'
FROM (
  SELECT c.relname,
    format('(SELECT md5(coalesce(string_agg(x, E''\n'' ORDER BY x COLLATE "C"), '''')) '
           'FROM (SELECT ROW(%s)::text AS x FROM pg_catalog.%I%s) s)',
      string_agg(quote_ident(a.attname)
                 || CASE WHEN a.atttypid = 'regproc'::regtype THEN '::oid' ELSE '' END,
                 ', ' ORDER BY a.attnum),
      c.relname,
      coalesce(' WHERE ' || string_agg(
        CASE WHEN c.relname = 'pg_namespace' AND a.attname = 'nspname'
             THEN 'nspname !~ ''^pg_(toast_)?temp_'''
             WHEN a.attname ~ 'namespace$' AND a.atttypid = 'oid'::regtype
             THEN format('%I NOT IN (SELECT oid FROM pg_catalog.pg_namespace '
                         'WHERE nspname ~ ''^pg_(toast_)?temp_'')', a.attname)
        END, ' AND '), '')) AS part
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_attribute a
    ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relkind = 'r' AND NOT c.relisshared
    AND c.relname NOT IN ('pg_statistic', 'pg_statistic_ext_data', 'pg_largeobject')
    AND (c.relname, a.attname) NOT IN (
      ('pg_class', 'relpages'), ('pg_class', 'reltuples'), ('pg_class', 'relallvisible'),
      ('pg_class', 'relfilenode'), ('pg_class', 'relfrozenxid'), ('pg_class', 'relminmxid'),
      ('pg_class', 'relhasindex'), ('pg_class', 'relhasrules'), ('pg_class', 'relhastriggers'),
      ('pg_class', 'relhassubclass'))
  GROUP BY c.relname
) p
"#;

/// The fingerprint of the database's own row and settings, and whether something outside
/// its catalogs holds it (a prepared transaction, a replication slot).
const DATABASE: &str = "
SELECT md5(concat_ws('|', d.datdba, d.datacl, d.datconnlimit, d.datallowconn, d.datistemplate,
         (SELECT string_agg(s.setrole || '=' || array_to_string(s.setconfig, ','), ';'
                            ORDER BY s.setrole)
          FROM pg_catalog.pg_db_role_setting s WHERE s.setdatabase = d.oid))),
       EXISTS (SELECT FROM pg_catalog.pg_prepared_xacts WHERE database = d.datname)
       OR EXISTS (SELECT FROM pg_catalog.pg_replication_slots WHERE database = d.datname)
FROM pg_catalog.pg_database d WHERE d.datname = current_database()";

/// The tables, materialized views and sequences outside the system's namespaces.
const RELATIONS: &str = "
SELECT c.oid::bigint, format('%I.%I', n.nspname, c.relname), c.relkind::text, c.relispopulated
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'm', 'S')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  AND n.nspname !~ '^pg_(toast_)?temp_'
ORDER BY c.oid";

/// Whether a user table has a `TRUNCATE` trigger.
const TRUNCATE_TRIGGERS: &str = "
SELECT EXISTS (SELECT FROM pg_catalog.pg_trigger WHERE NOT tgisinternal AND tgtype & 32 <> 0)";

/// The catalog fingerprint query and its quick check, generated once per process (the
/// catalogs' columns are the server's).
static FINGERPRINT: Mutex<Option<(String, String)>> = Mutex::new(None);

/// The newest transaction id of the database (64 bits, with the epoch).
const XID: &str = "SELECT pg_current_xact_id()::text";

/// What a fresh clone looks like; see the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pristine {
    pub(crate) recyclable: bool,
    /// A transaction id newer than every catalog row of the template.
    pub(crate) xid: String,
    /// An md5 of the catalogs' row counts.
    pub(crate) counts: String,
    pub(crate) catalogs: String,
    pub(crate) database: String,
    pub(crate) sequences: Vec<Sequence>,
    pub(crate) seeded: Vec<(i64, String)>,
}

/// A sequence's state: `last_value` and `is_called`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sequence {
    pub(crate) oid: i64,
    pub(crate) last_value: i64,
    pub(crate) is_called: bool,
}

/// A table, materialized view or sequence of the database.
#[derive(Debug, Clone)]
pub(crate) struct Relation {
    pub(crate) oid: i64,
    /// Schema-qualified, quoted.
    pub(crate) name: String,
    pub(crate) kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Table,
    /// A materialized view, and whether it is populated (one that is not cannot be read).
    MaterializedView(bool),
    Sequence,
}

impl Pristine {
    /// Records what the database `conn` is on looks like now.
    pub(crate) async fn observe(conn: &mut Connection) -> Result<Pristine, Error> {
        let triggers: bool = conn.query_one(TRUNCATE_TRIGGERS, &[]).await?.try_get(0)?;
        let xid = text(conn, XID).await?;
        let (counts, _) = untouched(conn, &xid).await?;
        let catalogs = catalogs(conn).await?;
        let (database, _) = database(conn).await?;
        let relations = relations(conn).await?;
        let sequences = sequences(conn, &relations).await?;
        let tables: Vec<&Relation> = relations.iter().filter(|r| r.kind == Kind::Table).collect();
        let holding = nonempty(conn, &tables).await?;
        let mut seeded: Vec<&Relation> = tables
            .iter()
            .zip(holding)
            .filter(|(_, rows)| *rows)
            .map(|(t, _)| *t)
            .collect();
        seeded.extend(
            relations
                .iter()
                .filter(|r| r.kind == Kind::MaterializedView(true)),
        );
        seeded.sort_by_key(|r| r.oid);
        let hashes = contents(conn, &seeded).await?;
        Ok(Pristine {
            recyclable: !triggers,
            xid,
            counts,
            catalogs,
            database,
            sequences,
            seeded: seeded.iter().map(|r| r.oid).zip(hashes).collect(),
        })
    }

    /// The record, as the template's comment holds it.
    pub(crate) fn encode(&self) -> String {
        let mut out = format!(
            "{HEADER}\nrecyclable {}\nxid {}\ncounts {}\ncatalogs {}\ndatabase {}\n",
            self.recyclable, self.xid, self.counts, self.catalogs, self.database
        );
        for s in &self.sequences {
            out.push_str(&format!(
                "sequence {} {} {}\n",
                s.oid, s.last_value, s.is_called
            ));
        }
        for (oid, hash) in &self.seeded {
            out.push_str(&format!("seeded {oid} {hash}\n"));
        }
        out
    }

    /// Reads a record; `None` for anything else (a template built without one).
    pub(crate) fn decode(text: &str) -> Option<Pristine> {
        let mut lines = text.lines();
        if lines.next()? != HEADER {
            return None;
        }
        let mut pristine = Pristine {
            recyclable: false,
            xid: String::new(),
            counts: String::new(),
            catalogs: String::new(),
            database: String::new(),
            sequences: Vec::new(),
            seeded: Vec::new(),
        };
        for line in lines {
            let fields: Vec<&str> = line.split(' ').collect();
            match fields.as_slice() {
                ["recyclable", b] => pristine.recyclable = b.parse().ok()?,
                ["xid", x] if x.bytes().all(|b| b.is_ascii_digit()) => {
                    pristine.xid = (*x).to_owned();
                }
                ["counts", h] => pristine.counts = (*h).to_owned(),
                ["catalogs", h] => pristine.catalogs = (*h).to_owned(),
                ["database", h] => pristine.database = (*h).to_owned(),
                ["sequence", oid, last, called] => pristine.sequences.push(Sequence {
                    oid: oid.parse().ok()?,
                    last_value: last.parse().ok()?,
                    is_called: called.parse().ok()?,
                }),
                ["seeded", oid, h] => pristine.seeded.push((oid.parse().ok()?, (*h).to_owned())),
                _ => return None,
            }
        }
        let complete = [
            &pristine.xid,
            &pristine.counts,
            &pristine.catalogs,
            &pristine.database,
        ]
        .iter()
        .all(|f| !f.is_empty());
        complete.then_some(pristine)
    }
}

/// The one text value `sql` returns.
async fn text(conn: &mut Connection, sql: &str) -> Result<String, Error> {
    conn.query_one(sql, &[]).await?.try_get(0)
}

/// The catalog fingerprint query and its quick check, generated on the first call.
async fn queries(conn: &mut Connection) -> Result<(String, String), Error> {
    let known = FINGERPRINT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if let Some(known) = known {
        return Ok(known);
    }
    let row = conn.query_one(GENERATE, &[]).await?;
    let queries: (String, String) = (row.try_get(0)?, row.try_get(1)?);
    *FINGERPRINT.lock().unwrap_or_else(|e| e.into_inner()) = Some(queries.clone());
    Ok(queries)
}

/// The catalog fingerprint of the database `conn` is on.
pub(crate) async fn catalogs(conn: &mut Connection) -> Result<String, Error> {
    let (sql, _) = queries(conn).await?;
    text(conn, &sql).await
}

/// The quick check of the catalogs, 15–35 ms where the fingerprint takes 140–260 (on the
/// 100-table template, load average 5, measured with `psql`): an md5 of the catalogs' row counts, and
/// whether a catalog row is newer than transaction `xid` (compared as 32-bit ids, so the
/// check counts as failed once a billion transactions have passed). A row a test inserted or
/// updated is newer than the template's last transaction (an update writes a new row
/// version; the in-place updates of `VACUUM` and `ANALYZE` touch only columns the
/// fingerprint leaves out), and one it deleted changes a count; so equal counts and no newer
/// row mean the catalogs are the template's. The converse does not hold (a temporary table leaves a
/// namespace row, `TRUNCATE` updates `pg_class`): then the fingerprint decides.
pub(crate) async fn untouched(conn: &mut Connection, xid: &str) -> Result<(String, bool), Error> {
    let (_, sql) = queries(conn).await?;
    let row = conn.query_one(&sql, &[&xid]).await?;
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// The database fingerprint, and whether a prepared transaction or a replication slot holds
/// the database.
pub(crate) async fn database(conn: &mut Connection) -> Result<(String, bool), Error> {
    let row = conn.query_one(DATABASE, &[]).await?;
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// The database's tables, materialized views and sequences, by oid.
pub(crate) async fn relations(conn: &mut Connection) -> Result<Vec<Relation>, Error> {
    let rows = conn.query(RELATIONS, &[]).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let kind: String = row.try_get(2)?;
        let kind = match kind.as_str() {
            "r" => Kind::Table,
            "m" => Kind::MaterializedView(row.try_get(3)?),
            _ => Kind::Sequence,
        };
        out.push(Relation {
            oid: row.try_get(0)?,
            name: row.try_get(1)?,
            kind,
        });
    }
    Ok(out)
}

/// The state of every sequence among `relations`, in oid order.
pub(crate) async fn sequences(
    conn: &mut Connection,
    relations: &[Relation],
) -> Result<Vec<Sequence>, Error> {
    let seqs: Vec<&Relation> = relations
        .iter()
        .filter(|r| r.kind == Kind::Sequence)
        .collect();
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    let parts: Vec<String> = seqs
        .iter()
        .map(|s| format!("(SELECT last_value || ' ' || is_called FROM {})", s.name))
        .collect();
    let sql = format!("SELECT array_to_string(ARRAY[{}], ',')", parts.join(", "));
    let states = text(conn, &sql).await?;
    let mut out = Vec::with_capacity(seqs.len());
    for (seq, state) in seqs.iter().zip(states.split(',')) {
        let (last, called) = state.split_once(' ').unwrap_or((state, ""));
        out.push(Sequence {
            oid: seq.oid,
            last_value: last.parse().unwrap_or(i64::MIN),
            is_called: called == "true",
        });
    }
    Ok(out)
}

/// Whether each of `tables` holds a row: one query of `EXISTS` probes.
pub(crate) async fn nonempty(
    conn: &mut Connection,
    tables: &[&Relation],
) -> Result<Vec<bool>, Error> {
    if tables.is_empty() {
        return Ok(Vec::new());
    }
    let probes: Vec<String> = tables
        .iter()
        .map(|t| format!("EXISTS (SELECT FROM ONLY {})::int", t.name))
        .collect();
    let sql = format!("SELECT array_to_string(ARRAY[{}], '')", probes.join(", "));
    let bits = text(conn, &sql).await?;
    Ok(bits.bytes().map(|b| b == b'1').collect())
}

/// An md5 of the rows of each of `relations`.
pub(crate) async fn contents(
    conn: &mut Connection,
    relations: &[&Relation],
) -> Result<Vec<String>, Error> {
    if relations.is_empty() {
        return Ok(Vec::new());
    }
    let parts: Vec<String> = relations
        .iter()
        .map(|r| {
            format!(
                "(SELECT md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text COLLATE \"C\"), \
                 '')) FROM ONLY {} t)",
                r.name
            )
        })
        .collect();
    let sql = format!("SELECT array_to_string(ARRAY[{}], ',')", parts.join(", "));
    Ok(text(conn, &sql)
        .await?
        .split(',')
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back() {
        let pristine = Pristine {
            recyclable: true,
            xid: "1234".to_owned(),
            counts: "cdef0123".to_owned(),
            catalogs: "0123abcd".to_owned(),
            database: "4567ef01".to_owned(),
            sequences: vec![Sequence {
                oid: 16390,
                last_value: 3,
                is_called: true,
            }],
            seeded: vec![(16384, "89abcdef".to_owned())],
        };
        assert_eq!(Pristine::decode(&pristine.encode()), Some(pristine));
    }

    #[test]
    fn other_comments_are_not_records() {
        assert_eq!(Pristine::decode("qail-test: passed"), None);
        assert_eq!(Pristine::decode(""), None);
        assert_eq!(Pristine::decode(&format!("{HEADER}\nunknown line\n")), None);
    }
}
