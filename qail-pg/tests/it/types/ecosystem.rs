//! Round trips of the feature-gated types: uuid, chrono, time, json, decimal, net.

#![allow(unused_imports, reason = "each test needs only its own feature")]

use super::{echo, round_trip, server_equals, try_value, value};

#[cfg(feature = "uuid")]
#[tokio::test]
async fn uuids() {
    use uuid::Uuid;
    let mut c = crate::connect().await;
    let u = Uuid::parse_str("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11").unwrap();
    round_trip(&mut c, "uuid", u).await;
    round_trip(&mut c, "uuid", Uuid::nil()).await;
    round_trip(&mut c, "uuid", Uuid::max()).await;
    round_trip(&mut c, "uuid[]", vec![Some(u), None]).await;
    let v = value::<Uuid>(
        &mut c,
        "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
    )
    .await;
    assert_eq!(v, u);
    assert!(
        server_equals(
            &mut c,
            "uuid",
            &u,
            "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid"
        )
        .await
    );
}

#[cfg(feature = "chrono")]
#[tokio::test]
async fn chrono_values_far_dates_and_infinity() {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
    use qail_pg::types::Timestamp;
    let mut c = crate::connect().await;
    // A non-UTC session zone must not shift timestamptz: the binary form is UTC.
    c.batch_execute("SET TIME ZONE 'Asia/Kolkata'")
        .await
        .unwrap();
    let ymd = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
    for d in [
        ymd(2000, 1, 1),
        ymd(-4713, 11, 24),
        ymd(1, 1, 1),
        ymd(1999, 12, 31),
        ymd(9999, 12, 31),
        ymd(200_000, 2, 29),
    ] {
        round_trip(&mut c, "date", d).await;
        let t = d.and_hms_micro_opt(23, 59, 59, 999_999).unwrap();
        round_trip(&mut c, "timestamp", t).await;
        round_trip(&mut c, "timestamptz", t.and_utc()).await;
    }
    round_trip(
        &mut c,
        "time",
        NaiveTime::from_hms_micro_opt(13, 14, 15, 16).unwrap(),
    )
    .await;
    round_trip(&mut c, "time", NaiveTime::MIN).await;
    round_trip(
        &mut c,
        "timestamptz[]",
        vec![Some(DateTime::<Utc>::UNIX_EPOCH), None],
    )
    .await;
    let east = chrono::FixedOffset::east_opt(5 * 3600 + 30 * 60).unwrap();
    let shifted = DateTime::<Utc>::UNIX_EPOCH.with_timezone(&east);
    assert_eq!(echo(&mut c, "timestamptz", &shifted).await, shifted);

    let t = value::<DateTime<Utc>>(&mut c, "SELECT '2000-01-01 05:30:00+05:30'::timestamptz").await;
    assert_eq!(t, ymd(2000, 1, 1).and_hms_opt(0, 0, 0).unwrap().and_utc());
    let t = value::<NaiveDateTime>(&mut c, "SELECT '2024-02-29 12:34:56.789012'::timestamp").await;
    assert_eq!(
        t,
        ymd(2024, 2, 29)
            .and_hms_micro_opt(12, 34, 56, 789_012)
            .unwrap()
    );
    assert_eq!(
        value::<NaiveDate>(&mut c, "SELECT '4714-11-24 BC'::date").await,
        ymd(-4713, 11, 24)
    );
    let err = try_value::<NaiveDate>(&mut c, "SELECT '5874897-12-31'::date")
        .await
        .unwrap_err();
    assert!(err.contains("outside the range"), "{err}");
    let err = try_value::<NaiveTime>(&mut c, "SELECT '24:00'::time")
        .await
        .unwrap_err();
    assert!(err.contains("outside the range"), "{err}");
    let d = ymd(1999, 12, 31);
    assert!(server_equals(&mut c, "date", &d, "'1999-12-31'::date").await);

    let err = try_value::<DateTime<Utc>>(&mut c, "SELECT 'infinity'::timestamptz")
        .await
        .unwrap_err();
    assert!(err.contains("Timestamp<DateTime<Utc>>"), "{err}");
    type Tz = Timestamp<DateTime<Utc>>;
    assert_eq!(
        value::<Tz>(&mut c, "SELECT 'infinity'::timestamptz").await,
        Tz::PosInfinity
    );
    assert_eq!(
        value::<Tz>(&mut c, "SELECT '-infinity'::timestamptz").await,
        Tz::NegInfinity
    );
    for v in [
        Tz::PosInfinity,
        Tz::NegInfinity,
        Tz::Value(DateTime::<Utc>::UNIX_EPOCH),
    ] {
        round_trip(&mut c, "timestamptz", v).await;
    }
    assert!(
        server_equals(
            &mut c,
            "timestamptz",
            &Tz::NegInfinity,
            "'-infinity'::timestamptz"
        )
        .await
    );
    type Day = Timestamp<NaiveDate>;
    assert_eq!(
        value::<Day>(&mut c, "SELECT 'infinity'::date").await,
        Day::PosInfinity
    );
    round_trip(&mut c, "date", Day::NegInfinity).await;
    round_trip(&mut c, "timestamp", Timestamp::<NaiveDateTime>::PosInfinity).await;
}

#[cfg(feature = "time")]
#[tokio::test]
async fn time_crate_values() {
    use qail_pg::types::Timestamp;
    use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};
    let mut c = crate::connect().await;
    let ymd = |y, m, d| Date::from_calendar_date(y, Month::try_from(m).unwrap(), d).unwrap();
    for d in [
        ymd(2000, 1, 1),
        ymd(-4713, 11, 24),
        ymd(1999, 12, 31),
        ymd(9999, 12, 31),
    ] {
        round_trip(&mut c, "date", d).await;
        let t = PrimitiveDateTime::new(d, Time::from_hms_micro(23, 59, 59, 999_999).unwrap());
        round_trip(&mut c, "timestamp", t).await;
        round_trip(&mut c, "timestamptz", t.assume_utc()).await;
    }
    round_trip(&mut c, "time", Time::from_hms_micro(1, 2, 3, 4).unwrap()).await;
    let plus2 = UtcOffset::from_hms(2, 0, 0).unwrap();
    let local = PrimitiveDateTime::new(ymd(2000, 1, 1), Time::from_hms(2, 0, 0).unwrap())
        .assume_offset(plus2);
    let back = echo(&mut c, "timestamptz", &local).await;
    assert_eq!(back, local);
    assert_eq!(back.offset(), UtcOffset::UTC);
    let t = value::<OffsetDateTime>(&mut c, "SELECT '2000-01-01 00:00:00+00'::timestamptz").await;
    assert_eq!(t.unix_timestamp(), 946_684_800);
    let err = try_value::<Date>(&mut c, "SELECT '10000-01-01'::date")
        .await
        .unwrap_err();
    assert!(err.contains("outside the range"), "{err}");
    type Tz = Timestamp<OffsetDateTime>;
    assert_eq!(
        value::<Tz>(&mut c, "SELECT '-infinity'::timestamptz").await,
        Tz::NegInfinity
    );
    round_trip(&mut c, "timestamptz", Tz::PosInfinity).await;
}

#[cfg(feature = "json")]
#[tokio::test]
async fn json_and_jsonb() {
    use qail_pg::types::Json;
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};
    let mut c = crate::connect().await;
    let nested = json!({"a": [1, 2.5, null, {"b": {"c": ["deep", true]}}], "ü": "🦀", "e": {}});
    round_trip(&mut c, "jsonb", nested.clone()).await;
    round_trip(&mut c, "json", nested.clone()).await;
    round_trip(&mut c, "jsonb", json!(null)).await;
    round_trip(&mut c, "jsonb[]", vec![json!(1), json!("two")]).await;
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Harbor {
        name: String,
        berths: Vec<u16>,
    }
    round_trip(
        &mut c,
        "jsonb",
        Json(Harbor {
            name: "Kiel".into(),
            berths: vec![1, 2],
        }),
    )
    .await;
    let v = value::<Value>(
        &mut c,
        "SELECT '{\"b\": [1, {\"c\": null}], \"a\": 1}'::jsonb",
    )
    .await;
    assert_eq!(v, json!({"a": 1, "b": [1, {"c": null}]}));
    let v = value::<Value>(&mut c, "SELECT '[1, \"x\"]'::json").await;
    assert_eq!(v, json!([1, "x"]));
    assert!(server_equals(&mut c, "jsonb", &nested, &format!("'{nested}'::jsonb")).await);
}

#[cfg(feature = "decimal")]
#[tokio::test]
async fn numerics_huge_tiny_and_scales() {
    use rust_decimal::Decimal;
    use std::str::FromStr;
    let mut c = crate::connect().await;
    let d = |s: &str| Decimal::from_str(s).unwrap();
    for s in [
        "0",
        "0.00",
        "1.5",
        "-1.5",
        "1.500",
        "-12.34",
        "100000000000000000000",
        "0.00000000000000000001",
        "0.0000000000000000000000000001",
        "79228162514264337593543950335",
        "-79228162514264337593543950335",
        "12345678901234.5678",
        "0.1",
        "10000",
        "9999.9999",
    ] {
        let v = d(s);
        let back = echo(&mut c, "numeric", &v).await;
        assert_eq!((back, back.scale()), (v, v.scale()), "{s}");
        assert!(
            server_equals(&mut c, "numeric", &v, &format!("'{s}'::numeric")).await,
            "{s}"
        );
    }
    for (sql, text) in [
        ("SELECT '1.5'::numeric", "1.5"),
        ("SELECT 1.5::numeric(10, 4)", "1.5000"),
        ("SELECT '-0.000'::numeric", "0.000"),
        ("SELECT 1e20::numeric", "100000000000000000000"),
        ("SELECT 1::numeric / 3", "0.33333333333333333333"),
        ("SELECT 1e-20::numeric", "0.00000000000000000001"),
        (
            "SELECT '1.5'::numeric(40, 32)",
            "1.5000000000000000000000000000",
        ),
        ("SELECT -2.50::numeric * 2", "-5.00"),
    ] {
        assert_eq!(
            value::<Decimal>(&mut c, sql).await.to_string(),
            text,
            "{sql}"
        );
    }
    let mut unrepresentable = vec![
        ("SELECT 'NaN'::numeric", "NaN"),
        ("SELECT 1e30::numeric", "too large"),
        ("SELECT 79228162514264337593543950336::numeric", "too large"),
        ("SELECT 1e-30::numeric", "30 significant decimal places"),
        ("SELECT 1::numeric / 3 * 1e-10", "decimal places"),
    ];
    // Note: numeric has infinities from PostgreSQL 14; 13 refuses them as input.
    if crate::server_major(&mut c).await >= 14 {
        unrepresentable.push(("SELECT 'Infinity'::numeric", "+infinity"));
        unrepresentable.push(("SELECT '-Infinity'::numeric", "-infinity"));
    } else {
        let err = c
            .query_one("SELECT 'Infinity'::numeric", &[])
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some("22P02"), "{err}");
    }
    for (sql, says) in unrepresentable {
        let err = try_value::<Decimal>(&mut c, sql).await.unwrap_err();
        assert!(err.contains(says), "{sql}: {err}");
    }
    round_trip(
        &mut c,
        "numeric[]",
        vec![Some(d("1.5")), None, Some(d("-0.001"))],
    )
    .await;
}

#[cfg(feature = "net")]
#[tokio::test]
async fn network_addresses() {
    use qail_pg::types::{Cidr, Inet, MacAddr};
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let mut c = crate::connect().await;
    let v4 = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7));
    let v6 = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1));
    round_trip(&mut c, "inet", v4).await;
    round_trip(&mut c, "inet", v6).await;
    round_trip(
        &mut c,
        "inet",
        Inet {
            addr: v4,
            prefix: 24,
        },
    )
    .await;
    round_trip(
        &mut c,
        "inet",
        Inet {
            addr: v6,
            prefix: 64,
        },
    )
    .await;
    let net = Cidr {
        addr: IpAddr::V4(Ipv4Addr::new(192, 168, 0, 0)),
        prefix: 16,
    };
    round_trip(&mut c, "cidr", net).await;
    round_trip(&mut c, "macaddr", MacAddr([8, 0, 0x2b, 1, 2, 3])).await;
    round_trip(&mut c, "inet[]", vec![Some(v4), None]).await;
    assert_eq!(
        value::<IpAddr>(&mut c, "SELECT '::1'::inet").await,
        IpAddr::V6(Ipv6Addr::LOCALHOST)
    );
    let i = value::<Inet>(&mut c, "SELECT '10.0.0.7/24'::inet").await;
    assert_eq!(
        i,
        Inet {
            addr: v4,
            prefix: 24
        }
    );
    let err = try_value::<IpAddr>(&mut c, "SELECT '10.0.0.7/24'::inet")
        .await
        .unwrap_err();
    assert!(err.contains("Inet"), "{err}");
    assert_eq!(
        value::<Cidr>(&mut c, "SELECT '192.168/16'::cidr").await,
        net
    );
    let m = value::<MacAddr>(&mut c, "SELECT '08:00:2b:01:02:03'::macaddr").await;
    assert_eq!(m, MacAddr([8, 0, 0x2b, 1, 2, 3]));
    let host_bits = Cidr {
        addr: v4,
        prefix: 8,
    };
    let err = c.query("SELECT $1::cidr", &[&host_bits]).await.unwrap_err();
    assert_eq!(err.code(), Some("22P03"), "{err}");
    assert!(
        server_equals(
            &mut c,
            "inet",
            &Inet {
                addr: v6,
                prefix: 64
            },
            "'2001:db8::1/64'::inet"
        )
        .await
    );
}
