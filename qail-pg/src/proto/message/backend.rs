//! Every backend message, decoded from its tag and body.

use super::{
    Authentication, BackendKeyData, CommandComplete, CopyData, CopyResponse, DataRow, DecodeError,
    NegotiateProtocolVersion, NotificationResponse, ParameterDescription, ParameterStatus,
    ReadyForQuery, RowDescription, error_response,
};
use crate::error::DbError;

/// A backend message, borrowing from the buffer it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend<'a> {
    /// `R`
    Authentication(Authentication<'a>),
    /// `K`
    BackendKeyData(BackendKeyData<'a>),
    /// `2`
    BindComplete,
    /// `3`
    CloseComplete,
    /// `C`
    CommandComplete(CommandComplete<'a>),
    /// `G`
    CopyInResponse(CopyResponse),
    /// `H`
    CopyOutResponse(CopyResponse),
    /// `W`
    CopyBothResponse(CopyResponse),
    /// `d`
    CopyData(CopyData<'a>),
    /// `c`
    CopyDone,
    /// `D`
    DataRow(DataRow<'a>),
    /// `I`
    EmptyQueryResponse,
    /// `E`
    ErrorResponse(Box<DbError>),
    /// `N`
    NoticeResponse(Box<DbError>),
    /// `v`
    NegotiateProtocolVersion(NegotiateProtocolVersion<'a>),
    /// `n`
    NoData,
    /// `A`
    NotificationResponse(NotificationResponse<'a>),
    /// `t`
    ParameterDescription(ParameterDescription),
    /// `S`
    ParameterStatus(ParameterStatus<'a>),
    /// `1`
    ParseComplete,
    /// `s`
    PortalSuspended,
    /// `Z`
    ReadyForQuery(ReadyForQuery),
    /// `T`
    RowDescription(RowDescription<'a>),
}

impl<'a> Backend<'a> {
    /// Decodes a message from its tag and body (as cut by [`frame`](super::frame)).
    ///
    /// The messages every query's replies carry (DataRow, BindComplete, CommandComplete)
    /// take a path that inlines into the caller: a DataRow costs what [`DataRow::decode`]
    /// costs (reading the column count), a CommandComplete checks only its framing, and a
    /// caller matching on the result branches straight to its code.
    // Note: always inlined: a reply loop is large enough that the compiler would otherwise
    // call it once per DataRow and pass the message through memory.
    #[inline(always)]
    pub fn decode(tag: u8, body: &'a [u8]) -> Result<Backend<'a>, DecodeError> {
        match tag {
            DataRow::TAG => DataRow::decode(body).map(Backend::DataRow),
            b'2' if body.is_empty() => Ok(Backend::BindComplete),
            b'C' => CommandComplete::decode(body).map(Backend::CommandComplete),
            _ => Backend::decode_other(tag, body),
        }
    }

    /// Whether a message with tag `tag` is one the server may send at any time, between or
    /// inside the replies to a request: NoticeResponse, ParameterStatus and
    /// NotificationResponse (see "Asynchronous Operations" in
    /// <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-ASYNC>).
    #[inline]
    pub fn is_asynchronous(tag: u8) -> bool {
        matches!(tag, b'N' | b'S' | b'A')
    }

    /// [`Backend::decode`] of the other messages.
    #[inline(never)]
    fn decode_other(tag: u8, body: &'a [u8]) -> Result<Backend<'a>, DecodeError> {
        let msg = match tag {
            b'R' => Backend::Authentication(Authentication::decode(body)?),
            b'K' => Backend::BackendKeyData(BackendKeyData::decode(body)?),
            b'2' => empty(body, Backend::BindComplete)?,
            b'3' => empty(body, Backend::CloseComplete)?,
            b'G' => Backend::CopyInResponse(CopyResponse::decode(body)?),
            b'H' => Backend::CopyOutResponse(CopyResponse::decode(body)?),
            b'W' => Backend::CopyBothResponse(CopyResponse::decode(body)?),
            b'd' => Backend::CopyData(CopyData::decode(body)),
            b'c' => empty(body, Backend::CopyDone)?,
            b'I' => empty(body, Backend::EmptyQueryResponse)?,
            b'E' => Backend::ErrorResponse(Box::new(error_response::decode_fields(body)?)),
            b'N' => Backend::NoticeResponse(Box::new(error_response::decode_fields(body)?)),
            b'v' => Backend::NegotiateProtocolVersion(NegotiateProtocolVersion::decode(body)?),
            b'n' => empty(body, Backend::NoData)?,
            b'A' => Backend::NotificationResponse(NotificationResponse::decode(body)?),
            b't' => Backend::ParameterDescription(ParameterDescription::decode(body)?),
            b'S' => Backend::ParameterStatus(ParameterStatus::decode(body)?),
            b'Z' => Backend::ReadyForQuery(ReadyForQuery::decode(body)?),
            b'1' => empty(body, Backend::ParseComplete)?,
            b's' => empty(body, Backend::PortalSuspended)?,
            b'T' => Backend::RowDescription(RowDescription::decode(body)?),
            other => {
                return Err(DecodeError::new(format!(
                    "unknown message type '{}'",
                    other.escape_ascii()
                )));
            }
        };
        Ok(msg)
    }

    /// A short name for errors: "unexpected DataRow".
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Authentication(_) => "Authentication",
            Backend::BackendKeyData(_) => "BackendKeyData",
            Backend::BindComplete => "BindComplete",
            Backend::CloseComplete => "CloseComplete",
            Backend::CommandComplete(_) => "CommandComplete",
            Backend::CopyInResponse(_) => "CopyInResponse",
            Backend::CopyOutResponse(_) => "CopyOutResponse",
            Backend::CopyBothResponse(_) => "CopyBothResponse",
            Backend::CopyData(_) => "CopyData",
            Backend::CopyDone => "CopyDone",
            Backend::DataRow(_) => "DataRow",
            Backend::EmptyQueryResponse => "EmptyQueryResponse",
            Backend::ErrorResponse(_) => "ErrorResponse",
            Backend::NoticeResponse(_) => "NoticeResponse",
            Backend::NegotiateProtocolVersion(_) => "NegotiateProtocolVersion",
            Backend::NoData => "NoData",
            Backend::NotificationResponse(_) => "NotificationResponse",
            Backend::ParameterDescription(_) => "ParameterDescription",
            Backend::ParameterStatus(_) => "ParameterStatus",
            Backend::ParseComplete => "ParseComplete",
            Backend::PortalSuspended => "PortalSuspended",
            Backend::ReadyForQuery(_) => "ReadyForQuery",
            Backend::RowDescription(_) => "RowDescription",
        }
    }
}

fn empty<'a>(body: &[u8], msg: Backend<'a>) -> Result<Backend<'a>, DecodeError> {
    if body.is_empty() {
        Ok(msg)
    } else {
        Err(DecodeError::new(format!(
            "{} has an unexpected {} byte body",
            msg.name(),
            body.len()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_by_tag() {
        assert_eq!(Backend::decode(b'1', b"").unwrap(), Backend::ParseComplete);
        assert_eq!(Backend::decode(b'2', b"").unwrap(), Backend::BindComplete);
        assert_eq!(Backend::decode(b'3', b"").unwrap(), Backend::CloseComplete);
        assert_eq!(Backend::decode(b'n', b"").unwrap(), Backend::NoData);
        assert_eq!(
            Backend::decode(b'I', b"").unwrap(),
            Backend::EmptyQueryResponse
        );
        assert_eq!(
            Backend::decode(b's', b"").unwrap(),
            Backend::PortalSuspended
        );
        assert_eq!(Backend::decode(b'c', b"").unwrap(), Backend::CopyDone);
        assert!(matches!(
            Backend::decode(b'E', b"SERROR\0C42601\0Msyntax\0\0").unwrap(),
            Backend::ErrorResponse(e) if e.code == "42601"
        ));
        assert!(matches!(
            Backend::decode(b'Z', b"T").unwrap(),
            Backend::ReadyForQuery(_)
        ));
    }

    #[test]
    fn tells_asynchronous_messages_by_tag_and_value() {
        for (tag, body) in [
            (b'N', &b"SNOTICE\0C00000\0Mhi\0\0"[..]),
            (b'S', b"TimeZone\0UTC\0"),
            (b'A', b"\0\0\0\x07jobs\0go\0"),
        ] {
            assert!(Backend::is_asynchronous(tag));
            assert!(matches!(
                Backend::decode(tag, body).unwrap(),
                Backend::NoticeResponse(_)
                    | Backend::ParameterStatus(_)
                    | Backend::NotificationResponse(_)
            ));
        }
        for (tag, body) in [(b'Z', &b"I"[..]), (b'E', b"SERROR\0C42601\0Mx\0\0")] {
            assert!(!Backend::is_asynchronous(tag));
            assert!(Backend::decode(tag, body).is_ok());
        }
        assert!(!Backend::is_asynchronous(b'D'));
    }

    #[test]
    fn decodes_data_rows_on_their_own_path() {
        let body = b"\0\x01\0\0\0\x02ab";
        let Backend::DataRow(row) = Backend::decode(b'D', body).unwrap() else {
            panic!("a DataRow");
        };
        assert_eq!(row.body(), body);
        assert_eq!(row.len(), 1);
        assert!(Backend::decode(b'D', b"\0").is_err());
    }

    #[test]
    fn refuses_unknown_tags_and_bodies_on_empty_messages() {
        assert!(Backend::decode(b'?', b"").is_err());
        assert!(Backend::decode(b'1', b"x").is_err());
        assert!(Backend::decode(b'D', b"\0\x01\xff\xff\xff\xfe").is_ok());
    }
}
