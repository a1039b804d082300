//! Seed data for the ferry tables, inserted with `qail!` in pipelines inside one transaction.

use qail::uuid::Uuid;
use qail::{Connection, qail};

use super::{Result, Rng};

/// How much to seed.
pub(crate) struct Ferry {
    /// Harbors (ids `Uuid::from_u128(1..)`).
    pub(crate) harbors: usize,
    /// Operators.
    pub(crate) operators: usize,
    /// Connections between two different harbors: 80% enabled, 10% without an operator.
    pub(crate) connections: usize,
}

const PORTS: [(&str, &str); 24] = [
    ("Piraeus", "GR"),
    ("Naxos", "GR"),
    ("Heraklion", "GR"),
    ("Santorini", "GR"),
    ("Mykonos", "GR"),
    ("Paros", "GR"),
    ("Rhodes", "GR"),
    ("Corfu", "GR"),
    ("Patras", "GR"),
    ("Split", "HR"),
    ("Dubrovnik", "HR"),
    ("Zadar", "HR"),
    ("Bari", "IT"),
    ("Ancona", "IT"),
    ("Genoa", "IT"),
    ("Livorno", "IT"),
    ("Palermo", "IT"),
    ("Barcelona", "ES"),
    ("Valencia", "ES"),
    ("Palma", "ES"),
    ("Marseille", "FR"),
    ("Nice", "FR"),
    ("Bastia", "FR"),
    ("Valletta", "MT"),
];

const OPERATORS: [&str; 12] = [
    "Blue Star",
    "Minoan Lines",
    "Anek Lines",
    "Seajets",
    "Jadrolinija",
    "Tirrenia",
    "Moby",
    "GNV",
    "Grimaldi",
    "Corsica Ferries",
    "Baleària",
    "Virtu Ferries",
];

struct Harbor {
    id: Uuid,
    name: String,
    country: &'static str,
    code: String,
}

struct Line {
    id: Uuid,
    name: String,
    origin: Uuid,
    destination: Uuid,
    operator: Option<Uuid>,
    enabled: bool,
}

/// A name from a list, numbered from the second round on: "Naxos", …, "Naxos 2".
fn numbered(base: &str, i: usize, len: usize) -> String {
    match i / len {
        0 => base.to_owned(),
        round => format!("{base} {}", round + 1),
    }
}

fn id(kind: u128, i: usize) -> Uuid {
    Uuid::from_u128((kind << 64) | u128::try_from(i).expect("a usize fits a u128"))
}

/// Inserts the ferry data into the (empty) tables of the connection's search path, then
/// indexes the connections by name.
pub(crate) async fn ferry(conn: &mut Connection, size: &Ferry) -> Result<()> {
    let harbors: Vec<Harbor> = (0..size.harbors)
        .map(|i| {
            let (base, country) = PORTS[i % PORTS.len()];
            Harbor {
                id: id(1, i),
                name: numbered(base, i, PORTS.len()),
                country,
                code: format!("H{i:04}"),
            }
        })
        .collect();
    let operators: Vec<(Uuid, String)> = (0..size.operators)
        .map(|i| {
            (
                id(2, i),
                numbered(OPERATORS[i % OPERATORS.len()], i, OPERATORS.len()),
            )
        })
        .collect();
    let mut rng = Rng::new(7);
    let lines: Vec<Line> = (0..size.connections)
        .map(|i| {
            let origin = rng.below(harbors.len());
            let destination = (origin + 1 + rng.below(harbors.len() - 1)) % harbors.len();
            Line {
                id: id(3, i),
                name: format!("{} – {}", harbors[origin].name, harbors[destination].name),
                origin: harbors[origin].id,
                destination: harbors[destination].id,
                operator: (i % 10 != 3).then(|| operators[rng.below(operators.len())].0),
                enabled: i % 5 != 4,
            }
        })
        .collect();

    let mut tx = conn.begin().await?;
    let inserted = tx
        .pipeline_builder()
        .queries(harbors.iter().map(|h| {
            qail!(
                "INSERT INTO harbors (id, name, country, code) VALUES ($1, $2, $3, $4)",
                h.id,
                h.name,
                h.country,
                h.code
            )
        }))
        .count()
        .await?;
    check(inserted, "harbors")?;
    let inserted = tx
        .pipeline_builder()
        .queries(operators.iter().map(|(id, name)| {
            qail!(
                "INSERT INTO operators (id, name) VALUES ($1, $2)",
                *id,
                *name
            )
        }))
        .count()
        .await?;
    check(inserted, "operators")?;
    let inserted = tx
        .pipeline_builder()
        .queries(lines.iter().map(|l| {
            qail!(
                "INSERT INTO odyssey_connections
                     (id, name, origin_harbor_id, destination_harbor_id, operator_id, is_enabled)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                l.id,
                l.name,
                l.origin,
                l.destination,
                l.operator,
                l.enabled
            )
        }))
        .count()
        .await?;
    check(inserted, "odyssey_connections")?;
    tx.commit().await?;
    // Note: the fixture has no index on the name; the examples sort by it. An index changes
    // plans, never the types a statement is described with, so the snapshot still holds.
    conn.batch_execute(
        "CREATE INDEX odyssey_connections_name ON odyssey_connections (name);
         ANALYZE harbors, operators, odyssey_connections",
    )
    .await?;
    Ok(())
}

/// Every insert of a pipeline inserted one row.
fn check(results: Vec<Result<u64, qail::Error>>, table: &str) -> Result<()> {
    for result in results {
        if result? != 1 {
            return Err(format!("an insert into {table} did not insert one row").into());
        }
    }
    Ok(())
}
