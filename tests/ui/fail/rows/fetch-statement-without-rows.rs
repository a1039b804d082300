//! Fetching rows from a statement that returns none.
use qail::qail;

/// Stands for `.fetch_all(&mut conn)`, which has the same bound on the row decoder.
fn fetch_all<D: qail::__private::Decoder>(_: qail::Query<'_, D>) {}

fn main() {
    let q = qail!("DELETE FROM harbors WHERE country = 'XX'");
    fetch_all(q);
}
