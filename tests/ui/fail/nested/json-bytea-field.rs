//! bytea inside a JSON document: JSON carries it as a hex string.
use qail::qail;

fn main() {
    let _ = qail!(
        "SELECT json_agg(json_build_object('name', h.name, 'raw', convert_to(h.name, 'UTF8')))
         FROM harbors h"
    );
}
