//! An alias naming something that is not a Rust type.
use qail::qail;

fn main() {
    let _q = qail!("SELECT name AS \"name: not a type\" FROM harbors");
}
