//! Compiled queries run on a pool (`&mut &Pool`), and a pipeline of INSERTs gives their counts; the checks
//! emitted for a typed form with a lower-case struct name warn about nothing.
#![deny(warnings)]
use qail::{Pool, qail};

#[allow(non_camel_case_types, reason = "the name is the point of the case")]
struct harbor {
    name: String,
    code: Option<String>,
}

async fn on_pool(pool: &Pool) -> Result<(Vec<harbor>, u64, Vec<u64>), qail::Error> {
    let rows = qail!(harbor => "SELECT name, code FROM harbors").fetch_all(&mut &*pool).await?;
    let n = qail!("DELETE FROM harbors WHERE country = 'XX'").execute(&mut &*pool).await?;
    let _one = qail!("SELECT name FROM harbors LIMIT 1").fetch_optional(&mut &*pool).await?;
    let mut conn = pool.acquire().await?;
    let ids = [qail::uuid::Uuid::nil(), qail::uuid::Uuid::max()];
    let inserts = ids
        .iter()
        .map(|id| qail!("INSERT INTO harbors (id, name, country) VALUES ($1, 'x', 'GR')", id));
    let counts: Vec<u64> = conn.pipeline_atomic(inserts).await?;
    Ok((rows, n, counts))
}

fn main() {
    let _ = on_pool;
    let _ = |h: harbor| (h.name, h.code);
}
