//! Which functions' effects outlive the transaction that called them: what a pool's session
//! reset (`RESET ALL`, `SELECT pg_advisory_unlock_all()`, `DISCARD SEQUENCES`…) undoes. The
//! analyzer marks a statement that calls one (or a function that is not built in, whose body
//! may call any of them); a pull marks the views and tables whose query or row security
//! policy does ([`Relation::changes_session`](crate::snapshot::Relation::changes_session)).

/// Built-in functions whose effect lasts beyond the transaction: a setting (`set_config`),
/// a session advisory lock taken or released, `currval`/`lastval` (set by `nextval` and
/// `setval`, undone by `DISCARD SEQUENCES`), a temporary replication slot or a replication
/// origin bound to the session, and the functions that run a query given as text (which may
/// be any of these).
pub const SESSION_FUNCTIONS: &[&str] = &[
    "set_config",
    "pg_advisory_lock",
    "pg_advisory_lock_shared",
    "pg_try_advisory_lock",
    "pg_try_advisory_lock_shared",
    "pg_advisory_unlock",
    "pg_advisory_unlock_shared",
    "pg_advisory_unlock_all",
    "nextval",
    "setval",
    "pg_create_logical_replication_slot",
    "pg_create_physical_replication_slot",
    "pg_replication_origin_session_setup",
    "pg_replication_origin_session_reset",
    "query_to_xml",
    "query_to_xmlschema",
    "query_to_xml_and_xmlschema",
    "ts_stat",
];
