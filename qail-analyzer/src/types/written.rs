//! sqlparser's `DataType` (a type as written in SQL) → a snapshot `TypeRef`.

use sqlparser::ast::{ArrayElemTypeDef, DataType, GeometricTypeKind, ObjectName, TimezoneInfo};

use crate::Snapshot;
use crate::ctx::Ctx;
use crate::diag::closest;
use crate::scope::{norm, parts};
use crate::types::{array_of, builtin};
use qail_schema::snapshot::TypeRef;

/// Resolves a written type; reports and returns `None` when it does not exist.
pub(crate) fn resolve(cx: &mut Ctx, dt: &DataType) -> Option<TypeRef> {
    let name = match dt {
        DataType::Array(ArrayElemTypeDef::AngleBracket(inner))
        | DataType::Array(ArrayElemTypeDef::SquareBracket(inner, _))
        | DataType::Array(ArrayElemTypeDef::Parenthesis(inner)) => {
            return resolve(cx, inner).map(|t| array_of(&t));
        }
        DataType::Custom(name, _) => return custom(cx, name),
        other => simple(other),
    };
    match name {
        Some(n) => Some(builtin(n)),
        None => {
            cx.error(
                0..cx.sql.len(),
                format!("type {dt} is not a PostgreSQL type the analyzer knows"),
                Some("cast to a PostgreSQL type such as text, int4, numeric, timestamptz".into()),
            );
            None
        }
    }
}

fn simple(dt: &DataType) -> Option<&'static str> {
    Some(match dt {
        DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => "int4",
        DataType::SmallInt(_) | DataType::Int2(_) => "int2",
        DataType::BigInt(_) | DataType::Int8(_) => "int8",
        DataType::Real | DataType::Float4 => "float4",
        DataType::DoublePrecision | DataType::Float8 | DataType::Double(_) => "float8",
        DataType::Float(info) => match info {
            sqlparser::ast::ExactNumberInfo::Precision(p)
            | sqlparser::ast::ExactNumberInfo::PrecisionAndScale(p, _)
                if *p <= 24 =>
            {
                "float4"
            }
            _ => "float8",
        },
        DataType::Numeric(_) | DataType::Decimal(_) | DataType::Dec(_) => "numeric",
        DataType::Varchar(_) | DataType::CharacterVarying(_) | DataType::CharVarying(_) => {
            "varchar"
        }
        DataType::Char(_) | DataType::Character(_) => "bpchar",
        DataType::Text => "text",
        DataType::GeometricType(kind) => match kind {
            GeometricTypeKind::Point => "point",
            GeometricTypeKind::Line => "line",
            GeometricTypeKind::LineSegment => "lseg",
            GeometricTypeKind::GeometricBox => "box",
            GeometricTypeKind::GeometricPath => "path",
            GeometricTypeKind::Polygon => "polygon",
            GeometricTypeKind::Circle => "circle",
        },
        DataType::Bool | DataType::Boolean => "bool",
        DataType::Date => "date",
        DataType::Time(_, TimezoneInfo::Tz | TimezoneInfo::WithTimeZone) => "timetz",
        DataType::Time(..) => "time",
        DataType::Timestamp(_, TimezoneInfo::Tz | TimezoneInfo::WithTimeZone) => "timestamptz",
        DataType::Timestamp(..) => "timestamp",
        DataType::Interval { .. } => "interval",
        DataType::JSON => "json",
        DataType::JSONB => "jsonb",
        DataType::Uuid => "uuid",
        DataType::Bytea => "bytea",
        DataType::Regclass => "regclass",
        DataType::Bit(_) => "bit",
        DataType::BitVarying(_) | DataType::VarBit(_) => "varbit",
        _ => return None,
    })
}

/// A built-in or snapshot type by name, in `schema` or along the search_path; `quoted` when the
/// name was written in double quotes.
pub(crate) fn lookup(
    snap: &Snapshot,
    schema: Option<&str>,
    tname: &str,
    quoted: bool,
) -> Option<TypeRef> {
    // Note: `serial` and its kin are column types only (qail_catalog::column_alias), not casts.
    // Note: a quoted name is a `typname` only (`"char"` is the one-byte type, unquoted `char`
    // is `character`).
    let builtin_type = if quoted {
        qail_catalog::type_by_name(tname)
    } else {
        qail_catalog::alias(tname)
    };
    if schema.is_none_or(|s| s == "pg_catalog")
        && let Some(t) = builtin_type
    {
        return Some(builtin(t.name));
    }
    // Note: user types (enums, composites, domains, ranges), then base types of extensions
    // (`citext`).
    let named = |s: &str| -> Option<(String, String)> {
        snap.types
            .iter()
            .find(|t| t.schema == s && t.name == tname)
            .map(|t| (t.schema.clone(), t.name.clone()))
            .or_else(|| {
                snap.base_types
                    .iter()
                    .find(|t| t.schema == s && t.name == tname)
                    .map(|t| (t.schema.clone(), t.name.clone()))
            })
    };
    let found = match schema {
        Some(s) => named(s),
        None => snap.effective_search_path().find_map(named),
    };
    found.map(|(schema, name)| TypeRef {
        schema,
        name,
        oid: None,
        array_dims: 0,
    })
}

fn custom(cx: &mut Ctx, name: &ObjectName) -> Option<TypeRef> {
    let ids = parts(name);
    let names: Vec<String> = ids.iter().map(|i| norm(i)).collect();
    let (schema, tname) = match names.as_slice() {
        [t] => (None, t.as_str()),
        [s, t] => (Some(s.as_str()), t.as_str()),
        _ => (None, ""),
    };
    let quoted = ids.last().is_some_and(|i| i.quote_style.is_some());
    let builtin_type = if quoted {
        qail_catalog::type_by_name(tname)
    } else {
        qail_catalog::alias(tname)
    };
    // Note: a built-in type only other PostgreSQL versions have (multiranges before 14).
    if schema.is_none_or(|s| s == "pg_catalog")
        && let Some(t) = builtin_type
    {
        let have = qail_catalog::TYPES
            .iter()
            .filter(|x| x.name == t.name)
            .fold(qail_catalog::Versions::span(1, 0), |v, x| v.or(x.versions));
        if !have.covers(cx.target) {
            let range = match (ids.first(), ids.last()) {
                (Some(f), Some(l)) => cx.ident_range(f).start..cx.ident_range(l).end,
                _ => 0..cx.sql.len(),
            };
            let (message, hint) =
                crate::diag::version_gap(&format!("type {}", t.display), have, cx.target);
            cx.error(range, message, Some(hint));
            return None;
        }
    }
    if let Some(t) = lookup(cx.snap, schema, tname, quoted) {
        return Some(t);
    }
    // Note: `_name` is the array type of `name` (pg_type's own spelling, `'{1}'::_int4`).
    if let Some(elem) = tname.strip_prefix('_')
        && let Some(t) = lookup(cx.snap, schema, elem, quoted).filter(|t| t.array_dims == 0)
    {
        return Some(TypeRef { array_dims: 1, ..t });
    }
    let snap = cx.snap;
    let range = match (ids.first(), ids.last()) {
        (Some(f), Some(l)) => cx.ident_range(f).start..cx.ident_range(l).end,
        _ => 0..cx.sql.len(),
    };
    let candidates = qail_catalog::TYPES
        .iter()
        .flat_map(|t| std::iter::once(t.name).chain(t.aliases.iter().copied()))
        .chain(snap.types.iter().map(|t| t.name.as_str()));
    let hint = if quoted && qail_catalog::alias(tname).is_some() {
        format!("`{tname}` is a type name only unquoted: write it without the double quotes")
    } else {
        closest(tname, candidates).map_or_else(
            || {
                "check the type name, or run `cargo qail schema pull` if the type is new"
                    .to_string()
            },
            |c| format!("did you mean \"{c}\"?"),
        )
    };
    cx.error(
        range,
        format!("type \"{}\" does not exist", names.join(".")),
        Some(hint),
    );
    None
}
