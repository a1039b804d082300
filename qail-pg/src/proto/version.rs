//! Protocol versions, and the choice among them when a server answers the StartupMessage's
//! version with NegotiateProtocolVersion.
//!
//! See <https://www.postgresql.org/docs/18/protocol-overview.html#PROTOCOL-VERSIONS>.

use std::fmt;
use std::str::FromStr;

use super::message::NegotiateProtocolVersion;

/// A version of the frontend/backend protocol, as libpq 18's `min_protocol_version` and
/// `max_protocol_version` name them (`3.0`, `3.2`, `latest`).
///
/// The versions differ in one message: BackendKeyData, whose cancel key is 4 bytes in 3.0
/// and up to 256 bytes in 3.2 (PostgreSQL 18 sends 32), and so the CancelRequest that
/// echoes it.
///
/// ```
/// use qail_pg::ProtocolVersion;
///
/// assert_eq!("latest".parse::<ProtocolVersion>()?, ProtocolVersion::V3_2);
/// assert_eq!(ProtocolVersion::V3_0.to_string(), "3.0");
/// # Ok::<(), qail_pg::proto::version::UnknownVersion>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 3.0: every server since PostgreSQL 7.4, and every pooler. The default.
    #[default]
    V3_0,
    /// 3.2: PostgreSQL 18 and later. Cancel keys of up to 256 bytes.
    V3_2,
}

impl ProtocolVersion {
    /// The newest version qail-pg speaks: what `latest` means.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V3_2;

    /// The major version (3).
    pub fn major(self) -> u16 {
        3
    }

    /// The minor version (0 or 2).
    pub fn minor(self) -> u16 {
        match self {
            ProtocolVersion::V3_0 => 0,
            ProtocolVersion::V3_2 => 2,
        }
    }

    /// The version field of a StartupMessage: the major version in the high 16 bits, the
    /// minor in the low 16.
    pub fn code(self) -> i32 {
        (i32::from(self.major()) << 16) | i32::from(self.minor())
    }

    /// The version whose [`code`](ProtocolVersion::code) is `code`, if qail-pg speaks it.
    ///
    /// Note: 3.1 was never used by PostgreSQL (old pgbouncer releases wrongly claimed it), so
    /// it is not a version here.
    pub fn from_code(code: i32) -> Option<ProtocolVersion> {
        [ProtocolVersion::V3_0, ProtocolVersion::V3_2]
            .into_iter()
            .find(|v| v.code() == code)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major(), self.minor())
    }
}

/// A protocol version name other than `3.0`, `3.2` and `latest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion(String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown protocol version \"{}\"; valid values are 3.0, 3.2 and latest",
            self.0
        )
    }
}

impl std::error::Error for UnknownVersion {}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;

    fn from_str(s: &str) -> Result<ProtocolVersion, UnknownVersion> {
        match s {
            "3.0" => Ok(ProtocolVersion::V3_0),
            "3.2" => Ok(ProtocolVersion::V3_2),
            "latest" => Ok(ProtocolVersion::LATEST),
            other => Err(UnknownVersion(other.to_owned())),
        }
    }
}

/// Why a NegotiateProtocolVersion ends the connection attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NegotiationError {
    /// The server's newest version is older than `min_protocol_version`.
    BelowMinimum {
        /// The newest version the server offers (as [`ProtocolVersion::code`] spells it).
        offered: i32,
        /// `min_protocol_version`.
        min: ProtocolVersion,
    },
    /// The server offers a version qail-pg does not speak (3.1), older than the one requested.
    Unsupported {
        /// The version offered (as [`ProtocolVersion::code`] spells it).
        offered: i32,
    },
    /// The server offers a version not older than the one requested, which the protocol
    /// does not allow.
    NotOlder {
        /// The version offered (as [`ProtocolVersion::code`] spells it).
        offered: i32,
        /// The version the StartupMessage asked for.
        requested: ProtocolVersion,
    },
    /// The server names protocol options (`_pq_.…`) the StartupMessage never sent.
    UnrequestedOptions(Vec<String>),
}

impl NegotiationError {
    /// Whether the server broke the protocol (rather than merely being too old).
    pub fn is_protocol_violation(&self) -> bool {
        matches!(
            self,
            NegotiationError::NotOlder { .. } | NegotiationError::UnrequestedOptions(_)
        )
    }
}

/// A version code as `major.minor`.
struct Code(i32);

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.0 >> 16, self.0 & 0xffff)
    }
}

impl fmt::Display for NegotiationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NegotiationError::BelowMinimum { offered, min } => write!(
                f,
                "the server supports protocol version {} at most, but min_protocol_version is \
                 {min}; connect to PostgreSQL 18 or later, or lower min_protocol_version",
                Code(*offered)
            ),
            NegotiationError::Unsupported { offered } => write!(
                f,
                "the server offers protocol version {}, which qail-pg does not speak; set \
                 max_protocol_version=3.0",
                Code(*offered)
            ),
            NegotiationError::NotOlder { offered, requested } => write!(
                f,
                "the server answered a request for protocol version {requested} by offering \
                 {}, which is not older; the server or a pooler in between is broken, set \
                 max_protocol_version=3.0",
                Code(*offered)
            ),
            NegotiationError::UnrequestedOptions(options) => write!(
                f,
                "the server reports protocol options that were never requested ({}); the \
                 server or a pooler in between is broken, set max_protocol_version=3.0",
                options.join(", ")
            ),
        }
    }
}

impl std::error::Error for NegotiationError {}

/// The version to speak after the server answered a StartupMessage that requested
/// `requested` (and no protocol options) with `offer`; `min` is `min_protocol_version`.
///
/// Note: a server older than the requested minor version sends NegotiateProtocolVersion
/// with its newest version before authentication (PostgreSQL 9.3.21 and later); the client
/// may go on with that version or close the connection.
pub fn negotiate(
    requested: ProtocolVersion,
    min: ProtocolVersion,
    offer: &NegotiateProtocolVersion<'_>,
) -> Result<ProtocolVersion, NegotiationError> {
    if !offer.unrecognized.is_empty() {
        return Err(NegotiationError::UnrequestedOptions(
            offer.unrecognized.iter().map(|&s| s.to_owned()).collect(),
        ));
    }
    let code = offer.newest_version;
    if code >= requested.code() {
        return Err(NegotiationError::NotOlder {
            offered: code,
            requested,
        });
    }
    let Some(offered) = ProtocolVersion::from_code(code) else {
        return Err(NegotiationError::Unsupported { offered: code });
    };
    if offered < min {
        return Err(NegotiationError::BelowMinimum { offered: code, min });
    }
    Ok(offered)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An offer of version 3.`minor`.
    fn offer(minor: i32, unrecognized: Vec<&str>) -> NegotiateProtocolVersion<'_> {
        NegotiateProtocolVersion {
            newest_version: (3 << 16) | minor,
            unrecognized,
        }
    }

    #[test]
    fn names_and_codes() {
        assert_eq!(ProtocolVersion::V3_0.code(), 196_608);
        assert_eq!(ProtocolVersion::V3_2.code(), 196_610);
        for (name, version) in [
            ("3.0", ProtocolVersion::V3_0),
            ("3.2", ProtocolVersion::V3_2),
            ("latest", ProtocolVersion::V3_2),
        ] {
            assert_eq!(name.parse(), Ok(version), "{name}");
        }
        for bad in ["3.1", "3", "4.0", "3.00", ""] {
            let err = bad.parse::<ProtocolVersion>().unwrap_err();
            assert!(err.to_string().contains("3.0, 3.2 and latest"), "{err}");
        }
        assert_eq!(ProtocolVersion::V3_2.to_string(), "3.2");
        assert!(ProtocolVersion::V3_0 < ProtocolVersion::V3_2);
    }

    #[test]
    fn an_older_server_is_accepted_down_to_the_minimum() {
        let (v30, v32) = (ProtocolVersion::V3_0, ProtocolVersion::V3_2);
        assert_eq!(negotiate(v32, v30, &offer(0, vec![])), Ok(v30));
        let err = negotiate(v32, v32, &offer(0, vec![])).unwrap_err();
        assert_eq!(
            err,
            NegotiationError::BelowMinimum {
                offered: 196_608,
                min: v32
            }
        );
        assert!(!err.is_protocol_violation());
        assert!(
            err.to_string()
                .contains("supports protocol version 3.0 at most, but min_protocol_version is 3.2"),
            "{err}"
        );
    }

    #[test]
    fn offers_the_protocol_forbids_are_refused() {
        let (v30, v32) = (ProtocolVersion::V3_0, ProtocolVersion::V3_2);
        // Not older than requested.
        for (requested, minor) in [(v32, 2), (v32, 3), (v30, 0)] {
            let err = negotiate(requested, v30, &offer(minor, vec![])).unwrap_err();
            assert!(err.is_protocol_violation(), "{requested} {minor}: {err}");
        }
        let later_major = NegotiateProtocolVersion {
            newest_version: 4 << 16,
            unrecognized: vec![],
        };
        assert!(negotiate(v32, v30, &later_major).is_err());
        // 3.1, which no PostgreSQL speaks, and versions before 3.0.
        let err = negotiate(v32, v30, &offer(1, vec![])).unwrap_err();
        assert_eq!(err, NegotiationError::Unsupported { offered: 196_609 });
        assert!(err.to_string().contains("version 3.1,"), "{err}");
        let err = negotiate(
            v32,
            v30,
            &NegotiateProtocolVersion {
                newest_version: 2 << 16,
                unrecognized: vec![],
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("version 2.0,"), "{err}");
        // Options qail-pg never sends.
        let err = negotiate(v32, v30, &offer(0, vec!["_pq_.x"])).unwrap_err();
        assert!(err.is_protocol_violation());
        assert!(err.to_string().contains("_pq_.x"), "{err}");
    }
}
