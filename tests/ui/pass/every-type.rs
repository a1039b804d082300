//! Every mapped built-in type, as the generated field types show.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!(
        "SELECT true AS b, 1::int2 AS i2, 1::int4 AS i4, 1::int8 AS i8, 1::float4 AS f4, 1::float8 AS f8,
                'x'::text AS t, 'x'::varchar AS v, 'x'::bpchar AS c, 'x'::name AS n, '\\x00'::bytea AS by,
                1::oid AS o, gen_random_uuid() AS u, '{}'::json AS j, '{}'::jsonb AS jb,
                now() AS tz, now()::timestamp AS ts, current_date AS d, '12:00'::time AS tm,
                1.5::numeric AS num, '1 day'::interval AS iv, ARRAY[1, 2]::int4[] AS arr"
    );
    if false {
        let r = row(&q);
        let _: bool = r.b;
        let _: i16 = r.i2;
        let _: i32 = r.i4;
        let _: i64 = r.i8;
        let _: f32 = r.f4;
        let _: f64 = r.f8;
        let _: String = r.t;
        let _: String = r.v;
        let _: String = r.c;
        let _: String = r.n;
        let _: Vec<u8> = r.by;
        let _: u32 = r.o;
        let _: qail::uuid::Uuid = r.u;
        let _: qail::serde_json::Value = r.j;
        let _: qail::serde_json::Value = r.jb;
        let _: qail::chrono::DateTime<qail::chrono::Utc> = r.tz;
        let _: qail::chrono::NaiveDateTime = r.ts;
        let _: qail::chrono::NaiveDate = r.d;
        let _: qail::chrono::NaiveTime = r.tm;
        let _: qail::rust_decimal::Decimal = r.num;
        let _: qail::types::Interval = r.iv;
        let _: Vec<i32> = r.arr;
    }
}
