//! Which calls may change session state: what a pool's session reset (`RESET ALL`, `SELECT
//! pg_advisory_unlock_all()`, `DISCARD SEQUENCES`…) would have to undo before the
//! connection's next user. The analysis reports it ([`Analysis::changes_session`]), and a
//! pool returns a connection that ran only unmarked statements without resetting it.
//!
//! A call is marked when it is one of [`SESSION_FUNCTIONS`], built-in functions whose effect
//! outlives the transaction, or a function that is not built in (a snapshot's function,
//! an extension's among them): its body is not known, and may call any of them. So is a
//! statement that reads a view or a table whose policy calls one ([`Relation::changes_session`],
//! found when the snapshot is pulled or built). Built-ins
//! whose effect ends with the transaction (`pg_advisory_xact_lock`, `set_config(…, true)`
//! — counted all the same: its third argument may be a parameter) need no reset.
//!
//! [`Analysis::changes_session`]: crate::Analysis::changes_session
//! [`Relation::changes_session`]: qail_schema::snapshot::Relation::changes_session

use qail_schema::session::SESSION_FUNCTIONS;
use qail_schema::snapshot::Relation;

use crate::ctx::Ctx;

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

/// Marks the statement when it reads `rel` and the snapshot says reading it may change
/// session state (a view's query or a table's policy calls such a function).
pub(crate) fn relation_read(cx: &mut Ctx, rel: &Relation) {
    if rel.changes_session {
        cx.changes_session = true;
    }
}
