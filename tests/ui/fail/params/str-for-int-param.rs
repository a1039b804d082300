//! A string for an int4 parameter.
use qail::qail;

fn main() {
    let minutes = "90";
    let _q = qail!("SELECT id FROM odyssey_connections WHERE duration_minutes > $1", minutes);
}
