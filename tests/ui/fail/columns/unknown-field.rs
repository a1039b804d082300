//! A field the generated row does not have.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!("SELECT id, name FROM harbors");
    if false {
        let r = row(&q);
        let _ = r.nme;
    }
}
