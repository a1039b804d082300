// Built with QAIL_SCHEMA naming the snapshot that tests/ui.rs builds offline from
// tests/ui/after-migration/migrations/, whose second migration drops users.nickname.
fn main() {
    let _ok = qail::qail!("SELECT id, email FROM users");
    let _query = qail::qail!("SELECT id, nickname FROM users WHERE id = $1", 1_i64);
}
