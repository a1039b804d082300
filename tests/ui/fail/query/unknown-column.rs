//! A column name with a typo.
use qail::qail;

fn main() {
    let _q = qail!("SELECT id, nme FROM harbors");
}
