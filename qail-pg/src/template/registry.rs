//! The statements of a binary: every `qail!` registers what it compiled, its [`Template`]
//! with what it was compiled against that the template does not hold, as a [`Compiled`]
//! placed in a link section of its own (a `#[used]` static with `#[link_section]`). The
//! linker gathers that section's pieces from every crate of the binary into one array, which
//! [`STATEMENTS`] reads between the bounds the linker gives it: no build script, no code run
//! at start-up. `Pool::verify` describes them all.
//!
//! The section, per object format (what `qail!` writes in its `cfg_attr`s, [`SECTIONS`]):
//!
//! - ELF (every Unix but Apple's): `set_qail_statements_M_N` (`M.N` this crate's version), a
//!   C identifier, so the linker defines `__start_…` and `__stop_…` at its ends and keeps it
//!   through `--gc-sections` (the `set_` prefix is what illumos' linker asks for);
//! - Mach-O: `__DATA,__qailM_N`, marked `no_dead_strip`; the linker's
//!   `section$start$__DATA$…` and `section$end$__DATA$…` are its ends;
//! - PE/COFF (Windows): `.qailM_N$b`; the linker sorts the pieces of `.qailM_N$…` by the
//!   text after `$`, so the markers this module places in `$a` and `$c` are its ends.
//!
//! The version is in the name so that two incompatible versions of qail in one binary keep
//! their statements apart: each reads only its own [`Compiled`]s.
//!
//! Only this module places statics in the section by hand; `qail!`'s output holds no
//! `unsafe` block (its `link_section` is an `unsafe(…)` attribute, which a crate with
//! `#![forbid(unsafe_code)]` accepts from a macro of another crate).

#![allow(
    unsafe_code,
    reason = "the registry is an array the linker assembles: its bounds are symbols the \
              linker defines (ELF, Mach-O) or statics placed around it (Windows), and reading \
              it is a slice built from two addresses"
)]

use std::ops::Deref;

use super::Template;

/// Whether a result column taken unchanged from a table column was NOT NULL in the snapshot
/// the statement was compiled against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotNull {
    /// Not a table column taken unchanged (an expression, the nullable side of a join, …):
    /// nothing to compare.
    Unknown,
    /// The table column was NOT NULL.
    Yes,
    /// The table column could be NULL.
    No,
}

/// A statement as `qail!` compiled it.
#[derive(Debug)]
pub struct Compiled {
    /// Its template (SQL, parameter types, expected columns, `file:line`). For a query with
    /// optional clauses or sort choices, the combination with every clause present and each
    /// choice's first alternative: the one that names every table, column and parameter the
    /// query can use.
    pub template: &'static Template,
    /// Per result column, in order, the NOT NULL-ness of its table column.
    pub not_null: &'static [NotNull],
}

/// The section names `qail!` places its [`Compiled`] statics in, per object format: what it
/// writes in `#[cfg_attr(…, unsafe(link_section = …))]`. Not a public API.
#[doc(hidden)]
#[derive(Debug)]
pub struct Sections {
    /// ELF targets, `all(unix, not(target_vendor = "apple"))`.
    pub elf: &'static str,
    /// Mach-O targets, `target_vendor = "apple"`.
    pub mach_o: &'static str,
    /// PE/COFF targets, `windows`.
    pub windows: &'static str,
}

/// The section names, written once for this module's attributes and for the macro's.
macro_rules! section {
    (elf) => {
        concat!(
            "set_qail_statements_",
            env!("CARGO_PKG_VERSION_MAJOR"),
            "_",
            env!("CARGO_PKG_VERSION_MINOR")
        )
    };
    (mach_o_name) => {
        // Note: Mach-O section names have at most 16 bytes.
        concat!(
            "__qail",
            env!("CARGO_PKG_VERSION_MAJOR"),
            "_",
            env!("CARGO_PKG_VERSION_MINOR")
        )
    };
    (mach_o) => {
        concat!("__DATA,", section!(mach_o_name), ",regular,no_dead_strip")
    };
    (windows $part:literal) => {
        concat!(
            ".qail",
            env!("CARGO_PKG_VERSION_MAJOR"),
            "_",
            env!("CARGO_PKG_VERSION_MINOR"),
            "$",
            $part
        )
    };
}

/// Where `qail!` places its statements.
#[doc(hidden)]
pub const SECTIONS: Sections = Sections {
    elf: section!(elf),
    mach_o: section!(mach_o),
    windows: section!(windows "b"),
};

/// Every statement `qail!` compiled into this binary, dereferencing to a slice (in no
/// particular order).
#[derive(Debug, Clone, Copy)]
pub struct Statements(());

/// Every statement `qail!` compiled into this binary: the static ones, and of each query
/// with optional clauses or sort choices the combination with every clause present and the
/// first alternative of each choice.
pub static STATEMENTS: Statements = Statements(());

impl Deref for Statements {
    type Target = [Compiled];

    fn deref(&self) -> &'static [Compiled] {
        let (start, stop) = bounds();
        // Note: the compiler sees `start` as the address of a zero-sized static; hiding it
        // keeps it from reasoning about what lies past that static.
        let start = std::hint::black_box(start);
        let bytes = stop.addr().saturating_sub(start.addr());
        let len = bytes / size_of::<Compiled>();
        if len == 0 {
            return &[];
        }
        // SAFETY: the linker put every `Compiled` static of the section between `start` and
        // `stop`, one after the other: each is a whole `Compiled` (the section holds nothing
        // else, and the section name carries this crate's version, so every piece has this
        // layout), aligned as its type asks, initialised and immutable for the whole program.
        unsafe { std::slice::from_raw_parts(start, len) }
    }
}

/// The first statement of the section and the end of the section.
#[cfg(all(unix, not(target_vendor = "apple")))]
fn bounds() -> (*const Compiled, *const Compiled) {
    // Note: the section must exist in every binary, also one without `qail!` statements,
    // for the linker to define its bounds.
    #[used]
    #[unsafe(link_section = section!(elf))]
    static PRESENT: [Compiled; 0] = [];
    unsafe extern "Rust" {
        #[link_name = concat!("__start_", section!(elf))]
        static START: [Compiled; 0];
        #[link_name = concat!("__stop_", section!(elf))]
        static STOP: [Compiled; 0];
    }
    ((&raw const START).cast(), (&raw const STOP).cast())
}

/// The first statement of the section and the end of the section.
#[cfg(target_vendor = "apple")]
fn bounds() -> (*const Compiled, *const Compiled) {
    unsafe extern "Rust" {
        #[link_name = concat!("\x01section$start$__DATA$", section!(mach_o_name))]
        static START: [Compiled; 0];
        #[link_name = concat!("\x01section$end$__DATA$", section!(mach_o_name))]
        static STOP: [Compiled; 0];
    }
    ((&raw const START).cast(), (&raw const STOP).cast())
}

/// The first statement of the section and the end of the section.
#[cfg(windows)]
fn bounds() -> (*const Compiled, *const Compiled) {
    // Note: the markers are not zero-sized (some code generators write a byte for a
    // zero-sized static in a section of its own); they have the size and alignment of a
    // pointer, as the fields of a `Compiled` do, so the statements start right after the
    // first.
    #[used]
    #[unsafe(link_section = section!(windows "a"))]
    static START: usize = 0;
    #[used]
    #[unsafe(link_section = section!(windows "c"))]
    static STOP: usize = 0;
    let start = (&raw const START).wrapping_add(1).cast::<Compiled>();
    (start, (&raw const STOP).cast())
}

#[cfg(not(any(unix, windows)))]
compile_error!(
    "qail's registry of compiled statements supports ELF, Mach-O and PE/COFF targets only"
);

#[cfg(test)]
mod tests {
    use super::*;

    static TEMPLATE: Template = Template {
        name: "q_registry_test",
        param_oids: &[],
        encoded: &[],
        source: "registry.rs",
    };

    // Placed as `qail!` places its statements.
    #[used]
    #[cfg_attr(
        all(unix, not(target_vendor = "apple")),
        unsafe(link_section = section!(elf))
    )]
    #[cfg_attr(target_vendor = "apple", unsafe(link_section = section!(mach_o)))]
    #[cfg_attr(windows, unsafe(link_section = section!(windows "b")))]
    static REGISTERED: Compiled = Compiled {
        template: &TEMPLATE,
        not_null: &[NotNull::Yes, NotNull::No],
    };

    #[test]
    fn the_section_names_carry_the_version() {
        let version = format!(
            "{}_{}",
            env!("CARGO_PKG_VERSION_MAJOR"),
            env!("CARGO_PKG_VERSION_MINOR")
        );
        assert_eq!(SECTIONS.elf, format!("set_qail_statements_{version}"));
        assert_eq!(
            SECTIONS.mach_o,
            format!("__DATA,__qail{version},regular,no_dead_strip")
        );
        assert_eq!(SECTIONS.windows, format!(".qail{version}$b"));
        assert!(section!(mach_o_name).len() <= 16);
    }

    #[test]
    fn a_statement_placed_in_the_section_is_registered() {
        let found: Vec<&Compiled> = STATEMENTS
            .iter()
            .filter(|c| c.template.name == "q_registry_test")
            .collect();
        assert_eq!(found.len(), 1, "{:?}", &*STATEMENTS);
        assert_eq!(found[0].not_null, &[NotNull::Yes, NotNull::No]);
        assert!(std::ptr::eq(found[0], &REGISTERED));
    }
}
