//! A timestamp inside a JSON document: it can be infinite, a string JSON cannot give back.
use qail::qail;

fn main() {
    let _ = qail!(
        "SELECT jsonb_agg(x) FROM (SELECT c.name, c.created_at FROM odyssey_connections c) x"
    );
}
