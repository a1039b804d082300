//! Binary round trips through the server: every value is sent as a parameter, cast by the
//! server (`SELECT $1::type`), and read back; server-made literals are read as well, so an
//! encoder and decoder that are wrong in the same way cannot pass.

mod ecosystem;

use std::borrow::Cow;
use std::fmt::Debug;

use qail_pg::types::{BoxError, Interval, Text, oid, record};
use qail_pg::{Connection, Decode, Encode, Oid};

/// Sends `v` as `$1::pg` and reads it back.
async fn echo<T>(conn: &mut Connection, pg: &str, v: &T) -> T
where
    T: Encode + Sync + for<'r> Decode<'r>,
{
    let sql = format!("SELECT $1::{pg}");
    let rows = conn
        .query(&sql, &[v])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows[0]
        .try_get::<T>(0)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Sends `v` as `$1::pg` and asserts it comes back equal.
async fn round_trip<T>(conn: &mut Connection, pg: &str, v: T)
where
    T: Encode + Sync + for<'r> Decode<'r> + PartialEq + Debug,
{
    let back = echo(conn, pg, &v).await;
    assert_eq!(back, v, "$1::{pg}");
}

/// Reads the single value `sql` returns.
async fn value<T>(conn: &mut Connection, sql: &str) -> T
where
    T: for<'r> Decode<'r>,
{
    try_value(conn, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Reads the single value `sql` returns, or the error's text.
async fn try_value<T>(conn: &mut Connection, sql: &str) -> Result<T, String>
where
    T: for<'r> Decode<'r>,
{
    let row = conn
        .query_one(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    row.try_get::<T>(0).map_err(|e| e.to_string())
}

/// Whether the server compares `$1::pg` equal to the SQL literal `literal`.
async fn server_equals(
    conn: &mut Connection,
    pg: &str,
    v: &(dyn Encode + Sync),
    literal: &str,
) -> bool {
    let sql = format!("SELECT $1::{pg} IS NOT DISTINCT FROM {literal}");
    let row = conn
        .query_one(&sql, &[v])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    row.get::<bool>(0)
}

#[tokio::test]
async fn integers_and_bool_at_their_limits() {
    let mut c = super::connect().await;
    for v in [i16::MIN, -1, 0, i16::MAX] {
        round_trip(&mut c, "int2", v).await;
    }
    for v in [i32::MIN, -1, 0, i32::MAX] {
        round_trip(&mut c, "int4", v).await;
    }
    for v in [i64::MIN, -1, 0, i64::MAX] {
        round_trip(&mut c, "int8", v).await;
    }
    for v in [0u32, 26, u32::MAX] {
        round_trip(&mut c, "oid", v).await;
    }
    round_trip(&mut c, "\"char\"", i8::try_from(b'q').unwrap()).await;
    round_trip(&mut c, "bool", true).await;
    round_trip(&mut c, "bool", false).await;
    assert_eq!(
        value::<i64>(&mut c, "SELECT (-9223372036854775808)::int8").await,
        i64::MIN
    );
    assert_eq!(value::<i16>(&mut c, "SELECT 32767::int2").await, i16::MAX);
    assert!(value::<bool>(&mut c, "SELECT 't'::bool").await);
    assert_eq!(
        value::<u32>(&mut c, "SELECT 'pg_type'::regclass").await,
        1247
    );
    assert!(server_equals(&mut c, "int8", &i64::MIN, "(-9223372036854775808)::int8").await);
}

#[tokio::test]
async fn floats_keep_nan_infinities_and_negative_zero() {
    let mut c = super::connect().await;
    for v in [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        0.1,
        f64::MAX,
        f64::MIN_POSITIVE,
    ] {
        let back = echo(&mut c, "float8", &v).await;
        assert_eq!(back.to_bits(), v.to_bits(), "{v}");
    }
    for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 1.5] {
        let back = echo(&mut c, "float4", &v).await;
        assert_eq!(back.to_bits(), v.to_bits(), "{v}");
    }
    assert!(value::<f64>(&mut c, "SELECT 'NaN'::float8").await.is_nan());
    assert_eq!(
        value::<f64>(&mut c, "SELECT '-Infinity'::float8").await,
        f64::NEG_INFINITY
    );
    assert_eq!(value::<f64>(&mut c, "SELECT 1.5::float8").await, 1.5);
    assert_eq!(value::<f32>(&mut c, "SELECT 0.25::float4").await, 0.25);
    assert!(server_equals(&mut c, "float8", &f64::INFINITY, "'Infinity'::float8").await);
}

#[tokio::test]
async fn text_types_empty_and_unicode() {
    let mut c = super::connect().await;
    for s in [
        "",
        "plain",
        "ünïcödé ✓ 漢字 🦀",
        "e\u{301}",
        "'quotes' \\ \"",
        &"x".repeat(100_000),
    ] {
        round_trip(&mut c, "text", s.to_owned()).await;
        round_trip(&mut c, "varchar", s.to_owned()).await;
    }
    round_trip(&mut c, "bpchar", "padded".to_owned()).await;
    round_trip(&mut c, "name", "pg_catalog".to_owned()).await;
    round_trip(&mut c, "text", Box::<str>::from("boxed")).await;
    let cow = Cow::<str>::Owned("cow".into());
    let rows = c.query("SELECT $1::text", &[&cow]).await.unwrap();
    assert_eq!(rows[0].get::<Cow<str>>(0), "cow");
    let rows = c.query("SELECT $1::text", &[&"borrowed"]).await.unwrap();
    assert_eq!(rows[0].get::<&str>(0), "borrowed");
    assert_eq!(
        value::<String>(&mut c, "SELECT 'héllo'::text").await,
        "héllo"
    );
    assert_eq!(
        value::<String>(&mut c, "SELECT 'ab'::char(4)").await,
        "ab  "
    );
    assert_eq!(
        value::<String>(&mut c, "SELECT current_database()::name").await,
        "postgres"
    );
    assert!(server_equals(&mut c, "text", &"漢字", "'漢字'").await);
}

#[tokio::test]
async fn text_with_nul_is_refused_by_the_server() {
    let mut c = super::connect().await;
    let err = c.query("SELECT $1::text", &[&"a\0b"]).await.unwrap_err();
    assert_eq!(err.code(), Some("22021"), "{err}");
    // The connection stays usable after the server's error.
    round_trip(&mut c, "text", "after".to_owned()).await;
}

#[tokio::test]
async fn bytea_all_byte_values() {
    let mut c = super::connect().await;
    let all: Vec<u8> = (0..=255).collect();
    round_trip(&mut c, "bytea", all.clone()).await;
    round_trip(&mut c, "bytea", Vec::<u8>::new()).await;
    let rows = c.query("SELECT $1::bytea", &[&&all[..]]).await.unwrap();
    assert_eq!(rows[0].get::<&[u8]>(0), &all[..]);
    assert_eq!(
        value::<Vec<u8>>(&mut c, "SELECT '\\x00ff10'::bytea").await,
        [0, 255, 16]
    );
    assert!(
        server_equals(
            &mut c,
            "bytea",
            &all,
            "(SELECT string_agg(set_byte('\\x00'::bytea, 0, i), '') FROM generate_series(0, 255) i)"
        )
        .await
    );
}

#[tokio::test]
async fn intervals() {
    let mut c = super::connect().await;
    for v in [
        Interval::new(0, 0, 0),
        Interval::new(14, 3, 1_500_000),
        Interval::new(-1, -2, -3),
        Interval::new(0, 0, 86_400_000_000 * 3),
    ] {
        round_trip(&mut c, "interval", v).await;
    }
    let v = value::<Interval>(&mut c, "SELECT '1 year 2 mons 3 days 00:00:01.5'::interval").await;
    assert_eq!(v, Interval::new(14, 3, 1_500_000));
    let v = value::<Interval>(&mut c, "SELECT '-1 day -00:00:00.000001'::interval").await;
    assert_eq!(v, Interval::new(0, -1, -1));
}

#[tokio::test]
async fn nulls_through_option() {
    let mut c = super::connect().await;
    round_trip(&mut c, "int4", None::<i32>).await;
    round_trip(&mut c, "text", Some("x".to_owned())).await;
    round_trip(&mut c, "text", None::<String>).await;
    let err = try_value::<i32>(&mut c, "SELECT NULL::int4")
        .await
        .unwrap_err();
    assert!(err.contains("Option<i32>"), "{err}");
}

#[tokio::test]
async fn arrays_with_nulls_and_empty() {
    let mut c = super::connect().await;
    round_trip(&mut c, "int4[]", vec![Some(1), None, Some(i32::MIN)]).await;
    round_trip(&mut c, "int8[]", vec![i64::MAX, 0]).await;
    round_trip(&mut c, "text[]", Vec::<String>::new()).await;
    round_trip(
        &mut c,
        "text[]",
        vec!["a".to_owned(), String::new(), "🦀,{}\"".to_owned()],
    )
    .await;
    round_trip(&mut c, "varchar[]", vec![Some("v".to_owned()), None]).await;
    round_trip(&mut c, "bytea[]", vec![vec![0u8, 255], vec![]]).await;
    round_trip(&mut c, "bool[]", vec![true, false]).await;
    round_trip(&mut c, "float8[]", vec![1.5, f64::INFINITY]).await;
    round_trip(&mut c, "interval[]", vec![Interval::new(1, 2, 3)]).await;
    let slice: &[i16] = &[1, 2, 3];
    let rows = c.query("SELECT $1::int2[]", &[&slice]).await.unwrap();
    assert_eq!(rows[0].get::<Vec<i16>>(0), slice);

    let v = value::<Vec<Option<i32>>>(&mut c, "SELECT '{1,NULL,3}'::int4[]").await;
    assert_eq!(v, [Some(1), None, Some(3)]);
    let err = try_value::<Vec<i32>>(&mut c, "SELECT '{1,NULL,3}'::int4[]")
        .await
        .unwrap_err();
    assert!(err.contains("Option<i32>"), "{err}");
    assert_eq!(
        value::<Vec<String>>(&mut c, "SELECT '{}'::text[]").await,
        Vec::<String>::new()
    );
    assert_eq!(
        value::<Vec<i32>>(&mut c, "SELECT '[0:1]={7,8}'::int4[]").await,
        [7, 8]
    );
    let err = try_value::<Vec<i32>>(&mut c, "SELECT ARRAY[[1,2],[3,4]]")
        .await
        .unwrap_err();
    assert!(err.contains("2-dimensional"), "{err}");
    assert!(server_equals(&mut c, "int4[]", &vec![Some(1), None], "'{1,NULL}'::int4[]").await);
    let rows = c
        .query("SELECT 2 = ANY($1)", &[&vec![1i32, 2]])
        .await
        .unwrap();
    assert!(rows[0].get::<bool>(0));
}

#[tokio::test]
async fn mismatched_types_are_errors_that_name_the_fix() {
    let mut c = super::connect().await;
    let err = c.query("SELECT $1::int8", &[&1i32]).await.unwrap_err();
    assert!(err.to_string().contains("i64"), "{err}");
    let err = c.query("SELECT $1::int4", &[&"1"]).await.unwrap_err();
    assert!(err.to_string().contains("i32"), "{err}");
    let err = c
        .query("SELECT $1::int4[]", &[&vec![1i64]])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("int4[]"), "{err}");
    assert!(try_value::<i32>(&mut c, "SELECT 1::int8").await.is_err());
    assert!(try_value::<String>(&mut c, "SELECT 1::int4").await.is_err());
    round_trip(&mut c, "int4", 5i32).await;
}

#[tokio::test]
async fn user_types_whose_binary_form_is_text() {
    let mut c = super::connect().await;
    c.batch_execute("CREATE TYPE pg_temp.qail_mood AS ENUM ('happy', 'sad')")
        .await
        .unwrap();
    let v = value::<Text<String>>(&mut c, "SELECT 'happy'::pg_temp.qail_mood").await;
    assert_eq!(v.0, "happy");
    // `String` holds only the built-in text types; the wrapper is the documented way in.
    let refused = try_value::<String>(&mut c, "SELECT 'happy'::pg_temp.qail_mood").await;
    assert!(refused.is_err());
    let back = echo(&mut c, "pg_temp.qail_mood", &Text("sad".to_owned())).await;
    assert_eq!(back, Text("sad".to_owned()));
    let err = c
        .query("SELECT $1::pg_temp.qail_mood", &[&Text("angry")])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("22P02"), "{err}");
}

/// A record read field by field, as `qail!` reads nested rows.
#[derive(Debug, PartialEq)]
struct Pair {
    id: i32,
    name: Option<String>,
}

impl<'r> Decode<'r> for Pair {
    fn accepts(ty: Oid) -> bool {
        record::accepts(ty)
    }

    fn decode(ty: Oid, raw: &'r [u8]) -> Result<Self, BoxError> {
        let mut fields = record::Fields::new(ty, raw, 2)?;
        let pair = Pair {
            id: fields.next("id")?,
            name: fields.next("name")?,
        };
        fields.finish()?;
        Ok(pair)
    }
}

impl qail_pg::types::ArrayElement for Pair {
    const ARRAY_OID: Oid = oid::RECORD_ARRAY;
}

#[tokio::test]
async fn records_and_arrays_of_records() {
    let mut c = super::connect().await;
    let pair = |id, name: Option<&str>| Pair {
        id,
        name: name.map(str::to_owned),
    };
    assert_eq!(
        value::<Pair>(&mut c, "SELECT ROW(7, 'seven'::text)").await,
        pair(7, Some("seven"))
    );
    assert_eq!(
        value::<Vec<Pair>>(
            &mut c,
            "SELECT ARRAY[ROW(1, 'a'::text), ROW(2, NULL::text)]"
        )
        .await,
        [pair(1, Some("a")), pair(2, None)]
    );
    assert_eq!(
        value::<Vec<Pair>>(
            &mut c,
            "SELECT array_agg(ROW(n, n::text) ORDER BY n) FROM generate_series(1, 3) n"
        )
        .await,
        [pair(1, Some("1")), pair(2, Some("2")), pair(3, Some("3"))]
    );
    // A field of the wrong type is an error naming it.
    let err = try_value::<Pair>(&mut c, "SELECT ROW(1::int8, 'x'::text)")
        .await
        .unwrap_err();
    assert!(err.contains("id"), "{err}");
}
