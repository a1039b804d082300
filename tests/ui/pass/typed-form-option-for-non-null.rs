//! An Option field may receive a non-null column.
use qail::qail;

#[allow(dead_code)]
struct Named {
    name: Option<String>,
}

fn main() {
    let _q = qail!(Named => "SELECT name FROM harbors");
}
