//! An optional clause whose absence leaves `WHERE` without a condition.
use qail::qail;

fn main() {
    let country: Option<&str> = None;
    let _q = qail!("SELECT id FROM harbors WHERE {? country = {country} } ORDER BY id");
}
