//! A nullable column read as if it were not.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!("SELECT code FROM harbors");
    if false {
        let r = row(&q);
        let _: String = r.code;
    }
}
