//! Connects to `DATABASE_URL` (default: the local server), creates a small harbor table in its
//! own schema, and queries it with typed, binary-format parameters and results.
//!
//! Run: `cargo run --example quickstart`

use qail::{Connection, Error};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let mut conn = Connection::connect(&url).await?;
    println!(
        "connected to PostgreSQL {}",
        conn.parameter_status("server_version").unwrap_or("?")
    );

    conn.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS qail_quickstart;
         DROP TABLE IF EXISTS qail_quickstart.harbors;
         CREATE TABLE qail_quickstart.harbors (
             id int8 PRIMARY KEY,
             name text NOT NULL,
             country text NOT NULL,
             berths int4
         );",
    )
    .await?;

    let harbors: [(i64, &str, &str, Option<i32>); 5] = [
        (1, "Piraeus", "GR", Some(34)),
        (2, "Heraklion", "GR", Some(12)),
        (3, "Split", "HR", None),
        (4, "Dubrovnik", "HR", Some(8)),
        (5, "Bari", "IT", Some(15)),
    ];
    for (id, name, country, berths) in &harbors {
        conn.execute(
            "INSERT INTO qail_quickstart.harbors (id, name, country, berths) VALUES ($1, $2, $3, $4)",
            &[id, name, country, berths],
        )
        .await?;
    }

    let country = "HR";
    let rows = conn
        .query(
            "SELECT id, name, berths FROM qail_quickstart.harbors WHERE country = $1 ORDER BY id",
            &[&country],
        )
        .await?;
    println!("\nharbors in {country}:");
    println!("{:>4}  {:<12} {:>6}", "id", "name", "berths");
    for row in &rows {
        let id: i64 = row.get(0);
        let name: &str = row.get(1);
        let berths: Option<i32> = row.get(2);
        let berths = berths.map_or_else(|| "—".to_owned(), |b| b.to_string());
        println!("{id:>4}  {name:<12} {berths:>6}");
    }

    // A server error keeps every field and leaves the connection usable.
    let err = conn
        .execute(
            "INSERT INTO qail_quickstart.harbors (id, name, country) VALUES ($1, $2, $3)",
            &[&1i64, &"Duplicate", &"GR"],
        )
        .await
        .expect_err("id 1 exists");
    let db = err.as_db_error().expect("a server error");
    println!(
        "\nduplicate insert refused: SQLSTATE {} on constraint {}",
        db.code(),
        db.constraint.as_deref().unwrap_or("?")
    );
    let total: i64 = conn
        .query_one("SELECT count(*) FROM qail_quickstart.harbors", &[])
        .await?
        .get(0);
    println!("still connected: {total} harbors");

    conn.batch_execute("DROP SCHEMA qail_quickstart CASCADE")
        .await?;
    Ok(())
}
