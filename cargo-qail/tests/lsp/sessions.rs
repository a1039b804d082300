//! Scripted sessions with `cargo qail lsp` over standard input and output.

use serde_json::{Value, json};

use crate::client::{Client, from_sql, position, project};

fn labels(result: &Value) -> Vec<String> {
    result
        .as_array()
        .unwrap_or_else(|| panic!("a completion list: {result}"))
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_owned())
        .collect()
}

fn hover_text(result: &Value) -> String {
    result["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("a hover: {result}"))
        .to_owned()
}

/// The byte offset of `needle` in `text` (its first occurrence after `after`).
fn find(text: &str, needle: &str, after: &str) -> usize {
    let from = text.find(after).expect("anchor") + after.len();
    from + text[from..].find(needle).expect("needle")
}

const RUST: &str = r####"use qail::qail;

fn ships(id: i32) {
    let q = qail!(r#"SELECT s.name, h.name AS harbor
        FROM ships s LEFT JOIN harbors h ON h.id = s.harbor_id
        WHERE s.id = {id}"#);
    let bad = qail!("SELECT \"id\", nme FROM ships WHERE sea = $1", sea);
}
"####;

#[test]
fn a_rust_file_is_checked_completed_hovered_and_navigated() {
    let dir = project("rust");
    let path = dir.join("src/main.rs");
    std::fs::write(&path, RUST).unwrap();
    let mut c = Client::start(&dir, &[]);
    let uri = c.open(&path, RUST);

    // Diagnostics: the misspelt column, at its bytes in the second literal, with its fix.
    let diags = c.diagnostics(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let nme = RUST.find("nme").unwrap();
    assert_eq!(
        diags[0]["range"],
        json!({"start": position(RUST, nme), "end": position(RUST, nme + 3)})
    );
    let message = diags[0]["message"].as_str().unwrap();
    assert!(message.contains("did you mean \"name\"?"), "{message}");
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": diags[0]["range"], "context": {"diagnostics": diags}}),
    );
    let edit = &actions[0]["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "name");
    assert_eq!(edit["range"], diags[0]["range"]);

    // Hover: a LEFT-joined column is nullable, with the reasons of `analyze --why`.
    let at = find(RUST, "name", "h.");
    let text = hover_text(&c.at("textDocument/hover", &uri, RUST, at));
    assert!(
        text.starts_with("**harbor**: `text`, nullable (right side of LEFT JOIN harbors AS h)"),
        "{text}"
    );
    assert!(text.contains("Rust: `Option<String>`"), "{text}");
    assert!(
        text.contains("harbors AS h is the right side of a LEFT JOIN (line 5)"),
        "{text}"
    );
    // A parameter's expected type, through its capture.
    let at = RUST.find("{id}").unwrap() + 1;
    let text = hover_text(&c.at("textDocument/hover", &uri, RUST, at));
    assert!(
        text.starts_with("**parameter $1** (`{id}`): `integer`"),
        "{text}"
    );
    // A nullable timestamp's Rust type follows the crate's features (`time`, no defaults).
    let launched = RUST.replace("SELECT s.name,", "SELECT s.launched, s.name,");
    c.change(&uri, 2, &launched);
    let at = launched.find("launched").unwrap();
    let text = hover_text(&c.at("textDocument/hover", &uri, &launched, at));
    assert!(
        text.contains("Rust: `Option<time::OffsetDateTime>`"),
        "{text}"
    );

    // Go to definition: the DDL file and line the snapshot recorded.
    c.change(&uri, 3, RUST);
    assert_eq!(c.diagnostics(&uri).len(), 1);
    let at = find(RUST, "harbors", "LEFT JOIN ");
    let def = c.at("textDocument/definition", &uri, RUST, at);
    let migration = dir.join("migrations/01.sql");
    assert_eq!(def["uri"], crate::client::uri(&migration));
    assert_eq!(def["range"]["start"]["line"], 2, "CREATE TABLE harbors");
    let at = find(RUST, "name", "h.");
    let def = c.at("textDocument/definition", &uri, RUST, at);
    assert_eq!(def["range"]["start"]["line"], 4, "harbors.name");

    // Completion while typing: after `h.`, only that relation's columns.
    let typing = RUST.replace("SELECT s.name, h.name AS harbor", "SELECT s.name, h.");
    c.change(&uri, 4, &typing);
    let at = typing.find("h.").unwrap() + 2;
    let items = c.at("textDocument/completion", &uri, &typing, at);
    assert_eq!(labels(&items), ["id", "name", "country"]);
    let at = typing.find("s.name").unwrap() + 2;
    let items = c.at("textDocument/completion", &uri, &typing, at);
    assert_eq!(
        labels(&items),
        ["id", "harbor_id", "name", "sea", "launched"]
    );
    c.shutdown();
}

#[test]
fn a_sql_file_is_checked_completed_and_reloaded_with_its_snapshot() {
    let dir = project("sql");
    let path = dir.join("queries.sql");
    let text = "-- name: Ships\nSELECT id, name FROM ships WHERE sea = 'calm';\n\nSELECT id, flag FROM harbors;\n";
    std::fs::write(&path, text).unwrap();
    let mut c = Client::start(&dir, &[]);
    let uri = c.open(&path, text);
    let diags = c.diagnostics(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let flag = text.find("flag").unwrap();
    assert_eq!(diags[0]["range"]["start"], position(text, flag));

    // Completion of relations, enum labels and keywords in an incomplete statement.
    let typing = "SELECT id FROM ships WHERE sea = '\n";
    c.change(&uri, 2, typing);
    let items = c.at("textDocument/completion", &uri, typing, typing.len() - 1);
    assert_eq!(labels(&items), ["calm", "stormy"]);
    let typing = "SELECT * FROM ";
    c.change(&uri, 3, typing);
    let items = labels(&c.at("textDocument/completion", &uri, typing, typing.len()));
    assert!(
        items.contains(&"harbors".to_owned()) && items.contains(&"ships".to_owned()),
        "{items:?}"
    );
    let typing = "SELECT * FROM ships ";
    c.change(&uri, 4, typing);
    let items = labels(&c.at("textDocument/completion", &uri, typing, typing.len()));
    assert!(items.contains(&"LEFT JOIN".to_owned()), "{items:?}");
    assert!(!items.contains(&"ships".to_owned()), "{items:?}");
    let typing = "SELECT lower( FROM ships";
    c.change(&uri, 5, typing);
    let items = c.at("textDocument/completion", &uri, typing, 9);
    let lower = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "lower")
        .expect("lower is offered");
    assert!(
        lower["detail"]
            .as_str()
            .unwrap()
            .contains("lower(text) → text"),
        "{lower}"
    );

    // The snapshot changes on disk: documents are checked again against the new one.
    c.change(&uri, 6, text);
    assert_eq!(c.diagnostics(&uri).len(), 1);
    let migration = dir.join("migrations/01.sql");
    let ddl = std::fs::read_to_string(&migration).unwrap();
    std::fs::write(
        &migration,
        ddl.replace(
            "country text NOT NULL",
            "country text NOT NULL,\n    flag text",
        ),
    )
    .unwrap();
    from_sql(&dir);
    let snapshot = std::fs::File::options()
        .write(true)
        .open(dir.join("qail.schema.json"))
        .unwrap();
    snapshot
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(10))
        .unwrap();
    let at = text.find("harbors").unwrap();
    let text_hover = hover_text(&c.at("textDocument/hover", &uri, text, at));
    assert!(text_hover.contains("`flag` text"), "{text_hover}");
    assert_eq!(c.diagnostics(&uri), Vec::<Value>::new());
    c.shutdown();
}

#[test]
fn without_recorded_sources_definition_goes_to_the_snapshot_entry() {
    let dir = project("plain");
    // A snapshot as `schema pull` writes it: no sources.
    let mut snap: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("qail.schema.json")).unwrap())
            .unwrap();
    snap.as_object_mut().unwrap().remove("sources");
    let plain = qail_schema::Snapshot::from_json(&snap.to_string()).unwrap();
    let plain_path = dir.join("plain.schema.json");
    plain.save(&plain_path).unwrap();
    let file = std::fs::read_to_string(&plain_path).unwrap();
    let entry = file
        .lines()
        .position(|l| l.trim() == "\"name\": \"ships\",")
        .unwrap();

    let mut c = Client::start(&dir, &["--snapshot", "plain.schema.json"]);
    let path = dir.join("q.sql");
    let text = "SELECT s.sea FROM ships s";
    let uri = c.open(&path, text);
    assert_eq!(c.diagnostics(&uri), Vec::<Value>::new());
    let def = c.at(
        "textDocument/definition",
        &uri,
        text,
        text.find("ships").unwrap(),
    );
    assert_eq!(def["uri"], crate::client::uri(&plain_path));
    assert_eq!(def["range"]["start"]["line"], entry);
    let def = c.at(
        "textDocument/definition",
        &uri,
        text,
        text.find("sea").unwrap(),
    );
    let line = usize::try_from(def["range"]["start"]["line"].as_u64().unwrap()).unwrap();
    assert!(
        file.lines()
            .nth(line)
            .unwrap()
            .trim()
            .starts_with("{\"name\": \"sea\""),
        "{line}"
    );
    c.shutdown();
}

const DYNAMIC: &str = r####"use qail::qail;

fn search(ids: Vec<i32>, sea: Option<Sea>, name: Option<String>, order: Order) {
    let ok = qail!(r#"SELECT s.name FROM ships s
        WHERE s.id IN {ids} {? AND s.sea = {sea} } ORDER BY {sort}"#,
        sort = match order { Order::Name => "s.name", Order::Id => "s.id DESC" });
    let bad = qail!("SELECT id FROM ships WHERE harbor_id NOT IN {ids} {? AND nme = {name} }");
    let rows = [("Oban", "GB")];
    let bulk = qail!("INSERT INTO harbors (name, country) VALUES {rows} RETURNING id");
}
"####;

#[test]
fn dynamic_queries_are_read_as_the_macro_reads_them() {
    let dir = project("dynamic");
    let path = dir.join("src/main.rs");
    std::fs::write(&path, DYNAMIC).unwrap();
    let mut c = Client::start(&dir, &[]);
    let uri = c.open(&path, DYNAMIC);

    // Every optional clause is analyzed (as the macro's check of the full query does): the
    // misspelt column inside one is reported at its bytes; the valid query (its sort choice
    // filled with the first arm) and the bulk insert have no diagnostic.
    let diags = c.diagnostics(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let nme = DYNAMIC.find("nme").unwrap();
    assert_eq!(
        diags[0]["range"],
        json!({"start": position(DYNAMIC, nme), "end": position(DYNAMIC, nme + 3)})
    );
    assert!(
        diags[0]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean \"name\"?"),
        "{diags:?}"
    );

    // Hover on a list and on a capture inside a clause: the parameter's expected type.
    let at = DYNAMIC.find("{ids}").unwrap() + 1;
    let text = hover_text(&c.at("textDocument/hover", &uri, DYNAMIC, at));
    assert!(
        text.starts_with("**parameter $1** (`{ids}`): `integer[]`"),
        "{text}"
    );
    let at = DYNAMIC.find("{sea}").unwrap() + 1;
    let text = hover_text(&c.at("textDocument/hover", &uri, DYNAMIC, at));
    assert!(
        text.starts_with("**parameter $2** (`{sea}`): `sea`"),
        "{text}"
    );
    c.shutdown();
}
