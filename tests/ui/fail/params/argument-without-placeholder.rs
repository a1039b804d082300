//! An argument for SQL that has no placeholder.
use qail::qail;

fn main() {
    let country = "GR";
    let _q = qail!("SELECT id FROM harbors", country);
}
