//! A typo in a join condition.
use qail::qail;

fn main() {
    let _q = qail!("SELECT c.id FROM odyssey_connections c LEFT JOIN harbors h ON h.id = c.origin_harbour_id");
}
