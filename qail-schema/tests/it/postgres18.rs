//! PostgreSQL 18's DDL forms — virtual generated columns (the default when neither STORED nor
//! VIRTUAL is written), temporal keys (`WITHOUT OVERLAPS`, `PERIOD`) and `[NOT] ENFORCED`
//! constraints — on every server the tests reach (`DATABASE_URL` and the `MAJOR=URL` lines of
//! `QAIL_PG_URLS`): a server of 18 or newer runs the script and its pull equals the DDL
//! import; an older one refuses the script, so it really needs 18.

use qail_schema::diff::loose_expr;
use qail_schema::snapshot::Relation;

use crate::util;

const SCRIPT: &str = "
CREATE EXTENSION btree_gist;
CREATE TABLE rooms (
    id int,
    valid_at tstzrange,
    name text,
    PRIMARY KEY (id, valid_at WITHOUT OVERLAPS),
    CONSTRAINT named CHECK (name IS NOT NULL) ENFORCED
);
CREATE TABLE bookings (
    id int PRIMARY KEY,
    room int,
    valid_at tstzrange,
    note text,
    twice int GENERATED ALWAYS AS (id * 2) VIRTUAL,
    thrice int GENERATED ALWAYS AS (id * 3),
    four int GENERATED ALWAYS AS (id * 4) STORED,
    CONSTRAINT fk FOREIGN KEY (room, PERIOD valid_at)
        REFERENCES rooms (id, PERIOD valid_at) NOT ENFORCED,
    CONSTRAINT ck CHECK (note IS NOT NULL) NOT ENFORCED,
    UNIQUE (room, valid_at WITHOUT OVERLAPS)
);
ALTER TABLE bookings ADD COLUMN five int GENERATED ALWAYS AS (id + 5),
    ADD CONSTRAINT room_known CHECK (room IS NOT NULL) NOT ENFORCED;
";

fn relations(mut rels: Vec<Relation>) -> Vec<Relation> {
    rels.retain(|r| r.schema == "public");
    for r in &mut rels {
        for c in &mut r.columns {
            c.generated = c.generated.as_deref().map(loose_expr);
        }
    }
    rels.sort_by(|a, b| a.name.cmp(&b.name));
    rels
}

#[tokio::test]
async fn postgres_18_ddl_imports_like_a_pull() {
    let (ddl, warnings) = qail_schema::ddl::from_sql(&[("pg18.sql".to_owned(), SCRIPT.to_owned())]);
    // Only the virtual columns are warned about, for a target range reaching below 18.
    let only_18 = qail_catalog::Versions::span(18, 18);
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(
        warnings
            .iter()
            .all(|w| w.since == Some(18) && !w.applies_to(only_18)),
        "{warnings:#?}"
    );
    let db = "qail_ddl_postgres18";
    let mut majors = Vec::new();
    for url in urls() {
        let mut admin = util::connect(&url).await;
        let major: u32 = admin
            .parameter_status("server_version")
            .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|v| v.parse().ok())
            .expect("the server reports its version");
        majors.push(major);
        for sql in [
            format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
            format!("CREATE DATABASE {db}"),
        ] {
            admin
                .batch_execute(&sql)
                .await
                .expect("the scratch database");
        }
        let mut conn = util::connect(&with_database(&url, db)).await;
        let ran = conn.batch_execute(SCRIPT).await;
        let pulled = match (&ran, major >= 18) {
            (Ok(()), true) => Some(
                qail_schema::introspect::pull(&mut conn, &["public".to_owned()])
                    .await
                    .expect("pull"),
            ),
            (Err(e), true) => panic!("PostgreSQL {major} refuses the script: {e}"),
            (Ok(()), false) => panic!("PostgreSQL {major} accepts the script"),
            (Err(_), false) => None,
        };
        drop(conn);
        admin
            .batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
            .await
            .expect("drop the scratch database");
        if let Some(pulled) = pulled {
            assert_eq!(
                relations(ddl.relations.clone()),
                relations(pulled.relations),
                "PostgreSQL {major}: the DDL import differs from the pull"
            );
        }
    }
    eprintln!("checked on PostgreSQL {majors:?}");
}

/// Every server the tests reach: `DATABASE_URL`, and the `MAJOR=URL` lines of `QAIL_PG_URLS`
/// that `scripts/pg-versions urls` prints.
fn urls() -> Vec<String> {
    let mut urls = vec![util::url()];
    let more = std::env::var("QAIL_PG_URLS").unwrap_or_default();
    for item in more.split_whitespace() {
        let url = item.split_once('=').map_or(item, |(_, url)| url);
        if !urls.iter().any(|u| u == url) {
            urls.push(url.to_owned());
        }
    }
    urls
}

/// `url` with the database `db` instead of its own.
fn with_database(url: &str, db: &str) -> String {
    let (main, query) = url.split_once('?').map_or((url, ""), |(m, q)| (m, q));
    let prefix = main.rsplit_once('/').map_or(main, |(p, _)| p);
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{query}")
    };
    format!("{prefix}/{db}{query}")
}
