//! Bind (frontend `B`): binds parameters to a prepared statement, creating a portal.

use super::EncodeError;
use super::write::{count16, cstr, tagged};
use crate::types::{Encode, IsNull, Oid, Param};

/// The format of parameters or result columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text format (code 0).
    Text,
    /// Binary format (code 1).
    Binary,
}

/// Binds `params`, encoded in binary straight into the output buffer, to `statement`.
#[derive(Clone, Copy)]
pub struct Bind<'a, P = &'a (dyn Encode + Sync)> {
    /// The portal name (empty: the unnamed portal).
    pub portal: &'a str,
    /// The prepared statement's name.
    pub statement: &'a str,
    /// The parameter values, sent in binary format.
    pub params: &'a [P],
    /// The parameter types the server reported, one per value. `0` marks a parameter whose
    /// type was checked when the query was compiled (a user type of a `qail!` query): it is
    /// sent in the value's own binary form, without [`Encode::accepts`].
    pub param_types: &'a [Oid],
    /// The format of every result column.
    pub result_format: Format,
}

impl<P> std::fmt::Debug for Bind<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bind")
            .field("portal", &self.portal)
            .field("statement", &self.statement)
            .field("params", &self.params.len())
            .field("param_types", &self.param_types)
            .field("result_format", &self.result_format)
            .finish()
    }
}

impl<P: Param> Bind<'_, P> {
    /// Appends the message to `buf`. Counts are checked before a byte is written; a failing
    /// parameter leaves `buf` as it was.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        let count = self.params.len();
        if u16::try_from(count).is_err() {
            return Err(EncodeError::TooMany {
                field: "parameters",
                count,
            });
        }
        if self.param_types.len() != count {
            return Err(EncodeError::Invalid {
                field: "the parameter types",
                reason: "do not match the number of parameters; pass one type per parameter",
            });
        }
        tagged(buf, b'B', |buf| {
            write_prefix(buf, self.portal, self.statement, count)?;
            count16(buf, count, "parameters")?;
            for (index, (param, ty)) in self.params.iter().zip(self.param_types).enumerate() {
                encode_param(buf, index, param.as_encode(), *ty)?;
            }
            match self.result_format {
                Format::Text => buf.extend_from_slice(&0u16.to_be_bytes()),
                Format::Binary => buf.extend_from_slice(&[0, 1, 0, 1]),
            }
            Ok(())
        })
    }
}

/// Appends the fields of a Bind message after its length, up to the parameter count: the
/// portal name, the statement name and the parameter format codes (one code, binary, when
/// there are parameters; none otherwise), as [`Bind::encode`] writes them. A compiled query's
/// [`Template`](crate::template::Template) stores these bytes, and [`bind_execute_sync`]
/// appends the rest. An error (a NUL in a name) leaves `buf` as it was.
pub fn bind_prefix(
    buf: &mut Vec<u8>,
    portal: &str,
    statement: &str,
    param_count: usize,
) -> Result<(), EncodeError> {
    let mark = buf.len();
    write_prefix(buf, portal, statement, param_count).inspect_err(|_| buf.truncate(mark))
}

/// The body of [`bind_prefix`], inside [`Bind::encode`]'s message.
#[inline(always)]
fn write_prefix(
    buf: &mut Vec<u8>,
    portal: &str,
    statement: &str,
    param_count: usize,
) -> Result<(), EncodeError> {
    cstr(buf, portal, "the portal name")?;
    cstr(buf, statement, "the statement name")?;
    if param_count == 0 {
        buf.extend_from_slice(&0u16.to_be_bytes());
    } else {
        buf.extend_from_slice(&1u16.to_be_bytes());
        buf.extend_from_slice(&1u16.to_be_bytes());
    }
    Ok(())
}

/// Appends the Bind message whose bytes after the length and up to the parameter count are
/// `prefix` ([`Template::bind_prefix`](crate::template::Template::bind_prefix): the unnamed
/// portal, a statement name, one binary format code), then Execute of the unnamed portal
/// (all rows) and Sync: byte-identical to [`Bind::encode`] (binary results), then
/// [`Execute`](super::Execute) and [`sync`](super::sync). A failing parameter leaves `buf` as
/// it was.
///
/// Note: the compiled-query path, with the names and format codes pre-encoded: nothing is
/// checked or searched for a NUL per call.
pub fn bind_execute_sync<P: Param>(
    buf: &mut Vec<u8>,
    prefix: &[u8],
    params: &[P],
    param_types: &[Oid],
) -> Result<(), EncodeError> {
    bind_execute_tail(buf, prefix, params, param_types, true)
}

/// [`bind_execute_sync`] without the Sync: a query of a pipeline.
pub fn bind_execute<P: Param>(
    buf: &mut Vec<u8>,
    prefix: &[u8],
    params: &[P],
    param_types: &[Oid],
) -> Result<(), EncodeError> {
    bind_execute_tail(buf, prefix, params, param_types, false)
}

#[inline(always)]
fn bind_execute_tail<P: Param>(
    buf: &mut Vec<u8>,
    prefix: &[u8],
    params: &[P],
    param_types: &[Oid],
    with_sync: bool,
) -> Result<(), EncodeError> {
    /// Binary results (one format code), then Execute "" 0 and Sync.
    const TAIL: &[u8] = b"\0\x01\0\x01E\0\0\0\x09\0\0\0\0\0S\0\0\0\x04";
    /// The same without the Sync.
    const TAIL_NO_SYNC: &[u8] = TAIL.split_at(TAIL.len() - 5).0;
    let count = params.len();
    let Ok(count16) = u16::try_from(count) else {
        return Err(EncodeError::TooMany {
            field: "parameters",
            count,
        });
    };
    if param_types.len() != count {
        return Err(EncodeError::Invalid {
            field: "the parameter types",
            reason: "do not match the number of parameters; pass one type per parameter",
        });
    }
    let start = buf.len();
    buf.reserve(5 + prefix.len() + 2 + 12 * count + TAIL.len());
    buf.push(b'B');
    buf.extend_from_slice(&[0; 4]);
    buf.extend_from_slice(prefix);
    buf.extend_from_slice(&count16.to_be_bytes());
    for (index, (param, ty)) in params.iter().zip(param_types).enumerate() {
        if param.put_fixed(*ty, buf) {
            continue;
        }
        if let Err(e) = encode_param(buf, index, param.as_encode(), *ty) {
            buf.truncate(start);
            return Err(e);
        }
    }
    // Note: the length counts itself and the body up to the result format codes.
    let Ok(len) = i32::try_from(buf.len() + 4 - (start + 1)) else {
        buf.truncate(start);
        return Err(EncodeError::TooLong { field: "message" });
    };
    buf[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    buf.extend_from_slice(if with_sync { TAIL } else { TAIL_NO_SYNC });
    Ok(())
}

/// Writes one parameter: a length placeholder, the value, then the real length (-1 = NULL).
fn encode_param(
    buf: &mut Vec<u8>,
    index: usize,
    param: &(dyn Encode + Sync),
    ty: Oid,
) -> Result<(), EncodeError> {
    let len_at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    let encoded = match ty {
        0 => param.encode(ty, buf),
        _ => param.encode_checked(ty, buf),
    };
    let is_null = encoded.map_err(|source| EncodeError::Param { index, source })?;
    let len = match is_null {
        IsNull::Yes => {
            buf.truncate(len_at + 4);
            -1
        }
        IsNull::No => i32::try_from(buf.len() - len_at - 4).map_err(|_| EncodeError::TooLong {
            field: "a parameter",
        })?,
    };
    buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::BoxError;

    /// A parameter for these tests only: an int4, NULL when `None`, failing on `Some(-1)`.
    struct Int(Option<i32>);

    impl Encode for Int {
        fn encode(&self, _: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
            match self.0 {
                None => Ok(IsNull::Yes),
                Some(-1) => {
                    buf.push(9);
                    Err("minus one is refused".into())
                }
                Some(v) => {
                    buf.extend_from_slice(&v.to_be_bytes());
                    Ok(IsNull::No)
                }
            }
        }
        fn accepts(ty: Oid) -> bool {
            ty == 23
        }
        fn type_oid(&self) -> Oid {
            23
        }
        fn encode_checked(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
            if !Self::accepts(ty) {
                return Err(format!("cannot send as type {ty}").into());
            }
            self.encode(ty, buf)
        }
    }

    #[test]
    fn encodes_byte_exact() {
        const EXPECTED: &[u8] =
            b"B\0\0\0\x1e\0s1\0\0\x01\0\x01\0\x02\0\0\0\x04\0\0\0\x2a\xff\xff\xff\xff\0\x01\0\x01";
        let mut buf = Vec::new();
        Bind {
            portal: "",
            statement: "s1",
            params: &[&Int(Some(42)), &Int(None)],
            param_types: &[23, 23],
            result_format: Format::Binary,
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn prefixed_bind_is_the_run_time_encoding() {
        let name = "q0123456789abcdef";
        let (a, b) = (Int(Some(42)), Int(None));
        let two: [&(dyn Encode + Sync); 2] = [&a, &b];
        for params in [&[][..], &two[..]] {
            let types = vec![23; params.len()];
            let prefix = {
                let mut prefix = Vec::new();
                bind_prefix(&mut prefix, "", name, params.len()).unwrap();
                prefix
            };
            let mut expected = b"x".to_vec();
            Bind {
                portal: "",
                statement: name,
                params,
                param_types: &types,
                result_format: Format::Binary,
            }
            .encode(&mut expected)
            .unwrap();
            super::super::Execute {
                portal: "",
                max_rows: 0,
            }
            .encode(&mut expected)
            .unwrap();
            let mut buf = b"x".to_vec();
            bind_execute(&mut buf, &prefix, params, &types).unwrap();
            assert_eq!(buf, expected, "without Sync");
            super::super::sync(&mut expected);
            let mut buf = b"x".to_vec();
            bind_execute_sync(&mut buf, &prefix, params, &types).unwrap();
            assert_eq!(buf, expected, "with Sync");
        }
    }

    #[test]
    fn prefix_bytes() {
        const EXPECTED: &[u8] = b"\0q1\0\0\x01\0\x01";
        let mut buf = Vec::new();
        bind_prefix(&mut buf, "", "q1", 3).unwrap();
        assert_eq!(buf, EXPECTED);
        let mut buf = b"x".to_vec();
        bind_prefix(&mut buf, "p", "q1", 0).unwrap();
        assert_eq!(buf, b"xp\0q1\0\0\0");
        let mut buf = b"x".to_vec();
        assert!(bind_prefix(&mut buf, "", "q\0x", 1).is_err());
        assert_eq!(buf, b"x", "a refused name leaves the buffer as it was");
    }

    #[test]
    fn prefixed_bind_failing_param_leaves_buffer_untouched() {
        let mut prefix = Vec::new();
        bind_prefix(&mut prefix, "", "q", 2).unwrap();
        let mut buf = b"x".to_vec();
        let err = bind_execute_sync(
            &mut buf,
            &prefix,
            &[&Int(Some(1)), &Int(Some(-1))],
            &[23, 23],
        )
        .unwrap_err();
        assert!(matches!(err, EncodeError::Param { index: 1, .. }));
        assert!(bind_execute_sync(&mut buf, &prefix, &[&Int(Some(1))], &[23, 23]).is_err());
        assert_eq!(buf, b"x");
    }

    #[test]
    fn no_params_text_results() {
        const EXPECTED: &[u8] = b"B\0\0\0\x0ep\0s\0\0\0\0\0\0\0";
        let mut buf = Vec::new();
        Bind::<&(dyn Encode + Sync)> {
            portal: "p",
            statement: "s",
            params: &[],
            param_types: &[],
            result_format: Format::Text,
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn failing_param_leaves_buffer_untouched() {
        let mut buf = b"x".to_vec();
        let err = Bind {
            portal: "",
            statement: "",
            params: &[&Int(Some(1)), &Int(Some(-1))],
            param_types: &[23, 23],
            result_format: Format::Binary,
        }
        .encode(&mut buf)
        .unwrap_err();
        assert!(matches!(err, EncodeError::Param { index: 1, .. }));
        assert!(err.to_string().contains("$2"));
        assert_eq!(buf, b"x");
    }

    #[test]
    fn type_zero_sends_the_value_unchecked() {
        let mut buf = Vec::new();
        Bind {
            portal: "",
            statement: "",
            params: &[&Int(Some(7))],
            param_types: &[0],
            result_format: Format::Binary,
        }
        .encode(&mut buf)
        .unwrap();
        assert!(
            buf.ends_with(b"\0\0\0\x04\0\0\0\x07\0\x01\0\x01"),
            "{buf:?}"
        );
    }

    #[test]
    fn wrong_type_is_refused() {
        let mut buf = Vec::new();
        let err = Bind {
            portal: "",
            statement: "",
            params: &[&Int(Some(1))],
            param_types: &[25],
            result_format: Format::Binary,
        }
        .encode(&mut buf)
        .unwrap_err();
        assert!(matches!(err, EncodeError::Param { index: 0, .. }));
    }

    #[test]
    fn too_many_params_refused_before_writing() {
        let p = Int(None);
        let params: Vec<&(dyn Encode + Sync)> = vec![&p; 65536];
        let types = vec![23; 65536];
        let mut buf = Vec::new();
        let err = Bind {
            portal: "",
            statement: "",
            params: &params,
            param_types: &types,
            result_format: Format::Binary,
        }
        .encode(&mut buf)
        .unwrap_err();
        assert!(matches!(err, EncodeError::TooMany { count: 65536, .. }));
        assert!(buf.is_empty());
    }
}
