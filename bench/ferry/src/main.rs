//! `web-ferry`: the ferry page (the 50 enabled odyssey connections by name, each with its
//! origin and destination harbor and its operator) served as JSON by one axum server in six
//! API styles, every one on qail-pg, so that what differs is the style, not the driver:
//!
//! | path | how the page is built |
//! | --- | --- |
//! | `/page/qail` | the JOIN as `qail!`: parsed once per connection, then Bind + Execute |
//! | `/page/qail-uncached` | the same SQL at run time on connections without a statement cache: Parse + Bind + Execute every time |
//! | `/page/rest?expand=origin,destination,operator` | the JOIN built from `expand` at run time, rows turned into JSON by column name |
//! | `/page/rest-naive` | the connections, then one query per related row (N+1) |
//! | `/graphql/loader?query=…` | async-graphql; related rows by DataLoader, one `= ANY($1)` batch per table |
//! | `/graphql/naive?query=…` | async-graphql; each related field runs its own query (N+1) |
//!
//! `GET /round-trips` answers the number of statements sent since start (one round trip
//! each), so a client can count a page's. Command line: `ADDR DATABASE_URL CONNECTIONS`;
//! prints `ready` once it listens (as bench/web's servers do, for `web-bench`).

mod graphql;
mod page;

use std::collections::HashMap;
use std::io::Write as _;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt as _;
use qail::{Pool, PoolReset};
use serde_json::{Map, Value};
use uuid::Uuid;

use page::{Harbor, Line, Operator, trip};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// What the handlers share: a pool whose connections cache statements, one whose
/// connections do not, and the GraphQL schema.
#[derive(Clone)]
struct App {
    pool: Pool,
    uncached: Pool,
    schema: graphql::PageSchema,
}

/// An error answered as 500 with its message.
struct Failure(String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure(e.to_string())
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        (StatusCode::INTERNAL_SERVER_ERROR, self.0).into_response()
    }
}

fn json(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn qail_prepared(State(app): State<App>) -> Result<Response, Failure> {
    let mut conn = app.pool.acquire().await?;
    trip();
    let rows = page::join().fetch_all(&mut conn).await?;
    drop(conn);
    let lines: Vec<Line> = rows.into_iter().map(page::JoinRow::line).collect();
    Ok(json(serde_json::to_vec(&lines)?))
}

async fn qail_uncached(State(app): State<App>) -> Result<Response, Failure> {
    let mut conn = app.uncached.acquire().await?;
    // Note: no cache, so the statement is parsed unnamed in the write that runs it.
    conn.set_statement_cache_size(0);
    trip();
    let rows = conn.query(page::JOIN_SQL, &[]).await?;
    drop(conn);
    let mut lines = Vec::with_capacity(rows.len());
    for r in &rows {
        let harbor = |at: usize| -> Result<Option<Harbor>, qail::Error> {
            Ok(match r.try_get::<Option<Uuid>>(at)? {
                Some(id) => Some(Harbor {
                    id: id.to_string(),
                    name: r.try_get(at + 1)?,
                    country: r.try_get(at + 2)?,
                }),
                None => None,
            })
        };
        lines.push(Line {
            id: r.try_get::<Uuid>(0)?.to_string(),
            name: r.try_get(1)?,
            duration_minutes: r.try_get(2)?,
            origin: harbor(3)?,
            destination: harbor(6)?,
            operator: match r.try_get::<Option<Uuid>>(9)? {
                Some(id) => Some(Operator {
                    id: id.to_string(),
                    name: r.try_get(10)?,
                    website: r.try_get(11)?,
                }),
                None => None,
            },
        });
    }
    Ok(json(serde_json::to_vec(&lines)?))
}

/// The relations `expand` may name: the key in the JSON, the alias, the table, the foreign
/// key, and the columns shown.
const RELATIONS: &[(&str, &str, &str, &str, &[&str])] = &[
    (
        "origin",
        "o",
        "harbors",
        "origin_harbor_id",
        &["id", "name", "country"],
    ),
    (
        "destination",
        "d",
        "harbors",
        "destination_harbor_id",
        &["id", "name", "country"],
    ),
    (
        "operator",
        "op",
        "operators",
        "operator_id",
        &["id", "name", "website"],
    ),
];

/// A column's value as JSON, by its type.
fn value(row: &qail::Row, at: usize) -> Result<Value, qail::Error> {
    let oid = row.columns()[at].type_oid();
    Ok(match oid {
        // uuid
        2950 => row
            .try_get::<Option<Uuid>>(at)?
            .map_or(Value::Null, |u| Value::String(u.to_string())),
        // int4
        23 => row
            .try_get::<Option<i32>>(at)?
            .map_or(Value::Null, Value::from),
        _ => row
            .try_get::<Option<String>>(at)?
            .map_or(Value::Null, Value::String),
    })
}

async fn rest_expand(
    State(app): State<App>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Response, Failure> {
    let expand: Vec<&str> = params
        .get("expand")
        .map(|e| {
            e.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut related = Vec::new();
    for name in &expand {
        let relation = RELATIONS
            .iter()
            .find(|r| r.0 == *name)
            .ok_or_else(|| Failure(format!("cannot expand {name:?}")))?;
        related.push(relation);
    }
    let mut sql = String::from("SELECT c.id, c.name, c.duration_minutes");
    for (key, alias, _, _, columns) in &related {
        for col in *columns {
            sql.push_str(&format!(", {alias}.{col} AS {key}_{col}"));
        }
    }
    sql.push_str(" FROM odyssey_connections c");
    for (_, alias, table, fk, _) in &related {
        sql.push_str(&format!(
            " LEFT JOIN {table} {alias} ON {alias}.id = c.{fk}"
        ));
    }
    sql.push_str(" WHERE c.is_enabled ORDER BY c.name LIMIT 50");
    let mut conn = app.pool.acquire().await?;
    trip();
    let rows = conn.query(&sql, &[]).await?;
    drop(conn);
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let mut line = Map::new();
        for at in 0..3 {
            line.insert(r.columns()[at].name().to_owned(), value(r, at)?);
        }
        let mut at = 3;
        for (key, _, _, _, columns) in &related {
            let mut object = Map::new();
            for col in *columns {
                object.insert((*col).to_owned(), value(r, at)?);
                at += 1;
            }
            let missing = object.get("id").is_none_or(Value::is_null);
            let v = if missing {
                Value::Null
            } else {
                Value::Object(object)
            };
            line.insert((*key).to_owned(), v);
        }
        out.push(Value::Object(line));
    }
    Ok(json(serde_json::to_vec(&out)?))
}

async fn rest_naive(State(app): State<App>) -> Result<Response, Failure> {
    let mut conn = app.pool.acquire().await?;
    trip();
    let connections = page::connections().fetch_all(&mut conn).await?;
    let mut lines = Vec::with_capacity(connections.len());
    for c in connections {
        trip();
        let origin = page::harbor_by_id(&c.origin_harbor_id)
            .fetch_optional(&mut conn)
            .await?;
        trip();
        let destination = page::harbor_by_id(&c.destination_harbor_id)
            .fetch_optional(&mut conn)
            .await?;
        let operator = match &c.operator_id {
            Some(id) => {
                trip();
                page::operator_by_id(id).fetch_optional(&mut conn).await?
            }
            None => None,
        };
        lines.push(Line {
            id: c.id.to_string(),
            name: c.name,
            duration_minutes: c.duration_minutes,
            origin: origin.map(page::HarborRow::harbor),
            destination: destination.map(page::HarborRow::harbor),
            operator: operator.map(page::OperatorRow::operator),
        });
    }
    drop(conn);
    Ok(json(serde_json::to_vec(&lines)?))
}

async fn graphql(
    app: App,
    style: graphql::Style,
    params: HashMap<String, String>,
) -> Result<Response, Failure> {
    let query = params
        .get("query")
        .ok_or_else(|| Failure("no query".into()))?;
    let mut request = async_graphql::Request::new(query.as_str()).data(style);
    if let graphql::Style::Loader = style {
        request = request.data(graphql::loader(app.pool.clone()));
    }
    let response = app.schema.execute(request).await;
    if !response.errors.is_empty() {
        return Err(Failure(serde_json::to_string(&response.errors)?));
    }
    Ok(json(serde_json::to_vec(&response)?))
}

async fn graphql_loader(
    State(app): State<App>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Response, Failure> {
    graphql(app, graphql::Style::Loader, params).await
}

async fn graphql_naive(
    State(app): State<App>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Response, Failure> {
    graphql(app, graphql::Style::Naive, params).await
}

async fn round_trips() -> String {
    page::round_trips().to_string()
}

async fn pool(url: &str, connections: usize) -> Result<Pool, Error> {
    Ok(Pool::builder()
        .max_size(connections)
        .min_idle(connections)
        .reset(PoolReset::Transaction)
        .connect(url)
        .await?)
}

async fn serve(addr: &str, url: &str, connections: usize) -> Result<(), Error> {
    let pool = pool(url, connections).await?;
    let app = App {
        uncached: self::pool(url, connections).await?,
        schema: graphql::schema(pool.clone()),
        pool,
    };
    let router = Router::new()
        .route("/page/qail", get(qail_prepared))
        .route("/page/qail-uncached", get(qail_uncached))
        .route("/page/rest", get(rest_expand))
        .route("/page/rest-naive", get(rest_naive))
        .route("/graphql/loader", get(graphql_loader))
        .route("/graphql/naive", get(graphql_naive))
        .route("/round-trips", get(round_trips))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(addr).await?.tap_io(|tcp| {
        // Note: a socket that refuses it is served with Nagle's algorithm on.
        let _ = tcp.set_nodelay(true);
    });
    println!("ready");
    std::io::stdout().flush()?;
    axum::serve(listener, router).await?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, url, connections] = &args[..] else {
        eprintln!("usage: web-ferry ADDR DATABASE_URL CONNECTIONS");
        std::process::exit(2);
    };
    let Ok(connections) = connections.parse::<usize>() else {
        eprintln!("CONNECTIONS must be a number, not {connections:?}");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if let Err(e) = runtime.block_on(serve(addr, url, connections)) {
        eprintln!("web-ferry: {e}");
        std::process::exit(1);
    }
}
