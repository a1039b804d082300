//! Compile-time type checks for compiled queries.
//!
//! [`pg`] holds one marker type per PostgreSQL type. `qail!` checks every argument with
//! [`ToPg`] and every field of a user's row struct with [`FromPg`], so a mismatch is a rustc
//! error at the argument or field, reading like "parameter $1 is PostgreSQL `int4`: `&str`
//! cannot be sent as it". Nothing here exists at run time but [`ToArg`], which makes a
//! checked argument an [`Arg`].

use crate::template::Arg;

/// Marker types naming PostgreSQL types, as `pg_type.typname` spells them.
#[allow(
    non_camel_case_types,
    reason = "markers are spelled like PostgreSQL's type names so diagnostics read `int4`"
)]
pub mod pg {
    macro_rules! markers {
        ($($name:ident),* $(,)?) => {$(
            #[doc = concat!("PostgreSQL `", stringify!($name), "`.")]
            #[derive(Debug, Clone, Copy)]
            pub struct $name;
        )*};
    }
    // Note: one marker per built-in type qail! maps (the list is generated into qail-catalog
    // from its reviewed type input), and `citext`, an extension type qail also maps.
    qail_catalog::mapped_types!(markers);
    markers!(citext);

    /// A one-dimensional array of `P`.
    #[derive(Debug, Clone, Copy)]
    pub struct array<P>(P);

    /// A user-defined enum; the label set is checked when the Rust enum is derived.
    #[derive(Debug, Clone, Copy)]
    pub struct user_enum;
}

/// `Self` can be sent as parameter `$N` of PostgreSQL type `P`.
#[diagnostic::on_unimplemented(
    message = "parameter ${N} is PostgreSQL `{P}`: `{Self}` cannot be sent as it",
    label = "expected a value of a Rust type that maps to `{P}`",
    note = "pass a value of the Rust type for `{P}` (see the type table in qail's docs), or cast the parameter in SQL (`${N}::type`)"
)]
pub trait ToPg<P, const N: usize> {
    /// [`IsOption`] for an `Option` (or a reference to one), else [`NotOption`]: what decides
    /// whether the argument may stand where NULL is not meaningful.
    type Null;
}

/// [`ToPg::Null`] of a value that cannot be NULL.
#[derive(Debug, Clone, Copy)]
pub struct NotOption;

/// [`ToPg::Null`] of an `Option`, or a reference to one: it can be NULL.
#[derive(Debug, Clone, Copy)]
pub struct IsOption;

/// `Self` can hold a value read from result column `C` (1-based) of PostgreSQL type `P`.
#[diagnostic::on_unimplemented(
    message = "result column {C} is PostgreSQL `{P}`: it cannot be read into `{Self}`",
    label = "expected a field of a Rust type that maps to `{P}`",
    note = "change the field's type to the Rust type for `{P}`, or cast the column in SQL (`col::type AS col`)"
)]
pub trait FromPg<P, const C: usize> {}

/// Reported when an `Option` is passed for a parameter where NULL is not meaningful.
#[diagnostic::on_unimplemented(
    message = "parameter ${N} cannot be NULL here, but an `Option` was passed",
    label = "pass the value itself, not an `Option`",
    note = "NULL would make this comparison NULL, so no row would match; to match NULL, write `col IS NOT DISTINCT FROM ${N}` or `(${N} IS NULL OR col = ${N})`"
)]
pub trait NullNotAllowed<const N: usize> {}

impl<const N: usize> NullNotAllowed<N> for NotOption {}

/// Reported when the argument of a parameter inside an optional clause is not an `Option`.
#[diagnostic::on_unimplemented(
    message = "parameter ${N} is in an optional clause `{{? … }}`, so its argument must be an `Option`",
    label = "pass an `Option`: the clause is included when it is `Some`",
    note = "write the condition outside `{{? … }}` if it always applies"
)]
pub trait ClauseArgument<const N: usize> {}

impl<const N: usize> ClauseArgument<N> for IsOption {}

/// Reported when a bulk insert sends an `Option` field to a NOT NULL column.
#[diagnostic::on_unimplemented(
    message = "parameter ${N} fills a NOT NULL column, but the rows' field for it is an `Option`",
    label = "a NULL would be refused by the table",
    note = "make the field a plain value, or leave the column out of the insert to take its default"
)]
pub trait NotNullColumn<const N: usize> {}

impl<const N: usize> NotNullColumn<N> for NotOption {}

/// Whether an optional clause's argument is `Some`.
#[diagnostic::on_unimplemented(
    message = "the argument of an optional clause `{{? … }}` must be an `Option`, not `{Self}`",
    label = "the clause is included when this is `Some`"
)]
pub trait Present {
    /// `true` for `Some`.
    fn present(&self) -> bool;
}

#[diagnostic::do_not_recommend]
impl<T> Present for Option<T> {
    fn present(&self) -> bool {
        self.is_some()
    }
}

#[diagnostic::do_not_recommend]
impl<T: Present + ?Sized> Present for &T {
    fn present(&self) -> bool {
        (**self).present()
    }
}

#[diagnostic::do_not_recommend]
impl<T: ToPg<P, N> + ?Sized, P, const N: usize> ToPg<P, N> for &T {
    type Null = T::Null;
}

#[diagnostic::do_not_recommend]
impl<T: ToPg<P, N>, P, const N: usize> ToPg<P, N> for Option<T> {
    type Null = IsOption;
}

#[diagnostic::do_not_recommend]
impl<T: ToPg<P, N>, P, const N: usize> ToPg<pg::array<P>, N> for Vec<T> {
    type Null = NotOption;
}

#[diagnostic::do_not_recommend]
impl<T: ToPg<P, N>, P, const N: usize> ToPg<pg::array<P>, N> for [T] {
    type Null = NotOption;
}

#[diagnostic::do_not_recommend]
impl<R, T: ToPg<P, N>, P, const N: usize> ToPg<pg::array<P>, N>
    for crate::types::FieldArray<'_, R, T>
{
    /// Whether the field is an `Option`: a NOT NULL column refuses one.
    type Null = T::Null;
}

#[diagnostic::do_not_recommend]
impl<T: FromPg<P, C>, P, const C: usize> FromPg<P, C> for Option<T> {}

#[diagnostic::do_not_recommend]
impl<T: FromPg<P, C>, P, const C: usize> FromPg<pg::array<P>, C> for Vec<T> {}

/// Declares which Rust types map to a PostgreSQL type, both ways.
macro_rules! maps {
    ($($marker:ident => $($rust:ty),+;)*) => {$($(
        impl<const N: usize> ToPg<pg::$marker, N> for $rust {
            type Null = NotOption;
        }
        impl<const C: usize> FromPg<pg::$marker, C> for $rust {}
    )+)*};
}

/// Declares Rust types that can only be sent (borrowed forms).
macro_rules! sends {
    ($($marker:ident => $($rust:ty),+;)*) => {$($(
        impl<const N: usize> ToPg<pg::$marker, N> for $rust {
            type Null = NotOption;
        }
    )+)*};
}

maps! {
    bool => bool;
    int2 => i16;
    int4 => i32;
    int8 => i64;
    float4 => f32;
    float8 => f64;
    oid => u32;
    text => String;
    varchar => String;
    bpchar => String;
    name => String;
    text => Box<str>;
    varchar => Box<str>;
    citext => String;
    citext => Box<str>;
    citext => crate::types::Text<String>;
    bytea => Vec<u8>;
    interval => crate::types::Interval;
}

impl<const N: usize> ToPg<pg::user_enum, N> for crate::types::Text<String> {
    type Null = NotOption;
}
impl<const N: usize> ToPg<pg::user_enum, N> for crate::types::Text<&str> {
    type Null = NotOption;
}
impl<const C: usize> FromPg<pg::user_enum, C> for crate::types::Text<String> {}

sends! {
    text => str;
    varchar => str;
    bpchar => str;
    name => str;
    citext => str;
    bytea => [u8];
}

#[cfg(feature = "uuid")]
maps! { uuid => ::uuid::Uuid; }

#[cfg(feature = "json")]
maps! {
    json => ::serde_json::Value;
    jsonb => ::serde_json::Value;
}

#[cfg(feature = "json")]
impl<T, const N: usize> ToPg<pg::json, N> for crate::types::Json<T> {
    type Null = NotOption;
}
#[cfg(feature = "json")]
impl<T, const N: usize> ToPg<pg::jsonb, N> for crate::types::Json<T> {
    type Null = NotOption;
}
#[cfg(feature = "json")]
impl<T, const C: usize> FromPg<pg::json, C> for crate::types::Json<T> {}
#[cfg(feature = "json")]
impl<T, const C: usize> FromPg<pg::jsonb, C> for crate::types::Json<T> {}

#[cfg(feature = "net")]
maps! {
    inet => crate::types::Inet, ::std::net::IpAddr;
    cidr => crate::types::Cidr;
    macaddr => crate::types::MacAddr;
}

#[cfg(feature = "chrono")]
maps! {
    timestamptz => ::chrono::DateTime<::chrono::Utc>;
    timestamp => ::chrono::NaiveDateTime;
    date => ::chrono::NaiveDate;
    time => ::chrono::NaiveTime;
}

#[cfg(feature = "time")]
maps! {
    timestamptz => ::time::OffsetDateTime;
    timestamp => ::time::PrimitiveDateTime;
    date => ::time::Date;
    time => ::time::Time;
}

#[cfg(feature = "decimal")]
maps! { numeric => ::rust_decimal::Decimal; }

/// Ecosystem crates whose types qail maps, re-exported for the facade (present when the
/// matching feature is on).
pub mod ext {
    #[cfg(feature = "chrono")]
    pub use ::chrono;
    #[cfg(feature = "decimal")]
    pub use ::rust_decimal;
    #[cfg(feature = "json")]
    pub use ::serde;
    #[cfg(feature = "json")]
    pub use ::serde_json;
    #[cfg(feature = "time")]
    pub use ::time;
    #[cfg(feature = "uuid")]
    pub use ::uuid;
}

/// How a checked argument becomes an [`Arg`], one impl per Rust type that [`ToPg`] accepts:
/// a small `Copy` value is copied into it (so a query can outlive the expression that
/// computed it, as in `(0..n).map(|i| qail!("… $1", i * 2))`), text and bytes keep their own
/// lifetime `'b`, anything else is borrowed for `'a`, the borrow of the argument.
///
/// Note: one trait whose impls make the choice, so that each argument costs rustc one impl
/// resolution (and no method probing through autoderef).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent as a query parameter",
    label = "expected a value of a Rust type that maps to a PostgreSQL type",
    note = "pass a value of a Rust type from the type table in qail's docs, or a `#[derive(QailType)]` type"
)]
pub trait ToArg<'a, 'b> {
    /// The argument.
    fn to_arg(value: &'a Self) -> Arg<'b>;
}

macro_rules! to_arg_by_value {
    ($($(#[$cfg:meta])* $rust:ty => $variant:ident;)*) => {$(
        $(#[$cfg])*
        impl<'a, 'b> ToArg<'a, 'b> for $rust {
            #[inline]
            fn to_arg(value: &'a Self) -> Arg<'b> {
                Arg::$variant(*value)
            }
        }
    )*};
}

to_arg_by_value! {
    bool => Bool;
    i16 => I16;
    i32 => I32;
    i64 => I64;
    u32 => U32;
    f32 => F32;
    f64 => F64;
    crate::types::Interval => Interval;
    #[cfg(feature = "uuid")]
    ::uuid::Uuid => Uuid;
    #[cfg(feature = "chrono")]
    ::chrono::DateTime<::chrono::Utc> => Timestamptz;
    #[cfg(feature = "chrono")]
    ::chrono::NaiveDateTime => Timestamp;
    #[cfg(feature = "chrono")]
    ::chrono::NaiveDate => Date;
    #[cfg(feature = "chrono")]
    ::chrono::NaiveTime => Time;
    #[cfg(feature = "time")]
    ::time::OffsetDateTime => OffsetDateTime;
    #[cfg(feature = "time")]
    ::time::PrimitiveDateTime => PrimitiveDateTime;
    #[cfg(feature = "time")]
    ::time::Date => TimeDate;
    #[cfg(feature = "time")]
    ::time::Time => TimeTime;
    #[cfg(feature = "decimal")]
    ::rust_decimal::Decimal => Decimal;
}

/// Borrowed whole: types sent through their [`Encode`](crate::types::Encode) impl.
macro_rules! to_arg_by_ref {
    ($($(#[$cfg:meta])* [$($generics:tt)*] $rust:ty $(where $($bound:tt)+)?;)*) => {$(
        $(#[$cfg])*
        impl<'a, $($generics)*> ToArg<'a, 'a> for $rust $(where $($bound)+)? {
            #[inline]
            fn to_arg(value: &'a Self) -> Arg<'a> {
                Arg::Ref(value)
            }
        }
    )*};
}

to_arg_by_ref! {
    [S: AsRef<str> + Sync] crate::types::Text<S>;
    [T: crate::types::Encode + crate::types::ArrayElement + Sync] Vec<T>;
    ['x, T: crate::types::Encode + crate::types::ArrayElement + Sync] &'x [T];
    ['f, R: Sync, T: crate::types::Encode + crate::types::ArrayElement]
        crate::types::FieldArray<'f, R, T>;
    #[cfg(feature = "json")]
    [] ::serde_json::Value;
    #[cfg(feature = "json")]
    [T: ::serde::Serialize + Sync] crate::types::Json<T>;
    #[cfg(feature = "net")]
    [] crate::types::Inet;
    #[cfg(feature = "net")]
    [] ::std::net::IpAddr;
    #[cfg(feature = "net")]
    [] crate::types::Cidr;
    #[cfg(feature = "net")]
    [] crate::types::MacAddr;
}

impl<'a> ToArg<'a, 'a> for str {
    #[inline]
    fn to_arg(value: &'a str) -> Arg<'a> {
        Arg::Str(value)
    }
}

impl<'a> ToArg<'a, 'a> for String {
    #[inline]
    fn to_arg(value: &'a String) -> Arg<'a> {
        Arg::Str(value)
    }
}

impl<'a> ToArg<'a, 'a> for Box<str> {
    #[inline]
    fn to_arg(value: &'a Box<str>) -> Arg<'a> {
        Arg::Str(value)
    }
}

impl<'a> ToArg<'a, 'a> for Vec<u8> {
    #[inline]
    fn to_arg(value: &'a Vec<u8>) -> Arg<'a> {
        Arg::Bytes(value)
    }
}

impl<'a, 'x> ToArg<'a, 'x> for &'x [u8] {
    #[inline]
    fn to_arg(value: &'a &'x [u8]) -> Arg<'x> {
        Arg::Bytes(value)
    }
}

/// A reference passes on what it points to: `&'x str` gives text borrowed for `'x`, however
/// short-lived the variable holding the reference.
impl<'a, 'x, 'b, T: ToArg<'x, 'b> + ?Sized> ToArg<'a, 'b> for &'x T {
    #[inline]
    fn to_arg(value: &'a &'x T) -> Arg<'b> {
        T::to_arg(*value)
    }
}

impl<'a, 'b, T: ToArg<'a, 'b>> ToArg<'a, 'b> for Option<T> {
    #[inline]
    fn to_arg(value: &'a Option<T>) -> Arg<'b> {
        value.as_ref().map_or(Arg::Null, T::to_arg)
    }
}

/// Compile-time type assertions used by the code `qail!` emits (an argument against its
/// parameter's type, a field against its column's); each is the identity at run time, or the
/// conversion of a checked argument into an [`Arg`]. (What the connection checks at run time,
/// the server's Describe among it, is `template::conformance`.)
pub mod assertions {
    use super::{ClauseArgument, FromPg, NotNullColumn, NullNotAllowed, Present, ToArg, ToPg};
    use crate::template::Arg;

    /// Checks argument `$N` against PostgreSQL type `P` and makes it an [`Arg`] (see
    /// [`ToArg`]); an `Option` is accepted (the parameter may be NULL).
    #[inline]
    pub fn arg<'a, 'b, T, P, const N: usize>(value: &'a T) -> Arg<'b>
    where
        T: ToPg<P, N> + ToArg<'a, 'b>,
    {
        T::to_arg(value)
    }

    /// Checks argument `$N` against PostgreSQL type `P`, where NULL is not meaningful: an
    /// `Option`, or a reference to one, fails with [`NullNotAllowed`]'s message.
    #[inline]
    pub fn arg_non_null<'a, 'b, T, P, const N: usize>(value: &'a T) -> Arg<'b>
    where
        T: ToPg<P, N, Null: NullNotAllowed<N>> + ToArg<'a, 'b>,
    {
        T::to_arg(value)
    }

    /// Checks argument `$N` of an optional clause: an `Option` of a value for PostgreSQL type
    /// `P` (a `None` leaves the clause out and is bound as NULL).
    #[inline]
    pub fn clause_arg<'a, 'b, T, P, const N: usize>(value: &'a T) -> Arg<'b>
    where
        T: ToPg<P, N, Null: ClauseArgument<N>> + ToArg<'a, 'b>,
    {
        T::to_arg(value)
    }

    /// Checks the column values `$N` of a bulk insert into a NOT NULL column: the rows' field
    /// is not an `Option`.
    #[inline]
    pub fn not_null_column<'a, 'b, T, P, const N: usize>(value: &'a T) -> Arg<'b>
    where
        T: ToPg<P, N, Null: NotNullColumn<N>> + ToArg<'a, 'b>,
    {
        T::to_arg(value)
    }

    /// Checks argument `$N` for a NOT NULL column of an INSERT or UPDATE against PostgreSQL
    /// type `P`. `column` is the method of a trait `qail!` declares at the call site,
    /// implemented for [`NotOption`](super::NotOption) alone, with a message that names the
    /// column: as it takes the argument's [`ToPg::Null`], an `Option` fails with that
    /// message, spanned at the argument.
    #[inline]
    pub fn not_null<'a, 'b, T, P, const N: usize>(value: &'a T, column: fn(&T::Null)) -> Arg<'b>
    where
        T: ToPg<P, N> + ToArg<'a, 'b>,
    {
        let _ = column;
        T::to_arg(value)
    }

    /// Whether an optional clause's argument is `Some`.
    pub fn present<T: Present + ?Sized>(value: &T) -> bool {
        value.present()
    }

    /// Checks that a field of type `T` can hold result column `C` of PostgreSQL type `P`.
    pub fn field<T: FromPg<P, C>, P, const C: usize>(value: T) -> T {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::assertions::field;
    use super::*;
    use crate::types::Param;

    fn sendable<T: ToPg<P, 1> + ?Sized, P>() {}

    #[test]
    fn rust_types_map_to_their_pg_types() {
        sendable::<i32, pg::int4>();
        sendable::<&str, pg::text>();
        sendable::<Option<&String>, pg::varchar>();
        sendable::<Vec<i64>, pg::array<pg::int8>>();
        sendable::<&[f64], pg::array<pg::float8>>();
        sendable::<&str, pg::citext>();
        sendable::<String, pg::citext>();
        assert_eq!(field::<_, pg::citext, 1>(String::from("Ci")), "Ci");
        assert_eq!(field::<_, pg::int2, 1>(Some(3i16)), Some(3));
        assert_eq!(field::<_, pg::array<pg::bool>, 1>(vec![true]), vec![true]);
    }

    fn text_arg(name: &str) -> Arg<'_> {
        let local = name;
        assertions::arg::<_, pg::text, 1>(&local)
    }

    #[test]
    fn small_values_are_copied_text_reborrowed_and_others_borrowed() {
        let owned = {
            let n = 40_i64;
            assertions::arg::<_, pg::int8, 1>(&(n + 2))
        };
        assert!(matches!(owned, Arg::I64(42)));
        let by_ref = 7_i32;
        assert!(matches!(
            assertions::arg::<_, pg::int4, 1>(&&by_ref),
            Arg::I32(7)
        ));
        assert!(matches!(
            assertions::arg::<_, pg::float8, 1>(&None::<f64>),
            Arg::Null
        ));
        assert!(matches!(text_arg("harbor"), Arg::Str("harbor")));
        let name = String::from("harbor");
        assert!(matches!(
            assertions::arg::<_, pg::text, 1>(&Some(&name)),
            Arg::Str("harbor")
        ));
        let bytes: &[u8] = b"\x01";
        assert!(matches!(
            assertions::arg::<_, pg::bytea, 1>(&bytes),
            Arg::Bytes(b"\x01")
        ));
        let array = vec![1_i32, 2];
        assert!(matches!(
            assertions::arg::<_, pg::array<pg::int4>, 1>(&array),
            Arg::Ref(_)
        ));
        let slice: &[i32] = &array;
        assert!(matches!(
            assertions::arg::<_, pg::array<pg::int4>, 1>(&slice),
            Arg::Ref(_)
        ));
        let mut buf = Vec::new();
        text_arg("harbor").as_encode().encode(25, &mut buf).unwrap();
        assert_eq!(buf, b"harbor");
        buf.clear();
        owned.as_encode().encode(20, &mut buf).unwrap();
        assert_eq!(buf, 42_i64.to_be_bytes());
    }

    #[test]
    fn a_not_null_column_check_takes_the_arguments_null_kind() {
        fn column(_: &NotOption) {}
        assert!(matches!(
            assertions::not_null::<_, pg::int4, 1>(&7_i32, column),
            Arg::I32(7)
        ));
        assert!(matches!(
            assertions::not_null::<_, pg::text, 2>(&"harbor", column),
            Arg::Str("harbor")
        ));
    }

    fn not_null<T: ToPg<P, 1, Null: NullNotAllowed<1>> + ?Sized, P>() {}

    #[test]
    fn plain_values_pass_where_null_is_not_allowed() {
        not_null::<i32, pg::int4>();
        not_null::<&str, pg::text>();
        not_null::<&&String, pg::text>();
        not_null::<&&&str, pg::text>();
        not_null::<&[u8], pg::bytea>();
        not_null::<&Vec<Option<i32>>, pg::array<pg::int4>>();
        not_null::<crate::types::Text<&str>, pg::user_enum>();
    }

    #[test]
    fn options_are_told_apart_however_deep() {
        fn null_of<T: ToPg<P, 1> + ?Sized, P>() -> &'static str {
            std::any::type_name::<T::Null>()
        }
        assert!(null_of::<Option<i32>, pg::int4>().ends_with("IsOption"));
        assert!(null_of::<&&Option<String>, pg::text>().ends_with("IsOption"));
        assert!(null_of::<Option<&str>, pg::text>().ends_with("IsOption"));
        assert!(null_of::<&i32, pg::int4>().ends_with("NotOption"));
    }
}
