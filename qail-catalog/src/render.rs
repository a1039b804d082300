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

/// The rows of every query, in the order [`VERSION_QUERY`], [`TYPES_QUERY`], [`CASTS_QUERY`],
/// [`FUNCTIONS_QUERY`], [`OPERATORS_QUERY`], [`RELATIONS_QUERY`]; each row one string per
/// column.
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

/// Renders `src/generated.rs` from the server's rows and the reviewed inputs. Deterministic:
/// rows are sorted here, whatever order the server returned them in. Fails on an input line
/// that names a type, function or operator the server does not have.
pub fn render(rows: &Rows) -> Result<String, String> {
    let spellings = parse_types_input(TYPES_INPUT)?;
    let overlay = parse_overlay(NONNULL_INPUT)?;
    let version = rows
        .version
        .first()
        .and_then(|r| r.first())
        .ok_or("no server version")?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// generated by scripts/gen-catalog from PostgreSQL {version}'s pg_catalog and qail-catalog/input/*.txt; do not edit"
    );
    out.push_str("//! The generated tables: see the crate root.\n\n");
    out.push_str("use crate::{Cast, CastContext::{Assignment, Explicit, Implicit}, Column, Function, Null::{First, Format, Maybe, Never, Strict}, Operator, Relation, Rust, Type};\n\n");

    let mut types = rows.types.clone();
    types.sort();
    let type_names: Vec<&str> = types.iter().map(|r| col(r, 0)).collect();
    for name in spellings.keys() {
        if !type_names.contains(name) {
            return Err(format!("input/types.txt: {name} is not a built-in type"));
        }
    }
    render_oids(&mut out, &types);
    render_types(&mut out, &types, &spellings);
    render_mapped(&mut out, &types, &spellings);
    render_casts(&mut out, &rows.casts);
    let mut used = Vec::new();
    render_functions(&mut out, &rows.functions, &overlay, &mut used);
    render_operators(&mut out, &rows.operators, &overlay, &mut used);
    if let Some(unused) = overlay.keys().find(|k| !used.contains(k)) {
        return Err(format!(
            "input/nonnull.txt: {unused} matches no built-in function or operator"
        ));
    }
    render_relations(&mut out, &rows.relations, &type_names)?;
    Ok(out)
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

fn render_types(out: &mut String, types: &[Vec<String>], spellings: &BTreeMap<&str, Spelling<'_>>) {
    out.push_str("/// The built-in types, sorted by name.\npub static TYPES: &[Type] = &[\n");
    for r in types {
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
        let _ = writeln!(
            out,
            "    Type {{ name: {name:?}, oid: {}, array_oid: {}, array_name: {:?}, category: '{}', preferred: {}, display: {:?}, range_subtype: {:?}, aliases: {aliases}, column_aliases: {column_aliases}, rust: {rust} }},",
            col(r, 1),
            col(r, 2),
            col(r, 3),
            col(r, 4),
            col(r, 5) == "true",
            col(r, 6),
            col(r, 7),
        );
    }
    out.push_str("];\n\n");
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

fn render_casts(out: &mut String, casts: &[Vec<String>]) {
    let mut casts = casts.to_vec();
    casts.sort();
    out.push_str("/// Casts between built-in types, sorted by source and target.\npub static CASTS: &[Cast] = &[\n");
    for r in &casts {
        let context = match col(r, 2) {
            "i" => "Implicit",
            "a" => "Assignment",
            _ => "Explicit",
        };
        let _ = writeln!(
            out,
            "    Cast {{ from: {:?}, to: {:?}, context: {context}, method: '{}' }},",
            col(r, 0),
            col(r, 1),
            col(r, 3)
        );
    }
    out.push_str("];\n\n");
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

fn render_functions(
    out: &mut String,
    functions: &[Vec<String>],
    overlay: &BTreeMap<String, char>,
    used: &mut Vec<String>,
) {
    let mut functions = functions.to_vec();
    functions.sort();
    out.push_str("/// The built-in functions, aggregates and window functions, sorted by name and arguments.\npub static FUNCTIONS: &[Function] = &[\n");
    for r in &functions {
        let (name, args) = (col(r, 0), col(r, 1));
        let key = format!("fn {name}({args})");
        let null = null_variant(overlay.get(&key));
        if overlay.contains_key(&key) {
            used.push(key);
        }
        let args: Vec<&str> = args.split(',').filter(|a| !a.is_empty()).collect();
        let _ = writeln!(
            out,
            "    Function {{ name: {name:?}, args: {}, result: {:?}, variadic: {}, set: {}, kind: '{}', defaults: {}, strict: {}, null: {null} }},",
            str_list(&args),
            col(r, 2),
            col(r, 3) == "true",
            col(r, 4) == "true",
            col(r, 5),
            col(r, 6),
            col(r, 7) == "true",
        );
    }
    out.push_str("];\n\n");
}

fn render_operators(
    out: &mut String,
    operators: &[Vec<String>],
    overlay: &BTreeMap<String, char>,
    used: &mut Vec<String>,
) {
    let mut operators = operators.to_vec();
    operators.sort();
    out.push_str("/// The built-in operators, sorted by name and operand types.\npub static OPERATORS: &[Operator] = &[\n");
    for r in &operators {
        let (name, left, right) = (col(r, 0), col(r, 1), col(r, 2));
        let key = format!("op {name}({left},{right})");
        let null = null_variant(overlay.get(&key));
        if overlay.contains_key(&key) {
            used.push(key);
        }
        let _ = writeln!(
            out,
            "    Operator {{ name: {name:?}, left: {left:?}, right: {right:?}, result: {:?}, function: {:?}, null: {null} }},",
            col(r, 3),
            col(r, 4),
        );
    }
    out.push_str("];\n");
}

fn render_relations(
    out: &mut String,
    relations: &[Vec<String>],
    type_names: &[&str],
) -> Result<(), String> {
    let mut rows = relations.to_vec();
    rows.sort();
    out.push_str("\n/// The system catalogs and information_schema views, sorted by schema and name; columns in\n/// attribute order.\npub static RELATIONS: &[Relation] = &[\n");
    let mut current: Option<(&str, &str)> = None;
    for r in &rows {
        let (schema, name, ty) = (col(r, 0), col(r, 1), col(r, 5));
        if !type_names.contains(&ty) {
            return Err(format!(
                "{schema}.{name}.{}: type {ty} is not a built-in type",
                col(r, 4)
            ));
        }
        if current != Some((schema, name)) {
            if current.is_some() {
                out.push_str("    ] },\n");
            }
            current = Some((schema, name));
            let kind = if col(r, 2) == "v" { 'v' } else { 'r' };
            let _ = writeln!(
                out,
                "    Relation {{ schema: {schema:?}, name: {name:?}, kind: '{kind}', columns: &["
            );
        }
        let _ = writeln!(
            out,
            "        Column {{ name: {:?}, ty: {ty:?}, array: {}, not_null: {} }},",
            col(r, 4),
            col(r, 6) == "true",
            col(r, 7) == "true",
        );
    }
    if current.is_some() {
        out.push_str("    ] },\n");
    }
    out.push_str("];\n");
    Ok(())
}
