//! A typo in the WHERE clause.
use qail::qail;

fn main() {
    let _q = qail!("SELECT id FROM harbors WHERE contry = 'GR'");
}
