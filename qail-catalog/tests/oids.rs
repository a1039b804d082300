//! No source file but the generated table spells a built-in type's OID: every other file
//! names the constant (`oid::INT4`) or asks the catalog (`type_by_name("int4")`).
//!
//! Scanned: the non-test code (a file up to its `#[cfg(test)]`; not `tests.rs` files) of every
//! `.rs` file under the workspace members' `src/` and `examples/` and the facade's. Flagged, for any number `N`
//! that is the OID of a built-in type or its array (or `FIRST_USER_OID`):
//! - a constant definition `…: Oid = N` / `const NAME: u32 = N` where NAME says OID or names
//!   the type (`INT4`, `INT4_ARRAY`);
//! - a field `oid: N` / `oid: Some(N)` (also `type_oid`, `array_oid`);
//! - a line that quotes a type's name and spells its OID: a table row `("int4", 23, 1007)`
//!   or a match arm `"int4" => 23`.

use std::path::{Path, PathBuf};

use qail_catalog::{TYPES, oid::FIRST_USER_OID};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("qail-catalog sits in the workspace")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The whole-word numbers on a line.
fn numbers(line: &str) -> Vec<u32> {
    line.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// Why a line spells a built-in OID, if it does.
fn offence(line: &str) -> Option<String> {
    let code = line.split("//").next().unwrap_or("");
    for n in numbers(code) {
        let owner = TYPES.iter().find(|t| t.oid == n || t.array_oid == n);
        if owner.is_none() && n != FIRST_USER_OID {
            continue;
        }
        let word = n.to_string();
        let defines = |before: &str| {
            code.contains(&format!("{before} = {word};"))
                || code.contains(&format!("{before} = {word},"))
        };
        if defines(": Oid") {
            return Some(format!("an Oid constant or binding set to {n}"));
        }
        if let Some(rest) = code
            .trim_start()
            .strip_prefix("pub ")
            .or(Some(code.trim_start()))
            && let Some(rest) = rest.strip_prefix("const ")
            && let Some((name, ty)) = rest.split_once(':')
            && ty.trim_start().starts_with(&format!("u32 = {word};"))
        {
            let name = name.trim();
            let plain = name.trim_end_matches("_ARRAY").to_lowercase();
            if name.contains("OID") || owner.is_some_and(|t| t.name == plain) {
                return Some(format!("constant {name} = {n}"));
            }
        }
        for field in ["oid", "type_oid", "array_oid"] {
            if code.contains(&format!("{field}: {word}"))
                || code.contains(&format!("{field}: Some({word})"))
            {
                return Some(format!("field {field} set to {n}"));
            }
        }
        if let Some(t) = owner
            && code.contains(&format!("\"{}\"", t.name))
        {
            return Some(format!("\"{}\" next to its OID {n}", t.name));
        }
    }
    None
}

/// Every offending line under `root`, as `path:line: why`.
fn offences(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["src", "examples"] {
        rust_files(&root.join(dir), &mut files);
    }
    if let Ok(members) = std::fs::read_dir(root) {
        for m in members.flatten() {
            let name = m.file_name();
            if name.to_string_lossy().starts_with("qail-") {
                for dir in ["src", "examples"] {
                    rust_files(&m.path().join(dir), &mut files);
                }
            }
        }
    }
    files.sort();
    let generated = root.join("qail-catalog/src/generated.rs");
    let mut found = Vec::new();
    // Note: test modules in their own file (`tests.rs`, `tests/…`) are test code too.
    let test_file = |f: &Path| {
        f.components()
            .any(|c| c.as_os_str() == "tests" || c.as_os_str() == "tests.rs")
    };
    for file in files.iter().filter(|f| **f != generated && !test_file(f)) {
        let text = std::fs::read_to_string(file).expect("read a source file");
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (i, line) in code.lines().enumerate() {
            if let Some(why) = offence(line) {
                let rel = file.strip_prefix(root).unwrap_or(file);
                found.push(format!("{}:{}: {why}", rel.display(), i + 1));
            }
        }
    }
    found
}

#[test]
fn only_the_generated_table_spells_builtin_oids() {
    let found: Vec<String> = offences(&root())
        .into_iter()
        // Note: the one hand-written definition, FirstNormalObjectId, which pg_type does not hold.
        .filter(|f| !f.starts_with("qail-catalog/src/lib.rs:") || !f.contains("16384"))
        .collect();
    assert!(
        found.is_empty(),
        "built-in OIDs spelled outside qail-catalog's generated table; use qail_pg::types::oid::… \
         or qail_catalog::type_by_name instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_patterns_catch_what_they_describe() {
    assert!(offence("pub const INT4: Oid = 23;").is_some());
    assert!(offence("const FIRST_USER_OID: Oid = 16384;").is_some());
    assert!(offence("pub const TEXT_ARRAY: u32 = 1009;").is_some());
    assert!(offence("    (\"int4\", 23, 1007),").is_some());
    assert!(offence("    \"uuid\" => 2950,").is_some());
    assert!(offence("        oid: Some(25),").is_some());
    assert!(offence("const NONCE_BYTES: usize = 18;").is_none());
    assert!(offence("let x = 23; // int4").is_none());
    assert!(offence("pub const INT4: Oid = qail_catalog::oid::INT4;").is_none());
}
