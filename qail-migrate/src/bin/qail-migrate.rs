//! `qail-migrate DATABASE_URL DIR`: applies the pending migrations of a directory to a
//! database and prints the versions it applied — a runner where there is no cargo (a
//! container's start-up). `cargo qail migrate` has every command; the concurrency tests start
//! several of these processes at once on one database.

use qail_migrate::Migrator;
use qail_pg::Connection;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(url), Some(dir)) = (args.next(), args.next()) else {
        eprintln!("usage: qail-migrate DATABASE_URL MIGRATIONS_DIR");
        std::process::exit(2);
    };
    let migrator = Migrator::from_dir(&dir).unwrap_or_else(|e| {
        eprintln!("{dir}: {e}");
        std::process::exit(2);
    });
    let mut conn = Connection::connect(&url).await.unwrap_or_else(|e| {
        eprintln!("cannot connect to {url}: {e}");
        std::process::exit(1);
    });
    match migrator.run_on(&mut conn, None).await {
        Ok(steps) => {
            let versions: Vec<String> = steps.iter().map(|s| s.version.to_string()).collect();
            println!("applied: {}", versions.join(","));
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
