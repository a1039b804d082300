//! The queries that read `pg_catalog` and the renderer that turns their rows, merged with the
//! reviewed inputs under `input/`, into `src/generated.rs`. `scripts/gen-catalog` runs them
//! against a server and writes the file; a test of qail-schema runs them again and fails when
//! the committed file differs.
//!
//! Every query returns text columns only, so any client can run it.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Write;

use crate::{NEWEST, OLDEST, Versions};

/// The reviewed SQL spellings and Rust mapping of the built-in types.
pub const TYPES_INPUT: &str = include_str!("../input/types.txt");

/// The reviewed list of functions and operators that never return NULL for non-NULL input.
pub const NONNULL_INPUT: &str = include_str!("../input/nonnull.txt");

/// The server's major version (`15`).
pub const VERSION_QUERY: &str = "SELECT (current_setting('server_version_num')::int / 10000)::text";

/// Built-in types: name, oid, array oid, array name, category, preferred, display, range subtype.
pub const TYPES_QUERY: &str = "\
SELECT t.typname::text, t.oid::text, t.typarray::text, coalesce(a.typname::text, ''),
       t.typcategory::text, t.typispreferred::text, format_type(t.oid, NULL),
       coalesce((SELECT s.typname::text FROM pg_range r JOIN pg_type s ON s.oid = r.rngsubtype
                 WHERE r.rngtypid = t.oid), '')
FROM pg_type t LEFT JOIN pg_type a ON a.oid = t.typarray
WHERE t.typnamespace = 'pg_catalog'::regnamespace AND t.typtype IN ('b', 'p', 'r', 'm')
  -- Arrays are their element's `typarray`; int2vector and oidvector are types of their own.
  AND (t.typcategory <> 'A' OR NOT EXISTS (SELECT 1 FROM pg_type e WHERE e.typarray = t.oid))";

/// Casts between built-in types: source, target, context, method.
pub const CASTS_QUERY: &str = "\
SELECT s.typname::text, t.typname::text, c.castcontext::text, c.castmethod::text
FROM pg_cast c JOIN pg_type s ON s.oid = c.castsource JOIN pg_type t ON t.oid = c.casttarget
WHERE s.typnamespace = 'pg_catalog'::regnamespace AND t.typnamespace = 'pg_catalog'::regnamespace";

/// Built-in functions: name, argument types (comma-separated), result, variadic, set-returning,
/// kind, defaulted arguments, strict.
pub const FUNCTIONS_QUERY: &str = "\
SELECT p.proname::text,
       coalesce((SELECT string_agg(t.typname::text, ',' ORDER BY u.i)
                 FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS u(o, i)
                 JOIN pg_type t ON t.oid = u.o), ''),
       r.typname::text, (p.provariadic <> 0)::text, p.proretset::text, p.prokind::text,
       p.pronargdefaults::text, p.proisstrict::text
FROM pg_proc p JOIN pg_type r ON r.oid = p.prorettype
WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.prokind IN ('f', 'a', 'w')";

/// Built-in operators: name, left type (empty for prefix), right type, result, function.
pub const OPERATORS_QUERY: &str = "\
SELECT o.oprname::text, coalesce(l.typname::text, ''), r.typname::text, res.typname::text,
       p.proname::text
FROM pg_operator o LEFT JOIN pg_type l ON l.oid = o.oprleft JOIN pg_type r ON r.oid = o.oprright
JOIN pg_type res ON res.oid = o.oprresult JOIN pg_proc p ON p.oid = o.oprcode
WHERE o.oprnamespace = 'pg_catalog'::regnamespace";

/// The system catalogs and `information_schema` views applications query: schema, relation,
/// kind (`r` table, `v` view), attribute number (zero-padded, for sorting), column, the
/// `typname` of its type's element (a domain read as its base type: the server describes
/// `information_schema.sql_identifier` as `name`), whether it is an array, NOT NULL. The
/// internal catalogs holding composite values (`pg_statistic_ext_data`) are left out.
pub const RELATIONS_QUERY: &str = "\
SELECT n.nspname::text, c.relname::text, c.relkind::text, lpad(a.attnum::text, 4, '0'),
       a.attname::text, coalesce(e.typname, b.typname)::text, (e.oid IS NOT NULL)::text,
       a.attnotnull::text
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
LEFT JOIN pg_type e ON e.typarray = b.oid
WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'v', 'p')
  -- Not the internal ones holding composite values (pg_statistic_ext_data).
  AND NOT EXISTS (SELECT 1 FROM pg_attribute x JOIN pg_type xt ON xt.oid = x.atttypid
                  LEFT JOIN pg_type xe ON xe.oid = xt.typelem
                  WHERE x.attrelid = c.oid AND x.attnum > 0
                    AND (xt.typtype = 'c' OR xe.typtype = 'c'))";

/// The rows of every query from one server, in the order [`VERSION_QUERY`], [`TYPES_QUERY`],
/// [`CASTS_QUERY`], [`FUNCTIONS_QUERY`], [`OPERATORS_QUERY`], [`RELATIONS_QUERY`]; each row one
/// string per column.
#[derive(Debug, Default, Clone)]
pub struct Rows {
    /// The single row of [`VERSION_QUERY`].
    pub version: Vec<Vec<String>>,
    /// The rows of [`TYPES_QUERY`].
    pub types: Vec<Vec<String>>,
    /// The rows of [`CASTS_QUERY`].
    pub casts: Vec<Vec<String>>,
    /// The rows of [`FUNCTIONS_QUERY`].
    pub functions: Vec<Vec<String>>,
    /// The rows of [`OPERATORS_QUERY`].
    pub operators: Vec<Vec<String>>,
    /// The rows of [`RELATIONS_QUERY`].
    pub relations: Vec<Vec<String>>,
}

impl Rows {
    /// The server's major version, from [`VERSION_QUERY`].
    pub fn major(&self) -> Result<u8, String> {
        let text = self
            .version
            .first()
            .and_then(|r| r.first())
            .ok_or("no server version")?;
        let major: u8 = text
            .parse()
            .map_err(|_| format!("server version {text:?} is not a major version"))?;
        if Versions::ALL.contains(major) {
            Ok(major)
        } else {
            Err(format!(
                "PostgreSQL {major} is not a supported version ({OLDEST} to {NEWEST})"
            ))
        }
    }
}

/// Renders `src/generated.rs` from the rows of one server of every supported major version
/// ([`OLDEST`] to [`NEWEST`]) and the reviewed inputs. Deterministic: rows are sorted here,
/// whatever order the servers returned them in. Fails when a supported version is missing,
/// or on an input line that names a type, function or operator no server has.
pub fn render(servers: &[Rows]) -> Result<String, String> {
    let text = render_servers(servers, true)?;
    let have = servers
        .iter()
        .map(Rows::major)
        .try_fold(Versions::span(1, 0), |acc, m| {
            m.map(|m| acc.or(Versions::span(m, m)))
        })?;
    let missing = Versions::ALL.without(have);
    if !missing.is_empty() {
        return Err(format!(
            "the catalog needs a server of every supported version; missing: PostgreSQL {missing}"
        ));
    }
    Ok(text)
}

/// Compares the committed `generated.rs` with one server: the entries the committed table
/// gives that server's major version must be exactly what the server's rows render to.
/// `Err` shows the first difference.
pub fn check(committed: &str, server: &Rows) -> Result<(), String> {
    let major = server.major()?;
    let fresh = render_servers(core::slice::from_ref(server), false)?;
    let want = project(committed, major)?;
    let got = project(&fresh, major)?;
    if want == got {
        return Ok(());
    }
    let at = want
        .iter()
        .zip(&got)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    Err(format!(
        "PostgreSQL {major}: entry {} differs\n  server:    {}\n  committed: {}",
        at + 1,
        got.get(at).map_or("<end>", String::as_str),
        want.get(at).map_or("<end>", String::as_str),
    ))
}

/// The entry lines of a rendered table that major `major` has, without their versions.
fn project(text: &str, major: u8) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((head, rest)) = line.split_once(", versions: ") else {
            continue;
        };
        let (versions, tail) = [" },", ", columns: &["]
            .iter()
            .find_map(|end| rest.find(end).map(|i| (&rest[..i], &rest[i..])))
            .ok_or_else(|| format!("cannot read the versions of: {line}"))?;
        if parse_versions(versions)?.contains(major) {
            out.push(format!("{head}{tail}"));
        }
    }
    Ok(out)
}

/// How an entry's versions are written in the table.
fn versions_text(v: Versions) -> String {
    match (v.first(), v.last()) {
        _ if v == Versions::ALL => "ALL".to_string(),
        (Some(first), Some(last)) if v.is_span() => format!("v({first}, {last})"),
        _ => format!("Versions::from_bits({:#08b})", v.bits()),
    }
}

fn parse_versions(text: &str) -> Result<Versions, String> {
    let bad = || format!("cannot read versions {text:?}");
    if text == "ALL" {
        return Ok(Versions::ALL);
    }
    if let Some(bits) = text
        .strip_prefix("Versions::from_bits(0b")
        .and_then(|b| b.strip_suffix(')'))
    {
        return u8::from_str_radix(bits, 2)
            .map(Versions::from_bits)
            .map_err(|_| bad());
    }
    let (first, last) = text
        .strip_prefix("v(")
        .and_then(|t| t.strip_suffix(')'))
        .and_then(|t| t.split_once(", "))
        .ok_or_else(bad)?;
    let first: u8 = first.parse().map_err(|_| bad())?;
    let last: u8 = last.parse().map_err(|_| bad())?;
    Ok(Versions::span(first, last))
}

/// Entries keyed for sorting (a lookup key, then the rendered entry), with the versions that
/// render each; rows of one key that differ between versions sort newest first.
#[derive(Default)]
struct Merged(BTreeMap<(String, String), Versions>);

impl Merged {
    fn add(&mut self, key: String, entry: String, major: u8) {
        let v = self.0.entry((key, entry)).or_insert(Versions::span(1, 0));
        *v = v.or(Versions::span(major, major));
    }

    /// `(entry, versions)` in table order.
    fn sorted(&self) -> Vec<(&str, Versions)> {
        let mut rows: Vec<(&str, &str, Versions)> = self
            .0
            .iter()
            .map(|((k, e), v)| (k.as_str(), e.as_str(), *v))
            .collect();
        rows.sort_by(|a, b| {
            (a.0, core::cmp::Reverse(a.2.last()), a.1).cmp(&(
                b.0,
                core::cmp::Reverse(b.2.last()),
                b.1,
            ))
        });
        rows.into_iter().map(|(_, e, v)| (e, v)).collect()
    }
}

/// Renders the table from `servers`; with `every_input`, an input line no server matches is an
/// error (one server alone lacks some of them).
fn render_servers(servers: &[Rows], every_input: bool) -> Result<String, String> {
    let spellings = parse_types_input(TYPES_INPUT)?;
    let overlay = parse_overlay(NONNULL_INPUT)?;
    let mut majors = Vec::new();
    for s in servers {
        let major = s.major()?;
        if majors.contains(&major) {
            return Err(format!("two servers of PostgreSQL {major}"));
        }
        majors.push(major);
    }
    majors.sort_unstable();
    let listed: Vec<String> = majors.iter().map(ToString::to_string).collect();
    // Newest first: where rows of one name differ, the newest server's row names it.
    let mut servers: Vec<&Rows> = servers.iter().collect();
    servers.sort_by_key(|s| core::cmp::Reverse(s.major().unwrap_or(0)));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// generated by scripts/gen-catalog from the pg_catalog of PostgreSQL {} and qail-catalog/input/*.txt; do not edit",
        listed.join(", ")
    );
    out.push_str("//! The generated tables: see the crate root.\n\n");
    out.push_str("use crate::{Cast, CastContext::{Assignment, Explicit, Implicit}, Column, Function, Null::{First, Format, Maybe, Never, Strict}, Operator, Relation, Rust, Type, Versions};\n\n");
    out.push_str("/// In every supported version.\nconst ALL: Versions = Versions::ALL;\n\n/// In the majors `first..=last`.\nconst fn v(first: u8, last: u8) -> Versions {\n    Versions::span(first, last)\n}\n\n");

    // One row per type name (the newest server's) for the OID constants and the mapping.
    let mut newest: BTreeMap<&str, &Vec<String>> = BTreeMap::new();
    for s in &servers {
        for r in &s.types {
            newest.entry(col(r, 0)).or_insert(r);
        }
    }
    let types: Vec<Vec<String>> = newest.values().map(|r| (*r).clone()).collect();
    let type_names: Vec<&str> = newest.keys().copied().collect();
    for name in spellings.keys() {
        if every_input && !type_names.contains(name) {
            return Err(format!("input/types.txt: {name} is not a built-in type"));
        }
    }
    render_oids(&mut out, &types);
    let mut merged = Merged::default();
    for s in &servers {
        let major = s.major()?;
        for r in &s.types {
            merged.add(col(r, 0).to_string(), type_entry(r, &spellings), major);
        }
    }
    write_table(
        &mut out,
        "/// The built-in types, sorted by name.\npub static TYPES: &[Type] = &[\n",
        &merged,
    );
    render_mapped(&mut out, &types, &spellings);

    let mut merged = Merged::default();
    for s in &servers {
        let major = s.major()?;
        for r in &s.casts {
            let key = format!("{}\0{}", col(r, 0), col(r, 1));
            merged.add(key, cast_entry(r), major);
        }
    }
    write_table(
        &mut out,
        "/// Casts between built-in types, sorted by source and target.\npub static CASTS: &[Cast] = &[\n",
        &merged,
    );

    let mut used = Vec::new();
    let mut merged = Merged::default();
    for s in &servers {
        let major = s.major()?;
        for r in &s.functions {
            let key = format!("{}\0{}", col(r, 0), col(r, 1));
            merged.add(key, function_entry(r, &overlay, &mut used), major);
        }
    }
    write_table(
        &mut out,
        "/// The built-in functions, aggregates and window functions, sorted by name and arguments.\npub static FUNCTIONS: &[Function] = &[\n",
        &merged,
    );

    let mut merged = Merged::default();
    for s in &servers {
        let major = s.major()?;
        for r in &s.operators {
            let key = format!("{}\0{}\0{}", col(r, 0), col(r, 1), col(r, 2));
            merged.add(key, operator_entry(r, &overlay, &mut used), major);
        }
    }
    write_table(
        &mut out,
        "/// The built-in operators, sorted by name and operand types.\npub static OPERATORS: &[Operator] = &[\n",
        &merged,
    );
    if let Some(unused) = overlay.keys().find(|k| every_input && !used.contains(k)) {
        return Err(format!(
            "input/nonnull.txt: {unused} matches no built-in function or operator"
        ));
    }
    render_relations(&mut out, &servers, &type_names)?;
    Ok(out)
}

fn write_table(out: &mut String, head: &str, merged: &Merged) {
    out.push_str(head);
    for (entry, versions) in merged.sorted() {
        let _ = writeln!(
            out,
            "    {entry}, versions: {} }},",
            versions_text(versions)
        );
    }
    out.push_str("];\n\n");
}

fn col(row: &[String], i: usize) -> &str {
    row.get(i).map_or("", String::as_str)
}

fn render_oids(out: &mut String, types: &[Vec<String>]) {
    out.push_str(
        "/// OID constants of the built-in types and their arrays.\npub(crate) mod oid {\n",
    );
    for r in types.iter().filter(|r| !col(r, 0).starts_with('_')) {
        let (name, oid, array, display) = (col(r, 0), col(r, 1), col(r, 2), col(r, 6));
        let ident = name.to_uppercase();
        let _ = writeln!(
            out,
            "    /// `{name}` ({display})\n    pub const {ident}: u32 = {oid};"
        );
        if array != "0" {
            let _ = writeln!(
                out,
                "    /// `{name}[]`\n    pub const {ident}_ARRAY: u32 = {array};"
            );
        }
    }
    out.push_str("}\n\n");
}

/// The spellings and mapping of one type from `input/types.txt`.
struct Spelling<'a> {
    aliases: Vec<&'a str>,
    column_aliases: Vec<&'a str>,
    field: &'a str,
    hint: &'a str,
    feature: &'a str,
}

fn parse_types_input(text: &str) -> Result<BTreeMap<&str, Spelling<'_>>, String> {
    let mut map = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        let [name, aliases, column_aliases, field, hint, feature] = f.as_slice() else {
            return Err(format!("input/types.txt:{}: expected 6 fields", n + 1));
        };
        let aliases: Vec<&str> = aliases
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .collect();
        let column_aliases: Vec<&str> = column_aliases
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .collect();
        let prev = map.insert(
            *name,
            Spelling {
                aliases,
                column_aliases,
                field,
                hint,
                feature,
            },
        );
        if prev.is_some() {
            return Err(format!("input/types.txt:{}: {name} listed twice", n + 1));
        }
    }
    Ok(map)
}

fn str_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|a| format!("{a:?}")).collect();
    format!("&[{}]", quoted.join(", "))
}

/// A `Type { … ` entry without its versions and closing brace.
fn type_entry(r: &[String], spellings: &BTreeMap<&str, Spelling<'_>>) -> String {
    let name = col(r, 0);
    let s = spellings.get(name);
    let aliases = str_list(s.map_or(&[][..], |s| &s.aliases));
    let column_aliases = str_list(s.map_or(&[][..], |s| &s.column_aliases));
    let rust = match s {
        Some(s) if !s.hint.is_empty() => format!(
            "Some(Rust {{ field: {:?}, hint: {:?}, feature: {:?} }})",
            s.field, s.hint, s.feature
        ),
        _ => "None".to_string(),
    };
    format!(
        "Type {{ name: {name:?}, oid: {}, array_oid: {}, array_name: {:?}, category: '{}', preferred: {}, display: {:?}, range_subtype: {:?}, aliases: {aliases}, column_aliases: {column_aliases}, rust: {rust}",
        col(r, 1),
        col(r, 2),
        col(r, 3),
        col(r, 4),
        col(r, 5) == "true",
        col(r, 6),
        col(r, 7),
    )
}

fn render_mapped(
    out: &mut String,
    types: &[Vec<String>],
    spellings: &BTreeMap<&str, Spelling<'_>>,
) {
    let mapped: Vec<&str> = types
        .iter()
        .map(|r| col(r, 0))
        .filter(|name| spellings.get(name).is_some_and(|s| !s.field.is_empty()))
        .collect();
    out.push_str("/// Calls `$callback! { bool, bytea, … }` with the `typname` of every built-in type `qail!`\n/// maps to a Rust field type ([`Rust::field`](crate::Rust::field) not empty).\n#[macro_export]\nmacro_rules! mapped_types {\n");
    let _ = writeln!(
        out,
        "    ($callback:ident) => {{ $callback! {{ {} }} }};\n}}\n",
        mapped.join(", ")
    );
}

/// A `Cast { … ` entry without its versions and closing brace.
fn cast_entry(r: &[String]) -> String {
    let context = match col(r, 2) {
        "i" => "Implicit",
        "a" => "Assignment",
        _ => "Explicit",
    };
    format!(
        "Cast {{ from: {:?}, to: {:?}, context: {context}, method: '{}'",
        col(r, 0),
        col(r, 1),
        col(r, 3)
    )
}

/// `fn name(a,b)` or `op name(l,r)` → nullability letter.
fn parse_overlay(text: &str) -> Result<BTreeMap<String, char>, String> {
    let mut map = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (sig, null) = line
            .rsplit_once(' ')
            .ok_or_else(|| format!("input/nonnull.txt:{}: expected `signature S|F|N|E`", n + 1))?;
        let null = match null {
            "S" => 'S',
            "F" => 'F',
            "N" => 'N',
            "E" => 'E',
            other => {
                return Err(format!(
                    "input/nonnull.txt:{}: nullability {other} is not S, F, N or E",
                    n + 1
                ));
            }
        };
        if !(sig.starts_with("fn ") || sig.starts_with("op ")) {
            return Err(format!(
                "input/nonnull.txt:{}: expected `fn` or `op`",
                n + 1
            ));
        }
        if map.insert(sig.to_string(), null).is_some() {
            return Err(format!("input/nonnull.txt:{}: {sig} listed twice", n + 1));
        }
    }
    Ok(map)
}

fn null_variant(letter: Option<&char>) -> &'static str {
    match letter {
        Some('S') => "Strict",
        Some('F') => "First",
        Some('N') => "Never",
        Some('E') => "Format",
        _ => "Maybe",
    }
}

/// A `Function { … ` entry without its versions and closing brace; records the overlay
/// entry it uses in `used`.
fn function_entry(
    r: &[String],
    overlay: &BTreeMap<String, char>,
    used: &mut Vec<String>,
) -> String {
    let (name, args) = (col(r, 0), col(r, 1));
    let key = format!("fn {name}({args})");
    let null = null_variant(overlay.get(&key));
    if overlay.contains_key(&key) && !used.contains(&key) {
        used.push(key);
    }
    let args: Vec<&str> = args.split(',').filter(|a| !a.is_empty()).collect();
    format!(
        "Function {{ name: {name:?}, args: {}, result: {:?}, variadic: {}, set: {}, kind: '{}', defaults: {}, strict: {}, null: {null}",
        str_list(&args),
        col(r, 2),
        col(r, 3) == "true",
        col(r, 4) == "true",
        col(r, 5),
        col(r, 6),
        col(r, 7) == "true",
    )
}

/// An `Operator { … ` entry without its versions and closing brace; records the overlay
/// entry it uses in `used`.
fn operator_entry(
    r: &[String],
    overlay: &BTreeMap<String, char>,
    used: &mut Vec<String>,
) -> String {
    let (name, left, right) = (col(r, 0), col(r, 1), col(r, 2));
    let key = format!("op {name}({left},{right})");
    let null = null_variant(overlay.get(&key));
    if overlay.contains_key(&key) && !used.contains(&key) {
        used.push(key);
    }
    format!(
        "Operator {{ name: {name:?}, left: {left:?}, right: {right:?}, result: {:?}, function: {:?}, null: {null}",
        col(r, 3),
        col(r, 4),
    )
}

/// One relation of one server: its kind and its columns' entries, in attribute order.
type ServerRelation = (char, Vec<String>);

/// One relation of every server: its kind, its versions, and its columns merged across them.
type MergedRelation = (char, Versions, Vec<(String, Versions)>);

fn render_relations(
    out: &mut String,
    servers: &[&Rows],
    type_names: &[&str],
) -> Result<(), String> {
    // (schema, name) → kind, versions, columns merged across versions.
    let mut relations: BTreeMap<(String, String), MergedRelation> = BTreeMap::new();
    for s in servers {
        let major = s.major()?;
        let mut rows = s.relations.clone();
        rows.sort();
        let mut mine: BTreeMap<(String, String), ServerRelation> = BTreeMap::new();
        for r in &rows {
            let (schema, name, ty) = (col(r, 0), col(r, 1), col(r, 5));
            if !type_names.contains(&ty) {
                return Err(format!(
                    "{schema}.{name}.{}: type {ty} is not a built-in type",
                    col(r, 4)
                ));
            }
            let kind = if col(r, 2) == "v" { 'v' } else { 'r' };
            let rel = mine
                .entry((schema.to_string(), name.to_string()))
                .or_insert((kind, Vec::new()));
            rel.1.push(format!(
                "Column {{ name: {:?}, ty: {ty:?}, array: {}, not_null: {}",
                col(r, 4),
                col(r, 6) == "true",
                col(r, 7) == "true",
            ));
        }
        let one = Versions::span(major, major);
        for (key, (kind, columns)) in mine {
            let rel =
                relations
                    .entry(key.clone())
                    .or_insert((kind, Versions::span(1, 0), Vec::new()));
            if rel.0 != kind {
                return Err(format!(
                    "{}.{}: its kind changed between versions",
                    key.0, key.1
                ));
            }
            rel.1 = rel.1.or(one);
            merge_columns(&mut rel.2, &columns, one);
        }
    }
    out.push_str("/// The system catalogs and information_schema views, sorted by schema and name; columns in\n/// attribute order.\npub static RELATIONS: &[Relation] = &[\n");
    for ((schema, name), (kind, versions, columns)) in &relations {
        let _ = writeln!(
            out,
            "    Relation {{ schema: {schema:?}, name: {name:?}, kind: '{kind}', versions: {}, columns: &[",
            versions_text(*versions)
        );
        for (column, v) in columns {
            let _ = writeln!(out, "        {column}, versions: {} }},", versions_text(*v));
        }
        out.push_str("    ] },\n");
    }
    out.push_str("];\n");
    Ok(())
}

/// Merges one version's columns (in attribute order) into the columns of the versions seen
/// so far, so that each version's columns, filtered from the merged list, keep their order. A
/// column that moved between versions (`pg_attribute.attalign` in 14) is there once per
/// position.
fn merge_columns(merged: &mut Vec<(String, Versions)>, columns: &[String], version: Versions) {
    // Where the previous column of this version sits in `merged`.
    let mut at: Option<usize> = None;
    for c in columns {
        let from = at.map_or(0, |i| i + 1);
        let found = merged
            .iter()
            .skip(from)
            .position(|(m, _)| m == c)
            .map(|i| i + from);
        match found {
            Some(i) => {
                merged[i].1 = merged[i].1.or(version);
                at = Some(i);
            }
            None => {
                merged.insert(from, (c.clone(), version));
                at = Some(from);
            }
        }
    }
}
