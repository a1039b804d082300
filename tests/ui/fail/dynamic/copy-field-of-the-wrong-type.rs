//! A checked COPY whose rows have a field of the wrong type for its column.
use qail::qail;

struct Row {
    id: i64,
    name: i32,
}

fn main() {
    let rows: Vec<Row> = Vec::new();
    let _q = qail!("COPY harbors (id, name) FROM {rows.*}");
}
