//! The catalog document (the answers of `catalog.rs`'s queries) and its conversion into a
//! [`Snapshot`].
//!
//! Every list arrives as JSON arrays of positional values (see the SQL); OIDs come as strings
//! because `oid` has no JSON number mapping.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Deserializer};

use crate::snapshot::{
    BaseType, Cast, CastContext, Column, Command, Extension, FORMAT_VERSION, Field, ForeignKey,
    Function, Identity, Index, Operator, Relation, RelationKind, Rule, RuleAction, Snapshot,
    TypeRef, UserType, UserTypeKind, Volatility,
};

/// An OID, from a JSON string or number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Oid(u32);

impl<'de> Deserialize<'de> for Oid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Oid, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u32),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(Oid(n)),
            Raw::S(s) => s.parse().map(Oid).map_err(serde::de::Error::custom),
        }
    }
}

#[derive(Deserialize)]
struct Meta {
    server_version: String,
    search_path: Vec<String>,
    schemas: Vec<String>,
}

#[derive(Deserialize)]
struct Catalog {
    meta: Meta,
    types: Vec<RawType>,
    relations: Vec<RawRelation>,
    columns: Vec<RawColumn>,
    constraints: Vec<RawConstraint>,
    unique_indexes: Vec<(Oid, Vec<String>)>,
    /// `schema, index, table`.
    indexes: Vec<(String, String, String)>,
    /// `schema, table, rule, ev_type, is_instead, conditional, ev_action`.
    rules: Vec<(String, String, String, String, bool, bool, String)>,
    #[serde(default)]
    session_trees: Vec<SessionTree>,
    user_types: Vec<RawUserType>,
    functions: Vec<RawFunction>,
    extensions: Vec<(String, String, String)>,
    #[serde(default)]
    base_types: Vec<RawBaseType>,
    #[serde(default)]
    operators: Vec<RawOperator>,
    #[serde(default)]
    casts: Vec<(Oid, Oid, String)>,
}

/// A view's query or a row security policy: `relation, [[function oid, name]], [relation]`
/// (the functions its node tree calls and the relations it reads).
#[derive(Deserialize)]
struct SessionTree(Oid, Vec<(Oid, String)>, Vec<Oid>);

/// `schema, typname, oid, typarray, typcategory, typispreferred, extension`.
#[derive(Deserialize)]
struct RawBaseType(String, String, Oid, Oid, String, bool, Option<String>);

/// `schema, oprname, oprleft, oprright, oprresult, oprcode, extension`.
#[derive(Deserialize)]
struct RawOperator(String, String, Oid, Oid, Oid, String, Option<String>);

/// `oid, schema, typname, typelem, typcategory`.
#[derive(Deserialize)]
struct RawType(Oid, String, String, Oid, String);

/// `oid, schema, relname, relkind`.
#[derive(Deserialize)]
struct RawRelation(Oid, String, String, String);

/// `attrelid, attname, atttypid, attndims, attnotnull, default, attidentity, generated`.
#[derive(Deserialize)]
struct RawColumn(
    Oid,
    String,
    Oid,
    i32,
    bool,
    Option<String>,
    String,
    Option<String>,
);

/// `conrelid, contype, conname, columns, ref schema, ref table, ref columns, check definition`.
#[derive(Deserialize)]
struct RawConstraint(
    Oid,
    String,
    String,
    Vec<String>,
    Option<String>,
    Option<String>,
    Vec<String>,
    Option<String>,
);

/// `schema, typname, typtype, typbasetype, typndims, typnotnull, enum labels,
/// composite fields (name, type, ndims), range subtype, domain checks`.
#[derive(Deserialize)]
struct RawUserType(
    String,
    String,
    String,
    Oid,
    i32,
    bool,
    Option<Vec<String>>,
    Option<Vec<(String, Oid, i32)>>,
    Option<Oid>,
    Option<Vec<String>>,
);

/// `schema, name, proargtypes, pronargdefaults, variadic, prorettype, proretset, proisstrict,
/// provolatile, proallargtypes, proargmodes, proargnames, extension, aggregate`.
#[derive(Deserialize)]
struct RawFunction(
    String,
    String,
    Vec<Oid>,
    i32,
    bool,
    Oid,
    bool,
    bool,
    String,
    Option<Vec<Oid>>,
    Option<Vec<String>>,
    Option<Vec<String>>,
    Option<String>,
    bool,
);

/// Type OID → (schema, name, element OID, category).
struct Types(HashMap<u32, RawType>);

impl Types {
    fn type_ref(&self, oid: Oid, ndims: i32) -> Result<TypeRef, String> {
        let t = self
            .0
            .get(&oid.0)
            .ok_or_else(|| format!("type OID {} not in pg_type", oid.0))?;
        if t.4 == "A" && t.3.0 != 0 {
            let mut elem = self.type_ref(t.3, 0)?;
            elem.array_dims = u32::try_from(ndims).unwrap_or(0).max(1);
            return Ok(elem);
        }
        Ok(TypeRef {
            schema: t.1.clone(),
            name: t.2.clone(),
            oid: (oid.0 < qail_catalog::oid::FIRST_USER_OID).then_some(oid.0),
            array_dims: 0,
        })
    }
}

/// Builds a snapshot from the catalog document: a JSON object holding each query's answer
/// under its key.
pub(crate) fn build(json: &str) -> Result<Snapshot, String> {
    let cat: Catalog =
        serde_json::from_str(json).map_err(|e| format!("unexpected catalog document: {e}"))?;
    let types = Types(cat.types.into_iter().map(|t| (t.0.0, t)).collect());
    let mut snap = Snapshot {
        format_version: FORMAT_VERSION,
        server_version: Some(cat.meta.server_version),
        search_path: cat.meta.search_path,
        schemas: cat.meta.schemas,
        ..Snapshot::default()
    };
    let mut rels = relations(&types, cat.relations, cat.columns)?;
    for k in cat.constraints {
        if let Some(rel) = rels.get_mut(&k.0.0) {
            apply_constraint(rel, k);
        }
    }
    for (oid, cols) in cat.unique_indexes {
        if let Some(rel) = rels.get_mut(&oid.0)
            && !cols.is_empty()
        {
            rel.unique.push(cols);
        }
    }
    for oid in session_relations(&cat.session_trees) {
        if let Some(rel) = rels.get_mut(&oid) {
            rel.changes_session = true;
        }
    }
    snap.relations = rels.into_values().collect();
    // Note: PostgreSQL 15 added CMD_MERGE before CMD_UTILITY and CMD_NOTHING.
    let major: u32 = snap
        .server_version
        .as_deref()
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|m| m.parse().ok())
        .unwrap_or(15);
    let nothing = if major >= 15 { 7 } else { 6 };
    snap.rules = Some(
        cat.rules
            .into_iter()
            .map(
                |(schema, table, name, event, instead, conditional, action)| Rule {
                    schema,
                    table,
                    name,
                    event: command(event.parse().unwrap_or(0)),
                    instead,
                    conditional,
                    actions: rule_actions(&action, nothing),
                },
            )
            .collect(),
    );
    snap.indexes = Some(
        cat.indexes
            .into_iter()
            .map(|(schema, name, table)| Index {
                schema,
                name,
                table,
            })
            .collect(),
    );
    for t in cat.user_types {
        snap.types.push(user_type(&types, t)?);
    }
    for f in cat.functions {
        snap.functions.push(function(&types, f)?);
    }
    snap.base_types = cat
        .base_types
        .into_iter()
        .map(
            |RawBaseType(schema, name, oid, array, category, preferred, extension)| BaseType {
                schema,
                name,
                oid: oid.0,
                array_oid: array.0,
                category: category.chars().next().unwrap_or('U'),
                preferred,
                extension,
            },
        )
        .collect();
    for RawOperator(schema, name, left, right, result, function, extension) in cat.operators {
        snap.operators.push(Operator {
            schema,
            name,
            left: (left.0 != 0).then(|| types.type_ref(left, 0)).transpose()?,
            right: types.type_ref(right, 0)?,
            result: types.type_ref(result, 0)?,
            function,
            extension,
        });
    }
    for (from, to, context) in cat.casts {
        snap.casts.push(Cast {
            from: types.type_ref(from, 0)?,
            to: types.type_ref(to, 0)?,
            context: match context.as_str() {
                "i" => CastContext::Implicit,
                "a" => CastContext::Assignment,
                _ => CastContext::Explicit,
            },
        });
    }
    snap.extensions = cat
        .extensions
        .into_iter()
        .map(|(name, schema, version)| Extension {
            name,
            schema,
            version,
        })
        .collect();
    snap.sort();
    Ok(snap)
}

/// The relations reading which may change session state: a view or policy calling a function
/// that is not built in (made after `initdb`) or one of [`SESSION_FUNCTIONS`](crate::session::SESSION_FUNCTIONS),
/// and a view or policy reading such a relation, to the fixed point.
fn session_relations(trees: &[SessionTree]) -> HashSet<u32> {
    let mut marked: HashSet<u32> = trees
        .iter()
        .filter(|SessionTree(_, calls, _)| {
            calls.iter().any(|(f, name)| {
                f.0 >= qail_catalog::oid::FIRST_USER_OID
                    || crate::session::SESSION_FUNCTIONS.contains(&name.as_str())
            })
        })
        .map(|tree| tree.0.0)
        .collect();
    loop {
        let more: Vec<u32> = trees
            .iter()
            .filter(|SessionTree(rel, _, reads)| {
                !marked.contains(&rel.0) && reads.iter().any(|r| marked.contains(&r.0))
            })
            .map(|tree| tree.0.0)
            .collect();
        if more.is_empty() {
            return marked;
        }
        marked.extend(more);
    }
}

/// Relations by OID, with their columns.
fn relations(
    types: &Types,
    raw: Vec<RawRelation>,
    columns: Vec<RawColumn>,
) -> Result<HashMap<u32, Relation>, String> {
    let mut rels: HashMap<u32, Relation> = HashMap::new();
    for RawRelation(oid, schema, name, kind) in raw {
        let kind = match kind.as_str() {
            "v" => RelationKind::View,
            "m" => RelationKind::MaterializedView,
            "S" => RelationKind::Sequence,
            _ => RelationKind::Table,
        };
        let rel = Relation {
            schema,
            name,
            kind,
            columns: Vec::new(),
            primary_key: Vec::new(),
            unique: Vec::new(),
            foreign_keys: Vec::new(),
            changes_session: false,
        };
        rels.insert(oid.0, rel);
    }
    for c in columns {
        let Some(rel) = rels.get_mut(&c.0.0) else {
            continue;
        };
        rel.columns.push(Column {
            name: c.1,
            ty: types.type_ref(c.2, c.3)?,
            not_null: c.4,
            default: c.5,
            identity: match c.6.as_str() {
                "a" => Some(Identity::Always),
                "d" => Some(Identity::ByDefault),
                _ => None,
            },
            generated: c.7,
        });
    }
    Ok(rels)
}

fn apply_constraint(rel: &mut Relation, k: RawConstraint) {
    let RawConstraint(_, kind, name, columns, ref_schema, ref_table, ref_columns, check) = k;
    match kind.as_str() {
        "p" => rel.primary_key = columns,
        "u" => rel.unique.push(columns),
        "f" => rel.foreign_keys.push(ForeignKey {
            name,
            columns,
            ref_schema: ref_schema.unwrap_or_default(),
            ref_table: ref_table.unwrap_or_default(),
            ref_columns,
        }),
        _ => {
            let forced = check.as_deref().map(check_not_null).unwrap_or_default();
            crate::ddl::force_not_null(rel, &forced);
        }
    }
}

/// Columns a `CHECK (…)` definition (as `pg_get_constraintdef` prints it) forces non-null.
fn check_not_null(def: &str) -> Vec<String> {
    let body = def.trim().strip_suffix("NOT VALID").unwrap_or(def).trim();
    let Some(expr) = body.strip_prefix("CHECK") else {
        return Vec::new();
    };
    crate::ddl::parse_not_null_check(expr)
}

fn user_type(types: &Types, t: RawUserType) -> Result<UserType, String> {
    let RawUserType(schema, name, typtype, base, ndims, not_null, labels, fields, subtype, checks) =
        t;
    let kind = match typtype.as_str() {
        "e" => UserTypeKind::Enum {
            labels: labels.unwrap_or_default(),
        },
        "c" => UserTypeKind::Composite {
            fields: fields
                .unwrap_or_default()
                .into_iter()
                .map(|(name, ty, dims)| {
                    Ok(Field {
                        name,
                        ty: types.type_ref(ty, dims)?,
                    })
                })
                .collect::<Result<_, String>>()?,
        },
        "d" => {
            let checked = checks
                .unwrap_or_default()
                .iter()
                .any(|c| check_not_null(c).iter().any(|col| col == "value"));
            UserTypeKind::Domain {
                base: types.type_ref(base, ndims)?,
                not_null: not_null || checked,
            }
        }
        _ => UserTypeKind::Range {
            subtype: types.type_ref(subtype.ok_or("range without a subtype")?, 0)?,
        },
    };
    Ok(UserType { schema, name, kind })
}

fn function(types: &Types, f: RawFunction) -> Result<Function, String> {
    let RawFunction(
        schema,
        name,
        argtypes,
        ndefaults,
        variadic,
        ret,
        retset,
        strict,
        volatile,
        all,
        modes,
        names,
        extension,
        aggregate,
    ) = f;
    let args = argtypes
        .iter()
        .map(|t| types.type_ref(*t, 0))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out_columns = Vec::new();
    let names = names.unwrap_or_default();
    // Note: with OUT arguments, proargnames covers every argument; else the inputs only.
    let mut arg_names: Vec<String> = match &modes {
        Some(modes) => names
            .iter()
            .zip(modes)
            .filter(|(_, m)| matches!(m.as_str(), "i" | "b" | "v"))
            .map(|(n, _)| n.clone())
            .collect(),
        None => names.iter().take(args.len()).cloned().collect(),
    };
    if arg_names.iter().all(String::is_empty) {
        arg_names.clear();
    }
    if let (Some(all), Some(modes)) = (all, modes) {
        for (i, (ty, mode)) in all.iter().zip(&modes).enumerate() {
            if matches!(mode.as_str(), "o" | "b" | "t") {
                let name = names.get(i).cloned().unwrap_or_default();
                out_columns.push(Field {
                    name,
                    ty: types.type_ref(*ty, 0)?,
                });
            }
        }
    }
    Ok(Function {
        schema,
        name,
        args,
        arg_names,
        defaults: u32::try_from(ndefaults).unwrap_or(0),
        variadic,
        returns: types.type_ref(ret, 0)?,
        out_columns,
        returns_set: retset,
        strict,
        volatility: match volatile.as_str() {
            "i" => Volatility::Immutable,
            "s" => Volatility::Stable,
            _ => Volatility::Volatile,
        },
        extension,
        aggregate,
    })
}

/// A command type as PostgreSQL numbers it (`ev_type`, `commandType`).
fn command(n: u32) -> Command {
    match n {
        1 => Command::Select,
        2 => Command::Update,
        3 => Command::Insert,
        4 => Command::Delete,
        _ => Command::Other,
    }
}

/// The actions of a rule from its `ev_action` (a node tree: a list of `{QUERY …}`, one of
/// command type `nothing` for NOTHING): each top-level query's `commandType` and whether its
/// `returningList` has items; none for NOTHING.
fn rule_actions(tree: &str, nothing: u32) -> Vec<RuleAction> {
    let mut nothings = Vec::new();
    let b = tree.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut i) = (0_usize, 0);
    let field = |at: usize, name: &str| tree.get(at..).is_some_and(|t| t.starts_with(name));
    while i < b.len() {
        match b[i] {
            // Note: a backslash escapes the next character of a token.
            b'\\' => i += 1,
            b'{' => {
                depth += 1;
                if depth == 1 && field(i, "{QUERY ") {
                    out.push(RuleAction {
                        command: Command::Other,
                        returning: false,
                    });
                }
            }
            b'}' => depth = depth.saturating_sub(1),
            b':' if depth == 1 => {
                if let Some(action) = out.last_mut() {
                    if field(i, ":commandType ") {
                        let digits: String = tree[i + 13..]
                            .chars()
                            .take_while(char::is_ascii_digit)
                            .collect();
                        let n = digits.parse().unwrap_or(0);
                        action.command = command(n);
                        if n == nothing {
                            nothings.push(out.len() - 1);
                        }
                    } else if field(i, ":returningList ") {
                        action.returning = !field(i + 15, "<>");
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    for k in nothings.into_iter().rev() {
        out.remove(k);
    }
    out
}

#[cfg(test)]
mod rule_tests {
    use super::{Command, rule_actions};

    #[test]
    fn rule_actions_are_read_from_the_node_tree() {
        assert!(rule_actions("<>", 7).is_empty());
        assert!(rule_actions("({QUERY :commandType 7 :returningList <>})", 7).is_empty());
        let tree = "({QUERY :commandType 2 :rtable ({RANGETBLENTRY :subquery {QUERY \
                    :commandType 1 :returningList ({TARGETENTRY})}}) :returningList <>} \
                    {QUERY :commandType 3 :returningList ({TARGETENTRY :resname a\\{})})";
        let actions = rule_actions(tree, 7);
        assert_eq!(
            actions
                .iter()
                .map(|a| (a.command, a.returning))
                .collect::<Vec<_>>(),
            [(Command::Update, false), (Command::Insert, true)]
        );
    }
}
