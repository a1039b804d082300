//! A temporary passed for a NOT NULL column lives as long as the statement holding the query,
//! as every other argument does: the column's check does not end its life early.
use qail::qail;

fn main() {
    let id = qail::uuid::Uuid::nil();
    let oids = qail!(
        "INSERT INTO harbors (id, name, country) VALUES ($1, $2, 'GR')",
        id,
        format!("Pir{}", "aeus")
    )
    .template()
    .param_oids
    .len();
    assert_eq!(oids, 2);
}
