//! A PostgreSQL enum column needs a Rust type.
use qail::qail;

fn main() {
    let _q = qail!("SELECT kind FROM vessels");
}
