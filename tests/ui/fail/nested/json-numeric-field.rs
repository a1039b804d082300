//! numeric inside a JSON document: serde would read it through f64.
use qail::qail;

fn main() {
    let _ = qail!(
        "SELECT json_agg(json_build_object('name', c.name, 'km', c.distance_km))
         FROM odyssey_connections c"
    );
}
