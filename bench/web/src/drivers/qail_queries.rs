//! The qail servers' statements: `qail!` invocations checked at compile time against
//! `bench/web/qail.schema.json`, each a pre-encoded template decoding into the shared row
//! types by column name. The SQL is `qail_bench_web::sql`'s, written out as `qail!` takes a
//! literal.

use qail::{Decoder, NoRows, Query, qail};
use qail_bench_web::{Fortune, World};

/// One world by id.
pub fn world(id: &i32) -> Query<'_, impl Decoder<Row = World> + use<'_>> {
    qail!(World => "SELECT id, randomnumber FROM world WHERE id = $1", *id)
}

/// Every fortune.
pub fn fortunes() -> Query<'static, impl Decoder<Row = Fortune>> {
    qail!(Fortune => "SELECT id, message FROM fortune")
}

/// The updates of one request: `ids` (sorted) and their new numbers, borrowed by the query
/// (hence the references to the slices).
pub fn update<'a>(ids: &'a &'a [i32], numbers: &'a &'a [i32]) -> Query<'a, NoRows> {
    qail!(
        "UPDATE world SET randomnumber = v.r \
         FROM UNNEST($1::int4[], $2::int4[]) AS v(id, r) WHERE world.id = v.id",
        *ids,
        *numbers
    )
}

/// The one row of each query's result, in order.
pub fn one_each(
    results: Vec<Result<Vec<World>, qail::Error>>,
) -> Result<Vec<World>, qail_bench_web::Error> {
    results
        .into_iter()
        .map(|rows| match rows?.as_slice() {
            [w] => Ok(*w),
            rows => Err(format!("a world query returned {} rows", rows.len()).into()),
        })
        .collect()
}
