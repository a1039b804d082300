//! A reference to a reference to an Option (as iterating a `Vec<&Option<_>>` gives) where
//! NULL would make the comparison NULL.
use qail::qail;

fn main() {
    let country: Option<&str> = Some("GR");
    let countries = vec![&country];
    for c in &countries {
        let _q = qail!("SELECT id FROM harbors WHERE country = $1", c);
    }
}
