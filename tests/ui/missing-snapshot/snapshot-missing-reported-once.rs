// Built with QAIL_SCHEMA pointing at a file that does not exist (see tests/ui.rs): the first
// query gets the full error, the others a short one pointing at it.
fn main() {
    let _harbors = qail::qail!("SELECT id, name FROM harbors");
    let _sailings = qail::qail!("SELECT id FROM sailings");
    let _vessels = qail::qail!("SELECT name FROM vessels");
}
