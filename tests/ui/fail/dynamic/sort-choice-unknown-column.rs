//! One alternative of a sort choice names a column the table does not have.
use qail::qail;

enum Order {
    Name,
    Size,
}

fn main() {
    let order = Order::Name;
    let _q = qail!(
        "SELECT id, name FROM harbors ORDER BY {sort}",
        sort = match order {
            Order::Name => "name, id",
            Order::Size => "size DESC, id",
        }
    );
}
