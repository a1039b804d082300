//! The JSON format, for tools (documented in the [module docs](super)).

use serde::Serialize;

use super::Statement;
use super::names::format_type;
use super::why::explain;
use qail_analyzer::{Analysis, Diagnostic, OutputColumn};
use qail_schema::Snapshot;

#[derive(Serialize)]
struct Output<'a> {
    statements: Vec<JsonStatement<'a>>,
}

#[derive(Serialize)]
struct JsonStatement<'a> {
    name: Option<&'a str>,
    file: &'a str,
    index: usize,
    line: usize,
    sql: &'a str,
    ok: bool,
    params: Vec<Param>,
    columns: Vec<Column<'a>>,
    errors: Vec<Error<'a>>,
}

#[derive(Serialize)]
struct Param {
    index: usize,
    #[serde(rename = "type")]
    ty: String,
    nullable: bool,
}

#[derive(Serialize)]
struct Column<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    ty: String,
    nullable: bool,
    source: Option<String>,
    why: String,
    reasons: Vec<String>,
    rust_type: Option<&'a str>,
}

#[derive(Serialize)]
struct Error<'a> {
    message: &'a str,
    start: usize,
    end: usize,
    line: usize,
    column: usize,
    hint: Option<&'a str>,
}

/// The statements as one pretty-printed JSON object `{"statements": […]}`, ending in a
/// newline.
pub fn to_json(statements: &[Statement], snapshot: &Snapshot) -> String {
    let out = Output {
        statements: statements.iter().map(|s| statement(s, snapshot)).collect(),
    };
    let mut text = serde_json::to_string_pretty(&out).expect("plain data always serializes");
    text.push('\n');
    text
}

fn statement<'a>(st: &'a Statement, snapshot: &Snapshot) -> JsonStatement<'a> {
    let (params, columns, errors) = match &st.result {
        Ok(a) => (params(a, snapshot), columns(a, st, snapshot), Vec::new()),
        Err(diags) => (
            Vec::new(),
            Vec::new(),
            diags.iter().map(|d| error(st, d)).collect(),
        ),
    };
    JsonStatement {
        name: st.name.as_deref(),
        file: &st.file,
        index: st.index,
        line: st.line,
        sql: &st.sql,
        ok: st.result.is_ok(),
        params,
        columns,
        errors,
    }
}

fn params(a: &Analysis, snapshot: &Snapshot) -> Vec<Param> {
    a.params
        .iter()
        .enumerate()
        .map(|(i, p)| Param {
            index: i + 1,
            ty: format_type(&p.ty, snapshot),
            nullable: p.nullable,
        })
        .collect()
}

fn columns<'a>(a: &'a Analysis, st: &Statement, snapshot: &Snapshot) -> Vec<Column<'a>> {
    a.columns
        .iter()
        .enumerate()
        .map(|(i, c)| column(c, i, st, snapshot))
        .collect()
}

fn column<'a>(
    c: &'a OutputColumn,
    index: usize,
    st: &Statement,
    snapshot: &Snapshot,
) -> Column<'a> {
    let e = explain(c, index, st, snapshot);
    Column {
        name: &c.name,
        ty: format_type(&c.ty, snapshot),
        nullable: c.nullable,
        source: c
            .source
            .as_ref()
            .map(|s| format!("{}.{}.{}", s.schema, s.table, s.column)),
        why: e.summary,
        reasons: e.reasons,
        rust_type: c.rust_type.as_deref(),
    }
}

fn error<'a>(st: &Statement, d: &'a Diagnostic) -> Error<'a> {
    let (line, column) = st.position(d.range.start);
    Error {
        message: &d.message,
        start: d.range.start,
        end: d.range.end,
        line,
        column,
        hint: d.hint.as_deref(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::analyze_file;
    use serde_json::{Value, json};

    #[test]
    fn fields_and_values() {
        let snap: Snapshot = serde_json::from_str(include_str!(
            "../../../qail-analyzer/tests/fixtures/app.schema.json"
        ))
        .expect("fixture");
        let text = "-- name: One\nSELECT id, number AS \"n: Num\" FROM billing.invoices \
                    WHERE currency = $1;\nSELECT nme FROM harbors";
        let out: Value = serde_json::from_str(&to_json(&analyze_file("q.sql", text, &snap), &snap))
            .expect("valid JSON");
        let st = &out["statements"];
        assert_eq!(st[0]["name"], "One");
        assert_eq!(st[0]["line"], 2);
        assert_eq!(st[0]["ok"], true);
        assert_eq!(
            st[0]["params"],
            json!([{"index": 1, "type": "billing.currency", "nullable": false}])
        );
        assert_eq!(st[0]["columns"][0]["type"], "bigint");
        assert_eq!(st[0]["columns"][0]["source"], "billing.invoices.id");
        assert_eq!(st[0]["columns"][0]["why"], "primary key");
        assert_eq!(st[0]["columns"][1]["name"], "n");
        assert_eq!(st[0]["columns"][1]["type"], "character varying");
        assert_eq!(st[0]["columns"][1]["rust_type"], "Num");
        assert_eq!(st[0]["errors"], json!([]));
        assert_eq!(st[1]["name"], Value::Null);
        assert_eq!(st[1]["ok"], false);
        let e = &st[1]["errors"][0];
        assert_eq!(
            (&e["start"], &e["end"], &e["line"], &e["column"]),
            (&json!(7), &json!(10), &json!(3), &json!(8))
        );
        assert_eq!(e["hint"], "did you mean \"name\"?");
    }
}
