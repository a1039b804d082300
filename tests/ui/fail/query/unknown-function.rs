//! A misspelled function.
use qail::qail;

fn main() {
    let _q = qail!("SELECT lenght(name) AS n FROM harbors");
}
