//! QailRow with every attribute, checked against its table.
use qail::QailRow;

#[derive(QailRow)]
#[qail(table = "harbors")]
#[allow(dead_code)]
struct Harbor {
    id: qail::uuid::Uuid,
    #[qail(rename = "name")]
    title: String,
    code: Option<String>,
    #[qail(try_from = "f64")]
    latitude: Option<f64>,
    #[qail(default)]
    selected: bool,
}

#[derive(QailRow)]
#[allow(dead_code)]
struct WithSpecs {
    #[qail(flatten)]
    harbor: Harbor,
    #[qail(json)]
    specs: std::collections::BTreeMap<String, i64>,
}

fn decodes<T: qail::FromRow>() {}

fn main() {
    decodes::<Harbor>();
    decodes::<WithSpecs>();
}
