//! The `wide` workload of the `qail` driver with one part changed: how the `jsonb` column
//! becomes a `serde_json::Value`. The `qail` driver reads it with qail-pg's own reader
//! (`types/json_value.rs`); `qail-json-serde` reads it as `Json<serde_json::Value>`, which
//! qail-pg hands to `serde_json::from_slice`; `qail-json-simd` reads it with a decoder written
//! here that parses the text with simd-json into a `serde_json::Value` (its serde path,
//! reusing one scratch buffer and simd-json's buffers across values, its fastest use).
//! The query, the other nine columns and the loop are the `qail` driver's.

use std::cell::RefCell;
use std::time::Instant;

use qail::types::{BoxError, Decode, Json, Oid, oid};
use qail::{Connection, Query, qail};
use qail_pg::typed::{FromPg, pg};

use crate::drivers::Ctx;
use crate::measure::{Counts, Meter, Result, Sample};
use crate::workload as w;

/// `wide`'s row with its JSON column of type `J`.
#[derive(Debug)]
#[expect(
    dead_code,
    reason = "decoded to be measured; black_box keeps the values"
)]
pub(crate) struct WideRowWith<J> {
    id: i64,
    i4: i32,
    i8: i64,
    f8: f64,
    b: bool,
    t: String,
    ts: chrono::DateTime<chrono::Utc>,
    u: uuid::Uuid,
    n: Option<rust_decimal::Decimal>,
    j: J,
}

/// A `jsonb` value parsed by simd-json into a `serde_json::Value`.
#[derive(Debug)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "decoded to be measured; black_box keeps the value (the tests read it)"
    )
)]
pub(crate) struct SimdJson(pub(crate) serde_json::Value);

/// The `jsonb` binary format's version byte, before the JSON text.
const JSONB_VERSION: u8 = 1;

thread_local! {
    static SCRATCH: RefCell<(Vec<u8>, simd_json::Buffers)> =
        RefCell::new((Vec::new(), simd_json::Buffers::default()));
}

impl Decode<'_> for SimdJson {
    fn accepts(ty: Oid) -> bool {
        ty == oid::JSONB
    }

    fn decode(_ty: Oid, raw: &[u8]) -> std::result::Result<Self, BoxError> {
        let text = match raw.split_first() {
            Some((&JSONB_VERSION, text)) => text,
            _ => return Err("not a version-1 jsonb value: read the column as jsonb".into()),
        };
        SCRATCH.with_borrow_mut(|(scratch, buffers)| {
            scratch.clear();
            scratch.extend_from_slice(text);
            simd_json::serde::from_slice_with_buffers(scratch, buffers)
                .map(SimdJson)
                .map_err(|e| format!("simd-json: {e}").into())
        })
    }
}

impl<const C: usize> FromPg<pg::jsonb, C> for SimdJson {}

type SerdeRow = WideRowWith<Json<serde_json::Value>>;
type SimdRow = WideRowWith<SimdJson>;

fn wide_serde(after: &i64) -> Query<'_, impl qail::template::Decoder<Row = SerdeRow>> {
    qail!(SerdeRow => "SELECT id, i4, i8, f8, b, t, ts, u, n, j FROM bench_wide \
     WHERE id > $1 ORDER BY id LIMIT 1000", *after)
}

fn wide_simd(after: &i64) -> Query<'_, impl qail::template::Decoder<Row = SimdRow>> {
    qail!(SimdRow => "SELECT id, i4, i8, f8, b, t, ts, u, n, j FROM bench_wide \
     WHERE id > $1 ORDER BY id LIMIT 1000", *after)
}

/// Runs `wide` with its jsonb column read by `serde_json::from_slice` (`qail-json-serde`).
pub(crate) async fn serde(ctx: &Ctx) -> Result<Sample> {
    run(ctx, async |c: &mut Connection, after: i64| {
        Ok(w::consume(wide_serde(&after).fetch_all(&mut *c).await?))
    })
    .await
}

/// Runs `wide` with its jsonb column read by simd-json (`qail-json-simd`).
pub(crate) async fn simd(ctx: &Ctx) -> Result<Sample> {
    run(ctx, async |c: &mut Connection, after: i64| {
        Ok(w::consume(wide_simd(&after).fetch_all(&mut *c).await?))
    })
    .await
}

/// The `wide` loop, `query` running one query and returning its row count: a function per
/// parser, so each variant's binary links only its own.
async fn run(
    ctx: &Ctx,
    mut query: impl AsyncFnMut(&mut Connection, i64) -> Result<u64>,
) -> Result<Sample> {
    let mut c = Connection::connect(&ctx.url).await?;
    let n = ctx.sizes.wide;
    let mut m = Meter::start()?;
    let lat = &mut m.latencies;
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let rows = query(&mut c, w::wide_after(i)).await?;
        lat.record(t);
        counts.add(1, rows);
    }
    let sample = m.finish(counts)?;
    c.close().await;
    Ok(sample)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parsers_agree_on_the_workloads_documents() {
        let doc = br#"{"k": 12, "ok": false, "tag": "t2"}"#;
        let mut raw = vec![JSONB_VERSION];
        raw.extend_from_slice(doc);
        let jsonb = oid::JSONB;
        let own = <serde_json::Value as Decode>::decode(jsonb, &raw).expect("own reader");
        let simd = SimdJson::decode(jsonb, &raw).expect("simd-json").0;
        let serde: serde_json::Value = serde_json::from_slice(doc).expect("serde_json");
        assert_eq!(own, serde);
        assert_eq!(simd, serde);
        assert!(SimdJson::decode(jsonb, b"\x02{}").is_err());
        assert!(SimdJson::accepts(jsonb));
        assert!(!SimdJson::accepts(oid::TEXT));
        assert_eq!(
            wide_simd(&0).template().sql(),
            w::WIDE_SQL,
            "the same statement as the qail driver's"
        );
        assert_eq!(wide_serde(&0).template().sql(), w::WIDE_SQL);
    }
}
