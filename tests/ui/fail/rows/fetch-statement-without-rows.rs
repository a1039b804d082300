//! Fetching rows from a statement that returns none.
use qail::qail;

async fn run(conn: &mut qail::Connection) {
    let _rows = qail!("DELETE FROM harbors WHERE country = 'XX'").fetch_all(conn).await;
}

fn main() {
    let _ = run;
}
