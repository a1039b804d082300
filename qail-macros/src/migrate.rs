//! `migrate!("migrations")`: a migrations directory embedded in the binary.
//!
//! The directory (relative to the crate's `CARGO_MANIFEST_DIR`; `migrations` when no path is
//! given) is read while the macro expands, its file names are checked with qail-migrate's
//! own rules, and each migration file becomes an `include_str!` — so editing a file rebuilds
//! the crate. A file added or removed is seen only when the crate is rebuilt: stable Rust
//! lets no macro watch a directory, which is what `qail_migrate::rerun_if_migrations_changed`
//! in a build script does.

use std::path::Path;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::LitStr;

/// The expansion for the macro input `input` in a crate whose manifest directory is `root`.
pub(crate) fn expand(input: TokenStream, root: &Path) -> syn::Result<TokenStream> {
    let (relative, span) = if input.is_empty() {
        ("migrations".to_owned(), Span::call_site())
    } else {
        let lit: LitStr = syn::parse2(input)?;
        (lit.value(), lit.span())
    };
    let dir = root.join(&relative);
    let error = |e: &dyn std::fmt::Display| syn::Error::new(span, e.to_string());
    if !dir.is_dir() {
        return Err(syn::Error::new(
            span,
            format!(
                "migrations directory `{}` not found; the path is relative to the crate's \
                 Cargo.toml (`{}`); create it with `cargo qail migrate add <name>`, or fix \
                 the path",
                relative,
                root.display()
            ),
        ));
    }
    let files = qail_migrate::files(&dir).map_err(|e| error(&e))?;
    let mut entries = Vec::with_capacity(files.len());
    let mut contents = Vec::with_capacity(files.len());
    for path in &files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| error(&format!("`{}` is not a UTF-8 file name", path.display())))?;
        let full = path
            .to_str()
            .ok_or_else(|| error(&format!("`{}` is not a UTF-8 path", path.display())))?;
        let sql = std::fs::read_to_string(path)
            .map_err(|e| error(&format!("could not read `{}`: {e}", path.display())))?;
        contents.push((name.to_owned(), sql));
        entries.push(quote!((#name, ::core::include_str!(#full))));
    }
    // Note: the layout is checked now, so a wrong file name is a compile error rather than
    // a failure at start-up.
    qail_migrate::parse(contents).map_err(|e| error(&e))?;
    Ok(quote! {
        ::qail::migrate::Migrator::embedded(&[#(#entries),*])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let root =
            std::env::temp_dir().join(format!("qail-macros-migrate-{name}-{}", std::process::id()));
        let dir = root.join("migrations");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&dir).expect("created");
        for (file, sql) in files {
            std::fs::write(dir.join(file), sql).expect("written");
        }
        root
    }

    #[test]
    fn embeds_every_migration_file_in_order() {
        let root = fixture(
            "ok",
            &[
                ("2_b.up.sql", "B"),
                ("2_b.down.sql", "-B"),
                ("1_a.sql", "A"),
                ("notes.md", "not a migration"),
            ],
        );
        let out = expand(TokenStream::new(), &root)
            .expect("expands")
            .to_string();
        let a = out.find("\"1_a.sql\"").expect("1_a.sql embedded");
        let down = out.find("\"2_b.down.sql\"").expect("2_b.down.sql embedded");
        let up = out.find("\"2_b.up.sql\"").expect("2_b.up.sql embedded");
        assert!(a < down && down < up, "{out}");
        assert!(!out.contains("notes.md"), "{out}");
        assert_eq!(out.matches("include_str").count(), 3, "{out}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_wrong_layout_or_path_is_a_compile_error() {
        let root = fixture("bad", &[("create_users.sql", "")]);
        let e = expand(quote!("migrations"), &root).unwrap_err();
        assert!(e.to_string().contains("`create_users.sql`"), "{e}");
        let e = expand(quote!("nowhere"), &root).unwrap_err();
        assert!(e.to_string().contains("`nowhere` not found"), "{e}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
