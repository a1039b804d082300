//! A typo in an UPDATE SET list.
use qail::qail;

fn main() {
    let _q = qail!("UPDATE harbors SET nmae = 'x'");
}
