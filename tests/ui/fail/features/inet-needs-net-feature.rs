//! inet needs the `net` feature, which is off.
use qail::qail;

fn main() {
    let _q = qail!("SELECT '10.0.0.1'::inet AS addr");
}
