//! Lists, optional clauses, sort choices and owned arguments.
use qail::qail;

enum Order {
    Name,
    Newest,
}

fn main() {
    let ids: Vec<qail::uuid::Uuid> = Vec::new();
    let _q = qail!("SELECT name FROM harbors WHERE id IN {ids}");
    let country: Option<&str> = Some("GR");
    let limit: Option<i64> = None;
    let order = Order::Newest;
    let _q = qail!(
        "SELECT id, name FROM harbors WHERE true {? AND country = {country} }
         ORDER BY {sort} {? LIMIT {limit} }",
        sort = match order {
            Order::Name => "name, id",
            Order::Newest => "created_at DESC, id",
        }
    );
    let queries: Vec<_> = (0..10_i64)
        .map(|i| qail!("SELECT name FROM vessels WHERE id = $1", i * 2))
        .collect();
    drop(queries);
    let rows: Vec<(i64, qail::uuid::Uuid, Option<i64>)> = Vec::new();
    let _q = qail!("INSERT INTO sailings (id, connection_id, vessel_id) VALUES {rows} RETURNING id");
    let _copy = qail!("COPY sailings (id, connection_id, vessel_id) FROM {rows}");
}
