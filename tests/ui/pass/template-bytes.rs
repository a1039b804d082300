//! The static template: statement name, Parse bytes, parameter OIDs, columns.
use qail::qail;

fn main() {
    let country = "GR";
    let q = qail!("SELECT id, name FROM harbors WHERE country = $1", country);
    let t = q.template();
    assert!(t.name.starts_with('q') && t.name.len() == 17);
    assert_eq!(t.parse()[0], b'P');
    assert_eq!(t.param_oids, &[25]);
    assert_eq!(t.sql(), "SELECT id, name FROM harbors WHERE country = $1");
    let id = t.columns().next().unwrap();
    assert_eq!((id.name, id.type_oid, id.type_name), ("id", 2950, "uuid"));
    assert_eq!(t.columns().count(), 2);
    assert_eq!(q.params().len(), 1);
}
