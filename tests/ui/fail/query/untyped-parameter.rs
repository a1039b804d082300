//! A parameter whose type nothing determines.
use qail::qail;

fn main() {
    let x = 1i32;
    let _q = qail!("SELECT $1 AS x", x);
}
