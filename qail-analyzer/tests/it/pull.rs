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

/// The schema of the session-marking tests: views and a policy that call a function with a
/// session effect, directly or through another view, and ones that do not.
const SESSION_SCHEMA: &str = "
    CREATE TABLE ports (id int PRIMARY KEY, name text NOT NULL, owner text);
    CREATE FUNCTION tag(text) RETURNS text LANGUAGE plpgsql AS
        $$ BEGIN PERFORM set_config('app.last', $1, false); RETURN $1; END $$;
    CREATE VIEW plain_ports AS SELECT id, upper(name) AS loud, now() AS at FROM ports;
    CREATE VIEW tagged_ports AS SELECT id, tag(name) AS name FROM ports;
    CREATE VIEW configured_ports AS SELECT id, set_config('app.x', name, false) AS x FROM ports;
    CREATE VIEW locked_ports AS SELECT id FROM ports WHERE pg_try_advisory_lock(id);
    CREATE VIEW over_tagged AS SELECT t.id FROM tagged_ports t JOIN plain_ports p USING (id);
    CREATE VIEW over_plain AS SELECT id FROM plain_ports;
    CREATE TABLE owned (id int PRIMARY KEY, owner text);
    ALTER TABLE owned ENABLE ROW LEVEL SECURITY;
    CREATE POLICY mine ON owned USING (owner = tag(current_user::text));
    CREATE VIEW over_owned AS SELECT id FROM owned;
    CREATE SCHEMA unpulled;
    CREATE VIEW unpulled.tagged AS SELECT tag(name) AS name FROM ports;
    CREATE VIEW over_unpulled AS SELECT name FROM unpulled.tagged;";

/// Which relations a snapshot marks, and which of the statements reading them the analyzer
/// marks as changing the session.
fn session_marks(snap: &qail_schema::snapshot::Snapshot) -> (Vec<String>, Vec<(String, bool)>) {
    let mut marked: Vec<String> = snap
        .relations
        .iter()
        .filter(|r| r.changes_session)
        .map(|r| r.name.clone())
        .collect();
    marked.sort();
    let statements = [
        "SELECT id, name FROM ports",
        "SELECT loud FROM plain_ports",
        "SELECT id FROM over_plain",
        "SELECT name FROM tagged_ports WHERE id = $1",
        "SELECT p.id FROM ports p LEFT JOIN over_tagged o ON o.id = p.id",
        "SELECT x FROM configured_ports",
        "SELECT id FROM locked_ports",
    ]
    .iter()
    .map(|sql| {
        let a = qail_analyzer::analyze(sql, snap).expect(sql);
        ((*sql).to_owned(), a.changes_session)
    })
    .collect();
    (marked, statements)
}

#[tokio::test]
async fn views_and_policies_that_call_session_functions_mark_the_statements_reading_them() {
    let db = "qail_pull_session";
    let mut conn = util::scratch_db(db).await;
    conn.batch_execute(SESSION_SCHEMA).await.expect("setup");
    // Note: `unpulled` is left out of the snapshot; a view reading its view is still marked.
    let snap = qail_schema::introspect::pull(&mut conn, &["public".to_owned()])
        .await
        .expect("pull");
    drop(conn);
    util::drop_db(db).await;

    let (marked, statements) = session_marks(&snap);
    assert_eq!(
        marked,
        [
            "configured_ports",
            "locked_ports",
            "over_owned",
            "over_tagged",
            "over_unpulled",
            "owned",
            "tagged_ports"
        ],
        "a view calling a user function or a session built-in, a table whose policy does, \
         and the views over them"
    );
    let expected = [false, false, false, true, true, true, true];
    for ((sql, got), want) in statements.iter().zip(expected) {
        assert_eq!(*got, want, "{sql}");
    }
    assert!(
        qail_analyzer::analyze("SELECT id FROM owned", &snap)
            .expect("owned")
            .changes_session,
        "a table whose policy calls a user function"
    );

    // The same schema built from its DDL: views are typed by the analyzer, which marks them
    // alike (policies are not followed there).
    let (built, _) =
        qail_analyzer::import_ddl(&[("schema.sql".to_owned(), SESSION_SCHEMA.to_owned())]);
    let (marked, statements_built) = session_marks(&built);
    assert_eq!(
        marked,
        [
            "configured_ports",
            "locked_ports",
            "over_tagged",
            "over_unpulled",
            "tagged",
            "tagged_ports"
        ]
    );
    assert_eq!(statements_built, statements);
}
