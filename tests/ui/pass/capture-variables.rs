//! {ident} captures, repeated and mixed with positional arguments.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let country = String::from("GR");
    let name = "Piraeus";
    let q = qail!("SELECT id FROM harbors WHERE country = $1 AND (name = {name} OR code = {name})", country);
    assert_eq!(q.template().param_oids.len(), 2);
    if false {
        let _: qail::uuid::Uuid = row(&q).id;
    }
}
