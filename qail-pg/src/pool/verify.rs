//! Start-up verification: every statement `qail!` compiled into the binary (the link-time
//! registry, [`STATEMENTS`]) described by the server in one pipelined round trip, plus one
//! catalog query for the NOT NULL-ness of the table columns they return, and compared with
//! what each was compiled against (the rule: [`crate::template::verify`]).

use std::collections::{HashMap, HashSet};

use super::Pool;
use crate::conn::Connection;
use crate::error::{Error, Kind};
use crate::template::verify::{Described, ServerColumn, builtin_name, differences};
use crate::template::{Compiled, Drift, Expectation, STATEMENTS, report};
use crate::types::Oid;
use crate::types::oid::FIRST_USER_OID;

impl Pool {
    /// Checks every `qail!` statement of the binary against the database: each is described
    /// by the server (Parse + Describe, all in one round trip) and its parameter types,
    /// result column types and the NOT NULL-ness of the table columns it returns are
    /// compared with what it was compiled against. Returns how many statements were checked.
    ///
    /// [`PoolBuilder::verify_statements`](super::Builder::verify_statements) runs it when the
    /// pool opens.
    ///
    /// # Errors
    ///
    /// A schema-drift error ([`Error::is_schema_drift`]) naming every statement that no
    /// longer matches, by `file:line`, with each difference ("column `email` of `users` is
    /// now citext, compiled as text: src/users.rs:42"); or a connection error.
    pub async fn verify(&self) -> Result<usize, Error> {
        let mut conn = self.acquire().await?;
        conn.verify_compiled(&STATEMENTS).await
    }
}

impl Connection {
    /// [`Pool::verify`] on this connection.
    ///
    /// # Errors
    ///
    /// As [`Pool::verify`].
    pub async fn verify(&mut self) -> Result<usize, Error> {
        self.verify_compiled(&STATEMENTS).await
    }

    /// [`Pool::verify`] for the given statements.
    ///
    /// # Errors
    ///
    /// As [`Pool::verify`].
    pub async fn verify_compiled(&mut self, statements: &[Compiled]) -> Result<usize, Error> {
        let expected: Vec<Expectation<'_>> = statements.iter().map(Expectation::from).collect();
        let drifts = self.drifts(&expected).await?;
        if drifts.is_empty() {
            return Ok(statements.len());
        }
        Err(Error::new(
            Kind::SchemaDrift,
            format!(
                "{} of the {} compiled statements no longer match the database:\n\
                 {}run the migrations the database lacks, or change the queries to the \
                 database's schema and rebuild",
                drifts.len(),
                statements.len(),
                report(&expected, &drifts)
            ),
        ))
    }

    /// The statements of `expected` that no longer match the database, each with its
    /// differences (what [`Pool::verify`] reports; [`report`] words them): every statement is
    /// sent twice in one round trip, Parse + Describe with the compiled parameter types (what
    /// runs: refused or not, its result columns) and without them (the parameter types the
    /// schema gives), then the NOT NULL-ness of the table columns they return is read in one
    /// query.
    ///
    /// # Errors
    ///
    /// A connection error, or a statement that cannot be sent (a NUL in its SQL).
    pub async fn drifts(&mut self, expected: &[Expectation<'_>]) -> Result<Vec<Drift>, Error> {
        let sent: Vec<(&str, &[Oid])> = expected
            .iter()
            .flat_map(|e| [(e.sql, e.param_oids), (e.sql, &[][..])])
            .collect();
        let described = self.describe_all(&sent).await?;
        let mut attributes = HashSet::new();
        let mut user_types = HashSet::new();
        for statement in described.iter().flatten() {
            for column in statement.columns() {
                if let (Some(table), Some(attnum)) = (column.table_oid(), column.column_id()) {
                    attributes.insert((i64::from(table), attnum));
                }
                user_types.insert(column.type_oid());
            }
            user_types.extend(statement.params());
        }
        let catalog = self.attributes(&attributes).await?;
        user_types.retain(|&oid| oid >= FIRST_USER_OID);
        let names = self.type_names(&user_types).await?;
        let type_name = |oid: Oid| {
            names
                .get(&oid)
                .cloned()
                .unwrap_or_else(|| builtin_name(oid))
        };
        let mut drifts = Vec::new();
        for (index, (e, pair)) in expected.iter().zip(described.chunks(2)).enumerate() {
            let [typed, untyped] = pair else {
                continue;
            };
            let inferred = untyped.as_ref().ok().map(|s| s.params().to_vec());
            let described = match typed {
                Ok(statement) => Described::Accepted {
                    inferred,
                    params: statement.params().to_vec(),
                    columns: statement
                        .columns()
                        .iter()
                        .map(|c| ServerColumn {
                            type_oid: c.type_oid(),
                            table: c
                                .table_oid()
                                .zip(c.column_id())
                                .and_then(|(t, a)| catalog.get(&(i64::from(t), a)).cloned()),
                        })
                        .collect(),
                },
                Err(e) => Described::Refused {
                    message: e
                        .as_db_error()
                        .map_or_else(|| e.to_string(), |db| db.message.clone()),
                    inferred,
                },
            };
            let differences = differences(e, &described, &type_name);
            if !differences.is_empty() {
                drifts.push(Drift { index, differences });
            }
        }
        Ok(drifts)
    }

    /// `(table, column, NOT NULL)` of each `(table OID, attnum)`: NOT NULL as the snapshot
    /// reads it, declared or forced by a validated `CHECK (column IS NOT NULL)` (alone or
    /// among the conjuncts of an AND).
    async fn attributes(
        &mut self,
        keys: &HashSet<(i64, i16)>,
    ) -> Result<HashMap<(i64, i16), (String, String, bool)>, Error> {
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        let (rels, nums): (Vec<i64>, Vec<i16>) = keys.iter().copied().unzip();
        let rows = self
            .query(
                "SELECT a.attrelid::int8, a.attnum, c.relname::text, a.attname::text, \
                 a.attnotnull OR EXISTS (SELECT FROM pg_constraint n \
                   WHERE n.conrelid = a.attrelid AND n.contype = 'c' AND n.convalidated \
                   AND strpos(pg_get_constraintdef(n.oid), \
                              '(' || quote_ident(a.attname) || ' IS NOT NULL)') > 0 \
                   AND pg_get_constraintdef(n.oid) !~ '( OR |NOT \\()') \
                 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
                 JOIN unnest($1::int8[], $2::int2[]) AS k(rel, num) \
                 ON a.attrelid = k.rel::oid AND a.attnum = k.num",
                &[&rels, &nums],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| ((r.get(0), r.get(1)), (r.get(2), r.get(3), r.get(4))))
            .collect())
    }

    /// The names of user types.
    async fn type_names(&mut self, oids: &HashSet<Oid>) -> Result<HashMap<Oid, String>, Error> {
        if oids.is_empty() {
            return Ok(HashMap::new());
        }
        let oids: Vec<i64> = oids.iter().map(|&o| i64::from(o)).collect();
        let rows = self
            .query(
                "SELECT oid::int8, typname::text FROM pg_type WHERE oid = ANY($1::int8[]::oid[])",
                &[&oids],
            )
            .await?;
        Ok(rows
            .iter()
            .filter_map(|r| Some((Oid::try_from(r.get::<i64>(0)).ok()?, r.get(1))))
            .collect())
    }
}
