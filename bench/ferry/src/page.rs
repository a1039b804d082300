//! The page and its queries: the JSON shape every endpoint answers (50 enabled connections by
//! name, each with its origin and destination harbor and its operator), the statements that
//! build it, and the count of the round trips they make.

use std::sync::atomic::{AtomicU64, Ordering};

use async_graphql::SimpleObject;
use qail::{Decoder, Query, qail};
use serde::Serialize;
use uuid::Uuid;

/// The page's one JOIN: the run-time forms send this text, `qail!` the same literal.
pub const JOIN_SQL: &str = "SELECT c.id, c.name, c.duration_minutes, \
     o.id AS origin_id, o.name AS origin_name, o.country AS origin_country, \
     d.id AS destination_id, d.name AS destination_name, d.country AS destination_country, \
     op.id AS operator_id, op.name AS operator_name, op.website AS operator_website \
     FROM odyssey_connections c \
     LEFT JOIN harbors o ON o.id = c.origin_harbor_id \
     LEFT JOIN harbors d ON d.id = c.destination_harbor_id \
     LEFT JOIN operators op ON op.id = c.operator_id \
     WHERE c.is_enabled ORDER BY c.name LIMIT 50";

/// Statements sent to the server since start, one round trip each (`GET /round-trips`).
static ROUND_TRIPS: AtomicU64 = AtomicU64::new(0);

/// Counts one round trip.
pub fn trip() {
    ROUND_TRIPS.fetch_add(1, Ordering::Relaxed);
}

/// The round trips counted so far.
pub fn round_trips() -> u64 {
    ROUND_TRIPS.load(Ordering::Relaxed)
}

/// A harbor as the page shows it.
#[derive(Clone, Debug, Serialize, SimpleObject)]
#[graphql(rename_fields = "snake_case")]
pub struct Harbor {
    pub id: String,
    pub name: String,
    pub country: String,
}

/// An operator as the page shows it.
#[derive(Clone, Debug, Serialize, SimpleObject)]
#[graphql(rename_fields = "snake_case")]
pub struct Operator {
    pub id: String,
    pub name: String,
    pub website: Option<String>,
}

/// One line of the page.
#[derive(Debug, Serialize)]
pub struct Line {
    pub id: String,
    pub name: String,
    pub duration_minutes: Option<i32>,
    pub origin: Option<Harbor>,
    pub destination: Option<Harbor>,
    pub operator: Option<Operator>,
}

/// A row of the JOIN, decoded by `qail!` by column name.
pub struct JoinRow {
    pub id: Uuid,
    pub name: String,
    pub duration_minutes: Option<i32>,
    pub origin_id: Option<Uuid>,
    pub origin_name: Option<String>,
    pub origin_country: Option<String>,
    pub destination_id: Option<Uuid>,
    pub destination_name: Option<String>,
    pub destination_country: Option<String>,
    pub operator_id: Option<Uuid>,
    pub operator_name: Option<String>,
    pub operator_website: Option<String>,
}

/// The JOIN, compiled (Parse once per connection, then Bind + Execute).
pub fn join() -> Query<'static, impl Decoder<Row = JoinRow>> {
    qail!(JoinRow => "SELECT c.id, c.name, c.duration_minutes, \
     o.id AS origin_id, o.name AS origin_name, o.country AS origin_country, \
     d.id AS destination_id, d.name AS destination_name, d.country AS destination_country, \
     op.id AS operator_id, op.name AS operator_name, op.website AS operator_website \
     FROM odyssey_connections c \
     LEFT JOIN harbors o ON o.id = c.origin_harbor_id \
     LEFT JOIN harbors d ON d.id = c.destination_harbor_id \
     LEFT JOIN operators op ON op.id = c.operator_id \
     WHERE c.is_enabled ORDER BY c.name LIMIT 50")
}

fn harbor(id: Option<Uuid>, name: Option<String>, country: Option<String>) -> Option<Harbor> {
    Some(Harbor {
        id: id?.to_string(),
        name: name?,
        country: country?,
    })
}

impl JoinRow {
    /// The row as a line of the page.
    pub fn line(self) -> Line {
        Line {
            id: self.id.to_string(),
            name: self.name,
            duration_minutes: self.duration_minutes,
            origin: harbor(self.origin_id, self.origin_name, self.origin_country),
            destination: harbor(
                self.destination_id,
                self.destination_name,
                self.destination_country,
            ),
            operator: match (self.operator_id, self.operator_name) {
                (Some(id), Some(name)) => Some(Operator {
                    id: id.to_string(),
                    name,
                    website: self.operator_website,
                }),
                _ => None,
            },
        }
    }
}

/// A connection without its related rows: what the N+1 and GraphQL forms load first.
#[derive(Clone)]
pub struct ConnectionRow {
    pub id: Uuid,
    pub name: String,
    pub duration_minutes: Option<i32>,
    pub origin_harbor_id: Uuid,
    pub destination_harbor_id: Uuid,
    pub operator_id: Option<Uuid>,
}

/// The page's 50 connections, without their related rows.
pub fn connections() -> Query<'static, impl Decoder<Row = ConnectionRow>> {
    qail!(ConnectionRow => "SELECT id, name, duration_minutes, origin_harbor_id, \
     destination_harbor_id, operator_id FROM odyssey_connections \
     WHERE is_enabled ORDER BY name LIMIT 50")
}

/// A harbor row.
pub struct HarborRow {
    pub id: Uuid,
    pub name: String,
    pub country: String,
}

impl HarborRow {
    /// As the page shows it.
    pub fn harbor(self) -> Harbor {
        Harbor {
            id: self.id.to_string(),
            name: self.name,
            country: self.country,
        }
    }
}

/// An operator row.
pub struct OperatorRow {
    pub id: Uuid,
    pub name: String,
    pub website: Option<String>,
}

impl OperatorRow {
    /// As the page shows it.
    pub fn operator(self) -> Operator {
        Operator {
            id: self.id.to_string(),
            name: self.name,
            website: self.website,
        }
    }
}

/// One harbor by id.
pub fn harbor_by_id(id: &Uuid) -> Query<'_, impl Decoder<Row = HarborRow> + use<'_>> {
    qail!(HarborRow => "SELECT id, name, country FROM harbors WHERE id = $1", *id)
}

/// One operator by id.
pub fn operator_by_id(id: &Uuid) -> Query<'_, impl Decoder<Row = OperatorRow> + use<'_>> {
    qail!(OperatorRow => "SELECT id, name, website FROM operators WHERE id = $1", *id)
}

/// The harbors of `ids`, one batch.
pub fn harbors_by_ids<'a>(
    ids: &'a &'a [Uuid],
) -> Query<'a, impl Decoder<Row = HarborRow> + use<'a>> {
    qail!(HarborRow => "SELECT id, name, country FROM harbors WHERE id = ANY($1)", *ids)
}

/// The operators of `ids`, one batch.
pub fn operators_by_ids<'a>(
    ids: &'a &'a [Uuid],
) -> Query<'a, impl Decoder<Row = OperatorRow> + use<'a>> {
    qail!(OperatorRow => "SELECT id, name, website FROM operators WHERE id = ANY($1)", *ids)
}
