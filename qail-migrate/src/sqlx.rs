//! Switching from sqlx: the migrations sqlx applied (its table `_sqlx_migrations`) recorded in
//! qail's history, once, so that none runs again.

use qail_pg::Connection;
use sha2::{Digest, Sha384};

use crate::error::{Error, ErrorKind};
use crate::history::{self, Table};
use crate::migration::Version;
use crate::migrator::{Migrator, idle};

impl Migrator {
    /// Records in qail's history every migration that sqlx applied to this database (its table
    /// `_sqlx_migrations`, in the history's schema) and qail's history lacks; returns their
    /// versions. Run it once when a project moves from sqlx-cli or sqlx's `migrate!`: the
    /// directory stays as it is, and `run` then applies only what sqlx had not.
    ///
    /// Each file is checked against sqlx's checksum (SHA-384 of its text): a file edited
    /// since sqlx applied it is an error naming it. A migration sqlx recorded as failed is
    /// recorded dirty.
    ///
    /// # Errors
    ///
    /// No `_sqlx_migrations` table ([`ErrorKind::Usage`]); a file sqlx applied is missing
    /// ([`ErrorKind::MissingFile`]) or was edited since ([`ErrorKind::Edited`]) — nothing is
    /// recorded then; the server failed ([`ErrorKind::Db`]).
    pub async fn import_sqlx(&self, conn: &mut Connection) -> Result<Vec<Version>, Error> {
        idle(conn)?;
        let what = "importing sqlx's history (_sqlx_migrations)";
        let table = Table::locate(conn).await?;
        let sqlx = table.sibling("_sqlx_migrations");
        let found = conn
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&sqlx])
            .await
            .map_err(|e| Error::db(what, e))?;
        if !found.try_get::<bool>(0).map_err(|e| Error::db(what, e))? {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "there is no table {sqlx} to import: sqlx keeps its history there; connect \
                     to the database (and search_path) sqlx migrated"
                ),
            ));
        }
        table.create(conn).await?;
        let mut tx = conn.begin().await.map_err(|e| Error::db(what, e))?;
        history::lock(&mut tx).await?;
        let known = table.read(&mut tx).await?;
        let rows = tx
            .query(
                &format!(
                    "SELECT version, description, success, checksum, installed_on::text, \
                     execution_time FROM {sqlx} ORDER BY version"
                ),
                &[],
            )
            .await
            .map_err(|e| Error::db(what, e))?;
        let mut imported = Vec::new();
        for row in &rows {
            let version: Version = row.try_get(0).map_err(|e| Error::db(what, e))?;
            let description: String = row.try_get(1).map_err(|e| Error::db(what, e))?;
            let success: bool = row.try_get(2).map_err(|e| Error::db(what, e))?;
            let checksum: Vec<u8> = row.try_get(3).map_err(|e| Error::db(what, e))?;
            let installed_on: String = row.try_get(4).map_err(|e| Error::db(what, e))?;
            let nanos: i64 = row.try_get(5).map_err(|e| Error::db(what, e))?;
            if known.iter().any(|e| e.version == version) {
                continue;
            }
            let Some(m) = self.migrations.iter().find(|m| m.version == version) else {
                return Err(Error::new(
                    ErrorKind::MissingFile,
                    format!(
                        "sqlx applied migration {version} ({description}), but its file is not \
                         in the migrations directory; restore it from version control and \
                         import again"
                    ),
                ));
            };
            if Sha384::digest(m.up.sql.as_bytes()).as_slice() != checksum.as_slice() {
                return Err(Error::new(
                    ErrorKind::Edited,
                    format!(
                        "migration file `{}` was edited after sqlx applied it (its SHA-384 \
                         differs from sqlx's checksum); restore the applied content from \
                         version control and import again",
                        m.up.file
                    ),
                ));
            }
            let (state, error) = if success {
                ("applied", None)
            } else {
                (
                    "dirty",
                    Some("failed under sqlx (its history says success = false)"),
                )
            };
            tx.execute(
                &table.sql(
                    "INSERT INTO _qail_migrations (version, name, checksum, state, applied_at, \
                     duration_ms, no_transaction, error) \
                     VALUES ($1, $2, $3, $4, $5::text::timestamptz, $6, $7, $8)",
                ),
                &[
                    &version,
                    &m.name,
                    &m.checksum(),
                    &state,
                    &installed_on,
                    &(nanos / 1_000_000),
                    &m.up.no_transaction,
                    &error,
                ],
            )
            .await
            .map_err(|e| Error::db(what, e))?;
            imported.push(version);
        }
        tx.commit().await.map_err(|e| Error::db(what, e))?;
        Ok(imported)
    }
}
