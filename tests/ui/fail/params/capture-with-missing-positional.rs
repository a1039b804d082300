//! Mixing $1 with a capture but passing no positional argument.
use qail::qail;

fn main() {
    let name = "x";
    let _q = qail!("SELECT id FROM harbors WHERE country = $1 AND name = {name}");
}
