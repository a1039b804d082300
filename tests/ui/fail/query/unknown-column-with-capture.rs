//! The caret points into the SQL as written, captures included.
use qail::qail;

fn main() {
    let id = qail::uuid::Uuid::nil();
    let _q = qail!("SELECT nme FROM harbors WHERE id = {id}");
}
