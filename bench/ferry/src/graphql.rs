//! The two GraphQL schemas over the page: `connections { … origin destination operator }`.
//! With a DataLoader, the related rows of all 50 connections are loaded in one
//! `WHERE id = ANY($1)` batch per table (origin and destination share the harbors' batch);
//! naive, each related field runs its own query.

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::dataloader::{DataLoader, Loader};
use async_graphql::{ComplexObject, Context, EmptyMutation, EmptySubscription, Object, Schema};
use async_graphql::{Result, SimpleObject};
use qail::Pool;
use uuid::Uuid;

use crate::page::{self, ConnectionRow, Harbor, Operator, trip};

/// A connection as GraphQL resolves it: its own fields, and the related rows' ids.
#[derive(SimpleObject)]
#[graphql(complex, name = "Connection", rename_fields = "snake_case")]
pub struct Node {
    id: String,
    name: String,
    duration_minutes: Option<i32>,
    #[graphql(skip)]
    row: ConnectionRow,
}

impl From<ConnectionRow> for Node {
    fn from(row: ConnectionRow) -> Node {
        Node {
            id: row.id.to_string(),
            name: row.name.clone(),
            duration_minutes: row.duration_minutes,
            row,
        }
    }
}

async fn connections(pool: &Pool) -> Result<Vec<Node>> {
    let mut conn = pool.acquire().await?;
    trip();
    let rows = page::connections().fetch_all(&mut conn).await?;
    Ok(rows.into_iter().map(Node::from).collect())
}

/// Whether the related fields go through the loaders (in the request's data) or each run a
/// query of their own.
#[derive(Clone, Copy)]
pub enum Style {
    Loader,
    Naive,
}

#[ComplexObject]
impl Node {
    async fn origin(&self, ctx: &Context<'_>) -> Result<Option<Harbor>> {
        harbor(ctx, self.row.origin_harbor_id).await
    }

    async fn destination(&self, ctx: &Context<'_>) -> Result<Option<Harbor>> {
        harbor(ctx, self.row.destination_harbor_id).await
    }

    async fn operator(&self, ctx: &Context<'_>) -> Result<Option<Operator>> {
        let Some(id) = self.row.operator_id else {
            return Ok(None);
        };
        match ctx.data::<Style>()? {
            Style::Loader => Ok(ctx.data::<DataLoader<Rows>>()?.load_one(Op(id)).await?),
            Style::Naive => {
                let mut conn = ctx.data::<Pool>()?.acquire().await?;
                trip();
                let row = page::operator_by_id(&id).fetch_optional(&mut conn).await?;
                Ok(row.map(page::OperatorRow::operator))
            }
        }
    }
}

async fn harbor(ctx: &Context<'_>, id: Uuid) -> Result<Option<Harbor>> {
    match ctx.data::<Style>()? {
        Style::Loader => Ok(ctx.data::<DataLoader<Rows>>()?.load_one(id).await?),
        Style::Naive => {
            let mut conn = ctx.data::<Pool>()?.acquire().await?;
            trip();
            let row = page::harbor_by_id(&id).fetch_optional(&mut conn).await?;
            Ok(row.map(page::HarborRow::harbor))
        }
    }
}

/// The root: `connections`.
pub struct Query;

#[Object]
impl Query {
    async fn connections(&self, ctx: &Context<'_>) -> Result<Vec<Node>> {
        connections(ctx.data::<Pool>()?).await
    }
}

/// The schema of both styles (the style is in the request's data).
pub type PageSchema = Schema<Query, EmptyMutation, EmptySubscription>;

/// The schema, with the pool in its data.
pub fn schema(pool: Pool) -> PageSchema {
    Schema::build(Query, EmptyMutation, EmptySubscription)
        .data(pool)
        .finish()
}

/// The batch loader of harbors (keyed by uuid) and operators (keyed by [`Op`]).
pub struct Rows(pub Pool);

/// An operator's id, a key of its own so that operators batch apart from harbors.
#[derive(Clone, Copy, Hash, PartialEq, Eq)]
pub struct Op(pub Uuid);

type LoadError = Arc<qail::Error>;

impl Loader<Uuid> for Rows {
    type Value = Harbor;
    type Error = LoadError;

    async fn load(&self, keys: &[Uuid]) -> Result<HashMap<Uuid, Harbor>, LoadError> {
        let mut conn = self.0.acquire().await?;
        trip();
        let rows = page::harbors_by_ids(&keys).fetch_all(&mut conn).await?;
        Ok(rows.into_iter().map(|r| (r.id, r.harbor())).collect())
    }
}

impl Loader<Op> for Rows {
    type Value = Operator;
    type Error = LoadError;

    async fn load(&self, keys: &[Op]) -> Result<HashMap<Op, Operator>, LoadError> {
        let ids: Vec<Uuid> = keys.iter().map(|k| k.0).collect();
        let ids = ids.as_slice();
        let mut conn = self.0.acquire().await?;
        trip();
        let rows = page::operators_by_ids(&ids).fetch_all(&mut conn).await?;
        Ok(rows.into_iter().map(|r| (Op(r.id), r.operator())).collect())
    }
}

/// A request's loader: new per request, so nothing is cached from one page to the next.
pub fn loader(pool: Pool) -> DataLoader<Rows> {
    DataLoader::new(Rows(pool), tokio::spawn)
}
