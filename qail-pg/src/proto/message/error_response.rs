//! ErrorResponse (`E`) and NoticeResponse (`N`): typed fields, into a [`DbError`].

use super::DecodeError;
use super::reader::Reader;
use crate::error::DbError;

/// The tag of ErrorResponse (`E`).
pub const TAG: u8 = b'E';

/// Decodes the body of an `E` or `N` message into every field the server sent.
///
/// See <https://www.postgresql.org/docs/current/protocol-error-fields.html>. Unknown field
/// types are skipped, as the protocol requires.
pub fn decode_fields(body: &[u8]) -> Result<DbError, DecodeError> {
    let mut r = Reader::new(body, "ErrorResponse");
    let mut e = DbError::default();
    loop {
        let field = r.u8()?;
        if field == 0 {
            break;
        }
        let value = String::from_utf8_lossy(r.cbytes()?).into_owned();
        match field {
            b'S' => e.severity = value,
            b'V' => e.severity_nonlocalized = Some(value),
            b'C' => e.code = value,
            b'M' => e.message = value,
            b'D' => e.detail = Some(value),
            b'H' => e.hint = Some(value),
            b'P' => e.position = value.parse().ok(),
            b'p' => e.internal_position = value.parse().ok(),
            b'q' => e.internal_query = Some(value),
            b'W' => e.where_ = Some(value),
            b's' => e.schema = Some(value),
            b't' => e.table = Some(value),
            b'c' => e.column = Some(value),
            b'd' => e.data_type = Some(value),
            b'n' => e.constraint = Some(value),
            b'F' => e.file = Some(value),
            b'L' => e.line = value.parse().ok(),
            b'R' => e.routine = Some(value),
            _ => {}
        }
    }
    r.finish()?;
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_field() {
        let body = b"SERROR\0VERROR\0C23505\0Mduplicate key\0Dkey (id)=(1)\0Hfix it\0P12\0\
p3\0qselect\0Win f\0spublic\0tt\0cid\0dint4\0nt_pkey\0Fnbtinsert.c\0L666\0R_bt_check\0Zz\0\0";
        let e = decode_fields(body).unwrap();
        assert_eq!(e.severity, "ERROR");
        assert_eq!(e.severity_nonlocalized.as_deref(), Some("ERROR"));
        assert_eq!(e.code, "23505");
        assert_eq!(e.message, "duplicate key");
        assert_eq!(e.detail.as_deref(), Some("key (id)=(1)"));
        assert_eq!(e.hint.as_deref(), Some("fix it"));
        assert_eq!(e.position, Some(12));
        assert_eq!(e.internal_position, Some(3));
        assert_eq!(e.internal_query.as_deref(), Some("select"));
        assert_eq!(e.where_.as_deref(), Some("in f"));
        assert_eq!(e.schema.as_deref(), Some("public"));
        assert_eq!(e.table.as_deref(), Some("t"));
        assert_eq!(e.column.as_deref(), Some("id"));
        assert_eq!(e.data_type.as_deref(), Some("int4"));
        assert_eq!(e.constraint.as_deref(), Some("t_pkey"));
        assert_eq!(e.file.as_deref(), Some("nbtinsert.c"));
        assert_eq!(e.line, Some(666));
        assert_eq!(e.routine.as_deref(), Some("_bt_check"));
    }

    #[test]
    fn refuses_malformed() {
        assert!(decode_fields(b"").is_err());
        assert!(decode_fields(b"SERROR").is_err());
        assert!(decode_fields(b"SERROR\0").is_err());
        assert!(decode_fields(b"\0extra").is_err());
    }
}
