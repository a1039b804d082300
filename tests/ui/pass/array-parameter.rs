//! = ANY($1) takes a Vec or a slice.
use qail::qail;

fn main() {
    let ids: Vec<qail::uuid::Uuid> = vec![];
    let _a = qail!("SELECT name FROM harbors WHERE id = ANY($1)", ids);
    let countries: Vec<String> = vec![];
    let _b = qail!("SELECT name FROM harbors WHERE country = ANY($1)", countries);
}
