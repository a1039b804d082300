//! A crate that forbids unsafe code uses `qail!`: the registration of its statements (a
//! static in a link section) is no unsafe code of the crate.
#![forbid(unsafe_code)]

use qail::qail;

enum Order {
    Name,
    Newest,
}

fn main() {
    let id = qail::uuid::Uuid::nil();
    let _q = qail!("SELECT name FROM harbors WHERE id = $1", id);
    let country: Option<&str> = None;
    let order = Order::Name;
    let _q = qail!(
        "SELECT id FROM harbors WHERE true {? AND country = {country} } ORDER BY {sort}",
        sort = match order {
            Order::Name => "name",
            Order::Newest => "created_at DESC",
        }
    );
}
