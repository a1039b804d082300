//! Option is accepted where NULL is meaningful (a nullable column).
use qail::qail;

fn main() {
    let id = qail::uuid::Uuid::nil();
    let timezone: Option<String> = None;
    let _q = qail!("UPDATE harbors SET timezone = $1 WHERE id = $2", timezone, id);
}
