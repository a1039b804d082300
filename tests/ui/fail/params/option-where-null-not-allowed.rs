//! An Option where NULL would make the comparison NULL.
use qail::qail;

fn main() {
    let country: Option<&str> = Some("GR");
    let _q = qail!("SELECT id FROM harbors WHERE country = $1", country);
}
