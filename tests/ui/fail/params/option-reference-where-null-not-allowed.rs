//! A reference to an Option where NULL would make the comparison NULL.
use qail::qail;

fn main() {
    let country: Option<String> = Some("GR".to_owned());
    let _q = qail!("SELECT id FROM harbors WHERE country = $1", &country);
}
