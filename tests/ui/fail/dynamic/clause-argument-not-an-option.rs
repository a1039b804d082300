//! The argument of an optional clause must be an Option: its `Some` includes the clause.
use qail::qail;

fn main() {
    let country = "GR";
    let _q = qail!("SELECT id FROM harbors WHERE true {? AND country = {country} }");
}
