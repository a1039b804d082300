//! Names and types: identifier folding, name resolution through the search_path, and SQL type
//! spellings → catalog type references.

use sqlparser::ast::{
    ArrayElemTypeDef, DataType, ExactNumberInfo, GeometricTypeKind, Ident, ObjectName,
    ObjectNamePart, TimezoneInfo,
};

use super::Importer;
use crate::builtin;
use crate::snapshot::TypeRef;

/// The longest identifier PostgreSQL keeps (NAMEDATALEN - 1 bytes).
const MAX_IDENT: usize = 63;

/// The identifier as PostgreSQL stores it: unquoted names are folded to lower case.
pub(crate) fn ident(i: &Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// `[schema.]name` of an object name (a database part, if any, is ignored).
pub(crate) fn split_name(n: &ObjectName) -> Result<(Option<String>, String), String> {
    let parts: Vec<String> =
        n.0.iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(i) => Ok(ident(i)),
                ObjectNamePart::Function(_) => Err(format!("unsupported object name {n}")),
            })
            .collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [name] => Ok((None, name.clone())),
        [.., schema, name] => Ok((Some(schema.clone()), name.clone())),
        [] => Err("empty object name".to_owned()),
    }
}

/// A value of `SET search_path`, printed by sqlparser, without its quotes.
pub(crate) fn unquote_value(s: &str) -> String {
    let t = s.trim();
    for q in ['\'', '"'] {
        if let Some(inner) = t.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
            return inner.to_owned();
        }
    }
    t.to_lowercase()
}

/// PostgreSQL's `makeObjectName`: `name1_name2_label`, shortening the longer of the two names
/// until the whole fits in 63 bytes.
pub(crate) fn object_name(name1: &str, name2: &str, label: &str) -> String {
    let mut a: Vec<char> = name1.chars().collect();
    let mut b: Vec<char> = name2.chars().collect();
    let overhead = label.len() + 1 + usize::from(!b.is_empty());
    let avail = MAX_IDENT.saturating_sub(overhead);
    let bytes = |v: &[char]| v.iter().map(|c| c.len_utf8()).sum::<usize>();
    while bytes(&a) + bytes(&b) > avail {
        if bytes(&a) > bytes(&b) {
            a.pop()
        } else {
            b.pop()
        };
    }
    let mut out: String = a.into_iter().collect();
    if !b.is_empty() {
        out.push('_');
        out.extend(b);
    }
    out.push('_');
    out.push_str(label);
    out
}

/// Integer types written as `serial`, `bigserial`, `smallserial`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Serial;

/// Well-known extension types and the extension that provides them.
const EXTENSION_TYPES: &[(&str, &str)] = &[
    ("citext", "citext"),
    ("hstore", "hstore"),
    ("ltree", "ltree"),
    ("lquery", "ltree"),
    ("geometry", "postgis"),
    ("geography", "postgis"),
    ("vector", "vector"),
    ("cube", "cube"),
    ("isbn", "isn"),
];

impl Importer {
    /// The schema new objects go to: the given one, else the first search_path schema that
    /// exists (PostgreSQL's creation namespace).
    pub(crate) fn creation_schema(&self, schema: Option<String>) -> String {
        schema.unwrap_or_else(|| {
            self.path
                .iter()
                .find(|s| self.snap.has_schema(s))
                .cloned()
                .unwrap_or_else(|| "public".to_owned())
        })
    }

    /// Index of a relation in the snapshot, resolved through the search_path.
    pub(crate) fn relation_index(&self, schema: Option<&str>, name: &str) -> Option<usize> {
        let at = |s: &str| {
            self.snap
                .relations
                .iter()
                .position(|r| r.schema == s && r.name == name)
        };
        match schema {
            Some(s) => at(s),
            None => self.path.iter().find_map(|s| at(s)),
        }
    }

    /// Like [`Importer::relation_index`], with an error naming the relation.
    pub(crate) fn relation_of(&self, n: &ObjectName) -> Result<usize, String> {
        let (schema, name) = split_name(n)?;
        self.relation_index(schema.as_deref(), &name)
            .ok_or_else(|| {
                format!(
                    "relation {n} does not exist at this point; create it earlier in the scripts"
                )
            })
    }

    /// The catalog type for an SQL type, and whether it was written as a serial.
    pub(crate) fn type_ref(&mut self, dt: &DataType) -> Result<(TypeRef, Option<Serial>), String> {
        if let DataType::Array(elem) = dt {
            let inner = match elem {
                ArrayElemTypeDef::SquareBracket(t, _)
                | ArrayElemTypeDef::AngleBracket(t)
                | ArrayElemTypeDef::Parenthesis(t) => t,
                ArrayElemTypeDef::None => return Err("ARRAY without an element type".to_owned()),
            };
            let (t, _) = self.type_ref(inner)?;
            let dims = t.array_dims.saturating_add(1);
            return Ok((t.with_array_dims(dims), None));
        }
        if let DataType::Custom(name, _) = dt {
            return self.custom_type(name);
        }
        let name = builtin_name(dt).ok_or_else(|| {
            format!("type {dt} is not a PostgreSQL type; use the PostgreSQL spelling")
        })?;
        Ok((TypeRef::builtin(name), None))
    }

    fn custom_type(&mut self, n: &ObjectName) -> Result<(TypeRef, Option<Serial>), String> {
        let (schema, name) = split_name(n)?;
        if schema.is_none() || schema.as_deref() == Some("pg_catalog") {
            match name.as_str() {
                "serial" | "serial4" => return Ok((TypeRef::builtin("int4"), Some(Serial))),
                "bigserial" | "serial8" => return Ok((TypeRef::builtin("int8"), Some(Serial))),
                "smallserial" | "serial2" => return Ok((TypeRef::builtin("int2"), Some(Serial))),
                _ => {}
            }
            let canonical = builtin::canonical_name(&name);
            if builtin::oid(canonical).is_some() {
                return Ok((TypeRef::builtin(canonical), None));
            }
        }
        let found = match &schema {
            Some(s) => self
                .snap
                .user_type(Some(s), &name)
                .map(|t| t.schema.clone()),
            None => self
                .path
                .iter()
                .find(|s| self.snap.user_type(Some(s), &name).is_some())
                .cloned(),
        };
        let schema = match (found, schema) {
            (Some(s), _) => s,
            (None, Some(s)) => s,
            (None, None) => self.unknown_type_schema(&name),
        };
        Ok((
            TypeRef {
                schema,
                name,
                oid: None,
                array_dims: 0,
            },
            None,
        ))
    }

    /// Schema for a type that no script created: an extension's schema for well-known
    /// extension types, else the creation schema (with a warning).
    fn unknown_type_schema(&mut self, name: &str) -> String {
        let ext = EXTENSION_TYPES
            .iter()
            .find(|(t, _)| *t == name)
            .map(|(_, e)| *e);
        if let Some(ext) = ext
            && let Some(e) = self.snap.extensions.iter().find(|e| e.name == ext)
        {
            return e.schema.clone();
        }
        if let Some(rel) = self.relation_index(None, name) {
            // A table's row type.
            return self.snap.relations[rel].schema.clone();
        }
        let schema = self.creation_schema(None);
        let hint = ext.map_or_else(String::new, |e| format!(" (CREATE EXTENSION {e} first)"));
        self.warn(format!(
            "type {name} is not created by these scripts{hint}; assumed to be {schema}.{name}"
        ));
        schema
    }
}

fn builtin_name(dt: &DataType) -> Option<&'static str> {
    use DataType as D;
    Some(match dt {
        D::Int(_) | D::Integer(_) | D::Int4(_) => "int4",
        D::SmallInt(_) | D::Int2(_) => "int2",
        D::BigInt(_) | D::Int8(_) => "int8",
        D::Real | D::Float4 => "float4",
        D::DoublePrecision | D::Float8 | D::Double(_) => "float8",
        D::Float(ExactNumberInfo::Precision(p) | ExactNumberInfo::PrecisionAndScale(p, _))
            if *p <= 24 =>
        {
            "float4"
        }
        D::Float(_) => "float8",
        D::Bool | D::Boolean => "bool",
        D::Text => "text",
        D::Varchar(_) | D::CharacterVarying(_) | D::CharVarying(_) => "varchar",
        D::Char(_) | D::Character(_) => "bpchar",
        D::Uuid => "uuid",
        D::Numeric(_) | D::Decimal(_) | D::Dec(_) => "numeric",
        D::Date => "date",
        D::Time(_, TimezoneInfo::WithTimeZone | TimezoneInfo::Tz) => "timetz",
        D::Time(..) => "time",
        D::Timestamp(_, TimezoneInfo::WithTimeZone | TimezoneInfo::Tz) => "timestamptz",
        D::Timestamp(..) => "timestamp",
        D::Interval { .. } => "interval",
        D::JSON => "json",
        D::JSONB => "jsonb",
        D::Bytea => "bytea",
        D::Regclass => "regclass",
        D::Bit(_) => "bit",
        D::BitVarying(_) | D::VarBit(_) => "varbit",
        D::TsVector => "tsvector",
        D::TsQuery => "tsquery",
        D::GeometricType(k) => match k {
            GeometricTypeKind::Point => "point",
            GeometricTypeKind::Line => "line",
            GeometricTypeKind::LineSegment => "lseg",
            GeometricTypeKind::GeometricBox => "box",
            GeometricTypeKind::GeometricPath => "path",
            GeometricTypeKind::Polygon => "polygon",
            GeometricTypeKind::Circle => "circle",
        },
        D::Trigger => "trigger",
        D::AnyType => "anyelement",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names_are_truncated_like_postgres() {
        assert_eq!(object_name("harbors", "id", "seq"), "harbors_id_seq");
        assert_eq!(object_name("t", "", "pkey"), "t_pkey");
        let long = "a".repeat(70);
        let n = object_name(&long, "col", "fkey");
        assert_eq!(n.len(), 63);
        assert!(n.ends_with("_col_fkey"));
    }

    #[test]
    fn search_path_values_are_unquoted() {
        assert_eq!(unquote_value("'App'"), "App");
        assert_eq!(unquote_value("Public"), "public");
    }
}
