//! The Rust type a PostgreSQL type decodes to, following the qail features the crate enables
//! (read from its Cargo.toml: `qail = { features = […], default-features = false }`).

use std::path::Path;

use crate::Snapshot;
use crate::snapshot::{TypeRef, UserTypeKind};

/// qail's features that change type mappings, as a crate enables them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Features {
    enabled: Vec<String>,
}

/// qail's default features.
const DEFAULTS: &[&str] = &["uuid", "chrono", "json", "decimal"];

impl Default for Features {
    fn default() -> Features {
        Features {
            enabled: DEFAULTS.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

impl Features {
    /// The features of the crate whose manifest is `manifest` (qail's defaults when it does
    /// not say).
    pub(crate) fn of_manifest(manifest: &Path) -> Features {
        std::fs::read_to_string(manifest)
            .map(|text| Features::of_toml(&text))
            .unwrap_or_default()
    }

    /// Reads the `qail` dependency of a Cargo.toml: an inline table on one line, or a
    /// `[dependencies.qail]` table.
    fn of_toml(text: &str) -> Features {
        let mut spec = String::new();
        let mut in_table = false;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with('[') {
                in_table = t
                    .trim_matches(|c| c == '[' || c == ']')
                    .ends_with("dependencies.qail");
                continue;
            }
            if in_table {
                spec.push_str(t);
                spec.push(' ');
            } else if let Some(rest) = t.strip_prefix("qail")
                && rest.trim_start().starts_with('=')
            {
                spec.push_str(rest);
            }
        }
        let mut enabled: Vec<String> = if spec.replace(' ', "").contains("default-features=false") {
            Vec::new()
        } else {
            DEFAULTS.iter().map(|s| (*s).to_owned()).collect()
        };
        let features = spec
            .match_indices("features")
            .find(|(i, _)| !spec[..*i].ends_with('-'))
            .map(|(i, _)| &spec[i..]);
        if let Some(list) = features
            .and_then(|after| after.split_once('['))
            .and_then(|(_, after)| after.split_once(']'))
            .map(|(list, _)| list)
        {
            enabled.extend(
                list.split(',')
                    .map(|f| f.trim().trim_matches('"').to_owned())
                    .filter(|f| !f.is_empty()),
            );
        }
        Features { enabled }
    }

    fn has(&self, feature: &str) -> bool {
        self.enabled.iter().any(|f| f == feature)
    }

    /// The Rust type of `ty` (`Option<…>` when `nullable`), or what is missing.
    pub(crate) fn rust_type(&self, ty: &TypeRef, nullable: bool, snapshot: &Snapshot) -> String {
        let base = match self.scalar(ty, snapshot) {
            Ok(t) => t,
            Err(e) => return e,
        };
        let base = if ty.array_dims > 0 {
            format!("Vec<{base}>")
        } else {
            base
        };
        if nullable {
            format!("Option<{base}>")
        } else {
            base
        }
    }

    fn scalar(&self, ty: &TypeRef, snapshot: &Snapshot) -> Result<String, String> {
        if ty.schema == "pg_catalog" {
            let rust = qail_catalog::type_by_name(&ty.name)
                .and_then(|t| t.rust)
                .filter(|r| !r.field.is_empty())
                .ok_or_else(|| {
                    "no Rust mapping: cast it in SQL (`::text`) or name a type with `AS \"col: Type\"`"
                        .to_owned()
                })?;
            return match rust.feature {
                "" => Ok(rust.hint.to_owned()),
                "chrono" => {
                    let (chrono, time) = rust.hint.split_once(" or ").unwrap_or((rust.hint, ""));
                    if self.has("chrono") {
                        Ok(chrono.to_owned())
                    } else if self.has("time") && !time.is_empty() {
                        Ok(time.to_owned())
                    } else {
                        Err(format!(
                            "{} (enable the qail feature `chrono` or `time`)",
                            rust.hint
                        ))
                    }
                }
                f if self.has(f) => Ok(rust.hint.to_owned()),
                f => Err(format!("{} (enable the qail feature `{f}`)", rust.hint)),
            };
        }
        match snapshot
            .user_type(Some(&ty.schema), &ty.name)
            .map(|u| &u.kind)
        {
            Some(UserTypeKind::Enum { .. }) => Ok(format!(
                "your enum with #[derive(QailType)] #[qail(type_name = \"{}\")]",
                ty.name
            )),
            Some(UserTypeKind::Domain { base, .. }) => self.scalar(base, snapshot),
            _ if ty.name == "citext" => Ok("String".to_owned()),
            _ => Err(format!(
                "no Rust mapping for {}.{}: cast it in SQL or name a type with `AS \"col: Type\"`",
                ty.schema, ty.name
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(name: &str) -> TypeRef {
        TypeRef {
            schema: "pg_catalog".into(),
            name: name.into(),
            oid: None,
            array_dims: 0,
        }
    }

    #[test]
    fn features_come_from_the_manifest() {
        let snap = Snapshot::new();
        let f = Features::of_toml(
            "[dependencies]\nqail = { version = \"0.1\", default-features = false, features = [\"time\", \"net\"] }\n",
        );
        assert_eq!(
            f.rust_type(&builtin("timestamptz"), true, &snap),
            "Option<time::OffsetDateTime>"
        );
        assert_eq!(
            f.rust_type(&builtin("inet"), false, &snap),
            "std::net::IpAddr or qail::types::Inet"
        );
        assert!(
            f.rust_type(&builtin("uuid"), false, &snap)
                .contains("enable the qail feature `uuid`")
        );
        let f = Features::of_toml("[dependencies.qail]\nversion = \"0.1\"\n");
        assert_eq!(
            f.rust_type(&builtin("timestamptz"), false, &snap),
            "chrono::DateTime<Utc>"
        );
        assert_eq!(Features::of_toml(""), Features::default());
    }
}
