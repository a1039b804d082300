//! Every type of DESIGN.md's table round-trips through `qail!`: sent as a parameter, read
//! back as the generated field.

use qail::{QailType, qail};

use crate::connect_in;

macro_rules! roundtrip {
    ($conn:expr, $sql:literal, $value:expr) => {{
        let value = $value;
        let row = qail!($sql, value).fetch_one(&mut $conn).await.unwrap();
        assert_eq!(row.v, value, "{}", $sql);
    }};
}

#[tokio::test]
async fn scalars() {
    let mut conn = connect_in("scalars", "").await;
    roundtrip!(conn, "SELECT $1::bool AS v", true);
    roundtrip!(conn, "SELECT $1::int2 AS v", -7i16);
    roundtrip!(conn, "SELECT $1::int4 AS v", i32::MAX);
    roundtrip!(conn, "SELECT $1::int8 AS v", i64::MIN);
    roundtrip!(conn, "SELECT $1::float4 AS v", 1.5f32);
    roundtrip!(conn, "SELECT $1::float8 AS v", -0.25f64);
    roundtrip!(conn, "SELECT $1::text AS v", String::from("Καλημέρα"));
    roundtrip!(conn, "SELECT $1::varchar AS v", String::from("v"));
    roundtrip!(conn, "SELECT $1::bpchar AS v", String::from("c"));
    roundtrip!(conn, "SELECT $1::name AS v", String::from("pg_name"));
    roundtrip!(conn, "SELECT $1::bytea AS v", vec![0u8, 1, 255]);
    roundtrip!(conn, "SELECT $1::oid AS v", 4_000_000_000u32);
}

#[tokio::test]
async fn ecosystem_types() {
    use qail::chrono::{DateTime, NaiveDate, NaiveTime, Utc};
    let mut conn = connect_in("ecosystem", "").await;
    roundtrip!(
        conn,
        "SELECT $1::uuid AS v",
        qail::uuid::Uuid::from_u128(42)
    );
    roundtrip!(
        conn,
        "SELECT $1::jsonb AS v",
        qail::serde_json::json!({"a": [1, 2]})
    );
    roundtrip!(conn, "SELECT $1::json AS v", qail::serde_json::json!("x"));
    let at = DateTime::<Utc>::from_timestamp(1_700_000_000, 123_000).unwrap();
    roundtrip!(conn, "SELECT $1::timestamptz AS v", at);
    roundtrip!(conn, "SELECT $1::timestamp AS v", at.naive_utc());
    roundtrip!(
        conn,
        "SELECT $1::date AS v",
        NaiveDate::from_ymd_opt(2024, 2, 29).unwrap()
    );
    roundtrip!(
        conn,
        "SELECT $1::time AS v",
        NaiveTime::from_hms_micro_opt(23, 59, 1, 5).unwrap()
    );
    roundtrip!(
        conn,
        "SELECT $1::numeric AS v",
        "-1234.5678".parse::<qail::rust_decimal::Decimal>().unwrap()
    );
    let interval = qail::types::Interval {
        months: 14,
        days: 3,
        microseconds: 4_000_000,
    };
    roundtrip!(conn, "SELECT $1::interval AS v", interval);
}

#[tokio::test]
async fn arrays_and_null() {
    let mut conn = connect_in("arrays", "").await;
    roundtrip!(conn, "SELECT $1::int4[] AS v", vec![1i32, 2, 3]);
    roundtrip!(
        conn,
        "SELECT $1::text[] AS v",
        vec![String::from("a"), String::new()]
    );
    roundtrip!(
        conn,
        "SELECT $1::uuid[] AS v",
        vec![qail::uuid::Uuid::nil()]
    );
    let none: Option<i32> = None;
    let row = qail!("SELECT COALESCE($1, 5) AS v, NULLIF(1, 1) AS n", none)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(row.v, 5);
    assert_eq!(row.n, None);
}

#[derive(Debug, Clone, Copy, PartialEq, QailType)]
#[qail(type_name = "vessel_kind", rename_all = "snake_case")]
enum VesselKind {
    Ferry,
    Catamaran,
    Hydrofoil,
}

#[derive(Debug, Clone, Copy, PartialEq, QailType)]
#[qail(transparent)]
struct Capacity(i16);

#[tokio::test]
async fn enums_and_newtypes() {
    let ddl = "CREATE TYPE vessel_kind AS ENUM ('ferry', 'catamaran', 'hydrofoil');
               CREATE TABLE vessels (id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                   operator_id uuid NOT NULL, name varchar(100) NOT NULL, kind vessel_kind NOT NULL,
                   capacity int2 NOT NULL, car_deck bool, built_year int4, specs jsonb);";
    let mut conn = connect_in("enums", ddl).await;
    let operator = qail::uuid::Uuid::nil();
    for (name, kind) in [
        ("Blue", VesselKind::Ferry),
        ("Flying Cat", VesselKind::Catamaran),
    ] {
        let capacity = Capacity(300);
        qail!("INSERT INTO vessels (operator_id, name, kind, capacity) VALUES ({operator}, {name}, {kind}, {capacity})")
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let kind = VesselKind::Catamaran;
    let rows = qail!(r#"SELECT name, kind AS "kind: VesselKind", capacity AS "capacity: Capacity" FROM vessels WHERE kind = {kind}"#)
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].name, "Flying Cat");
    assert_eq!(rows[0].kind, VesselKind::Catamaran);
    assert_eq!(rows[0].capacity, Capacity(300));
    let _ = VesselKind::Hydrofoil;
}

/// `inet`, `cidr` and `macaddr` (run with `--features net`).
#[cfg(feature = "net")]
#[tokio::test]
async fn network_types() {
    use qail::types::{Cidr, Inet, MacAddr};
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let mut conn = connect_in("net", "").await;
    let v4 = IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3));
    roundtrip!(
        conn,
        "SELECT $1::inet AS v",
        Inet {
            addr: v4,
            prefix: 24
        }
    );
    let net = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0));
    roundtrip!(
        conn,
        "SELECT $1::cidr AS v",
        Cidr {
            addr: net,
            prefix: 32
        }
    );
    roundtrip!(conn, "SELECT $1::macaddr AS v", MacAddr([0, 1, 2, 3, 4, 5]));
}

struct CrewMember {
    id: i32,
    login: String,
    nickname: Option<String>,
}

/// A citext column is a plain `String` both ways, and still compares case-insensitively.
#[tokio::test]
async fn citext_is_a_string() {
    let mut conn = connect_in("citext", "").await;
    // Note: an extension exists once per database; its type and its case-insensitive `=`
    // live in public, which the search path must include for `login = $1` to use them.
    if let Err(e) = conn
        .batch_execute("CREATE EXTENSION IF NOT EXISTS citext SCHEMA public")
        .await
    {
        // Another session created it at the same moment.
        assert_eq!(e.code(), Some("23505"), "citext can be installed: {e}");
    }
    let schema = format!("qail_macros_citext_{}", std::process::id());
    conn.batch_execute(&format!(
        "SET search_path = {schema}, public;
         CREATE TABLE crew_members (id int4 PRIMARY KEY, login citext NOT NULL UNIQUE, nickname citext);"
    ))
    .await
    .expect("the citext table can be created");

    let login = String::from("Alice");
    let nickname: Option<&str> = Some("Al");
    let inserted: u64 =
        qail!("INSERT INTO crew_members (id, login, nickname) VALUES (1, {login}, {nickname})")
            .execute(&mut conn)
            .await
            .unwrap();
    assert_eq!(inserted, 1);
    qail!("INSERT INTO crew_members (id, login) VALUES (2, $1)", "bob")
        .execute(&mut conn)
        .await
        .unwrap();

    let row = qail!(
        "SELECT id, login, nickname FROM crew_members WHERE login = $1",
        "ALICE"
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let read: String = row.login;
    assert_eq!((row.id, read.as_str()), (1, "Alice"));
    assert_eq!(row.nickname, Some(String::from("Al")));

    let crew: Vec<CrewMember> =
        qail!(CrewMember => "SELECT id, login, nickname FROM crew_members ORDER BY login")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    let expected = [(1, "Alice", Some("Al")), (2, "bob", None)];
    let got: Vec<_> = crew
        .iter()
        .map(|c| (c.id, c.login.as_str(), c.nickname.as_deref()))
        .collect();
    assert_eq!(got, expected);

    // A query prepared inside a pipeline reads citext the same way.
    let ids = [2, 1];
    let results = conn
        .pipeline(
            ids.iter()
                .map(|id| qail!("SELECT login FROM crew_members WHERE id = $1", *id)),
        )
        .await
        .unwrap();
    let logins: Vec<String> = results
        .into_iter()
        .map(|rows| rows.unwrap().remove(0).login)
        .collect();
    assert_eq!(logins, ["bob", "Alice"]);
}
