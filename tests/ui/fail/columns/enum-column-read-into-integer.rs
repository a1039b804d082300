//! An enum column cannot be read into an integer: the error names the PostgreSQL type.
use qail::qail;

fn main() {
    let _q = qail!(r#"SELECT name, kind AS "kind: i32" FROM vessels"#);
}
