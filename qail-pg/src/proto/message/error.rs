//! Errors of encoding frontend messages and decoding backend ones.

use std::fmt;

use crate::types::BoxError;

/// A frontend message could not be encoded. Nothing was written to the buffer.
#[derive(Debug)]
#[non_exhaustive]
pub enum EncodeError {
    /// A string sent as a C string contains a NUL byte.
    Nul {
        /// Which field of which message.
        field: &'static str,
    },
    /// A message or a value is longer than the protocol allows (`i32::MAX` bytes).
    TooLong {
        /// Which field of which message.
        field: &'static str,
    },
    /// More than 65535 parameters, result formats or parameter types.
    TooMany {
        /// What was counted.
        field: &'static str,
        /// How many were given.
        count: usize,
    },
    /// A value does not fit the protocol's range (a secret key of the wrong size…).
    Invalid {
        /// Which field of which message.
        field: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// A parameter's `Encode` implementation failed.
    Param {
        /// 0-based index of the parameter.
        index: usize,
        /// The error returned by `Encode`.
        source: BoxError,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::Nul { field } => write!(
                f,
                "{field} contains a NUL byte, which PostgreSQL cannot receive; remove it"
            ),
            EncodeError::TooLong { field } => write!(
                f,
                "{field} is longer than the protocol's limit of {} bytes; send less data per message",
                i32::MAX
            ),
            EncodeError::TooMany { field, count } => write!(
                f,
                "{count} {field} given, but the protocol allows at most 65535; split the statement"
            ),
            EncodeError::Invalid { field, reason } => write!(f, "{field} {reason}"),
            EncodeError::Param { index, source } => write!(
                f,
                "parameter ${} could not be encoded: {source}; pass a value of a type the parameter accepts",
                index + 1
            ),
        }
    }
}

impl std::error::Error for EncodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EncodeError::Param { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

/// A backend message is malformed or not allowed here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    message: String,
}

impl DecodeError {
    pub(crate) fn new(message: impl Into<String>) -> DecodeError {
        DecodeError {
            message: message.into(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed message from the server: {}; check that the address points to a PostgreSQL server",
            self.message
        )
    }
}

impl std::error::Error for DecodeError {}
