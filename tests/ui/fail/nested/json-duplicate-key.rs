//! json_build_object keeps both of two equal keys; a struct cannot.
use qail::qail;

fn main() {
    let _ = qail!(
        "SELECT json_agg(json_build_object('name', c.name, 'name', c.id))
         FROM odyssey_connections c"
    );
}
