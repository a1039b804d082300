//! Two placeholders, one argument.
use qail::qail;

fn main() {
    let country = "GR";
    let _q = qail!("SELECT id FROM harbors WHERE country = $1 AND name = $2", country);
}
