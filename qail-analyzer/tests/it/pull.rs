//! `introspect::pull` behaviour that the DDL corpus cannot show.

use qail_schema::snapshot::{RelationKind, TypeRef};

use crate::util;

#[tokio::test]
async fn default_schemas_are_every_user_schema_and_views_have_typed_nullable_columns() {
    let db = "qail_pull_defaults";
    let mut conn = util::scratch_db(db).await;
    conn.batch_execute(
        "CREATE SCHEMA hidden; CREATE TABLE hidden.secret (x int);
         CREATE TABLE shown (id int PRIMARY KEY, name text NOT NULL);
         CREATE VIEW shown_names AS SELECT id, upper(name) AS loud FROM shown;
         CREATE MATERIALIZED VIEW shown_count AS SELECT count(*) AS n FROM shown;",
    )
    .await
    .expect("setup");
    let mut fresh = util::connect(&util::url_for(db)).await;
    let snap = qail_schema::introspect::pull(&mut fresh, &[])
        .await
        .expect("pull");
    let hidden = qail_schema::introspect::pull(&mut fresh, &["hidden".to_owned()])
        .await
        .expect("pull");
    drop((conn, fresh));
    util::drop_db(db).await;

    assert_eq!(snap.schemas, ["hidden", "public"]);
    assert_eq!(snap.search_path, ["public"]);
    assert!(snap.relation(Some("hidden"), "secret").is_some());
    assert!(
        snap.relation(None, "secret").is_none(),
        "unqualified names follow the search_path"
    );
    let qualified = qail_analyzer::analyze("SELECT x FROM hidden.secret", &snap)
        .expect("a table outside the search_path resolves qualified");
    assert_eq!(qualified.columns[0].ty, TypeRef::builtin("int4"));
    assert!(
        qail_analyzer::analyze("SELECT x FROM secret", &snap).is_err(),
        "an unqualified name outside the search_path does not resolve"
    );
    assert!(hidden.relation(Some("hidden"), "secret").is_some());
    assert!(
        hidden.relation(Some("public"), "shown").is_none(),
        "--schema overrides the default"
    );

    let view = snap.relation(None, "shown_names").expect("view pulled");
    assert_eq!(view.kind, RelationKind::View);
    assert_eq!(view.columns[1].name, "loud");
    assert_eq!(view.columns[1].ty, TypeRef::builtin("text"));
    assert!(
        view.columns.iter().all(|c| !c.not_null),
        "PostgreSQL records no view nullability"
    );
    let mv = snap
        .relation(None, "shown_count")
        .expect("materialized view pulled");
    assert_eq!(mv.kind, RelationKind::MaterializedView);
    assert_eq!(mv.columns[0].ty, TypeRef::builtin("int8"));
    assert!(
        snap.server_version
            .as_deref()
            .is_some_and(|v| !v.is_empty())
    );
}

#[tokio::test]
async fn sequences_are_relations_of_one_row() {
    let db = "qail_pull_sequences";
    let mut conn = util::scratch_db(db).await;
    conn.batch_execute("CREATE SEQUENCE ticket_numbers; CREATE TABLE t (id serial PRIMARY KEY);")
        .await
        .expect("setup");
    let snap = qail_schema::introspect::pull(&mut conn, &[])
        .await
        .expect("pull");
    let sql = "SELECT last_value, is_called, nextval('ticket_numbers') AS next FROM ticket_numbers";
    let server = conn.prepare(sql).await.expect("the server accepts it");
    drop(conn);
    util::drop_db(db).await;

    let seq = snap
        .relation(None, "ticket_numbers")
        .expect("sequence pulled");
    assert_eq!(seq.kind, RelationKind::Sequence);
    assert!(
        snap.relation(None, "t_id_seq").is_some(),
        "a serial's sequence"
    );
    let a = qail_analyzer::analyze(sql, &snap).expect("the analyzer accepts it");
    let ours: Vec<(String, Option<u32>, bool)> = a
        .columns
        .iter()
        .map(|c| (c.name.clone(), qail_analyzer::type_oid(&c.ty), c.nullable))
        .collect();
    let theirs: Vec<(String, Option<u32>, bool)> = server
        .columns()
        .iter()
        .map(|c| (c.name().to_owned(), Some(c.type_oid()), false))
        .collect();
    assert_eq!(ours, theirs, "names, types, and every column non-null");
}

#[tokio::test]
async fn extension_functions_are_pulled_with_their_signatures() {
    let db = "qail_pull_extensions";
    let mut conn = util::scratch_db(db).await;
    conn.batch_execute(
        "CREATE EXTENSION citext; CREATE EXTENSION pg_trgm; CREATE EXTENSION \"uuid-ossp\";
         CREATE TABLE people (id uuid PRIMARY KEY DEFAULT uuid_generate_v4(), login citext NOT NULL);",
    )
    .await
    .expect("setup");
    let snap = qail_schema::introspect::pull(&mut conn, &[])
        .await
        .expect("pull");
    let sql = "SELECT similarity(login::text, $1) AS score, uuid_generate_v4() AS fresh, \
               uuid_generate_v5(uuid_ns_url(), login::text) AS named, strpos(login, 'a') AS at \
               FROM people WHERE word_similarity($1, login::text) > 0.3";
    let server = conn.prepare(sql).await.expect("the server accepts it");
    drop(conn);
    util::drop_db(db).await;

    let sim = snap
        .functions
        .iter()
        .find(|f| f.name == "similarity")
        .expect("pg_trgm's similarity pulled");
    assert_eq!(sim.extension.as_deref(), Some("pg_trgm"));
    assert!(
        !snap.functions.iter().any(|f| f.name == "citextin"),
        "I/O functions are not callable from SQL"
    );
    let a = qail_analyzer::analyze(sql, &snap).expect("the analyzer accepts it");
    let ours: Vec<(String, Option<u32>)> = a
        .columns
        .iter()
        .map(|c| (c.name.clone(), qail_analyzer::type_oid(&c.ty)))
        .collect();
    let theirs: Vec<(String, Option<u32>)> = server
        .columns()
        .iter()
        .map(|c| (c.name().to_owned(), Some(c.type_oid())))
        .collect();
    assert_eq!(ours, theirs);
    let params: Vec<Option<u32>> = a
        .params
        .iter()
        .map(|p| qail_analyzer::type_oid(&p.ty))
        .collect();
    let want: Vec<Option<u32>> = server.params().iter().copied().map(Some).collect();
    assert_eq!(params, want);
}
