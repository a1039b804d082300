//! An Option captured where NULL is not meaningful.
use qail::qail;

fn main() {
    let id: Option<qail::uuid::Uuid> = None;
    let _q = qail!("SELECT name FROM harbors WHERE id = {id}");
}
