//! One placeholder, two arguments.
use qail::qail;

fn main() {
    let country = "GR";
    let name = "Piraeus";
    let _q = qail!("SELECT id FROM harbors WHERE country = $1", country, name);
}
