//! A transparent newtype is sent and read as its field.
use qail::{QailType, qail};

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

#[derive(Debug, Clone, Copy, QailType)]
#[qail(transparent)]
pub struct HarborId(qail::uuid::Uuid);

fn main() {
    let id = HarborId(qail::uuid::Uuid::nil());
    let q = qail!(r#"SELECT id AS "id: HarborId", name FROM harbors WHERE id = $1"#, id);
    if false {
        let _: HarborId = row(&q).id;
    }
}
