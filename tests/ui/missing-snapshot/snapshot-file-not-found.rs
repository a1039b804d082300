// Built with QAIL_SCHEMA pointing at a file that does not exist (see tests/ui.rs).
fn main() {
    let _query = qail::qail!("SELECT id, name FROM harbors");
}
