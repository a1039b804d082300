//! The statements of a binary: every `qail!` registers what it compiled, its [`Template`]
//! with what it was compiled against that the template does not hold, as a record of plain
//! bytes ([`record`]) placed in a link section of its own (a `#[used]` byte array with
//! `#[link_section]`). The linker gathers that section's pieces from every crate of the
//! binary, one after the other, and [`STATEMENTS`] reads them between the bounds the linker
//! gives it, decoding them into [`Compiled`]s the first time it is read: no build script, no
//! code run at start-up. `Pool::verify` describes them all.
//!
//! A record is bytes, not a `Compiled` with references, because the compiler checks and
//! evaluates every static's initializer: a byte string costs it next to nothing, where a
//! struct of references to a template cost as much again as the rest of the query. When the
//! compiler produces no code (`cargo check`), `qail!` registers nothing: no program is
//! linked from such a build.
//!
//! The section, per object format ([`SECTIONS`]; `qail!` names it through
//! `__registry_section!`, which picks the target's):
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
//! their statements apart: each reads only its own records.
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
use std::sync::OnceLock;

use super::Template;
use crate::types::Oid;

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

impl NotNull {
    /// The byte of a record.
    fn byte(self) -> u8 {
        match self {
            NotNull::Unknown => 0,
            NotNull::Yes => 1,
            NotNull::No => 2,
        }
    }

    fn from_byte(byte: u8) -> Option<NotNull> {
        match byte {
            0 => Some(NotNull::Unknown),
            1 => Some(NotNull::Yes),
            2 => Some(NotNull::No),
            _ => None,
        }
    }
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

/// The first byte of every record: the bytes between records (padding a linker may insert)
/// are zero.
const MARK: u8 = b'Q';

/// The record `qail!` places in the section for a statement: its [`Template`]'s parts (the
/// name, parameter OIDs, `file:line` and the bytes of [`Template::encoded`]) and the
/// NOT NULL-ness of each result column. `None` when a part is too long for its length field
/// (a `u16`; the encoded template's a `u32`).
///
/// After [`MARK`] and the body's length (a `u32`), each part after its length: the name,
/// the OIDs (each 4 bytes), the source, the encoded template and one byte per column (0
/// unknown, 1 NOT NULL, 2 nullable); numbers big-endian. Not a public API.
#[doc(hidden)]
pub fn record(
    name: &str,
    param_oids: &[Oid],
    source: &str,
    encoded: &[u8],
    not_null: &[NotNull],
) -> Option<Vec<u8>> {
    let mut body = Vec::with_capacity(16 + name.len() + source.len() + encoded.len());
    let short = |len: usize| u16::try_from(len).ok().map(u16::to_be_bytes);
    body.extend_from_slice(&short(name.len())?);
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(&short(param_oids.len())?);
    for oid in param_oids {
        body.extend_from_slice(&oid.to_be_bytes());
    }
    body.extend_from_slice(&short(source.len())?);
    body.extend_from_slice(source.as_bytes());
    body.extend_from_slice(&u32::try_from(encoded.len()).ok()?.to_be_bytes());
    body.extend_from_slice(encoded);
    body.extend_from_slice(&short(not_null.len())?);
    body.extend(not_null.iter().map(|n| n.byte()));
    let mut out = Vec::with_capacity(5 + body.len());
    out.push(MARK);
    out.extend_from_slice(&u32::try_from(body.len()).ok()?.to_be_bytes());
    out.extend_from_slice(&body);
    Some(out)
}

/// The statements of the section's bytes, in order. A record that does not read as
/// [`record`] writes it ends the list: the section holds nothing else (its name carries this
/// crate's version), so that is not expected to happen.
fn decode(mut bytes: &'static [u8]) -> Vec<Compiled> {
    let mut out = Vec::new();
    loop {
        // Note: a linker may pad between the pieces of the section with zeros.
        while let Some((0, rest)) = bytes.split_first() {
            bytes = rest;
        }
        let Some((&MARK, rest)) = bytes.split_first() else {
            return out;
        };
        let Some((len, rest)) = rest.split_first_chunk::<4>() else {
            return out;
        };
        let len = usize::try_from(u32::from_be_bytes(*len)).unwrap_or(usize::MAX);
        let Some((body, rest)) = rest.split_at_checked(len) else {
            return out;
        };
        bytes = rest;
        match decode_one(body) {
            Some(compiled) => out.push(compiled),
            None => return out,
        }
    }
}

/// One record's body as a [`Compiled`]: the template's name, source and bytes borrowed from
/// the section, its OIDs and the NOT NULL list (which need their own alignment) leaked once.
fn decode_one(body: &'static [u8]) -> Option<Compiled> {
    let mut rest = body;
    let mut take = |len: usize| -> Option<&'static [u8]> {
        let (part, tail) = rest.split_at_checked(len)?;
        rest = tail;
        Some(part)
    };
    let short = |part: &[u8]| {
        part.first_chunk::<2>()
            .map(|n| usize::from(u16::from_be_bytes(*n)))
    };
    let len = short(take(2)?)?;
    let name = std::str::from_utf8(take(len)?).ok()?;
    let count = short(take(2)?)?;
    let param_oids: Vec<Oid> = take(count.checked_mul(4)?)?
        .chunks_exact(4)
        .map(|c| Oid::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let len = short(take(2)?)?;
    let source = std::str::from_utf8(take(len)?).ok()?;
    let len = take(4)?
        .first_chunk::<4>()
        .map(|n| u32::from_be_bytes(*n))?;
    let encoded = take(usize::try_from(len).ok()?)?;
    let count = short(take(2)?)?;
    let not_null = take(count)?
        .iter()
        .map(|b| NotNull::from_byte(*b))
        .collect::<Option<Vec<_>>>()?;
    Some(Compiled {
        template: Box::leak(Box::new(Template {
            name,
            param_oids: Box::leak(param_oids.into_boxed_slice()),
            encoded,
            source,
            // Note: the registry's templates are only described, never run.
            changes_session: true,
        })),
        not_null: Box::leak(not_null.into_boxed_slice()),
    })
}

/// The section names `qail!` places its records in, per object format: what it
/// passes to `__registry_section!`, which picks the target's. Not a public API.
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

/// The one of [`SECTIONS`]' names (passed in their order: ELF, Mach-O, Windows) that the
/// target this crate is built for uses: `qail!` names the section with one attribute,
/// `#[unsafe(link_section = ::qail::__private::registry_section!(…))]`, where a `cfg_attr`
/// per object format cost the compiler as much again as the rest of the registration. Not a
/// public API.
#[cfg(all(unix, not(target_vendor = "apple")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __registry_section {
    ($elf:literal, $mach_o:literal, $windows:literal) => {
        $elf
    };
}

/// The one of [`SECTIONS`]' names (passed in their order: ELF, Mach-O, Windows) that the
/// target this crate is built for uses. Not a public API.
#[cfg(target_vendor = "apple")]
#[doc(hidden)]
#[macro_export]
macro_rules! __registry_section {
    ($elf:literal, $mach_o:literal, $windows:literal) => {
        $mach_o
    };
}

/// The one of [`SECTIONS`]' names (passed in their order: ELF, Mach-O, Windows) that the
/// target this crate is built for uses. Not a public API.
#[cfg(windows)]
#[doc(hidden)]
#[macro_export]
macro_rules! __registry_section {
    ($elf:literal, $mach_o:literal, $windows:literal) => {
        $windows
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
        static DECODED: OnceLock<&'static [Compiled]> = OnceLock::new();
        DECODED.get_or_init(|| Box::leak(decode(section()).into_boxed_slice()))
    }
}

/// The bytes of the section: every record of the binary.
fn section() -> &'static [u8] {
    let (start, stop) = bounds();
    // Note: the compiler sees `start` as the address of a zero-sized static; hiding it
    // keeps it from reasoning about what lies past that static.
    let start = std::hint::black_box(start);
    let len = stop.addr().saturating_sub(start.addr());
    if len == 0 {
        return &[];
    }
    // SAFETY: the linker put every record of the section between `start` and `stop`, one
    // after the other (bytes, so any alignment will do): initialised and immutable for the
    // whole program.
    unsafe { std::slice::from_raw_parts(start, len) }
}

/// The first statement of the section and the end of the section.
#[cfg(all(unix, not(target_vendor = "apple")))]
fn bounds() -> (*const u8, *const u8) {
    // Note: the section must exist in every binary, also one without `qail!` statements,
    // for the linker to define its bounds.
    #[used]
    #[unsafe(link_section = section!(elf))]
    static PRESENT: [u8; 0] = [];
    unsafe extern "Rust" {
        #[link_name = concat!("__start_", section!(elf))]
        static START: [u8; 0];
        #[link_name = concat!("__stop_", section!(elf))]
        static STOP: [u8; 0];
    }
    ((&raw const START).cast(), (&raw const STOP).cast())
}

/// The first statement of the section and the end of the section.
#[cfg(target_vendor = "apple")]
fn bounds() -> (*const u8, *const u8) {
    unsafe extern "Rust" {
        #[link_name = concat!("\x01section$start$__DATA$", section!(mach_o_name))]
        static START: [u8; 0];
        #[link_name = concat!("\x01section$end$__DATA$", section!(mach_o_name))]
        static STOP: [u8; 0];
    }
    ((&raw const START).cast(), (&raw const STOP).cast())
}

/// The first statement of the section and the end of the section.
#[cfg(windows)]
fn bounds() -> (*const u8, *const u8) {
    // Note: the markers are not zero-sized (some code generators write a byte for a
    // zero-sized static in a section of its own); they are zeros, which the reader skips
    // like any padding, so the statements start after the first.
    #[used]
    #[unsafe(link_section = section!(windows "a"))]
    static START: usize = 0;
    #[used]
    #[unsafe(link_section = section!(windows "c"))]
    static STOP: usize = 0;
    let start = (&raw const START).wrapping_add(1).cast::<u8>();
    (start, (&raw const STOP).cast())
}

#[cfg(not(any(unix, windows)))]
compile_error!(
    "qail's registry of compiled statements supports ELF, Mach-O and PE/COFF targets only"
);

#[cfg(test)]
mod tests {
    use super::*;

    /// What `record` writes for the statement `q_registry_test` (no parameters, written at
    /// `registry.rs`, an empty template, two columns: NOT NULL and nullable).
    const RECORD: [u8; 45] =
        *b"Q\0\0\0\x28\0\x0fq_registry_test\0\0\0\x0bregistry.rs\0\0\0\0\0\x02\x01\x02";

    // Placed as `qail!` places its statements.
    #[used]
    #[cfg_attr(
        all(unix, not(target_vendor = "apple")),
        unsafe(link_section = section!(elf))
    )]
    #[cfg_attr(target_vendor = "apple", unsafe(link_section = section!(mach_o)))]
    #[cfg_attr(windows, unsafe(link_section = section!(windows "b")))]
    static REGISTERED: [u8; 45] = RECORD;

    #[test]
    fn the_macro_names_this_target_s_section() {
        let chosen = crate::__registry_section!("elf", "mach_o", "windows");
        let expected = if cfg!(windows) {
            "windows"
        } else if cfg!(target_vendor = "apple") {
            "mach_o"
        } else {
            "elf"
        };
        assert_eq!(chosen, expected);
    }

    #[test]
    fn a_record_is_what_the_macro_writes() {
        let record = record(
            "q_registry_test",
            &[],
            "registry.rs",
            &[],
            &[NotNull::Yes, NotNull::No],
        );
        assert_eq!(record.as_deref(), Some(&RECORD[..]));
    }

    #[test]
    fn records_read_back_whatever_lies_between_them() {
        let encoded =
            Template::encode("SELECT $1::int4 AS n", &[23], &[("n", 23, "int4")]).expect("encodes");
        let one = record(
            &encoded.name,
            &[23],
            "src/a.rs:7",
            &encoded.bytes,
            &[NotNull::Unknown],
        )
        .expect("fits");
        let mut section = vec![0; 3];
        section.extend_from_slice(&one);
        section.extend_from_slice(&[0; 5]);
        section.extend_from_slice(&RECORD);
        let found = decode(Box::leak(section.into_boxed_slice()));
        assert_eq!(found.len(), 2, "{found:?}");
        let t = found[0].template;
        assert_eq!(
            (t.name, t.param_oids, t.source, t.sql()),
            (
                encoded.name.as_str(),
                &[23][..],
                "src/a.rs:7",
                "SELECT $1::int4 AS n"
            )
        );
        assert_eq!(t.columns().map(|c| c.name).collect::<Vec<_>>(), ["n"]);
        assert_eq!(found[0].not_null, &[NotNull::Unknown]);
        assert_eq!(found[1].template.name, "q_registry_test");
        assert_eq!(found[1].not_null, &[NotNull::Yes, NotNull::No]);
    }

    #[test]
    fn a_damaged_record_ends_the_list_without_reading_past_it() {
        let mut section = RECORD.to_vec();
        section.extend_from_slice(b"Q\0\0\0\xff\0");
        section.extend_from_slice(&RECORD);
        let found = decode(Box::leak(section.into_boxed_slice()));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(record("x", &[0; 70_000], "", &[], &[]).is_none());
    }

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
        assert_eq!(found[0].template.source, "registry.rs");
        // The section's bytes are the static's.
        assert!(std::ptr::eq(
            found[0].template.name.as_ptr(),
            REGISTERED[7..].as_ptr()
        ));
    }
}
