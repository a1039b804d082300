//! The `tracing` feature's spans against the real server: a query's span carries
//! OpenTelemetry's database fields, and a failed query's span its SQLSTATE. Spans are captured
//! by a small subscriber of the test's own.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use qail_pg::NoRows;
use qail_pg::types::oid;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use crate::compiled::{query, template};

/// A span as captured: its name and every field recorded on it, as text.
#[derive(Debug, Clone)]
struct Captured {
    name: &'static str,
    fields: HashMap<&'static str, String>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// Keeps every span, in the order they were made.
#[derive(Default, Clone)]
struct Capture {
    next: Arc<AtomicU64>,
    spans: Arc<Mutex<Vec<Captured>>>,
}

impl Capture {
    fn spans(&self) -> Vec<Captured> {
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The spans named `name` whose `db.query.text` is `sql`.
    fn queries(&self, sql: &str) -> Vec<Captured> {
        self.spans()
            .into_iter()
            .filter(|span| span.name == "qail.query" && span.field("db.query.text") == Some(sql))
            .collect()
    }
}

struct Fields<'a>(&'a mut HashMap<&'static str, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let mut fields = HashMap::new();
        attributes.record(&mut Fields(&mut fields));
        let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
        spans.push(Captured {
            name: attributes.metadata().name(),
            fields,
        });
        self.next.fetch_add(1, Ordering::Relaxed);
        Id::from_u64(u64::try_from(spans.len()).expect("few spans"))
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
        let index = usize::try_from(span.into_u64() - 1).expect("an index");
        if let Some(captured) = spans.get_mut(index) {
            values.record(&mut Fields(&mut captured.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// The fields every span of a query on the test server carries.
fn assert_server_fields(span: &Captured) {
    let config = crate::config();
    assert_eq!(span.field("db.system.name"), Some("postgresql"), "{span:?}");
    assert_eq!(
        span.field("db.namespace"),
        Some(config.dbname.as_str()),
        "{span:?}"
    );
    assert_eq!(span.field("server.address"), Some("127.0.0.1"), "{span:?}");
    let port = crate::url()
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next().map(str::to_owned))
        .expect("DATABASE_URL names a port");
    assert_eq!(span.field("server.port"), Some(port.as_str()), "{span:?}");
    assert_eq!(span.field("otel.kind"), Some("client"), "{span:?}");
}

// Note: the default (current-thread) runtime polls everything on this thread, where the
// capturing subscriber is the default.
#[tokio::test]
async fn query_spans_carry_the_database_fields_and_the_sqlstate() {
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(capture.clone());
    let mut conn = crate::connect().await;
    let connect = capture
        .spans()
        .into_iter()
        .find(|span| span.name == "qail.connect")
        .expect("connecting made a qail.connect span");
    assert_server_fields(&connect);

    // Run-time SQL.
    let sql = "  select $1::int8 AS traced";
    conn.query(sql, &[&7i64]).await.unwrap();
    let [span] = &capture.queries(sql)[..] else {
        panic!("one span for the query: {:?}", capture.spans());
    };
    assert_server_fields(span);
    assert_eq!(span.field("db.operation.name"), Some("SELECT"));
    assert_eq!(span.field("otel.name"), Some("SELECT"));
    assert_eq!(span.field("rows"), Some("1"));
    assert!(span.field("duration_us").is_some(), "{span:?}");
    assert_eq!(span.field("error.type"), None, "{span:?}");
    assert_eq!(span.field("otel.status_code"), None, "{span:?}");

    // A server error: its SQLSTATE.
    let sql = "SELECT 1 / $1::int4 AS traced_division";
    let e = conn.query(sql, &[&0i32]).await.unwrap_err();
    assert_eq!(e.code(), Some("22012"));
    let [span] = &capture.queries(sql)[..] else {
        panic!("one span for the failed query: {:?}", capture.spans());
    };
    assert_server_fields(span);
    assert_eq!(span.field("db.response.status_code"), Some("22012"));
    assert_eq!(span.field("error.type"), Some("22012"));
    assert_eq!(span.field("otel.status_code"), Some("ERROR"));

    // A compiled query: its SQL text, never its parameters.
    let sql = "INSERT INTO qail_traced SELECT $1::int8 WHERE false";
    conn.batch_execute("CREATE TEMP TABLE qail_traced (id int8)")
        .await
        .unwrap();
    let insert = template(sql, &[oid::INT8], &[]);
    query::<NoRows>(insert, &[&4711i64])
        .execute(&mut conn)
        .await
        .unwrap();
    let [span] = &capture.queries(sql)[..] else {
        panic!("one span for the compiled query: {:?}", capture.spans());
    };
    assert_server_fields(span);
    assert_eq!(span.field("db.operation.name"), Some("INSERT"));
    assert_eq!(span.field("rows"), Some("0"));
    assert!(
        span.fields.values().all(|value| !value.contains("4711")),
        "a parameter was recorded: {span:?}"
    );

    // A closed connection: the error's type, with no SQLSTATE.
    let mut killer = crate::connect().await;
    let pid = conn.process_id();
    killer
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap();
    let sql = "SELECT 2 AS after_termination";
    let e = conn.query(sql, &[]).await.unwrap_err();
    assert!(e.is_closed(), "{e}");
    let [span] = &capture.queries(sql)[..] else {
        panic!(
            "one span for the query on a dead connection: {:?}",
            capture.spans()
        );
    };
    // The server's last words (57P01) when they were read, else how the connection ended.
    let expected = match e.code() {
        Some(code) => vec![code],
        None => vec!["closed", "io"],
    };
    assert!(
        span.field("error.type")
            .is_some_and(|kind| expected.contains(&kind)),
        "error.type of {e}: {span:?}"
    );
    assert_eq!(span.field("otel.status_code"), Some("ERROR"));
}
