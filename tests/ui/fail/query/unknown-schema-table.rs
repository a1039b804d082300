//! A table in the wrong schema.
use qail::qail;

fn main() {
    let _q = qail!("SELECT id FROM billing.invoice");
}
