//! Which statements may change session state (`Analysis::changes_session`), the mark a pool
//! reads to skip the session reset of a connection that ran none.

use crate::support::analyze;

fn changes_session(sql: &str) -> bool {
    analyze(sql).changes_session
}

#[test]
fn reads_of_tables_and_built_ins_leave_the_session_alone() {
    for sql in [
        "SELECT id, name FROM harbors WHERE id = $1",
        "SELECT count(*) AS n FROM harbors h JOIN crew_members c ON c.id = length(h.name)",
        "SELECT g FROM generate_series(1, $1) AS g",
        "SELECT lower(name) AS l, now() AS t FROM harbors FOR UPDATE",
        "SELECT pg_catalog.pg_advisory_xact_lock($1)",
        "SELECT pg_try_advisory_xact_lock(1, 2) AS locked",
        "SELECT currval('customers_id_seq') AS c",
        "SELECT current_setting('search_path') AS p",
        "SELECT pg_notify('jobs', $1)",
    ] {
        assert!(!changes_session(sql), "{sql}");
    }
}

#[test]
fn session_functions_writes_and_unknown_functions_change_it() {
    for sql in [
        "SELECT set_config('search_path', $1, false)",
        "SELECT pg_catalog.set_config('statement_timeout', '1s', true)",
        "SELECT pg_advisory_lock($1)",
        "SELECT pg_try_advisory_lock_shared(1, 2) AS locked",
        "SELECT pg_advisory_unlock($1)",
        "SELECT pg_advisory_unlock_all()",
        "SELECT nextval('customers_id_seq') AS n",
        "SELECT setval('customers_id_seq', $1)",
        "SELECT id FROM harbors WHERE EXISTS (SELECT pg_advisory_lock(length(name)))",
        "SELECT id FROM harbors ORDER BY nextval('customers_id_seq')",
        "SELECT seats_sold($1) AS n",
        "SELECT * FROM sailings_on($1, $2)",
        "INSERT INTO crew_members (login) VALUES ($1)",
        "UPDATE harbors SET name = $1 WHERE id = $2",
        "DELETE FROM harbors WHERE id = $1",
        "WITH gone AS (DELETE FROM harbors WHERE id = $1 RETURNING id) SELECT id FROM gone",
    ] {
        assert!(changes_session(sql), "{sql}");
    }
}
