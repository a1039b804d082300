//! Two fields of a nested row with the same name.
use qail::qail;

fn main() {
    let _ = qail!(
        "SELECT ARRAY(SELECT ROW(c.id, h.id) FROM odyssey_connections c
                JOIN harbors h ON h.id = c.origin_harbor_id) AS connections"
    );
}
