//! The snapshot derived from the migrations: `cargo qail schema build` (offline, the DDL
//! importer over the `.up` scripts in version order) and `cargo qail schema check`'s two
//! proofs (the committed file equals the offline build; it equals what `schema pull` reads
//! from a scratch database after `migrate run`).

use std::path::Path;

use qail_migrate::{Migration, Migrator};
use qail_schema::Snapshot;
use qail_schema::ddl::DdlWarning;

/// The migrations of `dir` in version order; `.down.sql` scripts are not part of them.
///
/// # Errors
///
/// The directory or a file cannot be read, or two files have one version.
pub fn migrations(dir: &Path) -> Result<Vec<Migration>, String> {
    if !dir.is_dir() {
        return Err(format!(
            "no migrations directory at {}; create the first migration with `cargo qail migrate \
             add <name>`, or fix metadata.qail.migrations in Cargo.toml",
            dir.display()
        ));
    }
    let mut all = qail_migrate::read(dir).map_err(|e| e.to_string())?;
    all.sort_by_key(Migration::version);
    Ok(all)
}

/// The snapshot the migrations `list` (from `dir`) produce, built offline: each up script
/// imported in order, views typed by the analyzer, sources relative to `snapshot_dir`.
pub fn build_from(
    dir: &Path,
    list: &[Migration],
    snapshot_dir: &Path,
) -> (Snapshot, Vec<DdlWarning>) {
    let files: Vec<(String, String)> = list
        .iter()
        .map(|m| {
            let path = dir.join(m.up().file());
            (path.display().to_string(), m.up().sql().to_owned())
        })
        .collect();
    let (mut snap, warnings) = qail_analyzer::import_ddl(&files);
    qail_schema::ddl::relative_to(&mut snap, snapshot_dir);
    (snap, warnings)
}

/// [`build_from`] over every migration of `dir`.
///
/// # Errors
///
/// As [`migrations`].
pub fn build(dir: &Path, snapshot: &Path) -> Result<(Snapshot, Vec<DdlWarning>), String> {
    let list = migrations(dir)?;
    let snapshot_dir = snapshot.parent().filter(|d| !d.as_os_str().is_empty());
    Ok(build_from(
        dir,
        &list,
        snapshot_dir.unwrap_or(Path::new(".")),
    ))
}

/// Applies the migrations of `dir` to a scratch database created on the server `url` points
/// at, reads it back as `schema pull` does (without the history table), and drops it.
///
/// # Errors
///
/// The server cannot be reached, a migration fails (its message says which), or the catalog
/// cannot be read.
pub fn pull_after_migrations(dir: &Path, url: &str) -> Result<Snapshot, String> {
    let migrator = Migrator::from_dir(dir).map_err(|e| e.to_string())?;
    let config = qail_pg::Config::parse(url).map_err(|e| format!("bad database URL: {e}"))?;
    let scratch = format!(
        "qail_check_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let mut admin = qail_pg::Connection::connect_with(&config)
            .await
            .map_err(|e| {
                format!(
                    "cannot connect to the database: {e}; check that the server runs and that \
                     the URL's host, port, user, password and database are right"
                )
            })?;
        admin
            .batch_execute(&format!("CREATE DATABASE {scratch}"))
            .await
            .map_err(|e| {
                format!(
                    "cannot create the scratch database {scratch}: {e}; the user needs CREATEDB"
                )
            })?;
        let result = async {
            let mut conn = qail_pg::Connection::connect_with(&config.clone().dbname(&scratch))
                .await
                .map_err(|e| format!("cannot connect to the scratch database: {e}"))?;
            migrator
                .run_on(&mut conn, None)
                .await
                .map_err(|e| format!("the migrations do not apply to an empty database: {e}"))?;
            let mut snap = qail_schema::introspect::pull(&mut conn, &[])
                .await
                .map_err(|e| e.to_string())?;
            snap.relations.retain(|r| r.name != qail_migrate::TABLE);
            Ok::<Snapshot, String>(snap)
        }
        .await;
        let dropped = admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {scratch} WITH (FORCE)"))
            .await;
        let snap = result?;
        dropped.map_err(|e| format!("cannot drop the scratch database {scratch}: {e}"))?;
        Ok(snap)
    })
}
