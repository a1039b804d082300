//! Writes `qail-catalog/src/generated.rs` from a running server's `pg_catalog`
//! (`DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`). Run it through
//! `scripts/gen-catalog`.

mod fetch;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let mut conn = qail_pg::Connection::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
    let rows = fetch::rows(&mut conn).await;
    let text = qail_catalog::render::render(&rows).unwrap_or_else(|e| {
        eprintln!("gen-catalog: {e}");
        std::process::exit(1);
    });
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../qail-catalog/src/generated.rs"
    );
    std::fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
}
