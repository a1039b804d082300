//! A struct needs #[qail(transparent)].
use qail::QailType;

#[derive(QailType)]
struct HarborId(i64);

fn main() {}
