//! Which calls may change session state: what a pool's session reset (`RESET ALL`, `SELECT
//! pg_advisory_unlock_all()`, `DISCARD SEQUENCES`…) would have to undo before the
//! connection's next user. The analysis reports it ([`Analysis::changes_session`]), and a
//! pool returns a connection that ran only unmarked statements without resetting it.
//!
//! A call is marked when it is one of [`SESSION_FUNCTIONS`], built-in functions whose effect
//! outlives the transaction, or a function that is not built in (a snapshot's function,
//! an extension's among them): its body is not known, and may call any of them. Built-ins
//! whose effect ends with the transaction (`pg_advisory_xact_lock`, `set_config(…, true)`
//! — counted all the same: its third argument may be a parameter) need no reset.
//!
//! [`Analysis::changes_session`]: crate::Analysis::changes_session

use crate::ctx::Ctx;

/// Built-in functions whose effect lasts beyond the transaction: a setting (`set_config`),
/// a session advisory lock taken or released, `currval`/`lastval` (set by `nextval` and
/// `setval`, undone by `DISCARD SEQUENCES`), a temporary replication slot or a replication
/// origin bound to the session, and the functions that run a query given as text (which may
/// be any of these).
pub(crate) const SESSION_FUNCTIONS: &[&str] = &[
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

/// Marks the statement when `name` (called in `schema`, if written) is a built-in of
/// [`SESSION_FUNCTIONS`].
pub(crate) fn builtin_call(cx: &mut Ctx, schema: Option<&str>, name: &str) {
    if schema.is_none_or(|s| s == "pg_catalog") && SESSION_FUNCTIONS.contains(&name) {
        cx.changes_session = true;
    }
}

/// Marks the statement: it calls a function that is not built in.
pub(crate) fn user_call(cx: &mut Ctx) {
    cx.changes_session = true;
}
