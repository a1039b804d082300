//! A capture naming a variable that does not exist.
use qail::qail;

fn main() {
    let _q = qail!("SELECT name FROM harbors WHERE country = {countr}");
}
