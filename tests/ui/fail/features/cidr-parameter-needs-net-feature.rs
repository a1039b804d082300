//! A cidr parameter needs the `net` feature, which is off.
use qail::qail;

fn main() {
    let net = 5i32;
    let _q = qail!("SELECT $1::cidr AS c", net);
}
