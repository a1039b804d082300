//! PostgreSQL's built-in types, casts, functions and operators, in one table generated from
//! the `pg_catalog` (`pg_type`, `pg_cast`, `pg_proc`, `pg_operator`) of a server of every
//! supported major version ([`OLDEST`] to [`NEWEST`]) and two reviewed
//! hand-written inputs: the SQL spellings and Rust mapping of each type
//! (`input/types.txt`) and the functions and operators that never return NULL for
//! non-NULL input (`input/nonnull.txt`).
//!
//! Every entry records the major versions that have it ([`Versions`]); an entry whose
//! signature or result changed between versions is there once per variant, each with its
//! versions.
//!
//! Every part of qail that knows a built-in type's OID, name, alias or Rust type reads it from
//! here; nothing else spells them. Regenerate with `scripts/gen-catalog` (needs a running
//! PostgreSQL of every supported major version); a test compares the committed table with
//! every server it reaches.
//!
//! ```
//! let int4 = qail_catalog::type_by_name("int4").unwrap();
//! assert_eq!(int4.oid, qail_catalog::oid::INT4);
//! assert_eq!(int4.display, "integer");
//! assert_eq!(qail_catalog::alias("integer").map(|t| t.name), Some("int4"));
//! assert!(qail_catalog::functions("lower").iter().any(|f| f.args == ["text"]));
//! let uuidv7 = qail_catalog::functions("uuidv7").first().unwrap();
//! assert_eq!(uuidv7.versions.first(), Some(18));
//! assert!(!uuidv7.versions.covers(qail_catalog::Versions::span(16, 18)));
//! ```
//!
//! | feature | what it adds |
//! |---|---|
//! | `render` | the `render` module: the queries and the renderer that write the generated table |

#![no_std]

#[cfg(feature = "render")]
extern crate alloc;

#[rustfmt::skip]
mod generated;

#[cfg(feature = "render")]
pub mod render;

pub use generated::{CASTS, FUNCTIONS, OPERATORS, RELATIONS, TYPES};

mod versions;

pub use versions::{NEWEST, OLDEST, ParseError, Versions};

/// OIDs of the built-in types: one constant per type, named after its `typname` in upper case
/// (`INT4`), and `…_ARRAY` for its array type (`INT4_ARRAY`).
pub mod oid {
    pub use crate::generated::oid::*;

    /// The first OID PostgreSQL hands out to user-defined objects (`FirstNormalObjectId` in
    /// `src/include/access/transam.h`). Types at or above it (enums, domains, extension types
    /// such as `citext`) differ per database.
    pub const FIRST_USER_OID: u32 = 16384;
}

/// A built-in type (`pg_type` row in `pg_catalog`) and how qail spells and maps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Type {
    /// `pg_type.typname`: `int4`, `timestamptz`.
    pub name: &'static str,
    /// `pg_type.oid`.
    pub oid: u32,
    /// `pg_type.typarray`: the OID of the array type, 0 when there is none.
    pub array_oid: u32,
    /// The array type's `typname` (`_int4`), empty when there is none.
    pub array_name: &'static str,
    /// `pg_type.typcategory`: `N` numeric, `S` string, `D` date/time, `A` array, …
    pub category: char,
    /// `pg_type.typispreferred`: the preferred type of its category in overload resolution.
    pub preferred: bool,
    /// `format_type(oid, NULL)`: how PostgreSQL spells the type in messages (`integer`,
    /// `character varying`, `"char"`).
    pub display: &'static str,
    /// For a range type, its element type's `typname` (`pg_range.rngsubtype`); else empty.
    pub range_subtype: &'static str,
    /// Other SQL spellings that name this type anywhere a type is written (`integer`, `int`,
    /// `timestamp with time zone`), lower case.
    pub aliases: &'static [&'static str],
    /// Spellings valid only as a column type in `CREATE TABLE` / `ALTER TABLE` (`serial`,
    /// `bigserial`): they create a sequence and are not types of their own.
    pub column_aliases: &'static [&'static str],
    /// How qail maps the type to Rust, if it does.
    pub rust: Option<Rust>,
    /// The major versions that have the type.
    pub versions: Versions,
}

/// How qail maps a built-in type to Rust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rust {
    /// The type of a field `qail!` generates, when the macro maps the type: a primitive
    /// (`i32`), `String`, `Vec<u8>`, or a name under the facade's `__private::types`
    /// (`Timestamptz`). Empty when only the driver decodes it.
    pub field: &'static str,
    /// The Rust type(s) to name in a message (`chrono::DateTime<Utc> or time::OffsetDateTime`).
    pub hint: &'static str,
    /// The qail Cargo feature the mapping needs (`chrono`, `uuid`); empty when none.
    pub feature: &'static str,
}

/// How a cast may be applied (`pg_cast.castcontext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CastContext {
    /// `i`: applied implicitly in expressions.
    Implicit,
    /// `a`: applied when assigning to a column (INSERT, UPDATE), and implicitly ones.
    Assignment,
    /// `e`: only with an explicit `CAST` or `::`.
    Explicit,
}

/// A cast between built-in types (`pg_cast`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cast {
    /// Source `typname`.
    pub from: &'static str,
    /// Target `typname`.
    pub to: &'static str,
    /// Where the cast applies.
    pub context: CastContext,
    /// `pg_cast.castmethod`: `f` a function, `i` I/O conversion, `b` binary coercible.
    pub method: char,
    /// The major versions that have the cast.
    pub versions: Versions,
}

/// Whether a function or operator can return NULL, from the reviewed overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Null {
    /// NULL only when an argument is NULL.
    Strict,
    /// NULL only when the first argument is NULL (`concat_ws`, `format`).
    First,
    /// Never NULL, whatever the arguments (`count`, `concat`).
    Never,
    /// NULL when an argument is NULL or the last argument, a format, is an empty string
    /// (`to_char(timestamptz, '')`); otherwise never.
    Format,
    /// May be NULL on any input: everything the overlay does not list.
    Maybe,
}

/// A built-in function (`pg_proc` row in `pg_catalog`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    /// `proname`.
    pub name: &'static str,
    /// `proargtypes` as `typname`s (`_text` for `text[]`, pseudo-types such as `anyelement`).
    pub args: &'static [&'static str],
    /// `prorettype` as a `typname`.
    pub result: &'static str,
    /// `provariadic <> 0`: the last argument is VARIADIC (its array type, or `any`).
    pub variadic: bool,
    /// `proretset`: returns a set of rows.
    pub set: bool,
    /// `prokind`: `f` function, `a` aggregate, `w` window function.
    pub kind: char,
    /// `pronargdefaults`: how many trailing arguments have defaults.
    pub defaults: u8,
    /// `proisstrict`: NULL for any NULL argument (without being called).
    pub strict: bool,
    /// When the result can be NULL (the reviewed overlay; [`Null::Maybe`] when unlisted).
    pub null: Null,
    /// The major versions that have the function with this signature and result.
    pub versions: Versions,
}

/// A built-in operator (`pg_operator` row in `pg_catalog`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operator {
    /// `oprname`: `=`, `->>`, `||`.
    pub name: &'static str,
    /// `oprleft` as a `typname`; empty for a prefix operator.
    pub left: &'static str,
    /// `oprright` as a `typname`.
    pub right: &'static str,
    /// `oprresult` as a `typname`.
    pub result: &'static str,
    /// `oprcode`: the function that implements it.
    pub function: &'static str,
    /// When the result can be NULL (the reviewed overlay; [`Null::Maybe`] when unlisted).
    pub null: Null,
    /// The major versions that have the operator with these operands and result.
    pub versions: Versions,
}

/// A system catalog or `information_schema` view (`pg_class`, `information_schema.columns`)
/// as the server describes it: the analyzer resolves queries over them without a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relation {
    /// `pg_catalog` or `information_schema`.
    pub schema: &'static str,
    /// `pg_class.relname`.
    pub name: &'static str,
    /// `pg_class.relkind`: `r` a table, `v` a view.
    pub kind: char,
    /// The major versions that have the relation.
    pub versions: Versions,
    /// The columns of every version, in attribute order: a version's columns are those whose
    /// [`Column::versions`] contain it, in this order.
    pub columns: &'static [Column],
}

/// A column of a [`Relation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// `pg_attribute.attname`.
    pub name: &'static str,
    /// The `typname` of the column's type, or of its element when it is an array; a domain
    /// (`information_schema.sql_identifier`) is its base type (`name`), which is what the
    /// server's Describe reports.
    pub ty: &'static str,
    /// Whether the column is an array of `ty`.
    pub array: bool,
    /// `pg_attribute.attnotnull` (always false for a view's column).
    pub not_null: bool,
    /// The major versions whose relation has the column like this.
    pub versions: Versions,
}

impl Relation {
    /// The columns every major version of `target` has, in the newest one's attribute order:
    /// a column is there when each version has a column of that name and type (its NOT NULL
    /// is the newest version's).
    pub fn columns_in(&self, target: Versions) -> impl Iterator<Item = &'static Column> {
        let columns = self.columns;
        let newest = target.last().unwrap_or(NEWEST);
        columns.iter().filter(move |c| {
            c.versions.contains(newest)
                && target.majors().all(|m| {
                    columns.iter().any(|d| {
                        d.name == c.name
                            && d.ty == c.ty
                            && d.array == c.array
                            && d.versions.contains(m)
                    })
                })
        })
    }
}

/// The system catalog or `information_schema` view `schema.name`.
pub fn relation(schema: &str, name: &str) -> Option<&'static Relation> {
    RELATIONS
        .binary_search_by(|r| (r.schema, r.name).cmp(&(schema, name)))
        .ok()
        .and_then(|i| RELATIONS.get(i))
}

/// The built-in type called `name` (a `typname`: `int4`, not `integer`); when its row changed
/// between versions (`"char"` is category `S` up to 14, `Z` from 15), the newest row.
pub fn type_by_name(name: &str) -> Option<&'static Type> {
    // Note: rows of one name are sorted newest first.
    TYPES
        .get(TYPES.partition_point(|t| t.name < name))
        .filter(|t| t.name == name)
}

/// The built-in type with this OID (not an array OID: see [`type_by_array_oid`]).
pub fn type_by_oid(oid: u32) -> Option<&'static Type> {
    TYPES.iter().find(|t| t.oid == oid)
}

/// The built-in type whose array type has this OID (`INT4_ARRAY` → `int4`).
pub fn type_by_array_oid(oid: u32) -> Option<&'static Type> {
    (oid != 0)
        .then(|| TYPES.iter().find(|t| t.array_oid == oid))
        .flatten()
}

/// The built-in type an SQL spelling names, lower case and without modifiers: a `typname`
/// (`int4`) or an alias (`integer`, `character varying`). Column-only spellings (`serial`)
/// are not types: see [`column_alias`].
pub fn alias(sql_name: &str) -> Option<&'static Type> {
    // Note: aliases first: unquoted `char` is `character` (bpchar), not the `"char"` type.
    TYPES
        .iter()
        .find(|t| t.aliases.contains(&sql_name))
        .or_else(|| type_by_name(sql_name))
}

/// Like [`alias`], and also the spellings valid only as a column type (`serial` → `int4`).
pub fn column_alias(sql_name: &str) -> Option<&'static Type> {
    alias(sql_name).or_else(|| TYPES.iter().find(|t| t.column_aliases.contains(&sql_name)))
}

/// The overloads of the built-in function `name`.
pub fn functions(name: &str) -> &'static [Function] {
    let start = FUNCTIONS.partition_point(|f| f.name < name);
    let len = FUNCTIONS
        .get(start..)
        .map_or(0, |rest| rest.partition_point(|f| f.name == name));
    FUNCTIONS.get(start..start + len).unwrap_or(&[])
}

/// The built-in operators spelled `name`.
pub fn operators(name: &str) -> &'static [Operator] {
    let start = OPERATORS.partition_point(|o| o.name < name);
    let len = OPERATORS
        .get(start..)
        .map_or(0, |rest| rest.partition_point(|o| o.name == name));
    OPERATORS.get(start..start + len).unwrap_or(&[])
}

/// The cast from `from` to `to` (both `typname`s), if `pg_cast` has one.
pub fn cast(from: &str, to: &str) -> Option<&'static Cast> {
    // Note: the analyzer asks for casts once per overload candidate and argument.
    CASTS
        .get(CASTS.partition_point(|c| (c.from, c.to) < (from, to)))
        .filter(|c| (c.from, c.to) == (from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_for_lookup() {
        assert!(TYPES.windows(2).all(|w| w[0].name <= w[1].name));
        assert!(FUNCTIONS.windows(2).all(|w| w[0].name <= w[1].name));
        assert!(OPERATORS.windows(2).all(|w| w[0].name <= w[1].name));
        assert!(
            RELATIONS
                .windows(2)
                .all(|w| (w[0].schema, w[0].name) < (w[1].schema, w[1].name))
        );
        assert!(
            CASTS
                .windows(2)
                .all(|w| (w[0].from, w[0].to) <= (w[1].from, w[1].to))
        );
    }

    #[test]
    fn entries_record_their_versions() {
        let lower = functions("lower").iter().find(|f| f.args == ["text"]);
        assert_eq!(lower.map(|f| f.versions), Some(Versions::ALL));
        let any_value = functions("any_value");
        assert!(
            any_value
                .iter()
                .all(|f| f.versions == Versions::span(16, NEWEST))
        );
        assert_eq!(
            functions("uuidv7").first().map(|f| f.versions.first()),
            Some(Some(18))
        );
        let random2 = functions("random")
            .iter()
            .find(|f| f.args == ["int4", "int4"]);
        assert_eq!(random2.map(|f| f.versions.first()), Some(Some(17)));
        let multirange = type_by_name("int4multirange").expect("a built-in type");
        assert_eq!(multirange.versions, Versions::span(14, NEWEST));
        assert_eq!(type_by_name("char").map(|t| t.category), Some('Z'));
        let checkpointer = relation("pg_catalog", "pg_stat_checkpointer");
        assert_eq!(checkpointer.map(|r| r.versions.first()), Some(Some(17)));
        let class = relation("pg_catalog", "pg_class").expect("pg_class");
        assert!(class.columns_in(Versions::ALL).any(|c| c.name == "relname"));
    }

    #[test]
    fn lookups() {
        let int4 = type_by_name("int4").expect("int4 is built in");
        assert_eq!(int4.oid, oid::INT4);
        assert_eq!(int4.array_oid, oid::INT4_ARRAY);
        assert_eq!(int4.array_name, "_int4");
        assert_eq!(type_by_oid(oid::TEXT).map(|t| t.name), Some("text"));
        assert_eq!(
            type_by_array_oid(oid::JSONB_ARRAY).map(|t| t.name),
            Some("jsonb")
        );
        assert_eq!(type_by_array_oid(0), None);
        assert_eq!(
            alias("timestamp with time zone").map(|t| t.name),
            Some("timestamptz")
        );
        assert_eq!(alias("serial"), None, "serial is not a type");
        assert_eq!(column_alias("serial").map(|t| t.name), Some("int4"));
        assert_eq!(alias("mood"), None);
        assert!(functions("lower").len() >= 2);
        assert!(functions("no_such_function").is_empty());
        assert!(
            operators("->>")
                .iter()
                .any(|o| o.left == "jsonb" && o.right == "text")
        );
        assert_eq!(
            cast("int4", "int8").map(|c| c.context),
            Some(CastContext::Implicit)
        );
    }

    #[test]
    fn overlay_marks_functions_and_unlisted_ones_may_be_null() {
        let lower = functions("lower").iter().find(|f| f.args == ["text"]);
        assert_eq!(lower.map(|f| f.null), Some(Null::Strict));
        let m = functions("regexp_match")
            .iter()
            .find(|f| f.args == ["text", "text"]);
        assert_eq!(m.map(|f| f.null), Some(Null::Maybe));
    }
}
