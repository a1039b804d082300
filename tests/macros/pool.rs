//! `qail!` queries run on `&Pool`, as on a connection: each call takes a pooled connection
//! and gives it back.

use futures_util::StreamExt;
use qail::{Pool, QailRow, qail};

use crate::{FERRY_DDL, connect_in, url};

#[derive(QailRow, Debug, PartialEq)]
struct Harbor {
    name: String,
    code: Option<String>,
}

#[tokio::test]
async fn queries_run_on_a_pool() {
    // The schema is made on a connection of its own; the pool's connections start in it.
    let setup = connect_in("on_pool", FERRY_DDL).await;
    let schema = format!("qail_macros_on_pool_{}", std::process::id());
    let config = qail::Config::parse(&url())
        .unwrap()
        .options(format!("-c search_path={schema}"));
    let pool = Pool::builder()
        .max_size(1)
        .acquire_timeout(Some(std::time::Duration::from_secs(5)))
        .connect_with(config)
        .await
        .unwrap();
    drop(setup);

    for (i, name) in ["Piraeus", "Naxos"].into_iter().enumerate() {
        let id = qail::uuid::Uuid::from_u128(i as u128 + 1);
        let n: u64 = qail!(
            "INSERT INTO harbors (id, name, country) VALUES ($1, $2, 'GR')",
            id,
            name
        )
        .execute(&mut &pool)
        .await
        .unwrap();
        assert_eq!(n, 1);
    }
    let rows = qail!("SELECT name FROM harbors ORDER BY name")
        .fetch_all(&mut &pool)
        .await
        .unwrap();
    assert_eq!(
        rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["Naxos", "Piraeus"]
    );
    let one = qail!(Harbor => "SELECT name, code FROM harbors WHERE name = 'Naxos'")
        .fetch_one(&mut &pool)
        .await
        .unwrap();
    assert_eq!(
        one,
        Harbor {
            name: "Naxos".into(),
            code: None
        }
    );
    let missing = qail!("SELECT name FROM harbors WHERE name = 'Ithaca'")
        .fetch_optional(&mut &pool)
        .await
        .unwrap();
    assert!(missing.is_none());
    let names: Vec<String> = qail!("SELECT name FROM harbors ORDER BY name DESC")
        .fetch(&pool)
        .map(|row| row.unwrap().name)
        .collect()
        .await;
    assert_eq!(names, ["Piraeus", "Naxos"]);
    let stats = pool.stats();
    assert_eq!((stats.created, stats.in_use), (1, 0), "{stats:?}");
}
