//! The ferry query (3×LEFT JOIN), captures, the `Type =>` form, derives and `execute`.

use qail::uuid::Uuid;
use qail::{QailRow, qail};

use crate::{FERRY_DDL, connect_in};

async fn seed(conn: &mut qail::Connection) -> (Uuid, Uuid, Uuid) {
    let (piraeus, naxos, op) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
    for (id, name, code) in [(piraeus, "Piraeus", Some("PIR")), (naxos, "Naxos", None)] {
        let n = qail!(
            "INSERT INTO harbors (id, name, country, code) VALUES ($1, $2, 'GR', $3)",
            id,
            name,
            code
        )
        .execute(&mut *conn)
        .await
        .unwrap();
        assert_eq!(n, 1);
    }
    qail!("INSERT INTO operators (id, name) VALUES ({op}, 'Blue Star')")
        .execute(&mut *conn)
        .await
        .unwrap();
    let rows = [
        (Uuid::from_u128(10), "morning", Some(op)),
        (Uuid::from_u128(11), "evening", None),
    ];
    for (id, name, operator) in rows {
        qail!(
            "INSERT INTO odyssey_connections (id, name, origin_harbor_id, destination_harbor_id, operator_id, is_enabled)
             VALUES ($1, $2, $3, $4, $5, true)",
            id, name, piraeus, naxos, operator
        )
        .execute(&mut *conn)
        .await
        .unwrap();
    }
    (piraeus, naxos, op)
}

#[tokio::test]
async fn left_joins_are_option_exactly_where_nullable() {
    let mut conn = connect_in("ferry", FERRY_DDL).await;
    seed(&mut conn).await;
    let rows = qail!(
        "SELECT c.id, c.name, o.name AS origin, d.name AS destination, op.name AS operator
         FROM odyssey_connections c
         LEFT JOIN harbors o ON o.id = c.origin_harbor_id
         LEFT JOIN harbors d ON d.id = c.destination_harbor_id
         LEFT JOIN operators op ON op.id = c.operator_id
         WHERE c.is_enabled
         ORDER BY c.name"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows.len(), 2);
    let evening = &rows[0];
    let _: &Uuid = &evening.id;
    let _: &String = &evening.name;
    assert_eq!(evening.name, "evening");
    assert_eq!(evening.origin.as_deref(), Some("Piraeus"));
    assert_eq!(evening.destination.as_deref(), Some("Naxos"));
    assert_eq!(evening.operator, None);
    assert_eq!(rows[1].operator.as_deref(), Some("Blue Star"));
}

#[tokio::test]
async fn captures_fetch_one_and_optional() {
    let mut conn = connect_in("captures", FERRY_DDL).await;
    let (piraeus, _, _) = seed(&mut conn).await;
    let id = piraeus;
    let one = qail!("SELECT name, code FROM harbors WHERE id = {id}")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(one.name, "Piraeus");
    assert_eq!(one.code.as_deref(), Some("PIR"));
    let id = Uuid::from_u128(99);
    let none = qail!("SELECT name FROM harbors WHERE id = {id}")
        .fetch_optional(&mut conn)
        .await
        .unwrap();
    assert!(none.is_none());
}

#[tokio::test]
async fn typed_form_and_derived_rows() {
    struct Harbor {
        id: Uuid,
        name: String,
        code: Option<String>,
    }
    #[derive(QailRow, Debug, PartialEq)]
    #[qail(table = "harbors")]
    struct Listed {
        #[qail(rename = "name")]
        title: String,
        code: Option<String>,
        #[qail(default)]
        selected: bool,
    }
    let mut conn = connect_in("typed", FERRY_DDL).await;
    let (piraeus, _, _) = seed(&mut conn).await;
    let harbors: Vec<Harbor> =
        qail!(Harbor => "SELECT name, id, code FROM harbors ORDER BY name DESC")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    assert_eq!(harbors[0].id, piraeus);
    assert_eq!(harbors[0].name, "Piraeus");
    assert_eq!(harbors[1].code, None);
    let mut listed = Vec::new();
    qail!("SELECT name, code FROM harbors ORDER BY name")
        .for_each(&mut conn, |row, columns| {
            listed.push(<Listed as qail::FromRow>::from_row(row, columns)?);
            Ok(())
        })
        .await
        .unwrap();
    let expected = [("Naxos", None), ("Piraeus", Some("PIR"))].map(|(title, code)| Listed {
        title: title.to_owned(),
        code: code.map(str::to_owned),
        selected: false,
    });
    assert_eq!(listed, expected);
}

#[tokio::test]
async fn execute_counts_rows_and_returning_gives_them() {
    let mut conn = connect_in("execute", FERRY_DDL).await;
    seed(&mut conn).await;
    let suffix = " (GR)";
    let n = qail!(
        "UPDATE harbors SET name = name || $1 WHERE country = 'GR'",
        suffix
    )
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(n, 2);
    let names = qail!("UPDATE harbors SET timezone = 'Europe/Athens' RETURNING name, timezone")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert!(names.iter().all(|r| r.name.ends_with("(GR)")));
    assert_eq!(names[0].timezone.as_deref(), Some("Europe/Athens"));
}

#[tokio::test]
async fn runs_on_a_pooled_connection() {
    let pool = qail::Pool::connect(&crate::url()).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let schema = format!("qail_macros_pool_{}", std::process::id());
    conn.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; SET search_path = {schema}; {FERRY_DDL}"
    ))
    .await
    .unwrap();
    seed(&mut conn).await;
    let country = "GR";
    let rows = qail!("SELECT name FROM harbors WHERE country = {country} ORDER BY name")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let names: Vec<_> = rows.into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["Naxos", "Piraeus"]);
}

#[tokio::test]
async fn inserts_in_a_pipeline_give_their_counts() {
    let mut conn = connect_in("ferry_pipeline", FERRY_DDL).await;
    let harbors = [
        (Uuid::from_u128(1), "Piraeus"),
        (Uuid::from_u128(2), "Naxos"),
    ];
    let inserts = harbors.iter().map(|(id, name)| {
        qail!(
            "INSERT INTO harbors (id, name, country) VALUES ($1, $2, 'GR')",
            id,
            name
        )
    });
    let counts: Vec<u64> = conn.pipeline_atomic(inserts).await.unwrap();
    assert_eq!(counts, [1, 1]);
    let renames = harbors
        .iter()
        .map(|(id, _)| qail!("UPDATE harbors SET country = 'IT' WHERE id = $1", id));
    let each: Vec<Result<u64, qail::Error>> = conn.pipeline(renames).await.unwrap();
    assert_eq!(
        each.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
        [1, 1]
    );
}
