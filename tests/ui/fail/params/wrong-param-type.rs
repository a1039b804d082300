//! An integer for a text parameter.
use qail::qail;

fn main() {
    let country = 30i32;
    let _q = qail!("SELECT id FROM harbors WHERE country = $1", country);
}
