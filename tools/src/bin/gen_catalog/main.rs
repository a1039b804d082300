//! Writes `qail-catalog/src/generated.rs` from the `pg_catalog` of a server of every supported
//! PostgreSQL major version: `DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`, the system 15) and the `MAJOR=URL` lines of
//! `QAIL_PG_URLS` (what `scripts/pg-versions urls` prints). Run it through
//! `scripts/gen-catalog`.

mod fetch;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut servers = Vec::new();
    for url in fetch::urls() {
        let mut conn = qail_pg::Connection::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
        servers.push(fetch::rows(&mut conn).await);
    }
    let text = qail_catalog::render::render(&servers).unwrap_or_else(|e| {
        eprintln!("gen-catalog: {e}");
        std::process::exit(1);
    });
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../qail-catalog/src/generated.rs"
    );
    std::fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
}
