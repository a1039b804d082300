//! The schema snapshot: the model and its file, `qail.schema.json`.
//!
//! The snapshot holds what the analyzer needs to type queries offline. It is written sorted
//! and stable (the same database gives a byte-identical file) so it reviews well in a diff.
//! [`discover`] finds the file the way the `qail!` macro and `cargo qail analyze` do.

use serde::{Deserialize, Serialize};

mod file;
mod find;
mod lookup;

pub use file::FileError;
pub use find::{DiscoverError, ENV_VAR, FILE_NAME, discover};

/// The snapshot file format version this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A database schema as seen by the analyzer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Snapshot {
    /// File format version ([`FORMAT_VERSION`]).
    pub format_version: u32,
    /// `server_version` of the server it was pulled from; `None` when built from DDL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The PostgreSQL major versions the project's queries must run on, as the project
    /// declares them: `"15..=18"`, `"16"`, `"16.."`. Written by hand and kept by
    /// `cargo qail schema pull` and `schema from-sql`; see [`Snapshot::target`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres: Option<String>,
    /// The effective search_path, in order (`$user` resolved or dropped).
    pub search_path: Vec<String>,
    /// Schemas (namespaces) covered by the snapshot, sorted by name.
    pub schemas: Vec<String>,
    /// Tables, views and materialized views, sorted by (schema, name).
    pub relations: Vec<Relation>,
    /// User-defined types (enums, composites, domains, ranges), sorted by (schema, name).
    pub types: Vec<UserType>,
    /// User functions, sorted by (schema, name, argument types).
    pub functions: Vec<Function>,
    /// Installed extensions, sorted by name.
    pub extensions: Vec<Extension>,
    /// Base types that are not built in (`citext`, `hstore`, `ltree`, installed by
    /// extensions), sorted by (schema, name). Absent from snapshots written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_types: Vec<BaseType>,
    /// Operators of the snapshot's schemas (citext's `=` and `~~`, pg_trgm's `%` and `<->`,
    /// hstore's `->`), sorted by (schema, name, left, right).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operators: Vec<Operator>,
    /// Casts from or to a type of the snapshot's schemas (`citext` → `text`, implicit),
    /// sorted by (from, to).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub casts: Vec<Cast>,
    /// Where relations and columns are defined, when the snapshot was built from DDL files
    /// (`cargo qail schema from-sql`); empty for a snapshot pulled from a database. Sorted by
    /// (schema, table, column), a relation before its columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Source>,
    /// The indexes of the snapshot's schemas, sorted by (schema, name), when known: a pull
    /// records them; `None` for a snapshot built from DDL (which does not follow index names)
    /// or written before they were recorded. With every other relation kind the snapshot
    /// holds, they make it know every name a `'name'::regclass` literal may give.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexes: Option<Vec<Index>>,
    /// The rules (`CREATE RULE`) on the snapshot's relations, sorted by (schema, table, name),
    /// when known: a pull records them; `None` for a snapshot built from DDL or written before
    /// they were recorded. A rule can turn a statement into others, which changes what the
    /// server accepts and what it describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<Rule>>,
}

/// A rule on a relation (the `_RETURN` rules of views aside).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// The relation's schema.
    pub schema: String,
    /// The relation the rule is on.
    pub table: String,
    /// The rule's name.
    pub name: String,
    /// The statement it fires on.
    pub event: Command,
    /// `DO INSTEAD` (else `DO ALSO`).
    pub instead: bool,
    /// It has a `WHERE` condition.
    pub conditional: bool,
    /// Its actions, in order (none for `DO INSTEAD NOTHING`).
    pub actions: Vec<RuleAction>,
}

/// An action of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleAction {
    /// The statement it runs.
    pub command: Command,
    /// It has a RETURNING list.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub returning: bool,
}

/// A statement kind a rule fires on or runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// SELECT.
    Select,
    /// INSERT.
    Insert,
    /// UPDATE.
    Update,
    /// DELETE.
    Delete,
    /// Anything else (NOTIFY, …).
    Other,
}

/// An index (which a `regclass` value may name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// Schema name (its table's).
    pub schema: String,
    /// Index name.
    pub name: String,
    /// The table (or materialized view) it indexes.
    pub table: String,
}

/// Where a relation or one of its columns is defined in a DDL file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Schema of the relation.
    pub schema: String,
    /// The relation's name.
    pub table: String,
    /// The column's name; `None` for the relation itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// The DDL file, relative to the snapshot file's directory when it is below it
    /// (otherwise as it was given).
    pub file: String,
    /// 1-based line of the definition: the `CREATE` statement's first line for a relation,
    /// the line naming the column for a column.
    pub line: u64,
}

/// The target when neither a range nor a server version says otherwise: the major versions the
/// PostgreSQL project supports as this release is made (14 reached its end of life in
/// November 2026).
pub const DEFAULT_TARGET: qail_catalog::Versions = qail_catalog::Versions::span(15, 18);

impl Snapshot {
    /// The PostgreSQL major versions queries are checked for: the declared [`postgres`]
    /// range; else the major of the [`server_version`] the snapshot was pulled from (clamped
    /// to the supported 13 to 18); else [`DEFAULT_TARGET`]. `Err` explains a declared range
    /// that does not parse.
    ///
    /// [`postgres`]: Snapshot::postgres
    /// [`server_version`]: Snapshot::server_version
    pub fn target(&self) -> Result<qail_catalog::Versions, String> {
        use qail_catalog::{NEWEST, OLDEST, Versions};
        if let Some(range) = &self.postgres {
            return Versions::parse(range)
                .map_err(|e| format!("qail.schema.json: \"postgres\": {range:?}: {e}"));
        }
        let major = self.server_version.as_deref().and_then(|v| {
            let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        });
        Ok(match major {
            Some(m) => {
                let m =
                    u8::try_from(m.clamp(u32::from(OLDEST), u32::from(NEWEST))).unwrap_or(NEWEST);
                Versions::span(m, m)
            }
            None => DEFAULT_TARGET,
        })
    }

    /// An empty snapshot of the current [`FORMAT_VERSION`] with search_path `public`.
    pub fn new() -> Snapshot {
        Snapshot {
            format_version: FORMAT_VERSION,
            search_path: vec!["public".to_owned()],
            ..Snapshot::default()
        }
    }
}

/// A reference to a PostgreSQL type.
///
/// `name` is the catalog name (`pg_type.typname`) of the element type: `int4`, `varchar`,
/// `timestamptz`, `mood`. Arrays are the element type with `array_dims` ≥ 1.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TypeRef {
    /// Schema of the type: `pg_catalog` for built-ins.
    pub schema: String,
    /// `pg_type.typname` of the element type.
    pub name: String,
    /// The element type's OID, for built-in types only (user type OIDs differ per database).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oid: Option<u32>,
    /// Array dimensions; 0 for a scalar.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub array_dims: u32,
}

impl TypeRef {
    /// Whether this is the element type `citext` of the extension of that name (installed in
    /// any schema): a base type whose binary form is text, which qail reads and sends as text.
    /// The one place that recognizes it; the analyzer's operators and the Rust type choice ask.
    pub fn is_citext(&self) -> bool {
        self.schema != "pg_catalog" && self.name == "citext"
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The kind of a relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelationKind {
    /// An ordinary or partitioned table.
    Table,
    /// A view.
    View,
    /// A materialized view.
    MaterializedView,
    /// A sequence: one row of `last_value`, `log_cnt` and `is_called`
    /// (`SELECT last_value FROM seq`).
    Sequence,
}

impl RelationKind {
    /// The kind as SQL names it: `table`, `view`, `materialized view`, `sequence`.
    pub fn sql_name(self) -> &'static str {
        match self {
            RelationKind::Table => "table",
            RelationKind::View => "view",
            RelationKind::MaterializedView => "materialized view",
            RelationKind::Sequence => "sequence",
        }
    }
}

/// A table, view, materialized view or sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relation {
    /// Schema name.
    pub schema: String,
    /// Relation name.
    pub name: String,
    /// What kind of relation this is.
    pub kind: RelationKind,
    /// Columns in attribute order (dropped columns omitted).
    pub columns: Vec<Column>,
    /// Primary key column names, in key order; empty when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub primary_key: Vec<String>,
    /// Unique constraints (and unique indexes without predicate), each a list of columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unique: Vec<Vec<String>>,
    /// Foreign keys, sorted by constraint name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_keys: Vec<ForeignKey>,
    /// Whether reading it may change session state: a view whose query, or a table whose row
    /// security policy, calls a function that is not built in or one of
    /// [`SESSION_FUNCTIONS`](crate::session::SESSION_FUNCTIONS), itself or through another
    /// such view. A statement that reads it is marked as one a pool must reset the session
    /// after.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub changes_session: bool,
}

/// A column of a relation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Column type.
    #[serde(rename = "type")]
    pub ty: TypeRef,
    /// NOT NULL (declared, primary key, or forced by a `CHECK (col IS NOT NULL)`).
    pub not_null: bool,
    /// Default expression as PostgreSQL prints it (`pg_get_expr`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Identity column kind, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// Generation expression of a `GENERATED ALWAYS AS (…) STORED` column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
}

/// `GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    /// `GENERATED ALWAYS AS IDENTITY`.
    Always,
    /// `GENERATED BY DEFAULT AS IDENTITY`.
    ByDefault,
}

/// A foreign key constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKey {
    /// Constraint name.
    pub name: String,
    /// Referencing columns of this relation.
    pub columns: Vec<String>,
    /// Referenced relation's schema.
    pub ref_schema: String,
    /// Referenced relation's name.
    pub ref_table: String,
    /// Referenced columns, in the same order.
    pub ref_columns: Vec<String>,
}

/// A user-defined type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserType {
    /// Schema name.
    pub schema: String,
    /// Type name (`pg_type.typname`).
    pub name: String,
    /// What the type is.
    #[serde(flatten)]
    pub kind: UserTypeKind,
}

/// The definition of a user-defined type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UserTypeKind {
    /// `CREATE TYPE … AS ENUM`: labels in sort order.
    Enum {
        /// Labels, in `enumsortorder`.
        labels: Vec<String>,
    },
    /// `CREATE TYPE … AS (…)`: fields in order.
    Composite {
        /// Fields in attribute order.
        fields: Vec<Field>,
    },
    /// `CREATE DOMAIN`.
    Domain {
        /// The base type.
        base: TypeRef,
        /// `NOT NULL` on the domain.
        not_null: bool,
    },
    /// `CREATE TYPE … AS RANGE`.
    Range {
        /// The subtype.
        subtype: TypeRef,
    },
}

/// A field of a composite type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// Field name.
    pub name: String,
    /// Field type.
    #[serde(rename = "type")]
    pub ty: TypeRef,
}

/// Function volatility.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Volatility {
    /// `IMMUTABLE`.
    Immutable,
    /// `STABLE`.
    Stable,
    /// `VOLATILE`.
    Volatile,
}

/// A user function's signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    /// Schema name.
    pub schema: String,
    /// Function name.
    pub name: String,
    /// Input argument types, in order (OUT arguments excluded).
    pub args: Vec<TypeRef>,
    /// Input argument names, in the order of `args` (`""` for an unnamed one); empty when
    /// none is named. Calls in named notation (`f(a => 1)`) use them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arg_names: Vec<String>,
    /// Number of trailing arguments that have defaults.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub defaults: u32,
    /// Whether the last argument is VARIADIC.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub variadic: bool,
    /// Return type (`record` for OUT-parameter or TABLE functions; see `out_columns`).
    pub returns: TypeRef,
    /// Columns of `RETURNS TABLE (…)` / OUT parameters, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_columns: Vec<Field>,
    /// `RETURNS SETOF …` / `RETURNS TABLE`.
    pub returns_set: bool,
    /// `STRICT` (returns NULL on NULL input).
    pub strict: bool,
    /// Volatility.
    pub volatility: Volatility,
    /// The extension that installed it (`citext`, `pg_trgm`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<String>,
    /// An aggregate (`prokind = 'a'`, pulled for extensions: citext's `min(citext)` and
    /// `max(citext)`). NULL when it has no input rows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aggregate: bool,
}

/// A base type that is not built in: its `pg_type` row as the analyzer needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseType {
    /// Schema name.
    pub schema: String,
    /// `pg_type.typname`.
    pub name: String,
    /// `pg_type.oid` in the database it was pulled from (it differs per database).
    pub oid: u32,
    /// `pg_type.typarray`: the OID of its array type, 0 when there is none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub array_oid: u32,
    /// `pg_type.typcategory`: `S` string (citext), `U` user-defined (hstore, ltree), …
    pub category: char,
    /// `pg_type.typispreferred`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preferred: bool,
    /// The extension that installed it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<String>,
}

/// An operator defined outside `pg_catalog` (`pg_operator` row).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operator {
    /// Schema name.
    pub schema: String,
    /// `oprname`: `=`, `~~`, `%`, `->`.
    pub name: String,
    /// Left operand type; `None` for a prefix operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<TypeRef>,
    /// Right operand type.
    pub right: TypeRef,
    /// Result type.
    pub result: TypeRef,
    /// The function that implements it (`oprcode`), schema-qualified when not visible.
    pub function: String,
    /// The extension that installed it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<String>,
}

/// Where a cast applies (`pg_cast.castcontext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CastContext {
    /// Applied implicitly in expressions.
    Implicit,
    /// Applied when assigning to a column, and where implicit ones are.
    Assignment,
    /// Only with an explicit `CAST` or `::`.
    Explicit,
}

/// A cast from or to a type that is not built in (`pg_cast` row).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cast {
    /// Source type.
    pub from: TypeRef,
    /// Target type.
    pub to: TypeRef,
    /// Where it applies.
    pub context: CastContext,
}

/// An installed extension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extension {
    /// Extension name.
    pub name: String,
    /// Schema it was installed into.
    pub schema: String,
    /// Installed version.
    pub version: String,
}
