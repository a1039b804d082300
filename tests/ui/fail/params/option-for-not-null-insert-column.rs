//! An `Option` as the value of a NOT NULL column of an INSERT.
use qail::qail;

fn main() {
    let id = qail::uuid::Uuid::nil();
    let name: Option<&str> = Some("Piraeus");
    let _q = qail!("INSERT INTO harbors (id, name, country) VALUES ($1, $2, 'GR')", id, name);
}
