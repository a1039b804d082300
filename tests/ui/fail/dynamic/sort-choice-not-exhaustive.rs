//! Every value of the sort choice's type needs an arm.
use qail::qail;

enum Order {
    Name,
    Code,
}

fn main() {
    let order = Order::Code;
    let _q = qail!(
        "SELECT id, name FROM harbors ORDER BY {sort}",
        sort = match order {
            Order::Name => "name, id",
        }
    );
}
