//! Type => builds the user's struct by column name, in any field order.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

#[allow(dead_code)]
struct Harbor {
    name: String,
    code: Option<String>,
    id: qail::uuid::Uuid,
}

fn main() {
    let q = qail!(Harbor => "SELECT id, name, code FROM harbors");
    if false {
        let h: Harbor = row(&q);
        let _ = h.name;
    }
}
