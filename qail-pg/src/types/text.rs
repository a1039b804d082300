//! Text: `text`, `varchar`, `bpchar`, `name` and `unknown` ↔ `String`, `&str`, `Box<str>`,
//! `Cow<str>`; [`Text<S>`] for types whose OID differs per database (`citext`, enums).
//!
//! The binary form of these types is the UTF-8 text itself. A string containing NUL is sent
//! unchanged so the server rejects it with its own error (SQLSTATE 22021); nothing is stripped.

use std::borrow::Cow;

use super::{
    BoxError, Decode, Encode, IsNull, Oid, encode_checked, oid, owned, put_bytes, scalar_type,
};

/// Whether `ty` is a built-in type whose binary form is UTF-8 text (the OIDs `string!` lists).
fn is_text(ty: Oid) -> bool {
    matches!(
        ty,
        oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME | oid::UNKNOWN
    )
}

/// Reads UTF-8, naming the PostgreSQL type on failure.
#[inline]
fn utf8(ty: Oid, raw: &[u8]) -> Result<&str, BoxError> {
    match super::utf8::str_from(raw) {
        Ok(s) => Ok(s),
        Err(e) => Err(not_utf8(ty, e)),
    }
}

#[cold]
fn not_utf8(ty: Oid, e: std::str::Utf8Error) -> BoxError {
    format!(
        "a PostgreSQL `{}` value is not valid UTF-8 ({e}): set the database or client \
         encoding to UTF8, or read the column as `Vec<u8>` after casting it to bytea",
        oid::describe(ty)
    )
    .into()
}

/// [`scalar_type!`] for a string container, made from the checked `&str` by `$from`; a
/// leading `<'r>` borrows from the row.
macro_rules! string {
    ($from:expr, $($rust:tt)+) => {
        scalar_type!($($rust)+ => oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME | oid::UNKNOWN,
            array oid::TEXT_ARRAY,
            encode(|v, _, buf| put_bytes(buf, AsRef::<str>::as_ref(v).as_bytes())),
            decode(|ty, raw| utf8(ty, raw).map($from)));
    };
}

string!(owned::string, String);
string!(Into::into, <'r> &'r str);
string!(|s| owned::string(s).into_boxed_str(), Box<str>);
string!(Into::into, <'r> Cow<'r, str>);

/// A string sent or read as a type whose binary form is UTF-8 text but whose OID is not
/// fixed: `citext`, an enum, a domain over text created by an extension.
///
/// `String` accepts only the built-in text types. `Text<S>` also accepts any user-defined
/// type (OID ≥ [`oid::FIRST_USER_OID`]) — you vouch that its binary form is text. Built-in
/// types with another binary form (`int4`, `jsonb`…) are still refused. As a parameter it is
/// sent with OID 0, so the server infers the type from the query.
///
/// ```
/// # use qail_pg::types::{Decode, Text};
/// let name = <Text<String> as Decode>::decode(16_500, b"Alice").unwrap();
/// assert_eq!(name.0, "Alice");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Text<S = String>(pub S);

/// Whether `Text` may carry type `ty`.
fn text_like(ty: Oid) -> bool {
    is_text(ty) || ty >= oid::FIRST_USER_OID
}

impl<S: AsRef<str>> Encode for Text<S> {
    fn encode(&self, _: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        buf.extend_from_slice(self.0.as_ref().as_bytes());
        Ok(IsNull::No)
    }
    fn accepts(ty: Oid) -> bool {
        text_like(ty)
    }
    fn type_oid(&self) -> Oid {
        0
    }
    encode_checked!();
}

impl<'r, S: From<&'r str>> Decode<'r> for Text<S> {
    fn accepts(ty: Oid) -> bool {
        text_like(ty)
    }
    fn decode(ty: Oid, raw: &'r [u8]) -> Result<Self, BoxError> {
        utf8(ty, raw).map(|s| Text(S::from(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::*;

    #[test]
    fn text_is_its_utf8_bytes() {
        assert_eq!(enc(&"hé", oid::TEXT), Some("hé".as_bytes().to_vec()));
        assert_eq!(enc(&String::new(), oid::VARCHAR), Some(vec![]));
        assert_eq!(
            enc(&Box::<str>::from("x"), oid::BPCHAR),
            Some(b"x".to_vec())
        );
        assert_eq!(enc(&Cow::Borrowed("n"), oid::NAME), Some(b"n".to_vec()));
        assert_eq!(
            dec::<String>(oid::TEXT, "ünï".as_bytes()),
            Ok("ünï".to_owned())
        );
        assert_eq!(dec::<&str>(oid::VARCHAR, b""), Ok(""));
        assert!(matches!(
            dec::<Cow<str>>(oid::TEXT, b"b"),
            Ok(Cow::Borrowed("b"))
        ));
        assert_eq!(dec::<Box<str>>(oid::NAME, b"pg"), Ok("pg".into()));
        assert_eq!(dec::<String>(oid::TEXT, b""), Ok(String::new()));
        assert_eq!(dec::<Box<str>>(oid::TEXT, b""), Ok("".into()));
    }

    #[test]
    fn nul_is_sent_unchanged() {
        assert_eq!(enc(&"a\0b", oid::TEXT), Some(b"a\0b".to_vec()));
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let err = dec::<String>(oid::TEXT, &[0xff, 0xfe]).unwrap_err();
        assert!(err.contains("not valid UTF-8"), "{err}");
    }

    #[test]
    fn only_text_types_are_accepted() {
        assert!(!<String as Encode>::accepts(oid::INT4));
        assert!(!<String as Decode>::accepts(oid::JSONB));
        assert!(!<String as Decode>::accepts(16_500));
        let err = dec::<String>(16_500, b"x").unwrap_err();
        assert!(err.contains("Text<String>"), "{err}");
    }

    #[test]
    fn text_wrapper_accepts_user_types_but_not_other_builtins() {
        assert_eq!(
            dec::<Text<String>>(16_500, b"Mixed"),
            Ok(Text("Mixed".to_owned()))
        );
        assert_eq!(dec::<Text<&str>>(oid::TEXT, b"t"), Ok(Text("t")));
        assert!(dec::<Text>(oid::INT4, b"abcd").is_err());
        assert_eq!(enc(&Text("happy"), 16_501), Some(b"happy".to_vec()));
        assert_eq!(Text("x").type_oid(), 0);
        let mut buf = Vec::new();
        assert!(Text("1234").encode_checked(oid::INT4, &mut buf).is_err());
    }
}
