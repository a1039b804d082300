//! The PostgreSQL → Rust type choice, as data: which Rust type a column or parameter of a
//! PostgreSQL type is read as and sent from, and which of qail's Cargo features that needs.
//!
//! One rule for every reader: the `qail!` macro turns a [`Choice`] into tokens, the language
//! server and the reports into text. The built-in types' Rust names and features come from
//! qail-catalog's [`Rust`](qail_catalog::Rust) entries; what this module adds is the rule
//! around them — one-dimensional arrays only, domains as their base type, enums as the user's
//! own type, `citext` as text — and qail's feature list with its defaults.

use qail_schema::Snapshot;
use qail_schema::snapshot::{TypeRef, UserTypeKind};

/// qail's Cargo features that change a type mapping, and what each maps.
pub const FEATURES: &[&str] = &["uuid", "chrono", "time", "json", "decimal", "net"];

/// The mapping features qail turns on by default (qail's `default` feature list holds these,
/// with `tls`; a test of the facade checks that the two agree).
pub const DEFAULT_FEATURES: &[&str] = &["uuid", "chrono", "json", "decimal"];

/// Which PostgreSQL type marker the generated checks name (`::qail::__private::pg::…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    /// A built-in type, by its `typname` (`int4`, `timestamptz`).
    Builtin(String),
    /// A user enum: the Rust type is the user's `#[derive(QailType)]` enum.
    UserEnum,
    /// The `citext` extension type, read and sent as text.
    Citext,
}

/// How one PostgreSQL type (an element type, for an array) maps to Rust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The marker type of the compile-time checks.
    pub marker: Marker,
    /// The type of a generated field: a primitive (`i32`), `String`, `Vec<u8>`, or a name under
    /// the facade's `__private::types` (`Timestamptz`); `None` for a user enum.
    pub field: Option<&'static str>,
    /// The Rust type(s) to name to a reader (`chrono::DateTime<Utc> or time::OffsetDateTime`,
    /// `your enum with #[derive(QailType)] …`).
    pub hint: String,
    /// The qail feature the mapping needs (`chrono`, `uuid`), if any.
    pub feature: Option<&'static str>,
    /// Whether the type is a (one-dimensional) array of the element described above.
    pub array: bool,
}

/// Chooses the Rust mapping of `ty`, or says why there is none and what to write instead.
pub fn choose(ty: &TypeRef, snapshot: &Snapshot) -> Result<Choice, String> {
    if ty.array_dims > 1 {
        return Err(format!(
            "type {} has {} dimensions; qail maps one-dimensional arrays only: unnest it or cast to a one-dimensional array",
            display(ty),
            ty.array_dims
        ));
    }
    let mut choice = scalar(ty, snapshot)?;
    choice.array = ty.array_dims == 1;
    Ok(choice)
}

fn scalar(ty: &TypeRef, snapshot: &Snapshot) -> Result<Choice, String> {
    if ty.schema == "pg_catalog" {
        let rust = qail_catalog::type_by_name(&ty.name)
            .and_then(|t| t.rust)
            .filter(|r| !r.field.is_empty());
        return match rust {
            Some(rust) => Ok(Choice {
                marker: Marker::Builtin(ty.name.clone()),
                field: Some(rust.field),
                hint: rust.hint.to_owned(),
                feature: Some(rust.feature).filter(|f| !f.is_empty()),
                array: false,
            }),
            None => Err(format!(
                "PostgreSQL type {} has no Rust mapping in qail: cast it in SQL (`::text`), or name a Rust type that implements Decode with an alias, `r#\"… AS \"col: path::Type\" …\"#` (a raw string literal)",
                ty.name
            )),
        };
    }
    let user = snapshot.user_type(Some(&ty.schema), &ty.name);
    match user.map(|u| &u.kind) {
        Some(UserTypeKind::Enum { .. }) => Ok(Choice {
            marker: Marker::UserEnum,
            field: None,
            hint: format!(
                "your enum with #[derive(QailType)] #[qail(type_name = \"{}\")]",
                ty.name
            ),
            feature: None,
            array: false,
        }),
        Some(UserTypeKind::Domain { base, .. }) => scalar(base, snapshot),
        _ if ty.is_citext() => Ok(Choice {
            marker: Marker::Citext,
            field: Some("String"),
            hint: "String".to_owned(),
            feature: None,
            array: false,
        }),
        _ => Err(format!(
            "type {}.{} is not supported by qail!: cast it in SQL (`::text`), or name a Rust type with an alias, `r#\"… AS \"col: path::Type\" …\"#` (a raw string literal)",
            ty.schema, ty.name
        )),
    }
}

/// `int4`, `text[]`, `billing.currency`: a type as messages name it.
pub fn display(ty: &TypeRef) -> String {
    let base = if ty.schema == "pg_catalog" || ty.schema == "public" {
        ty.name.clone()
    } else {
        format!("{}.{}", ty.schema, ty.name)
    };
    let dims = usize::try_from(ty.array_dims).unwrap_or(0);
    format!("{base}{}", "[]".repeat(dims))
}

/// A qail feature a mapping needs and a build lacks, as a message names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingFeature {
    /// How the message names it: `` `net` ``, `` `chrono` (or `time`) ``.
    pub name: &'static str,
    /// What to add to `features = […]`.
    pub plain: &'static str,
}

impl MissingFeature {
    /// "… has type inet: enable the qail feature `net` …", for `what` (a column or a
    /// parameter) of type `display`.
    pub fn message(self, what: &str, display: &str) -> String {
        format!("{what} has type {display}: {}", self.fix())
    }

    /// "enable the qail feature `net` in Cargo.toml (…)".
    pub fn fix(self) -> String {
        format!(
            "enable the qail feature {} in Cargo.toml (qail = {{ version = \"…\", features = [\"{}\"] }})",
            self.name, self.plain
        )
    }
}

/// The features a crate enables, which decide the Rust types its queries read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Features {
    enabled: Vec<String>,
}

impl Default for Features {
    /// qail's defaults.
    fn default() -> Features {
        Features::new(DEFAULT_FEATURES.iter().copied())
    }
}

impl Features {
    /// Exactly these features.
    pub fn new<'a>(enabled: impl IntoIterator<Item = &'a str>) -> Features {
        Features {
            enabled: enabled.into_iter().map(str::to_owned).collect(),
        }
    }

    /// Whether `feature` is on.
    pub fn has(&self, feature: &str) -> bool {
        self.enabled.iter().any(|f| f == feature)
    }

    /// The feature `feature` (a [`Choice::feature`]) when this build lacks it. `chrono`'s types
    /// are also served by `time`.
    pub fn missing(&self, feature: &str) -> Option<MissingFeature> {
        let (on, name) = match feature {
            "chrono" => (
                self.has("chrono") || self.has("time"),
                "`chrono` (or `time`)",
            ),
            "uuid" => (self.has("uuid"), "`uuid`"),
            "json" => (self.has("json"), "`json`"),
            "decimal" => (self.has("decimal"), "`decimal`"),
            "net" => (self.has("net"), "`net`"),
            _ => (true, ""),
        };
        let plain = FEATURES.iter().copied().find(|f| *f == feature)?;
        (!on).then_some(MissingFeature { name, plain })
    }

    /// The Rust type of `ty` as text (`Option<…>` when `nullable`), or what is missing.
    pub fn rust_type(&self, ty: &TypeRef, nullable: bool, snapshot: &Snapshot) -> String {
        let base = match choose(ty, snapshot).and_then(|c| self.rust_name(&c)) {
            Ok(c) => c,
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

    /// The Rust type a choice names under these features (of an array's element): with `time`
    /// instead of `chrono`, the `time` crate's type; an error saying which feature to enable.
    pub fn rust_name(&self, choice: &Choice) -> Result<String, String> {
        let hint = choice.hint.as_str();
        match choice.feature {
            None => Ok(hint.to_owned()),
            Some("chrono") => {
                let (chrono, time) = hint.split_once(" or ").unwrap_or((hint, ""));
                if self.has("chrono") {
                    Ok(chrono.to_owned())
                } else if self.has("time") && !time.is_empty() {
                    Ok(time.to_owned())
                } else {
                    Err(format!(
                        "{hint} (enable the qail feature `chrono` or `time`)"
                    ))
                }
            }
            Some(f) if self.has(f) => Ok(hint.to_owned()),
            Some(f) => Err(format!("{hint} (enable the qail feature `{f}`)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(name: &str, dims: u32) -> TypeRef {
        TypeRef {
            schema: "pg_catalog".into(),
            name: name.into(),
            oid: None,
            array_dims: dims,
        }
    }

    #[test]
    fn builtins_arrays_and_what_cannot_map() {
        let snap = Snapshot::default();
        let c = choose(&builtin("int4", 0), &snap).unwrap();
        assert_eq!(
            (c.marker, c.field, c.feature, c.array),
            (Marker::Builtin("int4".into()), Some("i32"), None, false)
        );
        let c = choose(&builtin("uuid", 1), &snap).unwrap();
        assert_eq!(
            (c.field, c.feature, c.array),
            (Some("Uuid"), Some("uuid"), true)
        );
        let e = choose(&builtin("point", 0), &snap).unwrap_err();
        assert!(e.contains("cast it"), "{e}");
        let e = choose(&builtin("int4", 2), &snap).unwrap_err();
        assert!(e.contains("one-dimensional"), "{e}");
    }

    #[test]
    fn features_decide_the_named_type() {
        let snap = Snapshot::new();
        let f = Features::new(["time", "net"]);
        assert_eq!(
            f.rust_type(&builtin("timestamptz", 0), true, &snap),
            "Option<time::OffsetDateTime>"
        );
        assert_eq!(
            f.rust_type(&builtin("inet", 0), false, &snap),
            "std::net::IpAddr or qail::types::Inet"
        );
        assert!(
            f.rust_type(&builtin("uuid", 0), false, &snap)
                .contains("enable the qail feature `uuid`")
        );
        assert_eq!(f.missing("chrono"), None, "time serves chrono's types");
        assert_eq!(f.missing("uuid").map(|m| m.plain), Some("uuid"));
        let d = Features::default();
        assert_eq!(
            d.rust_type(&builtin("timestamptz", 0), false, &snap),
            "chrono::DateTime<Utc>"
        );
        assert_eq!(d.missing("json"), None);
    }

    /// The feature lists of qail's and qail-macros' manifests (which Cargo reads, so they
    /// cannot name the constants) are these constants.
    #[test]
    fn manifests_default_to_these_features() {
        let defaults = |path: &str| -> Vec<String> {
            let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
                .expect("the workspace's manifests are next to this crate");
            let line = text
                .lines()
                .find(|l| l.starts_with("default = ["))
                .expect("a default feature list");
            let mut list: Vec<String> = line["default = [".len()..line.len() - 1]
                .split(',')
                .map(|f| f.trim().trim_matches('"').to_owned())
                .filter(|f| !f.is_empty() && FEATURES.contains(&f.as_str()))
                .collect();
            list.sort();
            list
        };
        let mut ours: Vec<String> = DEFAULT_FEATURES.iter().map(|f| (*f).to_owned()).collect();
        ours.sort();
        assert_eq!(defaults("../Cargo.toml"), ours, "qail's [features] default");
        assert_eq!(
            defaults("../qail-macros/Cargo.toml"),
            ours,
            "qail-macros' [features] default"
        );
    }
}
