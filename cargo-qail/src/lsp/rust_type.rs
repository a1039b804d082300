//! The qail features a crate enables, read from its Cargo.toml (`qail = { features = […],
//! default-features = false }`): they decide the Rust types hover names, by the analyzer's
//! [`rust_type`](qail_analyzer::rust_type) rule.

use std::path::Path;

use qail_analyzer::rust_type::{DEFAULT_FEATURES, Features};

/// The features of the crate whose manifest is `manifest` (qail's defaults when it does not
/// say).
pub(crate) fn of_manifest(manifest: &Path) -> Features {
    std::fs::read_to_string(manifest)
        .map(|text| of_toml(&text))
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
        DEFAULT_FEATURES.iter().map(|s| (*s).to_owned()).collect()
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
    Features::new(enabled.iter().map(String::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qail_schema::Snapshot;
    use qail_schema::snapshot::TypeRef;

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
        let f = of_toml(
            "[dependencies]\nqail = { version = \"0.1\", default-features = false, features = [\"time\", \"net\"] }\n",
        );
        assert_eq!(f, Features::new(["time", "net"]));
        let f = of_toml("[dependencies.qail]\nversion = \"0.1\"\n");
        assert_eq!(
            f.rust_type(&builtin("timestamptz"), false, &snap),
            "chrono::DateTime<Utc>"
        );
        assert_eq!(of_toml(""), Features::default());
    }
}
