//! A typo in an INSERT column list.
use qail::qail;

fn main() {
    let id = qail::uuid::Uuid::nil();
    let _q = qail!("INSERT INTO harbors (id, nam, country) VALUES ($1, 'x', 'GR')", id);
}
