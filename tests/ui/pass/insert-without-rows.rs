//! A statement without rows has the row type NoRows.
use qail::qail;

fn main() {
    let id = qail::uuid::Uuid::nil();
    let code: Option<&str> = None;
    let _q: qail::Query<'_, qail::NoRows> =
        qail!("INSERT INTO harbors (id, name, country, code) VALUES ($1, $2, $3, $4)", id, "Piraeus", "GR", code);
}
