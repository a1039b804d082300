//! A captured reference to an Option where NULL is not meaningful.
use qail::qail;

fn main() {
    let owned: Option<qail::uuid::Uuid> = None;
    let id = &owned;
    let _q = qail!("SELECT name FROM harbors WHERE id = {id}");
}
